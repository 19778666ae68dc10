//===- tessera/ir/Buffer.h - Buffers and buffer regions --------------------===//
//
// A Buffer is a multi-dimensional array: name, element type, shape (which may
// hold symbolic variables such as `n`), optional strides and a storage scope
// ("global", "shared", "shared.dyn", "local", ...). Buffers are identified by
// node identity, like variables.
//
//   A: T.Buffer((n, 128), "float16")             // a global parameter buffer
//   A_shared = T.alloc_buffer((64, 32), scope="shared")
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "tessera/ir/ExprHandle.h"

namespace tessera::ir {

struct BufferNode {
  std::string name;
  DataType dtype;
  std::vector<Expr> shape;
  /// Empty means compact row-major.
  std::vector<Expr> strides;
  /// "global", "shared", "shared.dyn", "local", "warp", ...
  std::string scope = "global";
};

/// A handle to an immutable buffer description.
class Buffer {
 public:
  Buffer() = default;
  /// Creates a new buffer (distinct from every other buffer).
  static Buffer make(std::string name, DataType dtype, std::vector<Expr> shape,
                     std::string scope = "global", std::vector<Expr> strides = {});

  bool defined() const { return ptr_ != nullptr; }
  const BufferNode *get() const { return ptr_.get(); }
  const BufferNode *operator->() const { return ptr_.get(); }
  bool same_as(const Buffer &o) const { return ptr_ == o.ptr_; }

  const std::string &name() const { return ptr_->name; }
  DataType dtype() const { return ptr_->dtype; }
  const std::vector<Expr> &shape() const { return ptr_->shape; }
  const std::string &scope() const { return ptr_->scope; }
  int ndim() const { return static_cast<int>(ptr_->shape.size()); }

  /// A new buffer identical to this one but for the given field (a new identity).
  Buffer with_scope(std::string scope) const;
  Buffer with_name(std::string name) const;

 private:
  std::shared_ptr<const BufferNode> ptr_;
};

struct BufferHash {
  size_t operator()(const Buffer &b) const { return std::hash<const void *>()(b.get()); }
};
struct BufferEq {
  bool operator()(const Buffer &a, const Buffer &b) const { return a.same_as(b); }
};

/// A rectangular region of a buffer, one Range per dimension:
///   A[vi, vk:vk + 32]  ->  {A, {[vi, 1), [vk, 32)}}
struct BufferRegion {
  Buffer buffer;
  std::vector<Range> region;
  /// The whole buffer.
  static BufferRegion full(const Buffer &b);
};

}  // namespace tessera::ir
