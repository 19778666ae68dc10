//===- Interpreter.cpp - Argument binding and the run loop -----------------===//
//
// Compilation is in CompileExpr.cpp / CompileStmt.cpp; this file binds the
// arguments of one run (scalar parameters, then symbolic shape variables from
// the arrays' shapes, then checks every dimension) and executes the body.
//
//===----------------------------------------------------------------------===//
#include "tessera/runtime/Interpreter.h"

#include "tessera/ir/Opaque.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "Closures.h"
#include "SolveDimension.h"
#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"

namespace tessera::runtime {

using detail::BufState;
using detail::Frame;
using detail::Program;

struct Interpreter::Impl {
  std::unique_ptr<Program> prog;
};

Interpreter::Interpreter(const ir::PrimFunc &f) : impl_(std::make_unique<Impl>()) {
  TESSERA_ICHECK(f.defined()) << "Interpreter of an undefined function";
  if (auto what = ir::find_opaque(f))
    throw InterpretError("cannot interpret function '" + f.name() + "': it calls " + *what +
                         ", which tessera has no semantics for (an opaque call)");
  impl_->prog = detail::compile_program(f);
}
Interpreter::~Interpreter() = default;
Interpreter::Interpreter(Interpreter &&) noexcept = default;
Interpreter &Interpreter::operator=(Interpreter &&) noexcept = default;

namespace {

std::string arg_name(const Program &p, int i) {
  const ir::Var &v = p.func.params()[i];
  ir::Buffer b = p.func.buffer_of(v);
  std::ostringstream os;
  os << "argument " << i << " ('" << (b.defined() ? b.name() : v.name()) << "')";
  return os.str();
}

}  // namespace

namespace detail {

void bind_arguments(const Program &p, const std::vector<NDArray *> &args, Frame &f) {
  const auto &params = p.func.params();
  if (args.size() != params.size())
    throw InterpretError("function '" + p.func.name() + "' takes " + std::to_string(params.size()) +
                         " arguments, got " + std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i)
    if (!args[i]) throw InterpretError(arg_name(p, static_cast<int>(i)) + " is null");

  // Step 1. Scalar parameters.
  std::vector<std::string> bound_from(p.num_int_slots);
  for (const detail::ScalarParam &sp : p.scalars) {
    const NDArray &a = *args[sp.param_index];
    if (a.numel() != 1)
      throw InterpretError(arg_name(p, sp.param_index) + ": scalar parameter of type " + sp.var.dtype().str() +
                           " needs a one-element array, got " + a.type_str());
    if (sp.is_float) {
      f.fv[sp.slot] = detail::round_float(sp.var.dtype(), a.get(0));
    } else {
      int64_t v = a.dtype().is_float() ? static_cast<int64_t>(a.get(0)) : a.get_int(0);
      f.iv[sp.slot] = detail::wrap_int(sp.var.dtype(), v);
      bound_from[sp.slot] = "scalar parameter '" + sp.var.name() + "'";
    }
  }

  // Step 2. Types, ranks, and shape variables bound by their first appearance.
  for (const detail::ParamBuffer &pb : p.buffers) {
    const NDArray &a = *args[pb.param_index];
    const ir::Buffer &b = pb.buffer;
    if (a.dtype() != b.dtype())
      throw InterpretError(arg_name(p, pb.param_index) + ": buffer '" + b.name() + "' has dtype " + b.dtype().str() +
                           " but the array is " + a.type_str());
    if (static_cast<int>(a.shape().size()) != b.ndim())
      throw InterpretError(arg_name(p, pb.param_index) + ": buffer '" + b.name() + "' has " +
                           std::to_string(b.ndim()) + " dimensions but the array is " + a.type_str());
    for (int d = 0; d < b.ndim(); ++d) {
      int s = pb.dim_var_slot[d];
      if (s < 0 || !bound_from[s].empty()) continue;
      f.iv[s] = a.shape()[d];
      bound_from[s] = "buffer '" + b.name() + "' dimension " + std::to_string(d);
    }
  }

  // Step 2b. A shape variable that appears only inside dimensions (`n * 32`)
  // is solved from one that is affine in it and mentions no other unbound
  // variable: three evaluations give its slope and offset (Step 3 then
  // checks every dimension, so a wrong guess is still a mismatch).
  for (bool progress = true; progress;) {
    progress = false;
    for (const detail::ParamBuffer &pb : p.buffers)
      for (int d = 0; d < pb.buffer.ndim(); ++d) {
        int unbound = -1, count = 0;
        for (int s : pb.dim_slots[d])
          if (bound_from[s].empty() && p.shape_var_names.count(s)) unbound = s, ++count;
        if (count != 1) continue;
        auto at = [&](int64_t v) { return f.iv[unbound] = v, pb.dims[d]->eval(f); };
        const int64_t f0 = at(0), f1 = at(1), f2 = at(2);
        std::optional<int64_t> v = solve_affine_dimension(f0, f1, f2, args[pb.param_index]->shape()[d]);
        f.iv[unbound] = v.value_or(0);
        if (!v) continue;
        bound_from[unbound] = "buffer '" + pb.buffer.name() + "' dimension " + std::to_string(d);
        progress = true;
      }
  }

  // Step 3. Every dimension (and stride) against the array.
  for (const detail::ParamBuffer &pb : p.buffers) {
    NDArray &a = *args[pb.param_index];
    const ir::Buffer &b = pb.buffer;
    BufState &st = f.bufs[pb.slot];
    st.ndim = b.ndim();
    st.data = a.data();
    st.storage = a.numel();
    for (int d = 0; d < b.ndim(); ++d) {
      int64_t want = pb.dims[d]->eval(f), got = a.shape()[d];
      if (want != got) {
        std::ostringstream os;
        os << "shape mismatch for buffer '" << b.name() << "' dimension " << d << ": expected ";
        int s = pb.dim_var_slot[d];
        if (s >= 0)
          os << p.shape_var_names.at(s) << " = " << want << " (bound from " << bound_from[s] << ")";
        else
          os << want;
        os << ", got " << got << " (array " << a.type_str() << ")";
        throw InterpretError(os.str());
      }
      st.shape[d] = got;
    }
    if (pb.strides.empty()) {
      int64_t s = 1;
      for (int d = b.ndim() - 1; d >= 0; --d) {
        st.strides[d] = s;
        s *= st.shape[d];
      }
    } else {
      int64_t last = 0;
      for (int d = 0; d < b.ndim(); ++d) {
        st.strides[d] = pb.strides[d]->eval(f);
        if (st.shape[d] > 0) last += (st.shape[d] - 1) * st.strides[d];
      }
      if (a.numel() > 0 && last >= a.numel())
        throw InterpretError(arg_name(p, pb.param_index) + ": the strides of buffer '" + b.name() +
                             "' reach element " + std::to_string(last) + " but the array " + a.type_str() +
                             " has " + std::to_string(a.numel()));
    }
  }
}

}  // namespace detail

void Interpreter::run(std::vector<NDArray *> args) const {
  const Program &p = *impl_->prog;
  detail::RunFrame run(p, args);
  p.body->exec(run.frame);
  detail::check_async_drained(run.async, p.func.name());
}

namespace {

/// How an integer parameter buffer's random elements are drawn.
enum class IntegerFill {
  Small,       ///< NDArray::fill_random: cannot overflow or index out of bounds
  Bits,        ///< every bit: a program that unpacks fields with shifts and masks
  FloatHalves  ///< each 16 bits a bfloat16 in [-1, 1]: bits reinterpreted as floats
};

/// The buffers that are not Small. A load that is an operand of a shift or a
/// bitwise and/or/xor (through casts), as int4 weights packed into uint8 or
/// uint32 are, makes its buffer Bits: small values would leave the upper
/// fields zero and their unpacking unchecked. A load inside a reinterpret
/// makes it FloatHalves (16 bits or wider): bfloat16 scales packed in
/// uint32 decode to ordinary numbers, not to 1e-44 or NaN. A buffer that an
/// index, a loop range, a binding or a shift amount reads stays Small.
std::unordered_map<const ir::BufferNode *, IntegerFill> integer_fills(const ir::PrimFunc &f) {
  using namespace ir;
  std::unordered_set<const BufferNode *> unpacked, reinterpreted, excluded;
  auto integer = [](const Buffer &b) { return b.dtype().is_integer() && !b.dtype().is_bool(); };
  auto loads_in = [](const Expr &e, std::unordered_set<const BufferNode *> &into) {
    pre_order_visit(Evaluate::make(e), [&](const Expr &x) {
      if (const auto *l = x.as<Load>()) into.insert(l->buffer.get());
    }, nullptr);
  };
  auto indices = [&](const std::vector<Expr> &idx) {
    for (const Expr &i : idx) loads_in(i, excluded);
  };
  pre_order_visit(f.body(), [&](const Expr &e) {
    if (const auto *b = e.as<Binary>()) {
      const bool shift = b->op == BinaryOp::Shl || b->op == BinaryOp::Shr;
      const bool bitwise = shift || b->op == BinaryOp::BitAnd || b->op == BinaryOp::BitOr || b->op == BinaryOp::BitXor;
      if (shift) loads_in(b->b, excluded);  // a shift amount must stay below the width
      for (const Expr *operand : {&b->a, &b->b}) {
        if (!bitwise || (shift && operand == &b->b)) continue;
        const Expr *x = operand;
        while (const auto *c = x->as<Cast>()) x = &c->value;
        if (const auto *l = x->as<Load>(); l && integer(l->buffer)) unpacked.insert(l->buffer.get());
      }
    }
    if (const auto *l = e.as<Load>()) indices(l->indices);
    if (const auto *c = e.as<Call>(); c && c->op == Intrinsic::Reinterpret) loads_in(e, reinterpreted);
  }, [&](const Stmt &s) {
    if (const auto *st = s.as<Store>()) indices(st->indices);
    if (const auto *fl = s.as<For>()) {
      loads_in(fl->min, excluded);
      loads_in(fl->extent, excluded);
    }
    if (const auto *b = s.as<Block>())
      for (const Expr &binding : b->bindings) loads_in(binding, excluded);
  });
  std::unordered_map<const BufferNode *, IntegerFill> out;
  for (const BufferNode *b : unpacked) out[b] = IntegerFill::Bits;
  for (const BufferNode *b : reinterpreted)
    if (b->dtype.is_integer() && !b->dtype.is_bool() && b->dtype.bits() >= 16) out[b] = IntegerFill::FloatHalves;
  for (const BufferNode *b : excluded) out.erase(b);
  return out;
}

/// The integer buffers whose elements index other buffers (take, gather,
/// nll_loss, scatter_elements, an embedding lookup): a load of one inside an
/// index of another buffer's load or store. Each maps to what it indexes:
/// (that buffer, the dimension).
std::unordered_map<const ir::BufferNode *, std::vector<std::pair<ir::Buffer, int>>> index_buffers(
    const ir::PrimFunc &f) {
  using namespace ir;
  std::unordered_map<const BufferNode *, std::vector<std::pair<Buffer, int>>> out;
  auto uses = [&](const Buffer &target, const std::vector<Expr> &idx) {
    for (size_t d = 0; d < idx.size(); ++d)
      pre_order_visit(Evaluate::make(idx[d]), [&](const Expr &x) {
        const auto *l = x.as<Load>();
        if (l && l->buffer.dtype().is_integer() && !l->buffer.dtype().is_bool() && !l->buffer.same_as(target))
          out[l->buffer.get()].emplace_back(target, int(d));
      }, nullptr);
  };
  pre_order_visit(f.body(), [&](const Expr &e) {
    if (const auto *l = e.as<Load>()) uses(l->buffer, l->indices);
  }, [&](const Stmt &s) {
    if (const auto *st = s.as<Store>()) uses(st->buffer, st->indices);
  });
  return out;
}

}  // namespace

std::vector<NDArray> make_random_args(const ir::PrimFunc &f, const DimBindings &dims, uint64_t seed) {
  // A value that does not fit its variable would wrap in the program.
  for (const auto &[name, value] : dims) {
    auto check = [&](const ir::Var &v) {
      if (v.name() != name || !v.dtype().is_integer() || v.dtype().bits() >= 64) return;
      if (!arith::IntBound::of_dtype(v.dtype()).contains(value))
        throw InterpretError("'" + name + "' is " + v.dtype().str() + " in '" + f.name() + "': " +
                             std::to_string(value) + " does not fit it");
    };
    for (const ir::Var &v : f.shape_vars()) check(v);
    for (const ir::Var &v : f.params()) check(v);
  }
  std::mt19937_64 rng(seed);
  std::unordered_map<const ir::VarNode *, int64_t> values;
  std::vector<std::pair<ir::Var, int64_t>> known;
  const auto &params = f.params();
  std::vector<NDArray> out(params.size());

  // Scalars first: an integer scalar parameter may also be a shape variable.
  for (size_t i = 0; i < params.size(); ++i) {
    const ir::Var &v = params[i];
    if (v.dtype().is_handle()) continue;
    NDArray a(v.dtype(), {});
    auto it = dims.find(v.name());
    if (v.dtype().is_float()) {
      a.set(0, it != dims.end() ? static_cast<double>(it->second)
                                : std::uniform_real_distribution<double>(0.5, 2.0)(rng));
    } else {
      int64_t x = it != dims.end() ? it->second : static_cast<int64_t>(rng() % 8) + 1;
      a.set_int(0, x);
      values[v.get()] = a.get_int(0);
      known.emplace_back(v, a.get_int(0));
    }
    out[i] = std::move(a);
  }
  for (const ir::Var &v : f.shape_vars()) {
    if (values.count(v.get())) continue;
    if (auto it = dims.find(v.name()); it != dims.end()) {
      values[v.get()] = it->second;
      known.emplace_back(v, it->second);
    }
  }

  const std::unordered_map<const ir::BufferNode *, IntegerFill> fills = integer_fills(f);
  // Shapes: compile each dimension with the known variables in scope.
  Program prog;
  detail::Compiler c(prog);
  std::vector<std::pair<int, int64_t>> slots;
  for (const auto &[v, value] : known) slots.emplace_back(c.bind_var(v), value);
  // Every buffer's shape first: all of them must fit before any is made.
  std::vector<std::vector<int64_t>> shapes(params.size());
  double total_bytes = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    ir::Buffer b = f.buffer_of(params[i]);
    if (!b.defined()) continue;
    std::vector<int64_t> &shape = shapes[i];
    for (int d = 0; d < b.ndim(); ++d) {
      const ir::Expr &e = b.shape()[d];
      // Name the first unbound variable of this dimension, if any.
      struct FindFree : ir::IRVisitor {
        const std::unordered_map<const ir::VarNode *, int64_t> *values;
        std::string missing;
        void visit_(const ir::VarNode *op) override {
          if (missing.empty() && !values->count(op)) missing = op->name;
        }
      } ff;
      ff.values = &values;
      ff.visit(e);
      if (!ff.missing.empty())
        throw InterpretError("symbolic dimension '" + ff.missing + "' of buffer '" + b.name() + "' (dimension " +
                             std::to_string(d) + ") has no value; pass it in the dims");
      detail::IntPtr fn = c.compile_int(e);
      std::vector<int64_t> iv(std::max(prog.num_int_slots, 1), 0);
      for (auto [slot, value] : slots) iv[slot] = value;
      Frame fr{iv.data(), nullptr, nullptr, nullptr};
      int64_t n = fn->eval(fr);
      if (n < 0)
        throw InterpretError("dimension " + std::to_string(d) + " of buffer '" + b.name() + "' is negative: " +
                             std::to_string(n));
      shape.push_back(n);
    }
    try {
      total_bytes += double(NDArray::checked_numel(b.dtype(), shape)) * b.dtype().bytes();
    } catch (const UserError &e) {
      throw InterpretError("buffer '" + b.name() + "': " + e.what());
    }
  }
  NDArray::check_fits(total_bytes, "the arguments of '" + f.name() + "'");
  for (size_t i = 0; i < params.size(); ++i) {
    ir::Buffer b = f.buffer_of(params[i]);
    if (!b.defined()) continue;
    NDArray a(b.dtype(), std::move(shapes[i]));
    auto fill = fills.find(b.get());
    if (fill == fills.end())
      a.fill_random(rng);
    else if (fill->second == IntegerFill::Bits)
      a.fill_random_bits(rng);
    else
      a.fill_random_bfloat16_halves(rng);
    out[i] = std::move(a);
  }
  // An index read from an input is drawn within what it indexes: [0, n) for
  // the smallest extent n among the dimensions it indexes (random values
  // would read out of bounds, and a right program would fail its check).
  std::unordered_map<const ir::BufferNode *, size_t> param_of;
  for (size_t i = 0; i < params.size(); ++i)
    if (ir::Buffer b = f.buffer_of(params[i]); b.defined()) param_of[b.get()] = i;
  for (const auto &[index, targets] : index_buffers(f)) {
    auto p = param_of.find(index);
    if (p == param_of.end()) continue;  // an intermediate: the program computes it
    int64_t extent = -1;
    for (const auto &[target, d] : targets) {
      int64_t n = -1;
      if (auto t = param_of.find(target.get()); t != param_of.end()) n = out[t->second].shape()[d];
      else if (const auto *imm = target.shape()[d].as<ir::IntImm>()) n = imm->value;
      if (n >= 0) extent = extent < 0 ? n : std::min(extent, n);
    }
    NDArray &a = out[p->second];
    if (extent <= 0) continue;
    const double top = std::min<double>(double(extent), std::ldexp(1.0, a.dtype().bits() - (a.dtype().is_uint() ? 0 : 1)));
    const auto bound = static_cast<uint64_t>(top);
    for (int64_t k = 0; k < a.numel(); ++k) a.set_int(k, static_cast<int64_t>(rng() % bound));
  }
  satisfy_assumptions(f, out);
  return out;
}

void interpret(const ir::PrimFunc &f, std::vector<NDArray> &args) {
  Interpreter(f).run(pointers_to(args));
}

}  // namespace tessera::runtime
