//===- Tensor.cpp - Placeholders, computes and tensor indexing -------------===//
#include "tessera/te/Tensor.h"

#include <unordered_set>

#include "Nodes.h"

#include "tessera/ir/Functor.h"

namespace tessera::te {

using ir::DataType;
using ir::Expr;
using ir::Var;

Shape::Shape(std::initializer_list<Dim> dims) {
  for (const Dim &d : dims) dims_.push_back(d.expr());
}
Shape::Shape(std::vector<Expr> dims) : dims_(std::move(dims)) {}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

static const detail::TensorNode &node_of(const std::shared_ptr<const detail::TensorNode> &n) {
  TESSERA_ICHECK(n) << "use of an undefined te::Tensor";
  return *n;
}

const std::string &Tensor::name() const {
  return node_of(node_).name;
}
DataType Tensor::dtype() const {
  return node_of(node_).dtype;
}
const std::vector<Expr> &Tensor::shape() const {
  return node_of(node_).shape;
}
int Tensor::ndim() const {
  return static_cast<int>(node_of(node_).shape.size());
}
const ir::Buffer &Tensor::buffer() const {
  return node_of(node_).buffer;
}
bool Tensor::is_placeholder() const {
  return node_of(node_).is_placeholder;
}
bool Tensor::is_reduction() const {
  return detail::as_reduction(node_of(node_).body) != nullptr;
}
std::vector<Tensor> Tensor::inputs() const {
  return node_of(node_).inputs;
}

Expr Tensor::operator()(std::initializer_list<Dim> idx) const {
  std::vector<Expr> v;
  for (const Dim &d : idx) v.push_back(d.expr());
  return load(std::move(v));
}

Expr Tensor::operator()(const std::vector<Var> &idx) const {
  return load(std::vector<Expr>(idx.begin(), idx.end()));
}

Expr Tensor::load(std::vector<Expr> indices) const {
  const detail::TensorNode &n = node_of(node_);
  if (indices.size() != n.shape.size())
    throw TeError("tensor '" + n.name + "' has " + std::to_string(n.shape.size()) +
                  " dimensions but is indexed with " + std::to_string(indices.size()) + " indices");
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d].defined())
      throw TeError("tensor '" + n.name + "': index " + std::to_string(d) + " is undefined");
    if (!indices[d].dtype().is_integer())
      throw TeError("tensor '" + n.name + "': index " + std::to_string(d) + " has type " +
                    indices[d].dtype().str() + ", expected an integer");
  }
  return Expr(std::make_shared<detail::TensorLoadNode>(node_, std::move(indices)));
}

//===----------------------------------------------------------------------===//
// Placeholder
//===----------------------------------------------------------------------===//

static void check_shape(const Shape &shape, const std::string &what) {
  for (size_t d = 0; d < shape.size(); ++d) {
    const Expr &e = shape.dims()[d];
    if (!e.defined()) throw TeError(what + ": shape entry " + std::to_string(d) + " is undefined");
    if (!e.dtype().is_integer())
      throw TeError(what + ": shape entry " + std::to_string(d) + " has type " + e.dtype().str() +
                    ", expected an integer");
    if (detail::as_reduce_axis(e) || detail::as_reduction(e))
      throw TeError(what + ": shape entry " + std::to_string(d) + " is a reduce axis or a reduction");
  }
}

static void check_element_type(DataType t, const std::string &what) {
  if (t.is_void() || t.is_handle()) throw TeError(what + ": elements cannot have type " + t.str());
}

Tensor placeholder(Shape shape, DataType dtype, std::string name) {
  std::string what = "placeholder '" + name + "'";
  check_shape(shape, what);
  check_element_type(dtype, what);
  auto n = std::make_shared<detail::TensorNode>();
  n->name = std::move(name);
  n->dtype = dtype;
  n->shape = shape.dims();
  n->buffer = ir::Buffer::make(n->name, dtype, n->shape);
  n->is_placeholder = true;
  return Tensor(std::move(n));
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

namespace detail {

std::vector<Var> make_index_vars(const Shape &shape, const std::vector<std::string> &names,
                                 const std::string &op_name) {
  std::string what = "compute '" + op_name + "'";
  check_shape(shape, what);
  if (!names.empty() && names.size() != shape.size())
    throw TeError(what + ": " + std::to_string(names.size()) + " index names given for a shape with " +
                  std::to_string(shape.size()) + " dimensions");
  std::vector<Var> out;
  for (size_t d = 0; d < shape.size(); ++d)
    out.emplace_back(names.empty() ? "i" + std::to_string(d) : names[d], shape.dims()[d].dtype());
  return out;
}

void throw_arity_error(const std::string &op_name, size_t ndim) {
  throw TeError("compute '" + op_name + "': the function does not take " + std::to_string(ndim) +
                " index arguments (the shape has " + std::to_string(ndim) + " dimensions)");
}

namespace {

// Walks a compute body (not the inside of reductions) and reports the first
// reduction or reduce axis found, with the node that encloses it.
struct BodyChecker : ir::IRVisitor {
  std::vector<Expr> stack;
  const ReductionNode *reduction = nullptr;
  const ReduceAxisNode *axis = nullptr;
  Expr parent;
  void visit(const Expr &e) override {
    stack.push_back(e);
    ir::IRVisitor::visit(e);
    stack.pop_back();
  }
  void visit_(const ir::VarNode *op) override {
    if (reduction || axis) return;
    if (const auto *r = dynamic_cast<const ReductionNode *>(op))
      reduction = r;
    else if (const auto *a = dynamic_cast<const ReduceAxisNode *>(op))
      axis = a;
    else
      return;
    if (stack.size() >= 2) parent = stack[stack.size() - 2];
  }
};

// Collects the tensors read by an expression, in post order (indices before
// the load that uses them, as TVM's InputTensors does), each once.
struct InputCollector : ir::IRVisitor {
  std::vector<Tensor> inputs;
  std::unordered_set<const TensorNode *> seen;
  void visit_(const ir::Load *op) override {
    ir::IRVisitor::visit_(op);
    if (const auto *tl = dynamic_cast<const TensorLoadNode *>(op); tl && seen.insert(tl->tensor.get()).second)
      inputs.emplace_back(tl->tensor);
  }
  void visit_(const ir::VarNode *op) override {
    if (const auto *r = dynamic_cast<const ReductionNode *>(op)) visit(r->source);
  }
};

}  // namespace

Tensor make_compute(std::string name, Shape shape, std::vector<Var> indices, Expr body) {
  std::string what = "compute '" + name + "'";
  if (!body.defined()) throw TeError(what + ": the function returned an undefined expression");
  check_element_type(body.dtype(), what);

  // A reduction must be the whole body; elsewhere no reduction or reduce axis
  // may appear. (The source of a reduction was checked by te::reduce.)
  if (!as_reduction(body)) {
    BodyChecker check;
    check.visit(body);
    if (check.reduction)
      throw TeError(what + ": " + describe_reduction(*check.reduction) +
                    " must be the whole body, found it inside " + describe_node(check.parent));
    if (check.axis)
      throw TeError(what + ": reduce axis '" + check.axis->name + "' is used outside a reduction");
  }

  InputCollector inputs;
  inputs.visit(body);

  auto n = std::make_shared<TensorNode>();
  n->name = std::move(name);
  n->dtype = body.dtype();
  n->shape = shape.dims();
  n->buffer = ir::Buffer::make(n->name, n->dtype, n->shape);
  n->is_placeholder = false;
  n->indices = std::move(indices);
  n->body = std::move(body);
  n->inputs = std::move(inputs.inputs);
  return Tensor(std::move(n));
}

}  // namespace detail
}  // namespace tessera::te
