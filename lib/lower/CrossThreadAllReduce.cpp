//===- lib/lower/CrossThreadAllReduce.cpp - Combining one value per thread ---===//
//
// The three all-reduce shapes of CrossThreadAllReduce.h. Shuffles use the xor
// butterfly: lanes i and i ^ m compute `a op b` and `b op a`, equal for every
// combiner here (all commutative), so after log2(width) steps every lane of
// a segment holds the same total, bit for bit. That is what lets a "local"
// result be written by every thread, and lets every warp reduce the per-warp
// totals itself instead of one warp reducing and broadcasting them (one
// barrier instead of two).
//
// Threads are numbered as CUDA does, x fastest: warps hold consecutive x, so
// a reduce over threadIdx.x alone maps groups onto whole warps (R a multiple
// of 32) or onto aligned segments of one warp (R a power of two below 32).
//
//===----------------------------------------------------------------------===//
#include "CrossThreadAllReduce.h"

#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Op.h"
#include "tessera/support/Error.h"

namespace tessera::lower::detail {

namespace {

using namespace tessera::ir;

constexpr int64_t kWarpSize = 32;

bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

int64_t next_pow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

Expr index_on(const ThreadAxis &a) { return arith::simplify(sub(a.var, a.min)); }

/// Threads of the reduce axes (or of the other axes) and their linear index,
/// x fastest.
struct Linear {
  Expr index = i32(0);
  int64_t count = 1;
};

Linear linearize(const std::array<ThreadAxis, 3> &axes, bool reduce) {
  Linear l;
  for (const ThreadAxis &a : axes) {
    if (a.reduce != reduce || !a.var.defined() || a.extent == 1) continue;
    l.index = add(l.index, mul(index_on(a), i32(l.count)));
    l.count *= a.extent;
  }
  l.index = arith::simplify(l.index);
  return l;
}

Stmt barrier() { return Evaluate::make(Call::make(DataType::int32(), Intrinsic::SyncThreads, {})); }

class Builder {
 public:
  explicit Builder(const AllReduceSpec &spec) : spec_(spec), dtype_(spec.partial.dtype()) {}

  AllReduce build() {
    Linear reduce = linearize(spec_.axes, true), groups = linearize(spec_.axes, false);
    TESSERA_ICHECK(reduce.count >= 2) << "an all-reduce over " << reduce.count << " threads";
    out_.is_first_thread = const_true();
    for (const ThreadAxis &a : spec_.axes)
      if (a.reduce) out_.is_first_thread = logical_and(out_.is_first_thread, eq(a.var, a.min));
    out_.is_first_thread = arith::simplify(out_.is_first_thread);
    int64_t threads = reduce.count * groups.count;
    bool only_x = spec_.axes[0].reduce && !spec_.axes[1].reduce && !spec_.axes[2].reduce;
    bool whole_warps = threads % kWarpSize == 0 || threads < kWarpSize;
    if (only_x && is_pow2(reduce.count) && reduce.count <= kWarpSize && whole_warps) {
      shuffle_steps(reduce.count, reduce.count, lane_mask(threads));
    } else if (only_x && reduce.count % kWarpSize == 0) {
      across_warps(reduce.count / kWarpSize, groups);
    } else {
      shared_tree(reduce, groups);
    }
    return std::move(out_);
  }

 private:
  Expr partial() const { return Load::make(spec_.partial, {i32(0)}); }
  void set_partial(Expr v) { emit(Store::make(spec_.partial, std::move(v), {i32(0)})); }
  Expr combine(Expr a, Expr b) const { return Binary::make(spec_.op, std::move(a), std::move(b)); }
  void emit(Stmt s) { out_.stmts.push_back(std::move(s)); }

  /// The lanes of a warp that exist: all 32, or the first `threads` when the
  /// whole block is smaller than a warp.
  static uint32_t lane_mask(int64_t threads) {
    return threads >= kWarpSize ? 0xffffffffu : static_cast<uint32_t>((uint64_t{1} << threads) - 1);
  }

  /// p = p op shfl_xor(p, o) for o = span/2 .. 1, in segments of `width` lanes.
  void shuffle_steps(int64_t span, int64_t width, uint32_t mask) {
    Expr m = make_int(DataType::uint(32), mask);
    for (int64_t o = span / 2; o >= 1; o /= 2) {
      Expr other = Call::make(dtype_, Intrinsic::ShflXor, {m, partial(), i32(o), i32(width)});
      set_partial(combine(partial(), other));
    }
  }

  Buffer shared(const std::string &suffix, int64_t size) {
    Buffer b = Buffer::make(spec_.name + suffix, dtype_, {i32(size)}, "shared");
    out_.allocs.push_back(b);
    return b;
  }

  /// R = warps * 32 threads on x per group: shuffle within warps, lane 0 of
  /// each warp stores its total, barrier, every warp combines the totals.
  void across_warps(int64_t warps, const Linear &groups) {
    Expr tx = index_on(spec_.axes[0]);
    shuffle_steps(kWarpSize, kWarpSize, 0xffffffffu);
    Buffer totals = shared("_warp_totals", groups.count * warps);
    Expr group_base = arith::simplify(mul(groups.index, i32(warps)));
    Expr lane = floormod(tx, i32(kWarpSize)), warp = floordiv(tx, i32(kWarpSize));
    emit(IfThenElse::make(eq(lane, i32(0)),
                          Store::make(totals, partial(), {arith::simplify(add(group_base, warp))})));
    emit(barrier());
    int64_t span = next_pow2(warps);
    Expr slot = floormod(tx, i32(span));
    Expr total = Load::make(totals, {arith::simplify(add(group_base, slot))});
    if (span != warps) total = if_then_else(lt(slot, i32(warps)), total, spec_.identity);
    set_partial(total);
    shuffle_steps(span, span, 0xffffffffu);
  }

  /// Shared-memory tree: step s combines slot r + s into slot r for r < s
  /// (the first step, s = next_pow2(R) / 2, only for r + s < R); slots are
  /// [r * groups + g], so that neighbouring groups (threads) touch
  /// neighbouring words. A barrier follows each step that others read.
  void shared_tree(const Linear &reduce, const Linear &groups) {
    Buffer slots = shared("_shared_partials", reduce.count * groups.count);
    auto slot = [&](Expr r) { return arith::simplify(add(mul(r, i32(groups.count)), groups.index)); };
    const Expr &r = reduce.index;
    emit(Store::make(slots, partial(), {slot(r)}));
    emit(barrier());
    int64_t s = next_pow2(reduce.count) / 2;
    int64_t active = reduce.count - s;
    for (; s >= 1; s /= 2, active = s) {
      bool last = s == 1;
      bool publish = !last || spec_.broadcast;
      Expr other = Load::make(slots, {slot(add(r, i32(s)))});
      std::vector<Stmt> step = {Store::make(spec_.partial, combine(partial(), other), {i32(0)})};
      if (publish) step.push_back(Store::make(slots, partial(), {slot(r)}));
      emit(IfThenElse::make(active == 1 ? eq(r, i32(0)) : lt(r, i32(active)), Seq::make(step)));
      if (publish) emit(barrier());
    }
    if (spec_.broadcast) set_partial(Load::make(slots, {slot(i32(0))}));
  }

  const AllReduceSpec &spec_;
  DataType dtype_;
  AllReduce out_;
};

}  // namespace

AllReduce build_all_reduce(const AllReduceSpec &spec) { return Builder(spec).build(); }

}  // namespace tessera::lower::detail
