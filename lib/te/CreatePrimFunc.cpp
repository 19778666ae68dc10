//===- CreatePrimFunc.cpp - Tensor expressions to a TensorIR PrimFunc ------===//
//
// The output follows TVM's te.create_prim_func, so that a TE program and the
// TVMScript a TVM user would write for it are structurally equal: one
// perfectly nested serial loop nest per compute stage, one block per stage
// with iter vars bound one to one to the loops, reads/writes inferred exactly
// as the parser infers them, and intermediates allocated by the root block.
//
//===----------------------------------------------------------------------===//
#include <unordered_map>
#include <unordered_set>

#include "Nodes.h"

#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Functor.h"
#include "tessera/te/Tensor.h"

namespace tessera::te {

using detail::TensorNode;
using ir::Expr;
using ir::Stmt;
using ir::Var;

namespace {

// Replaces a compute's index variables and reduce axes by the block's iter
// vars, and rebuilds every load as a plain ir::Load (dropping the link to the
// TE graph that TensorLoadNode carries).
class StageRewriter : public ir::IRMutator {
 public:
  std::unordered_map<const ir::VarNode *, Expr> map;

 protected:
  Expr visit_(const ir::VarNode *op, const Expr &self) override {
    auto it = map.find(op);
    return it == map.end() ? self : it->second;
  }
  Expr visit_(const ir::Load *op, const Expr &self) override {
    bool changed = false;
    std::vector<Expr> indices = mutate_list(op->indices, changed);
    return ir::Load::make(op->buffer, std::move(indices));
  }
};

// Collects the variables of expressions, each once, in order of appearance.
struct VarCollector : ir::IRVisitor {
  std::vector<Var> vars;
  std::unordered_set<const ir::VarNode *> seen;
  void visit(const Expr &e) override {
    if (e.is<ir::VarNode>()) {
      if (seen.insert(e.as<ir::VarNode>()).second) vars.push_back(Var::from(e));
      return;
    }
    ir::IRVisitor::visit(e);
  }
};

// Finds the first variable of a stage that is neither allowed nor let-bound.
struct FreeVarFinder : ir::IRVisitor {
  std::unordered_set<const ir::VarNode *> allowed;
  const ir::VarNode *found = nullptr;
  void visit_(const ir::VarNode *op) override {
    if (!found && !allowed.count(op)) found = op;
  }
  void visit_(const ir::Let *op) override {
    allowed.insert(op->var.get());
    ir::IRVisitor::visit_(op);
  }
  void visit_(const ir::LetStmt *op) override {
    allowed.insert(op->var.get());
    ir::IRVisitor::visit_(op);
  }
};

struct Loop {
  Var var;
  Expr min, extent;
};

class PrimFuncBuilder {
 public:
  PrimFuncBuilder(const std::vector<Tensor> &args, std::string name)
      : args_(args), name_(std::move(name)), what_("create_prim_func '" + name_ + "'") {}

  ir::PrimFunc build() {
    // Step 1. Check the arguments.
    if (args_.empty()) throw TeError(what_ + ": no arguments");
    for (size_t i = 0; i < args_.size(); ++i) {
      if (!args_[i].defined())
        throw TeError(what_ + ": argument " + std::to_string(i) + " is an undefined tensor");
      if (!is_arg_.insert(args_[i].node().get()).second)
        throw TeError(what_ + ": tensor '" + args_[i].name() + "' is passed twice");
    }

    // Step 2. Order the stages: post-order DFS from the arguments.
    for (const Tensor &t : args_) visit(t.node().get(), nullptr);

    // Step 3. Parameters: a handle and a buffer per argument; their shape
    // variables are the only free variables the body may use.
    std::vector<Var> params;
    std::vector<std::pair<Var, ir::Buffer>> buffer_map;
    VarCollector shape_vars;
    for (const Tensor &t : args_) {
      Var handle("var_" + t.name(), ir::DataType::handle());
      params.push_back(handle);
      buffer_map.emplace_back(handle, t.buffer());
      for (const Expr &e : t.shape()) shape_vars.visit(e);
    }
    shape_vars_ = std::move(shape_vars.seen);

    // Step 4. One loop nest per compute stage; intermediates go to the root block.
    std::vector<Stmt> stages;
    std::vector<ir::Buffer> allocs;
    for (const TensorNode *t : order_) {
      if (t->is_placeholder) continue;
      if (!is_arg_.count(t)) {
        check_intermediate_shape(*t);
        allocs.push_back(t->buffer);
      }
      stages.push_back(emit_stage(*t));
    }
    if (stages.empty()) throw TeError(what_ + ": nothing to compute: every argument is a placeholder");

    // Step 5. The root block and the function.
    Stmt root = ir::Block::make("root", {}, {}, Expr(), {}, {}, std::move(allocs), std::nullopt,
                                ir::Seq::make(std::move(stages)));
    return ir::PrimFunc::make(name_, std::move(params), std::move(buffer_map), std::move(root),
                              {{"tir.noalias", true}});
  }

 private:
  void visit(const TensorNode *t, const TensorNode *reader) {
    if (!visited_.insert(t).second) return;
    if (t->is_placeholder && !is_arg_.count(t))
      throw TeError(what_ + ": placeholder '" + t->name + "' (read by '" + reader->name +
                    "') is not in the argument list");
    for (const Tensor &in : t->inputs) visit(in.node().get(), t);
    order_.push_back(t);
  }

  void check_intermediate_shape(const TensorNode &t) {
    VarCollector vars;
    for (const Expr &e : t.shape) vars.visit(e);
    for (const Var &v : vars.vars)
      if (!shape_vars_.count(v.get()))
        throw TeError(what_ + ": the shape of intermediate '" + t.name + "' uses '" + v.name() +
                      "', which is not a dimension of any argument");
  }

  // A block's iter var domains may not depend on loops, so a reduce axis's
  // range may use only the arguments' dimensions (no triangular reductions).
  void check_reduce_domain(const TensorNode &t, const ReduceAxis &k) {
    VarCollector vars;
    vars.visit(k.dom().min);
    vars.visit(k.dom().extent);
    for (const Var &v : vars.vars)
      if (!shape_vars_.count(v.get()))
        throw TeError("compute '" + t.name + "': the range of reduce axis '" + k.name() + "' uses '" +
                      v.name() + "', which is not a dimension of any argument");
  }

  // for i, j, k in T.grid(...): with T.block(name): v_i, v_j, v_k = T.axis.remap("SSR", ...)
  Stmt emit_stage(const TensorNode &t) {
    const detail::ReductionNode *red = detail::as_reduction(t.body);
    std::vector<ir::IterVar> iter_vars;
    std::vector<Expr> bindings;
    std::vector<Loop> loops;
    std::vector<Expr> store_indices;
    StageRewriter rewrite;
    FreeVarFinder free_vars;
    free_vars.allowed = shape_vars_;

    auto add_axis = [&](const Var &axis, ir::Range dom, ir::IterKind kind) {
      Var loop(axis.name(), axis.dtype());
      Var v("v_" + axis.name(), axis.dtype());
      loops.push_back({loop, dom.min, dom.extent});
      iter_vars.push_back({v, std::move(dom), kind});
      bindings.push_back(loop);
      rewrite.map[axis.get()] = v;
      free_vars.allowed.insert(v.get());
    };
    for (size_t d = 0; d < t.indices.size(); ++d) {
      add_axis(t.indices[d], ir::Range::from_extent(t.shape[d]), ir::IterKind::Spatial);
      store_indices.push_back(iter_vars.back().var);
    }
    if (red)
      for (const ReduceAxis &k : red->axes) {
        check_reduce_domain(t, k);
        add_axis(k, k.dom(), ir::IterKind::Reduce);
      }

    // The body, and for a reduction the init and the update
    // `C[v] = combine(C[v], value)` (the accumulator on the left, as in TVM).
    std::optional<Stmt> init;
    Stmt body;
    if (red) {
      Expr value = rewrite.mutate(red->source);
      Expr acc = ir::Load::make(t.buffer, store_indices);
      Expr update = ir::substitute(red->combined, {{red->lhs, acc}, {red->rhs, value}});
      init = ir::Store::make(t.buffer, red->identity, store_indices);
      body = ir::Store::make(t.buffer, update, store_indices);
    } else {
      body = ir::Store::make(t.buffer, rewrite.mutate(t.body), store_indices);
    }
    free_vars.visit(body);
    if (init) free_vars.visit(*init);
    if (free_vars.found)
      throw TeError("compute '" + t.name + "' uses variable '" + free_vars.found->name +
                    "', which is neither one of its indices or reduce axes nor a dimension of an argument");

    ir::AccessRegions regions = ir::infer_access_regions(init, body, {});
    Stmt s =
        ir::Block::make(t.name, std::move(iter_vars), std::move(bindings), Expr(), std::move(regions.reads),
                        std::move(regions.writes), {}, std::move(init), std::move(body));
    for (auto it = loops.rbegin(); it != loops.rend(); ++it)
      s = ir::For::make(it->var, it->min, it->extent, ir::ForKind::Serial, std::move(s));
    return s;
  }

  const std::vector<Tensor> &args_;
  std::string name_;
  std::string what_;
  std::unordered_set<const TensorNode *> is_arg_;
  std::unordered_set<const TensorNode *> visited_;
  std::vector<const TensorNode *> order_;
  std::unordered_set<const ir::VarNode *> shape_vars_;
};

}  // namespace

ir::PrimFunc create_prim_func(const std::vector<Tensor> &args, std::string name) {
  return PrimFuncBuilder(args, std::move(name)).build();
}

}  // namespace tessera::te
