//===- lib/tune/SizeProgram.cpp - Launch extents without the IR -----------===//
#include "tessera/tune/SizeProgram.h"

#include <algorithm>
#include <functional>

#include "tessera/ir/Op.h"
#include "tessera/script/Printer.h"
#include "tessera/support/Error.h"

namespace tessera::tune {

namespace {

int64_t floordiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floormod(int64_t a, int64_t b) { return b == 0 ? 0 : a - floordiv(a, b) * b; }

const char *kNames[] = {"const", "sym", "add", "sub", "mul", "floordiv", "floormod", "div", "mod", "min", "max"};

}  // namespace

SizeProgram SizeProgram::constant(int64_t v) {
  SizeProgram p;
  p.steps_.push_back({Const, v});
  return p;
}

SizeProgram SizeProgram::compile(const ir::Expr &root, const std::vector<std::string> &symbols) {
  SizeProgram p;
  int depth = 0, max_depth = 0;
  auto push = [&](Step s, int pops) {
    p.steps_.push_back(s);
    depth += 1 - pops;
    max_depth = std::max(max_depth, depth);
  };
  std::function<void(const ir::Expr &)> emit = [&](const ir::Expr &e) {
    if (auto c = ir::as_const_int(e)) return push({Const, *c}, 0);
    if (const auto *v = e.as<ir::VarNode>()) {
      auto it = std::find(symbols.begin(), symbols.end(), v->name);
      if (it == symbols.end())
        throw UserError("a launch extent uses '" + v->name + "', which is not a symbol of the plan: " +
                        script::print(root));
      return push({Sym, it - symbols.begin()}, 0);
    }
    if (const auto *c = e.as<ir::Cast>(); c && c->dtype.is_integer() && c->value.dtype().is_integer())
      return emit(c->value);
    if (const auto *b = e.as<ir::Binary>()) {
      Op op;
      switch (b->op) {
        case ir::BinaryOp::Add: op = Add; break;
        case ir::BinaryOp::Sub: op = Sub; break;
        case ir::BinaryOp::Mul: op = Mul; break;
        case ir::BinaryOp::FloorDiv: op = FloorDiv; break;
        case ir::BinaryOp::FloorMod: op = FloorMod; break;
        case ir::BinaryOp::Div: op = Div; break;
        case ir::BinaryOp::Mod: op = Mod; break;
        case ir::BinaryOp::Min: op = Min; break;
        case ir::BinaryOp::Max: op = Max; break;
        default:
          throw UserError(std::string("a launch extent uses ") + ir::binary_op_name(b->op) +
                          ", which a dynamic kernel cannot evaluate: " + script::print(root));
      }
      emit(b->a);
      emit(b->b);
      return push({op, 0}, 2);
    }
    throw UserError("a launch extent is not integer arithmetic of the symbols: " + script::print(root));
  };
  emit(root);
  if (max_depth > kMaxDepth) throw UserError("a launch extent is nested too deeply: " + script::print(root));
  return p;
}

int64_t SizeProgram::eval(const int64_t *values) const {
  int64_t stack[kMaxDepth];
  int top = 0;
  for (const Step &s : steps_) {
    switch (s.op) {
      case Const: stack[top++] = s.arg; continue;
      case Sym: stack[top++] = values[s.arg]; continue;
      default: break;
    }
    int64_t b = stack[--top], &a = stack[top - 1];
    switch (s.op) {
      case Add: a += b; break;
      case Sub: a -= b; break;
      case Mul: a *= b; break;
      case FloorDiv: a = floordiv(a, b); break;
      case FloorMod: a = floormod(a, b); break;
      case Div: a = b == 0 ? 0 : a / b; break;
      case Mod: a = b == 0 ? 0 : a % b; break;
      case Min: a = std::min(a, b); break;
      case Max: a = std::max(a, b); break;
      default: break;
    }
  }
  return top == 1 ? stack[0] : 0;
}

rules::Json SizeProgram::to_json() const {
  rules::Json out = rules::Json::array();
  for (const Step &s : steps_) {
    if (s.op == Const || s.op == Sym) out.push_back({kNames[s.op], s.arg});
    else out.push_back(kNames[s.op]);
  }
  return out;
}

SizeProgram SizeProgram::from_json(const rules::Json &j, size_t symbols) {
  SizeProgram p;
  int depth = 0;
  auto bad = [&](const std::string &why) { return UserError("a stored launch extent is damaged: " + why); };
  if (!j.is_array() || j.empty()) throw bad("not a non-empty list");
  for (const rules::Json &x : j) {
    std::string name = x.is_array() && x.size() == 2 && x[0].is_string() ? x[0].get<std::string>()
                       : x.is_string()                                    ? x.get<std::string>()
                                                                          : "";
    auto it = std::find(std::begin(kNames), std::end(kNames), name);
    if (it == std::end(kNames)) throw bad("unknown step " + x.dump());
    Op op = static_cast<Op>(it - std::begin(kNames));
    if (op == Const || op == Sym) {
      if (!x.is_array() || !x[1].is_number_integer()) throw bad("step " + x.dump() + " needs an integer");
      p.steps_.push_back({op, x[1].get<int64_t>()});
      if (op == Sym && (p.steps_.back().arg < 0 || p.steps_.back().arg >= int64_t(symbols)))
        throw bad("symbol slot " + std::to_string(p.steps_.back().arg) + " of " + std::to_string(symbols));
      ++depth;
    } else {
      if (depth < 2) throw bad("step " + x.dump() + " has too few operands");
      p.steps_.push_back({op, 0});
      --depth;
    }
    if (depth > kMaxDepth) throw bad("too deep");
  }
  if (depth != 1) throw bad("it leaves " + std::to_string(depth) + " values");
  return p;
}

}  // namespace tessera::tune
