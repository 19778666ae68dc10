//===- tessera/ir/Func.h - PrimFunc and Module -----------------------------===//
//
// A PrimFunc is one tensor program:
//
//   @T.prim_func
//   def main(a: T.handle, B: T.Buffer((128,), "float32"), m: T.int32):
//       n = T.int64()
//       A = T.match_buffer(a, (n, 128), "float32")
//       ...
//
// Parameters are variables: a `handle` parameter is bound to a Buffer in
// `buffer_map` (both the `T.Buffer` annotation and `T.match_buffer` produce
// that); any other parameter is a scalar. Symbolic shape variables (`n`) are
// the free variables of the parameter buffers' shapes. The body is always a
// root Block (named "root", no iter vars) that owns the function-level
// `T.alloc_buffer`s, as in TensorIR.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/ir/Stmt.h"

namespace tessera::ir {

struct PrimFuncNode {
  std::string name;
  std::vector<Var> params;
  /// (handle parameter, its buffer), in parameter order.
  std::vector<std::pair<Var, Buffer>> buffer_map;
  Stmt body;
  Annotations attrs;
};

class PrimFunc {
 public:
  PrimFunc() = default;
  /// Builds a function. A body that is not already a root block is wrapped in
  /// one. Every buffer_map key must be a handle parameter.
  static PrimFunc make(std::string name, std::vector<Var> params,
                       std::vector<std::pair<Var, Buffer>> buffer_map, Stmt body,
                       Annotations attrs = {});

  bool defined() const { return ptr_ != nullptr; }
  const PrimFuncNode *get() const { return ptr_.get(); }
  const PrimFuncNode *operator->() const { return ptr_.get(); }
  bool same_as(const PrimFunc &o) const { return ptr_ == o.ptr_; }

  const std::string &name() const { return ptr_->name; }
  const std::vector<Var> &params() const { return ptr_->params; }
  const std::vector<std::pair<Var, Buffer>> &buffer_map() const { return ptr_->buffer_map; }
  const Stmt &body() const { return ptr_->body; }
  const Annotations &attrs() const { return ptr_->attrs; }
  /// The root block of the body.
  const Block &root_block() const;

  /// The buffer bound to a handle parameter, or an undefined Buffer.
  Buffer buffer_of(const Var &param) const;
  /// Buffer parameters in parameter order.
  std::vector<Buffer> param_buffers() const;
  /// Whether `b` is bound to one of the parameters (the caller's data, not
  /// an intermediate).
  bool is_param_buffer(const Buffer &b) const;
  /// Symbolic shape variables, in order of first appearance in the parameter buffers' shapes.
  std::vector<Var> shape_vars() const;

  /// A copy with a new body (this function when the body is the same).
  PrimFunc with_body(Stmt body) const;
  PrimFunc with_name(std::string name) const;

 private:
  std::shared_ptr<const PrimFuncNode> ptr_;
};

/// Several named PrimFuncs (`@I.ir_module class Module:`), in source order.
struct Module {
  std::vector<PrimFunc> funcs;
  /// What the parser accepted but flags, rendered "FILE:LINE:COL: warning: ..."
  /// with the source line (a store that converts a value with loss, say).
  std::vector<std::string> warnings;
  /// The function with this name, or an undefined PrimFunc.
  PrimFunc lookup(const std::string &name) const;
};

}  // namespace tessera::ir
