//===- Reduce.cpp - Extents, reduce axes and reductions --------------------===//
#include "tessera/te/Reduce.h"

#include <algorithm>
#include <sstream>

#include "Nodes.h"

#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"

namespace tessera::te {

using ir::DataType;
using ir::Expr;
using ir::Var;

Dim::Dim(int64_t v, bool wide) : expr_(ir::make_int(wide ? DataType::int64() : DataType::int32(), v)) {}
Dim::Dim(Expr e) : expr_(std::move(e)) {}

//===----------------------------------------------------------------------===//
// Reduce axes
//===----------------------------------------------------------------------===//

const ir::Range &ReduceAxis::dom() const {
  const detail::ReduceAxisNode *n = detail::as_reduce_axis(*this);
  TESSERA_ICHECK(n) << "ReduceAxis '" << (defined() ? name() : "<undefined>") << "' is not a reduce axis";
  return n->dom;
}

bool ReduceAxis::is_reduce_axis(const Var &v) {
  return detail::as_reduce_axis(v) != nullptr;
}

ReduceAxis ReduceAxis::from(const Var &v) {
  TESSERA_ICHECK(is_reduce_axis(v)) << "variable '" << v.name() << "' is not a reduce axis";
  return ReduceAxis(v);
}

static void check_integer_extent(const Expr &e, const std::string &what, const std::string &name) {
  if (!e.defined()) throw TeError("reduce axis '" + name + "': undefined " + what);
  if (!e.dtype().is_integer())
    throw TeError("reduce axis '" + name + "': " + what + " has type " + e.dtype().str() +
                  ", expected an integer");
}

ReduceAxis reduce_axis(Dim extent, std::string name) {
  Expr zero = extent.expr().defined() && extent.expr().dtype().is_integer()
                  ? ir::make_int(extent.expr().dtype(), 0)
                  : ir::i32(0);
  return reduce_axis(Dim(zero), std::move(extent), std::move(name));
}

ReduceAxis reduce_axis(Dim min, Dim extent, std::string name) {
  check_integer_extent(min.expr(), "min", name);
  check_integer_extent(extent.expr(), "extent", name);
  DataType t = ir::promote_types(min.expr().dtype(), extent.expr().dtype());
  ir::Range dom{ir::cast(t, min.expr()), ir::cast(t, extent.expr())};
  Expr node(std::make_shared<detail::ReduceAxisNode>(std::move(name), t, std::move(dom)));
  return ReduceAxis(Var::from(node));
}

//===----------------------------------------------------------------------===//
// Reducers
//===----------------------------------------------------------------------===//

const CommReducer &sum_reducer() {
  static const CommReducer r{[](Expr x, Expr y) { return ir::add(std::move(x), std::move(y)); },
                             [](DataType t) { return ir::make_const(t, 0); }, "sum"};
  return r;
}

const CommReducer &max_reducer() {
  static const CommReducer r{[](Expr x, Expr y) { return ir::max(std::move(x), std::move(y)); },
                             [](DataType t) { return ir::Call::make(t, ir::Intrinsic::MinValue, {}); },
                             "max"};
  return r;
}

const CommReducer &min_reducer() {
  static const CommReducer r{[](Expr x, Expr y) { return ir::min(std::move(x), std::move(y)); },
                             [](DataType t) { return ir::Call::make(t, ir::Intrinsic::MaxValue, {}); },
                             "min"};
  return r;
}

namespace {

// "axis 'k'" or "axes 'rh', 'rw'".
std::string describe_axes(const std::vector<ReduceAxis> &axes) {
  std::ostringstream os;
  os << (axes.size() == 1 ? "axis " : "axes ");
  for (size_t i = 0; i < axes.size(); ++i) os << (i ? ", '" : "'") << axes[i].name() << "'";
  return os.str();
}

// Finds the first nested reduction and the first reduce axis not in `allowed`.
struct SourceChecker : ir::IRVisitor {
  const std::vector<ReduceAxis> *allowed = nullptr;
  const detail::ReductionNode *nested = nullptr;
  const ir::VarNode *stray_axis = nullptr;
  void visit_(const ir::VarNode *op) override {
    if (const auto *r = dynamic_cast<const detail::ReductionNode *>(op)) {
      if (!nested) nested = r;
      return;
    }
    if (!dynamic_cast<const detail::ReduceAxisNode *>(op) || stray_axis) return;
    bool listed =
        std::any_of(allowed->begin(), allowed->end(), [&](const ReduceAxis &a) { return a.get() == op; });
    if (!listed) stray_axis = op;
  }
};

}  // namespace

Expr reduce(const CommReducer &reducer, Expr source, const std::vector<ReduceAxis> &axes) {
  const std::string &rname = reducer.name;
  if (!reducer.combine || !reducer.identity)
    throw TeError("reducer '" + rname + "' needs both a combine and an identity function");
  if (!source.defined()) throw TeError("'" + rname + "' reduction of an undefined expression");
  if (axes.empty()) throw TeError("'" + rname + "' reduction has no axes");
  for (size_t i = 0; i < axes.size(); ++i) {
    if (!axes[i].defined() || !ReduceAxis::is_reduce_axis(axes[i]))
      throw TeError("'" + rname + "' reduction: axis " + std::to_string(i) + " is not a reduce axis");
    for (size_t j = 0; j < i; ++j)
      if (axes[j].same_as(axes[i]))
        throw TeError("'" + rname + "' reduction lists axis '" + axes[i].name() + "' twice");
  }
  DataType t = source.dtype();
  if (t.is_void() || t.is_handle()) throw TeError("'" + rname + "' reduction of a value of type " + t.str());

  SourceChecker check;
  check.allowed = &axes;
  check.visit(source);
  if (check.nested)
    throw TeError("reduction over " + describe_axes(axes) + ": nested reduction over " +
                  describe_axes(check.nested->axes) +
                  " is not supported; compute the inner reduction as its own tensor");
  if (check.stray_axis)
    throw TeError("reduction over " + describe_axes(axes) + " uses reduce axis '" + check.stray_axis->name +
                  "', which it does not list");

  // Build combine(x, y) once on fresh variables, as TVM's comm_reducer does;
  // create_prim_func substitutes the accumulator and the value.
  Var lhs("x", t), rhs("y", t);
  Expr combined = reducer.combine(lhs, rhs);
  if (!combined.defined() || combined.dtype() != t)
    throw TeError("reducer '" + rname + "': combine of two " + t.str() + " values returns " +
                  (combined.defined() ? combined.dtype().str() : std::string("nothing")) + ", expected " +
                  t.str());
  Expr identity = reducer.identity(t);
  if (!identity.defined()) throw TeError("reducer '" + rname + "': identity(" + t.str() + ") is undefined");
  identity = ir::cast(t, identity);
  return Expr(std::make_shared<detail::ReductionNode>(t, rname, lhs, rhs, combined, identity,
                                                      std::move(source), axes));
}

Expr sum(Expr source, const std::vector<ReduceAxis> &axes) {
  return reduce(sum_reducer(), std::move(source), axes);
}
Expr sum(Expr source, std::initializer_list<ReduceAxis> axes) {
  return sum(std::move(source), std::vector<ReduceAxis>(axes));
}
Expr max(Expr source, const std::vector<ReduceAxis> &axes) {
  return reduce(max_reducer(), std::move(source), axes);
}
Expr max(Expr source, std::initializer_list<ReduceAxis> axes) {
  return max(std::move(source), std::vector<ReduceAxis>(axes));
}
Expr min(Expr source, const std::vector<ReduceAxis> &axes) {
  return reduce(min_reducer(), std::move(source), axes);
}
Expr min(Expr source, std::initializer_list<ReduceAxis> axes) {
  return min(std::move(source), std::vector<ReduceAxis>(axes));
}

bool is_reduction(const Expr &e) {
  return detail::as_reduction(e) != nullptr;
}

//===----------------------------------------------------------------------===//
// Private helpers shared with Tensor.cpp and CreatePrimFunc.cpp
//===----------------------------------------------------------------------===//

namespace detail {

const ReductionNode *as_reduction(const Expr &e) {
  const auto *v = e.as<ir::VarNode>();
  return v ? dynamic_cast<const ReductionNode *>(v) : nullptr;
}

const ReduceAxisNode *as_reduce_axis(const Expr &e) {
  const auto *v = e.as<ir::VarNode>();
  return v ? dynamic_cast<const ReduceAxisNode *>(v) : nullptr;
}

const TensorNode *as_tensor_load(const Expr &e) {
  const auto *l = e.as<ir::Load>();
  const auto *t = l ? dynamic_cast<const TensorLoadNode *>(l) : nullptr;
  return t ? t->tensor.get() : nullptr;
}

std::string describe_node(const Expr &e) {
  using ir::BinaryOp;
  if (const auto *b = e.as<ir::Binary>()) {
    switch (b->op) {
      case BinaryOp::Add:
        return "an addition";
      case BinaryOp::Sub:
        return "a subtraction";
      case BinaryOp::Mul:
        return "a multiplication";
      case BinaryOp::Div:
        return "a division";
      case BinaryOp::Mod:
        return "a remainder";
      case BinaryOp::FloorDiv:
        return "a floor division";
      case BinaryOp::FloorMod:
        return "a floor modulo";
      case BinaryOp::Min:
        return "a minimum";
      case BinaryOp::Max:
        return "a maximum";
      case BinaryOp::And:
        return "a logical and";
      case BinaryOp::Or:
        return "a logical or";
      default:
        break;
    }
    if (ir::is_comparison(b->op)) return "a comparison";
    return "a bitwise operation";
  }
  if (const auto *u = e.as<ir::Unary>()) {
    if (u->op == ir::UnaryOp::Neg) return "a negation";
    return u->op == ir::UnaryOp::Not ? "a logical not" : "a bitwise not";
  }
  if (const auto *c = e.as<ir::Call>()) return std::string("a call to ") + ir::intrinsic_name(c->op);
  if (e.is<ir::Select>()) return "a select";
  if (e.is<ir::Cast>()) return "a cast";
  if (e.is<ir::Load>()) return "a load index";
  if (e.is<ir::Let>()) return "a let";
  return std::string("a ") + ir::node_kind_name(e.kind());
}

std::string describe_reduction(const ReductionNode &r) {
  return "reduction over " + describe_axes(r.axes);
}

}  // namespace detail
}  // namespace tessera::te
