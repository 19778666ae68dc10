//===- tessera/ir/Node.h - Base of immutable, reference-counted IR nodes ---===//
//
// Every IR node is immutable once built and shared through std::shared_ptr.
// A node carries a kind tag (NodeKinds.def) so `as<T>()` needs no RTTI:
//
//   if (const auto *add = e.as<ir::Binary>()) ...
//
// Handles (`Expr`, `Stmt`, `Var`, `Buffer`) are cheap to copy and compare by
// identity with `same_as`; structural comparison is in StructuralEqual.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>

namespace tessera::ir {

/// The kind tag of every node, generated from NodeKinds.def.
enum class NodeKind : uint8_t {
#define TESSERA_EXPR_NODE(Name) Name,
#define TESSERA_STMT_NODE(Name) Name,
#include "tessera/ir/NodeKinds.def"
};

/// Name of a node kind, e.g. "Binary".
const char *node_kind_name(NodeKind kind);

/// Base of every IR node. Nodes are always owned by a shared_ptr (factories
/// use make_shared), so a node can hand out its own handle: `with_*` methods
/// return the node itself when nothing changes.
struct Node : std::enable_shared_from_this<Node> {
  explicit Node(NodeKind k) : kind(k) {}
  Node(const Node &) = delete;
  Node &operator=(const Node &) = delete;
  virtual ~Node() = default;
  const NodeKind kind;
};

/// Common handle logic: a nullable shared pointer to a const node of base type `Base`.
template <typename Base>
class NodeHandle {
 public:
  NodeHandle() = default;
  explicit NodeHandle(std::shared_ptr<const Base> p) : ptr_(std::move(p)) {}

  bool defined() const { return ptr_ != nullptr; }
  explicit operator bool() const { return defined(); }
  const Base *get() const { return ptr_.get(); }
  const Base *operator->() const { return ptr_.get(); }
  const Base &operator*() const { return *ptr_; }
  const std::shared_ptr<const Base> &ptr() const { return ptr_; }
  NodeKind kind() const { return ptr_->kind; }

  /// Identity comparison (the same node), not structural.
  bool same_as(const NodeHandle &o) const { return ptr_ == o.ptr_; }

  /// The node as `T` when its kind is `T::kKind`, else nullptr.
  template <typename T>
  const T *as() const {
    if (ptr_ && ptr_->kind == T::kKind) return static_cast<const T *>(ptr_.get());
    return nullptr;
  }
  template <typename T>
  bool is() const {
    return ptr_ && ptr_->kind == T::kKind;
  }

 protected:
  std::shared_ptr<const Base> ptr_;
};

}  // namespace tessera::ir
