//===- tessera/ir/Stmt.h - Statement nodes ---------------------------------===//
//
// The statement nodes of the tensor IR, in the spirit of TensorIR:
//
//   For         for i in T.serial(0, 128): ...   (kind: serial/parallel/vectorized/
//               unrolled/thread-bound with a thread tag; annotations)
//   Block       with T.block("C"): vi, vk = T.axis.remap("SR", [i, k]) ...
//               iter vars with domains and kinds, their bindings to outer loop
//               values, a predicate (T.where), reads/writes regions, allocated
//               buffers, an optional init statement, annotations. (TensorIR's
//               Block and BlockRealize are one node here.)
//   Store       A[i, j] = value
//   Seq         several statements in order
//   IfThenElse  if cond: ... else: ...
//   LetStmt     x: T.int32 = value  (scoped over body)
//   Evaluate    T.evaluate(expr)
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/ir/Annotation.h"
#include "tessera/ir/Expr.h"

namespace tessera::ir {

/// Base of every statement node.
struct StmtNode : Node {
  explicit StmtNode(NodeKind k) : Node(k) {}
};

/// A handle to an immutable statement.
class Stmt : public NodeHandle<StmtNode> {
 public:
  using NodeHandle::NodeHandle;
};

/// How a loop runs. Thread-bound loops still have serial semantics in the
/// interpreter; lowering maps them to blockIdx/threadIdx.
enum class ForKind : uint8_t { Serial, Parallel, Vectorized, Unrolled, ThreadBinding };
/// "serial", "parallel", "vectorized", "unroll", "thread_binding" (TVMScript spellings).
const char *for_kind_name(ForKind k);

struct For : StmtNode {
  static constexpr NodeKind kKind = NodeKind::For;
  For() : StmtNode(kKind) {}
  Var loop_var;
  Expr min, extent;
  ForKind for_kind = ForKind::Serial;
  /// "threadIdx.x", "blockIdx.y", "vthread", ... when for_kind is ThreadBinding.
  std::string thread_tag;
  Annotations annotations;
  Stmt body;

  /// Requires integer min/extent of the loop variable's type; a thread tag
  /// exactly when the kind is ThreadBinding.
  static Stmt make(Var loop_var, Expr min, Expr extent, ForKind kind, Stmt body,
                   std::string thread_tag = "", Annotations annotations = {});
  /// A copy with a new body (returns this node when the body is the same).
  Stmt with_body(Stmt body) const;
};

/// Whether a block iterator is data-parallel or a reduction (or opaque, e.g. a scan).
enum class IterKind : uint8_t { Spatial, Reduce, Opaque };
/// "S", "R", "O"
char iter_kind_char(IterKind k);

/// One block iterator: `vi = T.axis.spatial(128, i)` is {vi, [0, 128), Spatial}
/// with binding `i` (the binding lives in Block::bindings).
struct IterVar {
  Var var;
  Range dom;
  IterKind kind = IterKind::Spatial;
};

struct Block : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Block;
  Block() : StmtNode(kKind) {}
  std::string name;
  std::vector<IterVar> iter_vars;
  /// One value per iter var, in terms of the enclosing loops.
  std::vector<Expr> bindings;
  /// T.where(...): the block runs only where this holds. Always defined (true by default).
  Expr predicate;
  std::vector<BufferRegion> reads, writes;
  /// Buffers allocated by this block (T.alloc_buffer), live during the block.
  std::vector<Buffer> allocs;
  /// Runs before the first reduction step (T.init()).
  std::optional<Stmt> init;
  Stmt body;
  Annotations annotations;

  /// Builds a block. Checks that bindings match iter vars one to one. An
  /// undefined predicate becomes `True`.
  static Stmt make(std::string name, std::vector<IterVar> iter_vars, std::vector<Expr> bindings,
                   Expr predicate, std::vector<BufferRegion> reads, std::vector<BufferRegion> writes,
                   std::vector<Buffer> allocs, std::optional<Stmt> init, Stmt body,
                   Annotations annotations = {});
  /// A copy with a new body (returns this node when the body is the same).
  Stmt with_body(Stmt body) const;
};

struct Store : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Store;
  Store(Buffer b, Expr v, std::vector<Expr> idx)
      : StmtNode(kKind), buffer(std::move(b)), value(std::move(v)), indices(std::move(idx)) {}
  const Buffer buffer;
  const Expr value;
  const std::vector<Expr> indices;
  /// Requires value.dtype() == buffer.dtype() and one integer index per dimension.
  static Stmt make(Buffer buffer, Expr value, std::vector<Expr> indices);
};

struct Seq : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Seq;
  explicit Seq(std::vector<Stmt> s) : StmtNode(kKind), stmts(std::move(s)) {}
  const std::vector<Stmt> stmts;
  /// Flattens nested sequences; a single statement is returned as is.
  static Stmt make(std::vector<Stmt> stmts);
};

struct IfThenElse : StmtNode {
  static constexpr NodeKind kKind = NodeKind::IfThenElse;
  IfThenElse(Expr c, Stmt t, std::optional<Stmt> e)
      : StmtNode(kKind), cond(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
  const Expr cond;
  const Stmt then_case;
  const std::optional<Stmt> else_case;
  static Stmt make(Expr cond, Stmt then_case, std::optional<Stmt> else_case = std::nullopt);
};

struct LetStmt : StmtNode {
  static constexpr NodeKind kKind = NodeKind::LetStmt;
  LetStmt(Var v, Expr val, Stmt b) : StmtNode(kKind), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  const Var var;
  const Expr value;
  const Stmt body;
  static Stmt make(Var var, Expr value, Stmt body);
};

struct Evaluate : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Evaluate;
  explicit Evaluate(Expr v) : StmtNode(kKind), value(std::move(v)) {}
  const Expr value;
  static Stmt make(Expr value);
};

}  // namespace tessera::ir
