//===- policies/MemoryModel.cpp - What the memory-bound policies share ------===//
#include "MemoryModel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "tessera/analysis/Specialize.h"
#include "tessera/ir/Functor.h"
#include "tessera/schedule/Error.h"
#include "tessera/schedule/Schedule.h"

namespace tessera::policies::memory {

namespace {

// Model assumptions (not measured on any one GPU; order-of-magnitude figures
// from published microbenchmarks of Volta to Hopper: a dependent shfl plus
// the combine ~30 cycles, a shared store + bar.sync + load ~80). Rankings
// depend on them only through configs whose memory estimates tie.
constexpr double kShuffleStepCycles = 32;
constexpr double kSharedRoundCycles = 80;
// Registers every thread of these kernels needs for indices, addresses and
// loop counters before staging any data.
constexpr int64_t kBaseRegisters = 24;
// The fraction of the on-chip memory that keeps a reused set (reuse_capacity).
constexpr double kReuseFraction = 0.5;
// Per step of a thread's loop: index math, and the loop's test and branch.
constexpr double kIndexInstructions = 1;
constexpr double kLoopInstructions = 2;
// The fraction of an SM's most bytes in flight it needs for full bandwidth.
constexpr double kInFlightTargetFraction = 0.5;

}  // namespace

ir::PrimFunc sized_for(const ir::PrimFunc &f, const ProposeOptions &options) {
  std::map<std::string, int64_t> values;
  for (const ir::Var &v : f.shape_vars()) values[v.name()] = options.size_of(v.name());
  return values.empty() ? f : analysis::specialize(f, values);
}

analysis::FuncInfo analyze_inlined(const ir::PrimFunc &f) {
  schedule::ScheduleOptions opts;
  opts.verify = false;
  opts.error_render_level = schedule::ErrorRenderLevel::Brief;
  try {
    schedule::Schedule sch(f, opts);
    for (const analysis::BlockInfo &b : analysis::analyze(f).blocks) {
      if (!b.is_inlinable()) continue;
      try {
        sch.compute_inline(sch.get_block(b.name));
      } catch (const schedule::ScheduleError &) {
        // Stays a block of its own, as in the rules that inline.
      }
    }
    return analysis::analyze(sch.func());
  } catch (const UserError &) {
    return analysis::analyze(f);
  }
}

std::optional<int64_t> loop_extent(const ir::Stmt &loop) {
  const auto *l = loop.as<ir::For>();
  return l ? ir::as_const_int(l->extent) : std::nullopt;
}

std::optional<int64_t> iter_extent(const analysis::BlockInfo &b, std::optional<ir::IterKind> kind) {
  int64_t n = 1;
  for (const ir::Stmt &loop : b.loops) {
    const ir::Var &v = loop.as<ir::For>()->loop_var;
    if (kind) {
      auto it = std::find_if(b.iters.begin(), b.iters.end(),
                             [&](const analysis::IterInfo &i) { return i.loop.same_as(v); });
      if (it == b.iters.end() || it->kind != *kind) continue;
    }
    auto e = loop_extent(loop);
    if (!e) return std::nullopt;
    n *= *e;
  }
  return n;
}

std::optional<int64_t> numel(const ir::Buffer &b) {
  int64_t n = 1;
  for (const ir::Expr &d : b.shape()) {
    auto e = ir::as_const_int(d);
    if (!e) return std::nullopt;
    n *= *e;
  }
  return n;
}

double element_bytes(const ir::Buffer &b) {
  int bits = b.dtype().bits();
  return bits == 1 ? 1.0 : bits / 8.0;  // bool takes a byte; int4 half of one
}

bool is_param(const ir::PrimFunc &f, const ir::Buffer &b) {
  for (const ir::Buffer &p : f.param_buffers())
    if (p.same_as(b)) return true;
  return false;
}

double param_bytes(const ir::PrimFunc &f, const ir::Stmt &s) {
  std::set<const ir::BufferNode *> seen;
  double bytes = 0;
  auto count = [&](const ir::Buffer &b) {
    if (!is_param(f, b) || !seen.insert(b.get()).second) return;
    if (auto n = numel(b)) bytes += double(*n) * element_bytes(b);
  };
  ir::pre_order_visit(
      s,
      [&](const ir::Expr &e) {
        if (const auto *l = e.as<ir::Load>()) count(l->buffer);
      },
      [&](const ir::Stmt &x) {
        if (const auto *st = x.as<ir::Store>()) count(st->buffer);
      });
  return bytes;
}

std::vector<int64_t> powers_of_two(int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  for (int64_t p = 1; p <= hi; p *= 2)
    if (p >= lo) out.push_back(p);
  return out;
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / std::max<int64_t>(b, 1);
}

int64_t ceil_log2(int64_t n) {
  int64_t steps = 0;
  for (int64_t p = 1; p < n; p *= 2) ++steps;
  return steps;
}

int64_t registers(const Arch &arch, double staged_bytes) {
  int64_t regs = kBaseRegisters + static_cast<int64_t>(std::ceil(staged_bytes / 4));
  return std::min<int64_t>(regs, arch.limits.max_regs_per_thread);
}

double in_flight_target(const Arch &arch) {
  return kInFlightTargetFraction * double(arch.limits.max_threads_per_sm) * arch.memory.max_vector_bytes;
}

double reuse_capacity(const Arch &arch) {
  return kReuseFraction * double(arch.limits.smem_per_sm_bytes);
}

double shared_round_cycles() {
  return kSharedRoundCycles;
}

double step_instructions(int64_t trips, int64_t unroll) {
  if (trips <= 1) return kIndexInstructions;
  return kIndexInstructions + kLoopInstructions / double(std::clamp<int64_t>(unroll, 1, trips));
}

double reduce_cycles(const Arch &arch, int64_t n, int64_t stride) {
  if (n <= 1) return 0;
  int64_t warp = std::max(arch.compute.warp_size, 1);
  int64_t in_warp = std::min(n, std::max<int64_t>(1, warp / std::max<int64_t>(stride, 1)));
  double cycles = double(ceil_log2(in_warp)) * kShuffleStepCycles;
  int64_t across = ceil_div(n, in_warp);
  if (across > 1) cycles += 2 * kSharedRoundCycles + double(ceil_log2(across)) * kShuffleStepCycles;
  return cycles;
}

double cycles_to_us(const Arch &arch, double cycles) {
  return cycles / std::max(1.0, double(arch.compute.boost_clock_mhz));
}

double Estimate::hiding(const Arch &arch) const {
  if (occ.blocks_per_sm <= 0) return 1;
  int64_t sms = std::max(arch.compute.sm_count, 1);
  int64_t grid = std::max<int64_t>(cost.grid, 1);
  // Threads with work on a busy SM: what is resident, at most its share.
  int64_t resident = std::min(occ.blocks_per_sm, ceil_div(grid, sms)) * threads;
  int64_t share = ceil_div(std::max<int64_t>(active_threads, 1), std::min(grid, sms));
  double bytes = in_flight_per_thread * double(std::min(resident, share));
  return std::clamp(bytes / in_flight_target(arch), 1e-6, 1.0);
}

double Estimate::reduce_us(const Arch &arch) const {
  if (reduce_cycles <= 0 || groups <= 0 || occ.blocks_per_sm <= 0) return 0;
  int64_t sms = std::max(arch.compute.sm_count, 1);
  int64_t per_sm = ceil_div(groups, std::min<int64_t>(std::max<int64_t>(cost.grid, 1), sms));
  int64_t resident = std::max<int64_t>(1, occ.blocks_per_sm * groups_per_block);
  return double(ceil_div(per_sm, resident)) * cycles_to_us(arch, reduce_cycles);
}

double Estimate::issue_us(const Arch &arch) const {
  if (warp_instructions <= 0) return 0;
  int64_t sms = std::min<int64_t>(std::max<int64_t>(cost.grid, 1), std::max(arch.compute.sm_count, 1));
  double per_cycle = double(sms) * std::max(arch.compute.warp_schedulers_per_sm, 1);
  return cycles_to_us(arch, warp_instructions / per_cycle);
}

double Estimate::us(const Arch &arch) const {
  double roof = roofline_us(arch, cost, occ);
  if (!std::isfinite(roof)) return roof;
  return roof / hiding(arch) + reduce_us(arch) + issue_us(arch) + extra_us;
}

std::string Estimate::why(const Arch &arch) const {
  int64_t sms = std::max(arch.compute.sm_count, 1);
  int64_t resident = std::min(occ.blocks_per_sm, ceil_div(std::max<int64_t>(cost.grid, 1), sms)) * threads;
  std::string s = fmt::format(
      "{:.2f} us; roofline {}; {} thr/block; {:.0f} B/thread in flight x {} thr/SM = {:.0f}% "
      "of the bandwidth",
      us(arch), describe(arch, cost, occ), threads, in_flight_per_thread, resident, 100 * hiding(arch));
  if (reduce_cycles > 0) s += fmt::format(", reduce {:.2f} us", reduce_us(arch));
  if (warp_instructions > 0) s += fmt::format(", issue {:.2f} us", issue_us(arch));
  if (extra_us > 0) s += fmt::format(", +{:.2f} us", extra_us);
  return s;
}

void rank(std::vector<Candidate> &candidates, int64_t topk,
          const std::function<std::string(const rules::Config &)> &explain) {
  // Config texts are built only where needed (ties, and the kept ones):
  // formatting thousands of them would dominate the time.
  std::vector<std::optional<std::string>> texts(candidates.size());
  auto text = [&](size_t i) -> const std::string & {
    if (!texts[i]) texts[i] = candidates[i].config->str();
    return *texts[i];
  };
  std::vector<size_t> order(candidates.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto score = [&](size_t i) { return candidates[i].score; };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score(a) < score(b); });
  // The shortest prefix, ending after a whole run of equal scores, that
  // holds topk distinct configs: only it needs the texts.
  size_t end = 0;
  for (std::set<std::string> distinct; end < order.size() && int64_t(distinct.size()) < topk;) {
    size_t next = std::min(order.size(), end + size_t(std::max<int64_t>(topk, 1)));
    while (next < order.size() && score(order[next]) == score(order[next - 1])) ++next;
    for (; end < next; ++end) distinct.insert(text(order[end]));
  }
  order.resize(end);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (score(a) != score(b)) return score(a) < score(b);
    return text(a) < text(b);
  });
  std::vector<Candidate> out;
  std::set<std::string> seen;
  for (size_t i : order) {
    if (int64_t(out.size()) >= topk) break;
    if (!seen.insert(text(i)).second) continue;
    out.push_back(std::move(candidates[i]));
    if (explain) out.back().why = explain(*out.back().config);
  }
  candidates = std::move(out);
}

}  // namespace tessera::policies::memory
