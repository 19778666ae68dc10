//===- Closures.h - The interpreter's compiled form (private) -------------===//
//
// The interpreter compiles a PrimFunc once into a tree of closures and then
// runs the closures, so no IR is walked and no map is consulted per element:
//
//   - every expression becomes either an IntExpr (bool and integer types,
//     values held in int64_t: signed types sign-extended, unsigned types
//     zero-extended, uint64 as its bit pattern) or a FloatExpr (all float
//     types, values held in double but always exactly representable in the
//     expression's type, because every operation rounds its result);
//   - every variable gets a slot in the Frame (`iv` for integers, `fv` for
//     floats) and every buffer a BufState slot, assigned at compile time;
//   - every statement becomes a StmtExec.
//
// Closures are small final classes with one virtual `eval`/`exec`; the hot
// shapes (a variable index into a buffer, a binding that is a plain loop
// variable) are special-cased inside the nodes rather than through extra
// indirections.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/runtime/Interpreter.h"

namespace tessera::runtime::detail {

/// The most dimensions a buffer may have in the interpreter.
constexpr int kMaxDims = 8;

/// A buffer while the program runs: where its elements are and how to index them.
struct BufState {
  uint8_t *data = nullptr;
  /// Elements addressable through `data` (the array's or allocation's size).
  int64_t storage = 0;
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
};

/// The asynchronous writes of one run: the cp.async copies (T.cp_async and
/// its groups), each copy's bytes, taken from the source when issued, landing
/// in the destination when a T.cp_async_wait_group retires its group, and the
/// wgmma results (T.wgmma), landing in the accumulators when a
/// T.wgmma_wait_group retires theirs; until then the destination holds poison.
struct AsyncCopies {
  struct Copy {
    uint8_t *dst = nullptr;
    std::vector<uint8_t> bytes;
  };
  struct Queue {
    std::vector<Copy> open;                ///< issued since the last commit
    std::deque<std::vector<Copy>> groups;  ///< committed, oldest first
    void commit() {
      groups.push_back(std::move(open));
      open.clear();
    }
    /// Lands the oldest groups until at most `keep` are in flight.
    void retire(int64_t keep);
    /// Copies issued or committed and not yet landed.
    size_t pending() const;
    /// The newest pending write of exactly [dst, dst + bytes), or null.
    const Copy *find(const uint8_t *dst, size_t bytes) const;
  };
  Queue cp, wgmma;
  /// A TMA copy (T.tma_load) in flight: its box, swizzled, taken from the
  /// source when issued; it lands, completing its bytes on `barrier`, when a
  /// T.mbarrier_wait on that barrier needs them.
  struct Bulk {
    uint8_t *barrier = nullptr;
    Copy copy;
  };
  std::vector<Bulk> bulk;
  /// A TMA store (T.tma_store) in flight: where each element of its box
  /// comes from in shared memory and goes to in the tensor, read and written
  /// when a T.tma_store_wait retires it (oldest first).
  struct BulkStore {
    int elem_bytes = 0;
    std::vector<std::pair<const uint8_t *, uint8_t *>> moves;
  };
  std::deque<BulkStore> stores;
  /// Everything issued and not yet landed.
  size_t pending() const { return cp.pending() + wgmma.pending() + bulk.size() + stores.size(); }
};

/// The mutable state of one run: variable slots, buffer slots, allocations.
struct Frame {
  int64_t *iv = nullptr;
  double *fv = nullptr;
  BufState *bufs = nullptr;
  /// Backing storage of each `alloc_buffer`, by allocation id; reused between
  /// executions of the allocating block.
  std::vector<std::vector<uint8_t>> *alloc_storage = nullptr;
  /// The copies in flight (null where the program has no T.cp_async).
  AsyncCopies *async = nullptr;
};

struct IntExpr {
  virtual ~IntExpr() = default;
  virtual int64_t eval(Frame &f) const = 0;
};
struct FloatExpr {
  virtual ~FloatExpr() = default;
  virtual double eval(Frame &f) const = 0;
};
struct StmtExec {
  virtual ~StmtExec() = default;
  virtual void exec(Frame &f) const = 0;
};
using IntPtr = std::unique_ptr<IntExpr>;
using FloatPtr = std::unique_ptr<FloatExpr>;
using StmtPtr = std::unique_ptr<StmtExec>;

/// Where an operation sits, for error messages; owned by the Program so that
/// closures can keep plain pointers.
struct ErrCtx {
  std::string block;   // the enclosing block's name
  std::string what;    // buffer name, operator name, iter var name, ...
};

/// How a buffer parameter's shape is checked against its array.
struct ParamBuffer {
  int param_index = 0;
  ir::Buffer buffer;
  int slot = 0;
  /// Compiled shape and stride expressions (evaluated after shape variables are bound).
  std::vector<IntPtr> dims, strides;
  /// For each dimension that is a plain shape variable: its int slot, else -1.
  std::vector<int> dim_var_slot;
  /// For each dimension, the int slots of the variables it mentions (a
  /// shape variable found only inside `n * 32` is solved from it).
  std::vector<std::vector<int>> dim_slots;
};

struct ScalarParam {
  int param_index = 0;
  ir::Var var;
  bool is_float = false;
  int slot = 0;
};

/// A compiled PrimFunc.
struct Program {
  ir::PrimFunc func;
  int num_int_slots = 0, num_float_slots = 0, num_buf_slots = 0, num_allocs = 0;
  std::vector<ParamBuffer> buffers;
  std::vector<ScalarParam> scalars;
  /// The shape variables that are not scalar parameters, with their int slots.
  std::vector<std::pair<ir::Var, int>> shape_var_slots;
  /// Names of the shape-variable slots (for messages), by int slot.
  std::unordered_map<int, std::string> shape_var_names;
  StmtPtr body;
  std::deque<ErrCtx> contexts;
};

/// Compiles `f` (throws InterpretError for what the interpreter cannot run:
/// unbound variables, buffers used outside their scope, vector types, more
/// than kMaxDims dimensions).
std::unique_ptr<Program> compile_program(const ir::PrimFunc &f);

/// Binds one run's arguments into `f` (Interpreter::run's rules): scalar
/// parameters into their slots, shape variables from the first array
/// dimension they appear as, every parameter buffer's data, shape and
/// strides into its BufState after checking dtype, rank and every dimension.
/// InterpretError naming the argument on any mismatch. Shared by the
/// interpreter and the LLVM JIT (runtime/LlvmJit.h).
void bind_arguments(const Program &p, const std::vector<NDArray *> &args, Frame &f);

/// One run's slots, buffers and allocations, its arguments bound
/// (bind_arguments): what the interpreter and the LLVM JIT both run in.
struct RunFrame {
  RunFrame(const Program &p, const std::vector<NDArray *> &args)
      : iv(std::max(p.num_int_slots, 1), 0),
        fv(std::max(p.num_float_slots, 1), 0.0),
        bufs(std::max(p.num_buf_slots, 1)),
        alloc_storage(p.num_allocs),
        frame{iv.data(), fv.data(), bufs.data(), &alloc_storage, &async} {
    bind_arguments(p, args, frame);
  }
  RunFrame(const RunFrame &) = delete;
  RunFrame &operator=(const RunFrame &) = delete;

  std::vector<int64_t> iv;
  std::vector<double> fv;
  std::vector<BufState> bufs;
  std::vector<std::vector<uint8_t>> alloc_storage;
  AsyncCopies async;
  Frame frame;
};

/// The largest finite value of float type `t` (float16, bfloat16, float32,
/// float64), negated for `max` false: T.max_value / T.min_value.
double float_extreme(ir::DataType t, bool max);

/// Compile-time scope: variables and buffers in scope and their slots.
class Compiler {
 public:
  explicit Compiler(Program &p) : prog_(p) {}

  /// A fresh slot for `v` (int or float by its dtype), in scope until unbind.
  int bind_var(const ir::Var &v);
  void unbind_var(const ir::Var &v);
  int bind_buffer(const ir::Buffer &b);
  void unbind_buffer(const ir::Buffer &b);

  IntPtr compile_int(const ir::Expr &e);
  FloatPtr compile_float(const ir::Expr &e);
  StmtPtr compile_stmt(const ir::Stmt &s);
  /// Compiles `e` into `fval` when it has a float type, else into `ival`.
  void compile_value(const ir::Expr &e, IntPtr &ival, FloatPtr &fval);

  /// The int slot of a plain integer variable expression in scope, else -1.
  int int_var_slot(const ir::Expr &e) const;
  /// The slot of buffer `b`, in scope (throws naming `use` when it is not).
  int buffer_slot(const ir::Buffer &b, const char *use);
  const ErrCtx *ctx(std::string what);
  const std::string &block() const { return block_; }
  /// The block that messages name (the LLVM JIT compiles one warp-level
  /// statement at a time with a Compiler of its own).
  void set_block(std::string name) { block_ = std::move(name); }

 private:
  StmtPtr compile_block(const ir::Block &b);
  /// The slot of variable `v` in scope (throws when `v` is out of scope).
  int var_slot(const ir::VarNode &v) const;

  Program &prog_;
  std::string block_ = "root";
  struct VarInfo {
    int slot;
    bool is_float;
  };
  std::unordered_map<const ir::VarNode *, std::vector<VarInfo>> vars_;
  std::unordered_map<const ir::BufferNode *, std::vector<int>> bufs_;
  /// Constant [min, min + extent) of loop variables, by int slot: a block iter
  /// var bound to such a loop variable needs no domain check when the range is
  /// inside its domain.
  std::unordered_map<int, std::pair<int64_t, int64_t>> loop_range_;
};

/// Fills `bytes` bytes of `t` elements with poison: quiet NaN for floats (a
/// read before a write shows up as NaN in the result), 0xA5 bytes for
/// integers and bool (fresh allocations of the interpreter and the LLVM
/// JIT, and the destinations of asynchronous writes until they land).
void poison(uint8_t *data, size_t bytes, ir::DataType t);
inline void poison(std::vector<uint8_t> &mem, ir::DataType t) { poison(mem.data(), mem.size(), t); }
/// "out-of-bounds load A[3, 9] (shape [4, 8]) in block 'B'": the text of an
/// access outside its buffer (the interpreter's error, and the LLVM JIT's).
std::string out_of_bounds_message(const std::string &what, const std::string &block, bool store,
                                  const int64_t *idx, const int64_t *shape, int ndim);
/// "T.assume does not hold in block 'B': ..." (the interpreter's error, and
/// the LLVM JIT's), saying which assumptions random inputs are made to keep.
std::string assume_failed_message(const std::string &block);
/// Throws the out-of-bounds InterpretError for an access.
[[noreturn]] void throw_out_of_bounds(const ErrCtx *ctx, bool store, const int64_t *idx,
                                      const BufState &b);

/// Computes the flat element offset of an access, checking every index.
struct Indexer {
  int buf = 0;
  int ndim = 0;
  bool store = false;
  const ErrCtx *ctx = nullptr;
  int var_slot[kMaxDims];
  IntPtr idx[kMaxDims];

  Indexer(Compiler &cc, const ir::Buffer &b, int slot, const std::vector<ir::Expr> &indices, bool is_store);

  int64_t index(Frame &f, int d) const { return var_slot[d] >= 0 ? f.iv[var_slot[d]] : idx[d]->eval(f); }

  int64_t offset(Frame &f) const {
    const BufState &b = f.bufs[buf];
    int64_t off = 0;
    for (int d = 0; d < ndim; ++d) {
      int64_t v = index(f, d);
      if (static_cast<uint64_t>(v) >= static_cast<uint64_t>(b.shape[d])) [[unlikely]]
        fail(f, d, v);
      off += v * b.strides[d];
    }
    if (static_cast<uint64_t>(off) >= static_cast<uint64_t>(b.storage)) [[unlikely]]
      fail(f, ndim, 0);
    return off;
  }

  /// Evaluates the whole index (the first `d` values are known) and throws.
  [[noreturn]] void fail(Frame &f, int d, int64_t v) const {
    int64_t all[kMaxDims];
    for (int i = 0; i < ndim; ++i) all[i] = i == d ? v : index(f, i);
    throw_out_of_bounds(ctx, store, all, f.bufs[buf]);
  }
};

/// The fast path of Indexer: N indices that are all plain integer variables,
/// into a buffer without explicit strides (so the per-dimension checks imply
/// the offset is inside the storage).
template <int N>
struct VarIndexer {
  int buf = 0;
  bool store = false;
  const ErrCtx *ctx = nullptr;
  int var_slot[N];

  int64_t offset(Frame &f) const {
    const BufState &b = f.bufs[buf];
    int64_t off = 0;
    for (int d = 0; d < N; ++d) {
      int64_t v = f.iv[var_slot[d]];
      if (static_cast<uint64_t>(v) >= static_cast<uint64_t>(b.shape[d])) [[unlikely]]
        fail(f);
      off += v * b.strides[d];
    }
    return off;
  }
  [[noreturn]] void fail(Frame &f) const {
    int64_t all[N];
    for (int i = 0; i < N; ++i) all[i] = f.iv[var_slot[i]];
    throw_out_of_bounds(ctx, store, all, f.bufs[buf]);
  }
};

/// Calls `fn(indexer)` with a VarIndexer<N> when the access qualifies (1 to 3
/// variable indices, no explicit strides), else with an Indexer.
template <typename Fn>
decltype(auto) make_indexer(Compiler &cc, const ir::Buffer &b, int slot, const std::vector<ir::Expr> &indices,
                            bool is_store, Fn &&fn) {
  int n = static_cast<int>(indices.size());
  bool all_vars = n >= 1 && n <= 3 && b->strides.empty();
  for (int d = 0; all_vars && d < n; ++d) all_vars = cc.int_var_slot(indices[d]) >= 0;
  auto fast = [&]<int N>() {
    VarIndexer<N> ix;
    ix.buf = slot;
    ix.store = is_store;
    ix.ctx = cc.ctx(b.name());
    for (int d = 0; d < N; ++d) ix.var_slot[d] = cc.int_var_slot(indices[d]);
    return fn(std::move(ix));
  };
  if (all_vars && n == 1) return fast.template operator()<1>();
  if (all_vars && n == 2) return fast.template operator()<2>();
  if (all_vars && n == 3) return fast.template operator()<3>();
  return fn(Indexer(cc, b, slot, indices, is_store));
}

/// The closure of a warp-level or asynchronous-copy statement
/// (ir::is_async_or_warp_statement; CompileWarp.cpp).
StmtPtr compile_warp_statement(Compiler &cc, const ir::Call &c);
/// InterpretError when copies of `a` were never retired by a wait.
void check_async_drained(const AsyncCopies &a, const std::string &func);

/// Integer wrap-around to `t`'s width (bool: 0/1).
int64_t wrap_int(ir::DataType t, int64_t v);
/// Rounds `v` to float type `t`.
double round_float(ir::DataType t, double v);
/// "[3, 128]"
std::string format_index(const int64_t *idx, int n);


}  // namespace tessera::runtime::detail
