//===- lib/dispatch/SizeProgram.cpp - Launch extents without the IR -------===//
#include "tessera/dispatch/SizeProgram.h"

#include <algorithm>
#include <iterator>
#include <string>

#include "tessera/support/Error.h"

namespace tessera::dispatch {

namespace {

int64_t floordiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floormod(int64_t a, int64_t b) { return b == 0 ? 0 : a - floordiv(a, b) * b; }

const char *kNames[] = {"const", "sym", "add", "sub", "mul", "floordiv", "floormod", "div", "mod", "min", "max"};

bool pushes(SizeProgram::Op op) { return op == SizeProgram::Op::Const || op == SizeProgram::Op::Sym; }

}  // namespace

SizeProgram SizeProgram::constant(int64_t v) { return from_steps({{Op::Const, v}}, 0); }

SizeProgram SizeProgram::from_steps(std::vector<Step> steps, size_t symbols) {
  int depth = 0;
  for (const Step &s : steps) {
    if (s.op == Op::Sym && (s.arg < 0 || s.arg >= int64_t(symbols)))
      throw UserError("a launch extent names symbol slot " + std::to_string(s.arg) + " of " +
                      std::to_string(symbols));
    if (!pushes(s.op) && depth < 2)
      throw UserError(std::string("a launch extent's step '") + kNames[int(s.op)] + "' has too few operands");
    depth += pushes(s.op) ? 1 : -1;
    if (depth > kMaxDepth) throw UserError("a launch extent is nested too deeply");
  }
  if (depth != 1) throw UserError("a launch extent leaves " + std::to_string(depth) + " values, not one");
  SizeProgram p;
  p.steps_ = std::move(steps);
  return p;
}

int64_t SizeProgram::eval(const int64_t *values) const {
  int64_t stack[kMaxDepth];
  int top = 0;
  for (const Step &s : steps_) {
    switch (s.op) {
      case Op::Const: stack[top++] = s.arg; continue;
      case Op::Sym: stack[top++] = values[s.arg]; continue;
      default: break;
    }
    int64_t b = stack[--top], &a = stack[top - 1];
    switch (s.op) {
      case Op::Add: a += b; break;
      case Op::Sub: a -= b; break;
      case Op::Mul: a *= b; break;
      case Op::FloorDiv: a = floordiv(a, b); break;
      case Op::FloorMod: a = floormod(a, b); break;
      case Op::Div: a = b == 0 ? 0 : a / b; break;
      case Op::Mod: a = b == 0 ? 0 : a % b; break;
      case Op::Min: a = std::min(a, b); break;
      case Op::Max: a = std::max(a, b); break;
      default: break;
    }
  }
  return top == 1 ? stack[0] : 0;
}

int SizeProgram::symbol() const {
  return steps_.size() == 1 && steps_[0].op == Op::Sym ? int(steps_[0].arg) : -1;
}

std::optional<int64_t> SizeProgram::constant_value() const {
  for (const Step &s : steps_)
    if (s.op == Op::Sym) return std::nullopt;
  return eval(nullptr);
}

Json SizeProgram::to_json() const {
  Json out = Json::array();
  for (const Step &s : steps_) {
    if (pushes(s.op)) out.push_back({kNames[int(s.op)], s.arg});
    else out.push_back(kNames[int(s.op)]);
  }
  return out;
}

SizeProgram SizeProgram::from_json(const Json &j, size_t symbols) {
  auto bad = [&](const std::string &why) { return UserError("a stored launch extent is damaged: " + why); };
  if (!j.is_array() || j.empty()) throw bad("not a non-empty list");
  std::vector<Step> steps;
  for (const Json &x : j) {
    std::string name = x.is_array() && x.size() == 2 && x[0].is_string() ? x[0].get<std::string>()
                       : x.is_string()                                    ? x.get<std::string>()
                                                                          : "";
    auto it = std::find(std::begin(kNames), std::end(kNames), name);
    if (it == std::end(kNames)) throw bad("unknown step " + x.dump());
    Op op = static_cast<Op>(it - std::begin(kNames));
    if (pushes(op)) {
      if (!x.is_array() || !x[1].is_number_integer()) throw bad("step " + x.dump() + " needs an integer");
      steps.push_back({op, x[1].get<int64_t>()});
    } else {
      if (!x.is_string()) throw bad("step " + x.dump() + " takes no argument");
      steps.push_back({op, 0});
    }
  }
  try {
    return from_steps(std::move(steps), symbols);
  } catch (const UserError &e) {
    throw bad(e.what());
  }
}

}  // namespace tessera::dispatch
