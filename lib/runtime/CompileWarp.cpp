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
// The mbarrier and TMA statements are CompileTma.cpp's.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>
#include <optional>

#include "ExprNodes.h"
#include "MmaLane.h"
#include "WarpOperands.h"

#include "tessera/ir/MmaFragments.h"
#include "tessera/ir/Op.h"
#include "tessera/ir/Wgmma.h"

namespace tessera::runtime::detail {

using ir::DataType;
using ir::Expr;
using ir::Intrinsic;

namespace {

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
  if (StmtPtr tma = compile_tma_statement(cc, c)) return tma;
  switch (c.op) {
    case Intrinsic::Ldmatrix: return std::make_unique<LdmatrixNode>(cc, c);
    case Intrinsic::MmaSync: return std::make_unique<MmaNode>(cc, c);
    case Intrinsic::CpAsync: return std::make_unique<CpAsyncNode>(cc, c);
    case Intrinsic::Wgmma: return std::make_unique<WgmmaNode>(cc, c);
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
