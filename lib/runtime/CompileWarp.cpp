//===- CompileWarp.cpp - Warp-level and asynchronous-copy statements -------===//
//
// The interpreter runs one thread at a time, so a warp-wide instruction
// (ldmatrix, mma.sync) executes once per lane, and each lane's execution
// computes exactly that lane's results as the PTX ISA defines them:
//
//   - an operand another lane supplies (an ldmatrix row address, an A or B
//     fragment element of mma.sync) is read by evaluating the operand's
//     address with the lane variable set to that lane, then restored;
//   - each lane writes only its own destination (its fragment registers).
//
// This is exact as long as the operands every lane reads are complete when
// the first lane runs: a loop over the lanes that loads fragments must end
// before the loop over the lanes that multiplies them begins (the code that
// the tensor-core rule builds has one lane loop per instruction kind).
//
// cp.async is per thread: the copy reads its source when issued and lands
// in the destination when a wait retires its group; until then the
// destination reads as poison (NaN for floats, 0xA5 bytes otherwise), so a
// missing wait or a wrong stage shows up in the result. wgmma (Hopper's
// warpgroup mma, ir/Wgmma.h) is the same: each thread of the warpgroup
// computes its own accumulators from the shared-memory tiles when it issues
// the instruction, and they land when a wgmma wait retires the group.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>
#include <optional>

#include "ExprNodes.h"
#include "MmaLane.h"

#include "tessera/ir/MmaFragments.h"
#include "tessera/ir/Op.h"
#include "tessera/ir/Tma.h"
#include "tessera/ir/Wgmma.h"

namespace tessera::runtime::detail {

using ir::DataType;
using ir::Expr;
using ir::Intrinsic;

namespace {

/// An address operand: the buffer element an instruction starts at.
struct Address {
  Indexer ix;
  DataType dtype;
  int last = 0;  ///< the innermost dimension
  std::string name;

  Address(Compiler &cc, const ir::Load &l, bool store)
      : ix(cc, l.buffer, cc.buffer_slot(l.buffer, store ? "store to" : "load from"), l.indices, store),
        dtype(l.buffer.dtype()),
        last(static_cast<int>(l.indices.size()) - 1),
        name(l.buffer.name()) {}

  uint8_t *base(Frame &f) const { return f.bufs[ix.buf].data; }
  int bytes() const { return dtype.bytes(); }

  /// The flat offset of the operand, checking that `n` elements from it stay
  /// inside the innermost dimension (an instruction's row never wraps).
  int64_t offset(Frame &f, int64_t n, const char *what) const {
    int64_t off = ix.offset(f);
    const BufState &b = f.bufs[ix.buf];
    int64_t at = ix.index(f, last);
    if (at + n > b.shape[last] || (b.ndim > 0 && b.strides[last] != 1))
      throw InterpretError(std::string(what) + " of " + std::to_string(n) + " elements at index " +
                           std::to_string(at) + " of the last dimension of '" + name + "' (extent " +
                           std::to_string(b.shape[last]) + ") in block '" + ix.ctx->block +
                           "' runs past it or is not contiguous");
    return off;
  }
};

Address address_operand(Compiler &cc, const ir::Call &c, int i, bool store) {
  const auto *l = c.args[i].as<ir::Load>();
  if (!l)
    throw InterpretError(std::string("argument ") + std::to_string(i) + " of T." + ir::intrinsic_name(c.op) +
                         " in block '" + cc.block() + "' is not a buffer element");
  return Address(cc, *l, store);
}

/// Whether `b` lives in shared memory (static or dynamic).
bool in_shared_memory(const ir::Buffer &b) { return b.scope() == "shared" || b.scope() == "shared.dyn"; }

int lane_slot(Compiler &cc, const ir::Call &c, int i) {
  int slot = cc.int_var_slot(c.args[i]);
  if (slot < 0)
    throw InterpretError(std::string("the lane operand of T.") + ir::intrinsic_name(c.op) + " in block '" +
                         cc.block() + "' is not a variable in scope (the loop over the warp's 32 lanes)");
  return slot;
}

int64_t const_arg(Compiler &cc, const ir::Call &c, int i, const char *what) {
  auto v = ir::as_const_int(c.args[i]);
  if (!v)
    throw InterpretError(std::string(what) + " of T." + ir::intrinsic_name(c.op) + " in block '" + cc.block() +
                         "' must be a constant");
  return *v;
}

/// The current lane (0..31) or an error naming the instruction.
int64_t current_lane(const Frame &f, int slot, const char *what, const ErrCtx *ctx) {
  int64_t l = f.iv[slot];
  if (l < 0 || l >= 32)
    throw InterpretError(std::string(what) + " in block '" + ctx->block + "' runs at lane " + std::to_string(l) +
                         "; a warp has lanes 0..31");
  return l;
}

/// Evaluates `fn()` with the lane variable set to `lane`, then restores it.
template <typename Fn>
auto as_lane(Frame &f, int slot, int64_t lane, Fn &&fn) {
  int64_t saved = f.iv[slot];
  f.iv[slot] = lane;
  struct Restore {
    Frame &f;
    int slot;
    int64_t v;
    ~Restore() { f.iv[slot] = v; }
  } restore{f, slot, saved};
  return fn();
}

// ---- ldmatrix ---------------------------------------------------------------

/// ldmatrix moves 16-bit units: a row is 16 bytes, 8 units; an 8-bit buffer
/// (int8 fragments) holds two elements per unit.
struct LdmatrixNode final : StmtExec {
  ir::mma::LdmatrixLayout layout;
  Address dst, src;
  int lane = 0;
  int per_unit = 1;  ///< elements per 16-bit unit
  const ErrCtx *ctx;

  LdmatrixNode(Compiler &cc, const ir::Call &c)
      : layout(static_cast<int>(const_arg(cc, c, 1, "the matrix count")), const_arg(cc, c, 0, "trans") != 0),
        dst(address_operand(cc, c, 2, true)),
        src(address_operand(cc, c, 3, false)),
        lane(lane_slot(cc, c, 4)),
        ctx(cc.ctx("ldmatrix")) {
    if (dst.bytes() != src.bytes() || (src.bytes() != 2 && src.bytes() != 1))
      throw InterpretError("T.ldmatrix in block '" + cc.block() + "' moves 16-bit units of 8- or 16-bit elements; '" +
                           dst.name + "' holds " + dst.dtype.str() + " and '" + src.name + "' " + src.dtype.str());
    per_unit = 2 / src.bytes();
  }

  void exec(Frame &f) const override {
    const int64_t l = current_lane(f, lane, "T.ldmatrix", ctx);
    const int e = src.bytes();
    const int64_t out = dst.offset(f, 2 * layout.matrices() * per_unit, "T.ldmatrix's destination");
    for (int j = 0; j < layout.matrices(); ++j) {
      for (int h = 0; h < 2; ++h) {
        ir::mma::Element u = layout.at(static_cast<int>(l), j, h);
        int from = layout.address_lane(j, u.row);
        int64_t row = as_lane(f, lane, from, [&] { return src.offset(f, 8 * per_unit, "T.ldmatrix's row"); });
        if ((row * e) % 16 != 0)
          throw InterpretError("T.ldmatrix in block '" + ctx->block + "': lane " + std::to_string(from) +
                               "'s row address (element " + std::to_string(row) + " of '" + src.name +
                               "') is not 16-byte aligned");
        std::memcpy(dst.base(f) + (out + (2 * j + h) * per_unit) * e, src.base(f) + (row + u.col * per_unit) * e, 2);
      }
    }
  }
};

// ---- mma.sync -----------------------------------------------------------------

/// The operands T.mma_sync and T.wgmma share: (shape, d, a, b, lane, ...).
struct MmaOperands {
  Address d, a, b;
  int lane = 0;
  const ErrCtx *ctx;

  MmaOperands(Compiler &cc, const ir::Call &c, const char *name)
      : d(address_operand(cc, c, 1, true)),
        a(address_operand(cc, c, 2, false)),
        b(address_operand(cc, c, 3, false)),
        lane(lane_slot(cc, c, 4)),
        ctx(cc.ctx(name)) {}
};

/// Every form of ir/MmaFragments.h's MmaVariant: the products exact in
/// double, the sum rounded once into the accumulator's type (int32: exact,
/// wrapping).
struct MmaNode final : StmtExec, MmaOperands {
  ir::mma::MmaVariant v;

  MmaNode(Compiler &cc, const ir::Call &c) : MmaOperands(cc, c, "mma_sync") {
    std::string why;
    auto found = ir::mma::find_mma_variant(c.args[0], a.dtype, b.dtype, d.dtype, &why);
    if (!found) throw InterpretError("T.mma_sync in block '" + cc.block() + "': " + why);
    v = *found;
  }

  void exec(Frame &f) const override {
    const int64_t l = current_lane(f, lane, "T.mma_sync", ctx);
    const ir::mma::MmaTables &maps = v.tables();
    const int64_t d_off = d.offset(f, v.c_per_lane(), "T.mma_sync's accumulator");
    // The fragment offsets of the lanes this lane reads (the four lanes of
    // its rows' group for A, of its column's for B), evaluated once each, in
    // the order the sums first read them; then the sums (MmaLane.h).
    int64_t a_off[32], b_off[32];
    std::fill(a_off, a_off + 32, -1);
    std::fill(b_off, b_off + 32, -1);
    for (int i = 0; i < v.c_per_lane(); ++i)
      for (int k = 0; k < maps.k; ++k) {
        const ir::mma::Element c = maps.c_at[l][i];
        const int from_a = maps.a_owner[c.row][k].lane, from_b = maps.b_owner[k][c.col].lane;
        if (a_off[from_a] < 0)
          a_off[from_a] = as_lane(f, lane, from_a, [&] { return a.offset(f, v.a_per_lane(), "T.mma_sync's A fragment"); });
        if (b_off[from_b] < 0)
          b_off[from_b] = as_lane(f, lane, from_b, [&] { return b.offset(f, v.b_per_lane(), "T.mma_sync's B fragment"); });
      }
    mma_lane(v, static_cast<int>(l), d.base(f), d_off, a.base(f), a_off, b.base(f), b_off);
  }
};

// ---- cp.async ----------------------------------------------------------------

struct CpAsyncNode final : StmtExec {
  Address dst, src;
  IntPtr bytes, src_bytes;
  const ErrCtx *ctx;

  CpAsyncNode(Compiler &cc, const ir::Call &c)
      : dst(address_operand(cc, c, 0, true)),
        src(address_operand(cc, c, 1, false)),
        bytes(cc.compile_int(c.args[2])),
        src_bytes(cc.compile_int(c.args[3])),
        ctx(cc.ctx("cp_async")) {
    if (dst.dtype.bytes() != src.dtype.bytes())
      throw InterpretError("T.cp_async in block '" + cc.block() + "' copies between '" + src.name + "' (" +
                           src.dtype.str() + ") and '" + dst.name + "' (" + dst.dtype.str() +
                           "), whose elements differ in size");
  }

  void exec(Frame &f) const override {
    const int64_t n = bytes->eval(f), valid = src_bytes->eval(f), e = dst.bytes();
    if (n != 4 && n != 8 && n != 16)
      throw InterpretError("T.cp_async in block '" + ctx->block + "' copies " + std::to_string(n) +
                           " bytes; cp.async copies 4, 8 or 16");
    if (valid < 0 || valid > n || valid % e != 0)
      throw InterpretError("T.cp_async in block '" + ctx->block + "' reads " + std::to_string(valid) +
                           " source bytes of " + std::to_string(n) + " (whole elements, at most the copy)");
    const int64_t out = dst.offset(f, n / e, "T.cp_async's destination");
    if ((out * e) % n != 0)
      throw InterpretError("T.cp_async in block '" + ctx->block + "': the destination (element " +
                           std::to_string(out) + " of '" + dst.name + "') is not aligned to the " +
                           std::to_string(n) + "-byte copy");
    AsyncCopies::Copy copy;
    copy.dst = dst.base(f) + out * e;
    copy.bytes.assign(static_cast<size_t>(n), 0);
    if (valid > 0) {
      const int64_t in = src.offset(f, valid / e, "T.cp_async's source");
      if ((in * e) % n != 0)
        throw InterpretError("T.cp_async in block '" + ctx->block + "': the source (element " +
                             std::to_string(in) + " of '" + src.name + "') is not aligned to the " +
                             std::to_string(n) + "-byte copy");
      std::memcpy(copy.bytes.data(), src.base(f) + in * e, static_cast<size_t>(valid));
    }
    // Poison until the copy lands.
    poison(copy.dst, static_cast<size_t>(n), dst.dtype);
    f.async->cp.open.push_back(std::move(copy));
  }
};

// ---- wgmma ---------------------------------------------------------------------

/// wgmma.mma_async (ir/Wgmma.h): this thread's accumulators from the two
/// shared-memory tiles (SS) or from A's fragments in its warp's registers
/// and B's tile (RS), the products exact in double and the sum rounded once
/// into the accumulator's type (int32: exact, wrapping).
/// The result is held back until a wait retires its group; a wgmma on
/// accumulators still in flight starts from their pending values, as the
/// instruction's in-order pipeline does.
struct WgmmaNode final : StmtExec, MmaOperands {
  ir::wgmma::WgmmaVariant v;
  ir::wgmma::SmemLayout layout;
  bool mn_major[2] = {false, false};  ///< A, B read MN-major (the transpose flags)
  bool a_in_registers = false;        ///< the RS form
  /// What each thread of the warpgroup reads, fixed by the variant: the rows
  /// of A and columns of B its accumulators use, in the order first used
  /// (each decoded from shared memory once, in that order), and for each
  /// accumulator the positions of its row and column among them.
  struct ThreadReads {
    std::vector<std::pair<bool, int>> decode;  ///< (B?, row of A or column of B)
    std::vector<std::pair<int, int>> slots;
  };
  std::vector<ThreadReads> reads;

  WgmmaNode(Compiler &cc, const ir::Call &c) : MmaOperands(cc, c, "wgmma") {
    std::string why;
    auto found = ir::wgmma::find_wgmma_variant(c.args[0], a.dtype, b.dtype, d.dtype, &why);
    if (!found) throw InterpretError("T.wgmma in block '" + cc.block() + "': " + why);
    v = *found;
    layout = {static_cast<int>(const_arg(cc, c, 5, "the swizzle")), const_arg(cc, c, 6, "the LBO"),
              const_arg(cc, c, 7, "the SBO")};
    if (std::string bad = layout.check(); !bad.empty())
      throw InterpretError("T.wgmma in block '" + cc.block() + "': " + bad);
    for (int i = 0; i < 2; ++i) {
      const int64_t flag = const_arg(cc, c, 8 + i, i ? "trans_b" : "trans_a");
      if (std::string bad = ir::wgmma::check_transpose(i ? "B" : "A", flag, v.in); !bad.empty())
        throw InterpretError("T.wgmma in block '" + cc.block() + "': " + bad);
      mn_major[i] = flag != 0;
    }
    // RS: A's fragments in registers (a `warp` or `local` buffer), K-major.
    const ir::Buffer &a_buf = c.args[2].as<ir::Load>()->buffer;
    a_in_registers = a_buf.scope() == "warp" || a_buf.scope() == "local";
    if (a_in_registers && mn_major[0])
      throw InterpretError("T.wgmma in block '" + cc.block() + "' reads A from registers ('" + a_buf.name() +
                           "'), which hold it K-major: trans_a must be 0");
    for (const ir::Load *op : {c.args[2].as<ir::Load>(), c.args[3].as<ir::Load>()}) {
      const std::string &scope = op->buffer.scope();
      if (op == c.args[2].as<ir::Load>() && a_in_registers) continue;
      if (!in_shared_memory(op->buffer))
        throw InterpretError("T.wgmma in block '" + cc.block() + "' reads '" + op->buffer.name() + "' in scope '" +
                             scope + "'; its B tile is in shared memory, and A in shared memory or registers "
                             "('warp' or 'local')");
    }
    for (int t = 0; t < ir::wgmma::kWarpgroup; ++t) {
      ThreadReads r;
      std::vector<int> row_slot(64, -1), col_slot(static_cast<size_t>(v.n), -1);
      int rows = 0, cols = 0;
      for (int i = 0; i < v.d_per_thread(); ++i) {
        const ir::mma::Element e = ir::wgmma::accumulator_at(t, i, v.n);
        int &row = row_slot[static_cast<size_t>(e.row)], &col = col_slot[static_cast<size_t>(e.col)];
        if (row < 0) row = rows++, r.decode.emplace_back(false, e.row);
        if (col < 0) col = cols++, r.decode.emplace_back(true, e.col);
        r.slots.emplace_back(row, col);
      }
      reads.push_back(std::move(r));
    }
  }

  /// The tile element (row, k) of `op`, whose tile starts at byte `start`.
  double element(Frame &f, const Address &op, bool op_mn_major, int64_t start, int row, int k) const {
    const int e = op.bytes();
    const int64_t at = layout.element_address(start, row, k, e, op_mn_major);
    const BufState &buf = f.bufs[op.ix.buf];
    if (at < 0 || at + e > buf.storage * e)
      throw InterpretError("T.wgmma in block '" + ctx->block + "' reads byte " + std::to_string(at) + " of '" +
                           op.name + "' (" + std::to_string(buf.storage * e) + " bytes) for row " +
                           std::to_string(row) + ", k " + std::to_string(k));
    if (v.in.is_int()) return static_cast<double>(load_elem<int8_t>(op.base(f), at));
    double x = 0;
    dispatch_float_storage(op.dtype, [&]<typename E>() { x = read_float<E>(op.base(f), at / e); });
    return x;
  }

  void exec(Frame &f) const override {
    const int64_t t = f.iv[lane];
    if (t < 0 || t >= ir::wgmma::kWarpgroup)
      throw InterpretError("T.wgmma in block '" + ctx->block + "' runs at thread " + std::to_string(t) +
                           "; a warpgroup has threads 0..127");
    const int64_t d_off = d.offset(f, v.d_per_thread(), "T.wgmma's accumulators");
    int64_t start[2] = {0, 0};
    const Address *ops[2] = {&a, &b};
    for (int i = a_in_registers ? 1 : 0; i < 2; ++i) {
      start[i] = ops[i]->ix.offset(f) * ops[i]->bytes();
      if (start[i] % 16 != 0)
        throw InterpretError("T.wgmma in block '" + ctx->block + "': the " + (i ? "B" : "A") + " tile starts at byte " +
                             std::to_string(start[i]) + " of '" + ops[i]->name + "', not a multiple of 16");
    }
    // This thread's accumulators: their pending values if a wgmma still in
    // flight writes them, else what memory holds.
    const size_t bytes = static_cast<size_t>(v.d_per_thread()) * 4;
    uint8_t *dst = d.base(f) + d_off * 4;
    std::vector<uint8_t> acc(dst, dst + bytes);
    if (const AsyncCopies::Copy *p = f.async->wgmma.find(dst, bytes)) acc = p->bytes;
    // The rows of A and the columns of B this thread's accumulators use
    // (2 of the 64 rows, N/4 columns), each decoded from shared memory once,
    // into this thread's scratch (runs on several threads share the node).
    const int kk = v.k();
    const ThreadReads &plan = reads[static_cast<size_t>(t)];
    thread_local std::vector<double> a_rows, b_cols;
    a_rows.clear(), b_cols.clear();
    // RS: each A fragment's offset, evaluated as its thread (those of this
    // thread's warp: its rows are theirs).
    int64_t a_off[ir::wgmma::kWarpgroup];
    std::fill(a_off, a_off + ir::wgmma::kWarpgroup, -1);
    auto register_element = [&](int row, int k) {
      const ir::mma::Slot s = ir::wgmma::a_register_owner(v, row, k);
      if (a_off[s.lane] < 0)
        a_off[s.lane] = as_lane(f, lane, s.lane, [&] {
          return a.offset(f, ir::wgmma::a_registers_per_thread(v), "T.wgmma's A fragment");
        });
      const int64_t at = a_off[s.lane] + s.index;
      if (v.in.is_int()) return static_cast<double>(load_elem<int8_t>(a.base(f), at));
      double x = 0;
      dispatch_float_storage(a.dtype, [&]<typename E>() { x = read_float<E>(a.base(f), at); });
      return x;
    };
    for (const auto &[is_b, at] : plan.decode)
      for (int k = 0; k < kk; ++k) {
        if (is_b)
          b_cols.push_back(element(f, b, mn_major[1], start[1], at, k));
        else
          a_rows.push_back(a_in_registers ? register_element(at, k) : element(f, a, mn_major[0], start[0], at, k));
      }
    for (int i = 0; i < v.d_per_thread(); ++i) {
      const auto &[row, col] = plan.slots[static_cast<size_t>(i)];
      const double *ar = &a_rows[static_cast<size_t>(row * kk)];
      const double *bc = &b_cols[static_cast<size_t>(col * kk)];
      double sum = 0;
      for (int k = 0; k < kk; ++k) sum += ar[k] * bc[k];
      if (v.acc.is_int()) {
        int64_t old = load_elem<int32_t>(acc.data(), i);
        store_elem<int32_t>(acc.data(), i,
                            static_cast<int32_t>(wrap_int(DataType::int32(), old + static_cast<int64_t>(sum))));
      } else {
        write_float<float>(acc.data(), i, read_float<float>(acc.data(), i) + sum);
      }
    }
    // Poison until the group retires.
    poison(dst, bytes, v.acc);
    f.async->wgmma.open.push_back({dst, std::move(acc)});
  }
};

// ---- mbarrier and TMA -----------------------------------------------------------

/// An mbarrier's state, kept in its 8-byte shared-memory word as the
/// hardware keeps it there (in a layout of the interpreter's own): bits
/// 0-19 the arrivals this phase still waits for, 20-39 the arrivals a phase
/// expects, 40-61 the bytes announced and not landed (signed), 62 set once
/// initialised (the poison of an unwritten word leaves it clear), 63 the
/// parity of the phase in progress.
struct MbarrierState {
  int64_t pending = 0, expected = 0, tx = 0;
  int parity = 0;
  bool initialised = false;

  static MbarrierState read(const uint8_t *word) {
    uint64_t w;
    std::memcpy(&w, word, 8);
    MbarrierState s;
    s.pending = static_cast<int64_t>(w & 0xFFFFF);
    s.expected = static_cast<int64_t>((w >> 20) & 0xFFFFF);
    s.tx = static_cast<int64_t>((w >> 40) & 0x3FFFFF);
    if (s.tx >= (int64_t{1} << 21)) s.tx -= int64_t{1} << 22;
    s.initialised = (w >> 62) & 1;
    s.parity = static_cast<int>(w >> 63);
    return s;
  }
  void write(uint8_t *word) const {
    uint64_t w = static_cast<uint64_t>(pending) | static_cast<uint64_t>(expected) << 20 |
                 (static_cast<uint64_t>(tx) & 0x3FFFFF) << 40 | uint64_t{initialised} << 62 |
                 static_cast<uint64_t>(parity) << 63;
    std::memcpy(word, &w, 8);
  }
  /// Starts the next phase once every arrival and byte of this one is in.
  void complete_if_done() {
    if (pending != 0 || tx != 0) return;
    parity ^= 1;
    pending = expected;
  }
};

/// The largest arrival count and byte count a phase may take (PTX ISA:
/// the counts are 20-bit).
constexpr int64_t kMbarrierLimit = (int64_t{1} << 20) - 1;

/// Lands every TMA copy in flight on `barrier`, completing its bytes there.
void land_bulk_copies(AsyncCopies &async, uint8_t *barrier) {
  MbarrierState s = MbarrierState::read(barrier);
  auto &bulk = async.bulk;
  for (auto it = bulk.begin(); it != bulk.end();) {
    if (it->barrier != barrier) {
      ++it;
      continue;
    }
    std::memcpy(it->copy.dst, it->copy.bytes.data(), it->copy.bytes.size());
    s.tx -= static_cast<int64_t>(it->copy.bytes.size());
    it = bulk.erase(it);
  }
  s.complete_if_done();
  s.write(barrier);
}

/// Barrier operand `i`: an 8-byte element in shared memory.
Address barrier_operand(Compiler &cc, const ir::Call &c, int i) {
  Address bar = address_operand(cc, c, i, true);
  const std::string &scope = c.args[i].as<ir::Load>()->buffer.scope();
  if (bar.bytes() != 8 || !in_shared_memory(c.args[i].as<ir::Load>()->buffer))
    throw InterpretError("T." + std::string(ir::intrinsic_name(c.op)) + " in block '" + cc.block() + "' on '" +
                         bar.name + "' (" + bar.dtype.str() + ", scope '" + scope +
                         "'): an mbarrier is an 8-byte element (\"uint64\") in shared memory");
  return bar;
}

/// T.mbarrier_init / arrive / arrive_expect_tx / wait.
struct MbarrierNode final : StmtExec {
  Address bar;
  IntPtr arg;  ///< the count, the bytes or the parity
  Intrinsic op;
  const ErrCtx *ctx;

  MbarrierNode(Compiler &cc, const ir::Call &c)
      : bar(barrier_operand(cc, c, 0)),
        arg(c.args.size() > 1 ? cc.compile_int(c.args[1]) : nullptr),
        op(c.op),
        ctx(cc.ctx(ir::intrinsic_name(c.op))) {}

  [[noreturn]] void fail(const std::string &why, int64_t at) const {
    throw InterpretError("T." + std::string(ir::intrinsic_name(op)) + " in block '" + ctx->block + "' on '" +
                         bar.name + "' (element " + std::to_string(at) + "): " + why);
  }

  void exec(Frame &f) const override {
    const int64_t at = bar.ix.offset(f);
    uint8_t *word = bar.base(f) + at * 8;
    const int64_t value = arg ? arg->eval(f) : 0;
    if (op == Intrinsic::MbarrierInit) {
      if (value < 1 || value > kMbarrierLimit)
        fail("a phase takes 1 to " + std::to_string(kMbarrierLimit) + " arrivals, not " + std::to_string(value), at);
      for (const AsyncCopies::Bulk &b : f.async->bulk)
        if (b.barrier == word) fail("initialised again while a TMA copy is in flight on it", at);
      MbarrierState s;
      s.pending = s.expected = value;
      s.initialised = true;
      s.write(word);
      return;
    }
    MbarrierState s = MbarrierState::read(word);
    if (!s.initialised) fail("the barrier was never initialised (T.mbarrier_init)", at);
    switch (op) {
      case Intrinsic::MbarrierArriveExpectTx:
        if (value < 0 || value > kMbarrierLimit)
          fail("announces " + std::to_string(value) + " bytes; a phase takes 0 to " + std::to_string(kMbarrierLimit),
               at);
        s.tx += value;
        [[fallthrough]];
      case Intrinsic::MbarrierArrive:
        if (s.pending == 0)
          fail("one arrival more than the phase's " + std::to_string(s.expected) +
                   " before it completed (a wait for the wrong parity returns at once, and the next arrival falls "
                   "in the phase it did not wait for)",
               at);
        --s.pending;
        s.complete_if_done();
        s.write(word);
        return;
      default: break;
    }
    // A wait: done if the phase of this parity has completed; otherwise the
    // copies in flight on the barrier land now, and if the phase still has
    // not completed, no later statement of this serial order can complete it.
    if (value != 0 && value != 1) fail("waits for parity " + std::to_string(value) + "; a parity is 0 or 1", at);
    if (s.parity != value) return;
    land_bulk_copies(*f.async, word);
    s = MbarrierState::read(word);
    if (s.parity != value) return;
    fail("waits forever for phase parity " + std::to_string(value) + ": " + std::to_string(s.pending) + " of " +
             std::to_string(s.expected) + " arrivals and " + std::to_string(s.tx) +
             " announced bytes have not come (every arrival and copy the wait needs comes before it in the program's "
             "serial order; a warp-specialised kernel, whose warps wait for each other, runs only with its threads "
             "concurrent: on a GPU or in the SIMT emulator)",
         at);
  }
};

/// T.tma_load and T.tma_store (ir/Tma.h). A load's box is read from the
/// tensor when issued (zeros outside it) and swizzled into place when it
/// lands; a store's box is read from shared memory and written into the
/// tensor (elements inside it only) when this run's T.tma_store_wait
/// retires it.
struct TmaCopyNode final : StmtExec {
  bool store = false;
  Address smem;              ///< the box's start in shared memory
  std::optional<Address> bar;  ///< a load's mbarrier
  int tensor = 0;            ///< the tensor's buffer slot
  std::string tensor_name;
  ir::tma::Box box;
  std::vector<IntPtr> coord;
  const ErrCtx *ctx;

  TmaCopyNode(Compiler &cc, const ir::Call &c)
      : store(c.op == Intrinsic::TmaStore),
        smem(address_operand(cc, c, 0, !store)),
        ctx(cc.ctx(ir::intrinsic_name(c.op))) {
    const size_t lead = store ? 3 : 4;
    if (!store) bar = barrier_operand(cc, c, 1);
    const ir::Buffer &t = c.args[lead - 2].as<ir::BufferPtr>()->buffer;
    tensor = cc.buffer_slot(t, store ? "store to" : "load from");
    tensor_name = t.name();
    const size_t n = (c.args.size() - lead) / 2;
    box.swizzle_bytes = static_cast<int>(const_arg(cc, c, static_cast<int>(lead - 1), "the swizzle"));
    box.elem_bytes = t.dtype().bytes();
    for (size_t d = 0; d < n; ++d)
      box.extent.push_back(const_arg(cc, c, static_cast<int>(lead + d), "a box extent"));
    for (size_t d = 0; d < n; ++d) coord.push_back(cc.compile_int(c.args[lead + n + d]));
    if (std::string bad = box.check(); !bad.empty()) fail(bad);
    if (smem.bytes() != box.elem_bytes)
      fail("the elements differ in size (" + t.dtype().str() + " and " + smem.dtype.str() + ")");
    if (!in_shared_memory(c.args[0].as<ir::Load>()->buffer))
      fail(std::string("the ") + (store ? "source" : "destination") + " is not in shared memory");
    if (t.scope() != "global")
      fail("the tensor is in scope '" + t.scope() + "'; TMA copies a global tensor");
  }

  [[noreturn]] void fail(const std::string &why) const {
    throw InterpretError(store ? "T.tma_store in block '" + ctx->block + "' from '" + smem.name + "' into '" +
                                     tensor_name + "': " + why
                               : "T.tma_load in block '" + ctx->block + "' of '" + tensor_name + "' into '" +
                                     smem.name + "': " + why);
  }

  void exec(Frame &f) const override {
    BufState &t = f.bufs[tensor];
    const int n = static_cast<int>(box.extent.size());
    std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
    if (std::string bad = ir::tma::check_tensor(shape, box.elem_bytes); !bad.empty()) fail(bad);
    int64_t step = 1;
    for (int d = n - 1; d >= 0; step *= shape[size_t(d)], --d)
      if (t.strides[d] != step) fail("the tensor is not contiguous and row-major");
    int64_t first[ir::tma::kMaxDims];
    for (int d = 0; d < n; ++d) {
      first[d] = coord[size_t(d)]->eval(f);
      if (first[d] < INT32_MIN || first[d] > INT32_MAX)
        fail("coordinate " + std::to_string(d) + " is " + std::to_string(first[d]) + ", outside int32");
    }
    const int64_t start = smem.ix.offset(f) * smem.bytes();
    if (start % 128 != 0)
      fail("the box starts at shared byte " + std::to_string(start) + ", not a multiple of 128");
    const BufState &buf = f.bufs[smem.ix.buf];
    if (start + box.bytes() > buf.storage * smem.bytes())
      fail("the box of " + std::to_string(box.bytes()) + " bytes at byte " + std::to_string(start) + " runs past '" +
           smem.name + "' (" + std::to_string(buf.storage * smem.bytes()) + " bytes)");
    // (The strides were checked row-major: a box element's row-major offset is its offset.)
    const int e = box.elem_bytes;
    uint8_t *base = smem.base(f);
    if (store) {
      AsyncCopies::BulkStore out;
      out.elem_bytes = e;
      box.for_each_element(first, shape, [&](const int64_t *index, int64_t to) {
        if (to >= 0) out.moves.push_back({base + box.shared_address(start, index), t.data + to * e});
      });
      f.async->stores.push_back(std::move(out));
      return;
    }
    uint8_t *word = f.bufs[bar->ix.buf].data + bar->ix.offset(f) * 8;
    if (!MbarrierState::read(word).initialised) fail("the barrier '" + bar->name + "' was never initialised");
    AsyncCopies::Bulk copy;
    copy.barrier = word;
    copy.copy.dst = base + start;
    copy.copy.bytes.assign(static_cast<size_t>(box.bytes()), 0);
    box.for_each_element(first, shape, [&](const int64_t *index, int64_t from) {
      if (from >= 0)
        std::memcpy(copy.copy.bytes.data() + (box.shared_address(start, index) - start), t.data + from * e,
                    static_cast<size_t>(e));
    });
    poison(copy.copy.dst, copy.copy.bytes.size(), smem.dtype);
    f.async->bulk.push_back(std::move(copy));
  }
};

/// T.tma_store_wait(n): this run's oldest TMA stores land until n remain.
struct TmaStoreWaitNode final : StmtExec {
  int64_t keep = 0;
  void exec(Frame &f) const override {
    auto &stores = f.async->stores;
    while (static_cast<int64_t>(stores.size()) > keep) {
      const AsyncCopies::BulkStore &s = stores.front();
      for (const auto &[from, to] : s.moves) std::memcpy(to, from, static_cast<size_t>(s.elem_bytes));
      stores.pop_front();
    }
  }
};

/// T.syncwarp: the lanes of a warp meet; a serial run cannot order them.
struct SyncWarpNode final : StmtExec {
  const ErrCtx *ctx;
  void exec(Frame &) const override {
    throw InterpretError("T.syncwarp in block '" + ctx->block +
                         "': the serial interpreter runs one thread at a time and cannot order the lanes of a warp "
                         "(the kernel runs on a GPU or in the SIMT emulator)");
  }
};

/// A commit or a wait of the cp.async or the wgmma queue; a fence (the
/// interpreter runs one thread at a time, in order) does nothing.
struct QueueNode final : StmtExec {
  enum Kind { Commit, Wait, Fence } kind = Fence;
  bool wgmma = false;
  int64_t keep = 0;
  void exec(Frame &f) const override {
    AsyncCopies::Queue &q = wgmma ? f.async->wgmma : f.async->cp;
    if (kind == Commit) q.commit();
    if (kind == Wait) q.retire(keep);
  }
};

}  // namespace

void AsyncCopies::Queue::retire(int64_t keep) {
  while (static_cast<int64_t>(groups.size()) > keep) {
    for (const Copy &c : groups.front()) std::memcpy(c.dst, c.bytes.data(), c.bytes.size());
    groups.pop_front();
  }
}

size_t AsyncCopies::Queue::pending() const {
  size_t n = open.size();
  for (const auto &g : groups) n += g.size();
  return n;
}

const AsyncCopies::Copy *AsyncCopies::Queue::find(const uint8_t *dst, size_t bytes) const {
  for (auto it = open.rbegin(); it != open.rend(); ++it)
    if (it->dst == dst && it->bytes.size() == bytes) return &*it;
  for (auto g = groups.rbegin(); g != groups.rend(); ++g)
    for (auto it = g->rbegin(); it != g->rend(); ++it)
      if (it->dst == dst && it->bytes.size() == bytes) return &*it;
  return nullptr;
}

namespace {

/// An operand element as mma.sync reads it, in double.
template <typename E>
double mma_input(const ir::mma::MmaVariant &v, const uint8_t *p, int64_t off) {
  if constexpr (std::is_same_v<E, int8_t>)
    return static_cast<double>(load_elem<int8_t>(p, off));
  else if constexpr (std::is_same_v<E, float>)
    return v.input(read_float<float>(p, off));  // tf32: truncated
  else
    return read_float<E>(p, off);
}

template <typename In, typename Acc>
void mma_lane_typed(const ir::mma::MmaVariant &v, int lane, uint8_t *d, int64_t d_off, const uint8_t *a,
                    const int64_t *a_off, const uint8_t *b, const int64_t *b_off) {
  const ir::mma::MmaTables &t = v.tables();
  // Each row of A and column of B the accumulators use, read once (two of
  // each on every shape): the sums are mma_dot's, term for term.
  constexpr int kAcc = ir::mma::MmaVariant::c_per_lane();
  double values[2][kAcc][32];
  const double *row[kAcc], *col[kAcc];
  for (int i = 0; i < kAcc; ++i) {
    const ir::mma::Element c = t.c_at[lane][i];
    row[i] = col[i] = nullptr;
    for (int j = 0; j < i; ++j) {
      if (t.c_at[lane][j].row == c.row) row[i] = row[j];
      if (t.c_at[lane][j].col == c.col) col[i] = col[j];
    }
    if (!row[i]) {
      for (int k = 0; k < t.k; ++k) {
        const ir::mma::Slot s = t.a_owner[c.row][k];
        values[0][i][k] = mma_input<In>(v, a, a_off[s.lane] + s.index);
      }
      row[i] = values[0][i];
    }
    if (!col[i]) {
      for (int k = 0; k < t.k; ++k) {
        const ir::mma::Slot s = t.b_owner[k][c.col];
        values[1][i][k] = mma_input<In>(v, b, b_off[s.lane] + s.index);
      }
      col[i] = values[1][i];
    }
  }
  for (int i = 0; i < kAcc; ++i) {
    double sum = 0;
    for (int k = 0; k < t.k; ++k) sum += row[i][k] * col[i][k];
    if constexpr (std::is_same_v<Acc, int32_t>) {
      int64_t acc = load_elem<int32_t>(d, d_off + i);
      store_elem<int32_t>(d, d_off + i, static_cast<int32_t>(wrap_int(DataType::int32(), acc + static_cast<int64_t>(sum))));
    } else {
      // Rounded once, to the accumulator's type (float32 or float16).
      write_float<Acc>(d, d_off + i, read_float<Acc>(d, d_off + i) + sum);
    }
  }
}

template <typename In>
void mma_lane_in(const ir::mma::MmaVariant &v, int lane, uint8_t *d, int64_t d_off, const uint8_t *a,
                 const int64_t *a_off, const uint8_t *b, const int64_t *b_off) {
  if (v.acc.is_int()) return mma_lane_typed<In, int32_t>(v, lane, d, d_off, a, a_off, b, b_off);
  if (v.acc.is_float16()) return mma_lane_typed<In, HalfTag>(v, lane, d, d_off, a, a_off, b, b_off);
  return mma_lane_typed<In, float>(v, lane, d, d_off, a, a_off, b, b_off);
}

}  // namespace

void mma_lane(const ir::mma::MmaVariant &v, int lane, uint8_t *d, int64_t d_off, const uint8_t *a,
              const int64_t *a_off, const uint8_t *b, const int64_t *b_off) {
  if (v.in.is_int()) return mma_lane_in<int8_t>(v, lane, d, d_off, a, a_off, b, b_off);
  if (v.in.is_float16()) return mma_lane_in<HalfTag>(v, lane, d, d_off, a, a_off, b, b_off);
  if (v.in.is_bfloat16()) return mma_lane_in<BF16Tag>(v, lane, d, d_off, a, a_off, b, b_off);
  return mma_lane_in<float>(v, lane, d, d_off, a, a_off, b, b_off);
}

StmtPtr compile_warp_statement(Compiler &cc, const ir::Call &c) {
  switch (c.op) {
    case Intrinsic::Ldmatrix: return std::make_unique<LdmatrixNode>(cc, c);
    case Intrinsic::MmaSync: return std::make_unique<MmaNode>(cc, c);
    case Intrinsic::CpAsync: return std::make_unique<CpAsyncNode>(cc, c);
    case Intrinsic::Wgmma: return std::make_unique<WgmmaNode>(cc, c);
    case Intrinsic::TmaLoad:
    case Intrinsic::TmaStore: return std::make_unique<TmaCopyNode>(cc, c);
    case Intrinsic::TmaStoreWait: {
      auto n = std::make_unique<TmaStoreWaitNode>();
      n->keep = const_arg(cc, c, 0, "the store count");
      if (n->keep < 0) throw InterpretError("T.tma_store_wait in block '" + cc.block() + "' of a negative count");
      return n;
    }
    case Intrinsic::SyncWarp: {
      auto n = std::make_unique<SyncWarpNode>();
      n->ctx = cc.ctx("syncwarp");
      return n;
    }
    case Intrinsic::MbarrierInit:
    case Intrinsic::MbarrierArrive:
    case Intrinsic::MbarrierArriveExpectTx:
    case Intrinsic::MbarrierWait: return std::make_unique<MbarrierNode>(cc, c);
    case Intrinsic::SetMaxNReg: {
      // Changes no value: only its constants are checked.
      const int64_t count = const_arg(cc, c, 0, "the register count"), inc = const_arg(cc, c, 1, "the direction");
      if (std::string bad = ir::setmaxnreg_check(count, inc); !bad.empty())
        throw InterpretError("T.setmaxnreg in block '" + cc.block() + "': " + bad);
      return std::make_unique<QueueNode>();
    }
    case Intrinsic::CpAsyncCommit:
    case Intrinsic::WgmmaCommit:
    case Intrinsic::CpAsyncWait:
    case Intrinsic::WgmmaWait:
    case Intrinsic::WgmmaFence:
    case Intrinsic::FenceProxyAsync: {
      auto n = std::make_unique<QueueNode>();
      n->wgmma = c.op == Intrinsic::WgmmaCommit || c.op == Intrinsic::WgmmaWait;
      n->kind = c.op == Intrinsic::CpAsyncCommit || c.op == Intrinsic::WgmmaCommit ? QueueNode::Commit
                : c.op == Intrinsic::CpAsyncWait || c.op == Intrinsic::WgmmaWait   ? QueueNode::Wait
                                                                                    : QueueNode::Fence;
      if (n->kind == QueueNode::Wait) {
        n->keep = const_arg(cc, c, 0, "the group count");
        if (n->keep < 0)
          throw InterpretError(std::string("T.") + ir::intrinsic_name(c.op) + " in block '" + cc.block() +
                               "' of a negative count");
      }
      return n;
    }
    default: break;
  }
  throw InterpretError(std::string("T.") + ir::intrinsic_name(c.op) + " is not a warp-level statement");
}

void check_async_drained(const AsyncCopies &a, const std::string &func) {
  if (size_t pending = a.cp.pending())
    throw InterpretError("function '" + func + "' ends with " + std::to_string(pending) +
                         " cp.async copies never waited for (T.cp_async_commit_group, then "
                         "T.cp_async_wait_group(0) before the data is read)");
  if (size_t pending = a.wgmma.pending())
    throw InterpretError("function '" + func + "' ends with " + std::to_string(pending) +
                         " wgmma never waited for (T.wgmma_commit_group, then T.wgmma_wait_group(0) before the "
                         "accumulators are read)");
  if (size_t pending = a.bulk.size())
    throw InterpretError("function '" + func + "' ends with " + std::to_string(pending) +
                         " TMA copies never waited for (T.mbarrier_wait on their barrier before the data is read)");
  if (size_t pending = a.stores.size())
    throw InterpretError("function '" + func + "' ends with " + std::to_string(pending) +
                         " TMA stores never retired (T.tma_store_wait(0) before the kernel ends)");
}

}  // namespace tessera::runtime::detail
