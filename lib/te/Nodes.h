//===- Nodes.h - Private node types of the TE builder ----------------------===//
//
// The TE builder keeps its graph inside ordinary IR nodes, so that tensor
// expressions are plain ir::Exprs that every IR builder accepts:
//   - a reduce axis is a VarNode subclass that also holds its range;
//   - a reduction (`sum(...)`) is a VarNode subclass that holds the reducer,
//     the source and the axes: a placeholder value that only `compute`
//     accepts, as its whole body;
//   - `A(i, j)` is a Load subclass that also holds A's TensorNode, which is
//     how a compute finds (and keeps alive) the tensors it reads.
// All three keep their base node's kind tag, so IR code sees a Var or a Load;
// only this library looks through them (with dynamic_cast). create_prim_func
// rebuilds every load as a plain ir::Load and never emits the other two.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/te/Tensor.h"

namespace tessera::te::detail {

struct ReduceAxisNode : ir::VarNode {
  ReduceAxisNode(std::string name, ir::DataType t, ir::Range d)
      : VarNode(std::move(name), t), dom(std::move(d)) {}
  const ir::Range dom;
};

struct ReductionNode : ir::VarNode {
  ReductionNode(ir::DataType t, std::string reducer_name, ir::Var lhs, ir::Var rhs, ir::Expr combined,
                ir::Expr identity, ir::Expr source, std::vector<ReduceAxis> axes)
      : VarNode(reducer_name, t),
        reducer_name(std::move(reducer_name)),
        lhs(std::move(lhs)),
        rhs(std::move(rhs)),
        combined(std::move(combined)),
        identity(std::move(identity)),
        source(std::move(source)),
        axes(std::move(axes)) {}
  const std::string reducer_name;
  /// `combined` is combine(lhs, rhs) on these two fresh variables.
  const ir::Var lhs, rhs;
  const ir::Expr combined;
  const ir::Expr identity;
  const ir::Expr source;
  const std::vector<ReduceAxis> axes;
};

struct TensorNode {
  std::string name;
  ir::DataType dtype;
  std::vector<ir::Expr> shape;
  ir::Buffer buffer;
  bool is_placeholder = true;
  /// Compute only: the index variables and the body written in them (a
  /// ReductionNode for a reduction), and the tensors it reads in first-use order.
  std::vector<ir::Var> indices;
  ir::Expr body;
  std::vector<Tensor> inputs;
};

struct TensorLoadNode : ir::Load {
  TensorLoadNode(std::shared_ptr<const TensorNode> t, std::vector<ir::Expr> idx)
      : Load(t->buffer, std::move(idx)), tensor(std::move(t)) {}
  const std::shared_ptr<const TensorNode> tensor;
};

/// The reduction node of `e`, or nullptr.
const ReductionNode *as_reduction(const ir::Expr &e);
/// The reduce-axis node of `e` when it is a reduce axis variable, or nullptr.
const ReduceAxisNode *as_reduce_axis(const ir::Expr &e);
/// The tensor a load reads when it was built by Tensor::load, or nullptr.
const TensorNode *as_tensor_load(const ir::Expr &e);

/// "an addition", "a call to exp", "a cast", ...: what the node `e` is, for messages.
std::string describe_node(const ir::Expr &e);
/// "reduction over axis 'k'", "reduction over axes 'rh', 'rw'".
std::string describe_reduction(const ReductionNode &r);

}  // namespace tessera::te::detail
