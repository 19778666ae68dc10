//===- Builder.h - Giving the Python AST its TVMScript meaning --*- C++ -*-===//
//
// Private to lib/script. The Builder walks the AST of Ast.h and builds IR:
// expressions with TVMScript's typing (BuildExpr.cpp), statements, loops and
// blocks (BuildStmt.cpp), functions, buffers and modules (BuildFunc.cpp).
//
// Names live in a stack of scopes; every binding creates a new Var, so a name
// may be rebound in sibling scopes and shadowed in nested ones. Python
// literals stay "weak" (Operand::lit) until they meet a typed operand or a
// buffer, as in TVMScript.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "Ast.h"
#include "tessera/ir/Func.h"

namespace tessera::script::detail {

/// A scalar TVMScript type name ("float16", "int64", "bool", "handle"); vector
/// types ("float32x4") and "void" are not accepted in programs.
inline std::optional<ir::DataType> parse_scalar_type(std::string_view name) {
  auto t = ir::DataType::parse(name);
  if (!t || t->is_void() || t->lanes() != 1) return std::nullopt;
  return t;
}

/// An expression with the literal it came from, when it is an untyped Python literal.
struct Operand {
  enum class Lit : uint8_t { None, Int, Float, Bool };
  Operand() = default;
  Operand(ir::Expr e, Lit lit = Lit::None, int64_t int_value = 0, double float_value = 0)
      : e(std::move(e)), lit(lit), int_value(int_value), float_value(float_value) {}
  ir::Expr e;
  Lit lit = Lit::None;
  int64_t int_value = 0;
  double float_value = 0;
  /// Where the literal is written (its sign included), for range errors.
  Pos pos;
  bool is_lit() const { return lit != Lit::None; }
};

/// A buffer name that stands for part of another buffer: a block's
/// T.match_buffer of a region (Region), or a T.decl_buffer / T.Buffer over
/// another buffer's data or allocation (Reshape: the same elements in
/// row-major order under another shape). Its loads, stores and regions are
/// rewritten onto the base buffer (BuildBuffers.cpp).
struct View {
  enum class Kind : uint8_t { Region, Reshape };
  Kind kind = Kind::Region;
  std::string name;
  std::vector<ir::Expr> shape;
  /// Region: the base index of the view's origin, per base dimension.
  std::vector<ir::Expr> offsets;
  /// Region: the base dimension of each view dimension.
  std::vector<int> dims;
};

/// What a name is bound to.
struct Binding {
  /// Allocation: `X_data = T.allocate(...)`, memory a T.decl_buffer names.
  /// Tuple: `for iters in T.grid(...)`, the loop variables as one name
  /// (`elements`), for T.axis.remap("SS", iters) and iters[k].
  enum class Kind : uint8_t { Scalar, Buffer, Handle, Allocation, Tuple };
  Kind kind = Kind::Scalar;
  ir::Expr expr;
  /// Buffer: the buffer (a view's base). Allocation: the buffer made for it by
  /// the first T.decl_buffer over it (undefined before).
  ir::Buffer buffer;
  ir::Var handle;
  std::optional<View> view;
  /// Allocation: what T.allocate asked for.
  std::vector<ir::Expr> alloc_shape;
  ir::DataType alloc_dtype;
  std::string alloc_scope;
  std::vector<ir::Expr> elements;
};

/// Declarations collected while building one `with T.block(...)`.
struct BlockFrame {
  std::string name;
  bool is_root = false;
  std::vector<ir::IterVar> iter_vars;
  std::vector<ir::Expr> bindings;
  ir::Expr predicate;
  std::optional<std::vector<ir::BufferRegion>> reads, writes;
  std::vector<ir::Buffer> allocs;
  std::optional<ir::Stmt> init;
  ir::Annotations annotations;
};

/// Declarations collected while building one function.
struct FuncFrame {
  std::vector<ir::Var> params;
  std::vector<std::pair<ir::Var, ir::Buffer>> buffer_map;
  std::unordered_set<const void *> matched_handles;
  ir::Annotations attrs;
  std::vector<ir::Buffer> root_allocs;
};

class Builder {
 public:
  explicit Builder(const SourceFile &src) : src_(src) {}

  /// Builds every function of a file (bare prim_funcs or one ir_module class).
  ir::Module build_module(const PyBody &file);
  /// Position of the last statement started (for errors the builder did not foresee).
  Pos last_pos() const { return stmt_pos_; }

 private:
  // ---- BuildFunc.cpp ----
  ir::PrimFunc build_func(const PyStmt &def);
  void check_prim_func_decorator(const PyStmt &def);
  void build_param(const PyParam &p, FuncFrame &f);
  /// T.Buffer(shape, dtype, ...), T.match_buffer(h, shape, ...), T.alloc_buffer(shape, ...):
  /// `first` is the index of the shape argument.
  ir::Buffer build_buffer(const PyExpr &call, size_t first, const std::string &name, const char *what);
  std::vector<ir::Expr> build_shape(const PyExpr &e);
  ir::DataType parse_dtype(const PyExpr &e);
  ir::Annotations build_annotations(const PyExpr &dict);
  ir::AnnValue build_ann_value(const PyExpr &e);

  // ---- BuildStmt.cpp ----
  /// Builds a statement list in a new scope; `x = value` lets cover the rest of the list.
  ir::Stmt build_body(const PyBody &body);
  /// One statement; nullopt for declarations (T.reads, T.axis, T.alloc_buffer, ...).
  std::optional<ir::Stmt> build_stmt(const PyStmt &s);
  std::optional<ir::Stmt> build_assign(const PyStmt &s);
  std::optional<ir::Stmt> build_expr_stmt(const PyStmt &s);
  ir::Stmt build_store(const PyExpr &target, Operand value, Pos value_pos);
  ir::Stmt build_for(const PyStmt &s);
  std::optional<ir::Stmt> build_with(const PyStmt &s);
  ir::Stmt build_block(const PyStmt &s, const PyExpr &call);
  /// `with T.LetStmt(value) as x:` (or var=x): a LetStmt over the `with` body.
  ir::Stmt build_let_stmt(const PyStmt &s, const PyExpr &call);
  ir::Stmt build_if(const PyStmt &s);
  void build_axis(const PyStmt &s, const PyExpr &call);
  std::vector<ir::BufferRegion> build_regions(const PyExpr &call);
  ir::BufferRegion build_region(const PyExpr &e);
  BlockFrame &block_frame(Pos p, const std::string &what);

  // ---- BuildExpr.cpp ----
  Operand build(const PyExpr &e);
  /// The values of `*X` (a Starred expression): a buffer's X.shape, a tuple or
  /// list, or a tuple of loop variables.
  std::vector<Operand> unpack(const PyExpr &starred);
  /// What `x` names as a sequence, and how to quote it: a buffer's A.shape or
  /// a tuple of loop variables; nullopt for anything else.
  std::optional<std::pair<std::vector<ir::Expr>, std::string>> sequence_of(const PyExpr &x) const;
  /// `X.shape[k]` and `iters[k]` (a constant k): the value, or nullopt when
  /// `e` is neither.
  std::optional<Operand> build_element(const PyExpr &e);
  /// build() that must give an integer (indices, extents, shapes).
  ir::Expr build_int(const PyExpr &e, const std::string &what);
  Operand build_call(const PyExpr &e);
  /// A TVM built-in tessera keeps as written (OpaqueCalls.h).
  Operand build_opaque_call(const PyExpr &e, const std::string &fn, const ir::Expr &self = ir::Expr());
  Operand build_binop(const std::string &op, Operand a, Operand b, Pos p);
  Operand build_unary(const std::string &op, Operand a, Pos p);
  Operand build_load(const PyExpr &e);
  /// The value converted to `t` for a store or a typed let: literals convert, others must match.
  ir::Expr convert_to(const Operand &v, ir::DataType t, Pos p, const std::string &what);
  /// A weak literal in type `t` (the type of the other operand), when Python would allow it.
  Operand adapt(const Operand &lit, ir::DataType t);
  /// A literal as a constant of type `t` (integers exactly, floats rounded).
  ir::Expr literal_as(const Operand &v, ir::DataType t);
  /// Fails at the literal's position when its value does not fit `t`: an integer
  /// outside the range of an integer type, or a finite value beyond the largest
  /// finite value of a float type (TVM rejects both rather than wrapping).
  void check_literal_fits(const Operand &v, ir::DataType t);
  ir::Buffer lookup_buffer(const PyExpr &e);
  /// The binding of a buffer name (a view included); ParseError otherwise.
  const Binding &buffer_binding(const PyExpr &e);

  // BuildBuffers.cpp: the buffers of lowered TIR and views.
  /// `X_data = T.allocate(shape, dtype, scope)`.
  void build_allocate(const std::string &name, const PyExpr &call);
  /// `X = T.decl_buffer(...)` or, in a body, `X = T.Buffer(..., data=...)`.
  void build_decl_buffer(const std::string &name, const PyExpr &call, const std::string &fn);
  /// `X = T.match_buffer(A[region], shape, ...)` inside a block.
  void build_region_match(const std::string &name, const PyExpr &call);
  /// A view's indices on its base buffer.
  std::vector<ir::Expr> view_indices(const View &v, const ir::Buffer &base, std::vector<ir::Expr> idx);
  /// A region of a view as a region of its base buffer.
  ir::BufferRegion view_region(const View &v, const ir::Buffer &base, const std::vector<ir::Range> &region);
  // BuildThreads.cpp: thread launches and attributes of lowered TIR.
  /// `tx = T.env_thread("threadIdx.x")`.
  void build_env_thread(const std::string &name, const PyExpr &call);
  /// T.launch_thread(tx, 32) / T.launch_thread("threadIdx.x", 32) (named `name`,
  /// may be empty) and T.attr(node, key, value): the wrapper of their scope.
  std::function<ir::Stmt(ir::Stmt)> build_launch(const PyExpr &call, const std::string &name);
  std::function<ir::Stmt(ir::Stmt)> build_attr(const PyExpr &call);
  /// Adds a buffer to the innermost block's (or the function's) allocations.
  void allocate_here(const ir::Buffer &b, Pos p, const std::string &fn);
  std::string dotted_name(const PyExpr &e) const;
  void expect_args(const PyExpr &call, size_t lo, size_t hi, const std::string &fn);
  void reject_kwargs(const PyExpr &call, const std::string &fn);
  std::string expect_string(const PyExpr &e, const std::string &what);

  // ---- scopes ----
  void push_scope() { scopes_.emplace_back(); }
  void pop_scope() { scopes_.pop_back(); }
  void bind(const std::string &name, Binding b) { scopes_.back()[name] = std::move(b); }
  void bind_scalar(const std::string &name, ir::Expr e) {
    Binding b;
    b.expr = std::move(e);
    bind(name, std::move(b));
  }
  const Binding *lookup(const std::string &name) const;

  const SourceFile &src_;
  /// Rendered warnings, handed to the Module (ir::Module::warnings).
  std::vector<std::string> warnings_;
  void warn(Pos p, const std::string &message) { warnings_.push_back(src_.warning(p, message)); }
  /// "undefined name 'N'", saying what it likely is: a Python variable of the
  /// script that built the function (meta-programming), which the text cannot carry.
  [[noreturn]] void fail_undefined(Pos p, const std::string &name) const {
    src_.fail(p, "undefined name " + quote(name) +
                     " (a Python variable of the script that wrote this function? TVMScript text carries no Python "
                     "values: write its value, or declare it, e.g. " + name + " = T.int32())");
  }
  std::vector<std::unordered_map<std::string, Binding>> scopes_;
  /// Ranges of the loops in scope (T.axis.remap takes its domains from them).
  std::unordered_map<const void *, ir::Range> loop_ranges_;
  FuncFrame *func_ = nullptr;
  /// The block whose statement list is being built directly, or null.
  BlockFrame *block_ = nullptr;
  /// True while building the function's own statement list (not nested).
  bool func_level_ = false;
  /// Set by build_stmt when the statement is `x = value`: a let over the rest of the list.
  std::optional<std::pair<ir::Var, ir::Expr>> pending_let_;
  /// Set by a statement that scopes the rest of its list (T.launch_thread,
  /// T.attr without `with`): wraps the statements after it.
  std::function<ir::Stmt(ir::Stmt)> pending_wrap_;
  /// The ir_module class being built ("" for bare functions): a call of
  /// `Class.func(...)` is a call of another function of the module.
  std::string module_class_;
  /// The thread tag of each T.env_thread variable.
  std::unordered_map<const ir::VarNode *, std::string> env_threads_;
  /// Position of the statement being built, for converting IR invariant failures.
  Pos stmt_pos_;
};

}  // namespace tessera::script::detail
