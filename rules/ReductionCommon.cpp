//===- rules/ReductionCommon.cpp - Shared by the reduction rules -----------===//
#include "ReductionCommon.h"

#include "tessera/lower/Passes.h"

#include <algorithm>

#include "ConfigJson.h"

namespace tessera::rules::reduction_detail {

using analysis::Access;
using analysis::BlockInfo;
using analysis::Combiner;
using ir::IterKind;

analysis::MatchResult<Inlined> inline_elementwise(const ir::PrimFunc &f) {
  using R = analysis::MatchResult<Inlined>;
  // A scratch schedule: match() must not change anything, and trying the
  // primitive is the only exact test of what inlining accepts.
  schedule::ScheduleOptions opts;
  opts.verify = false;
  opts.error_render_level = schedule::ErrorRenderLevel::Brief;
  Inlined out;
  try {
    schedule::Schedule sch(f, opts);
    for (const BlockInfo &b : analysis::analyze(f).blocks) {
      if (!b.is_inlinable()) continue;
      try {
        sch.compute_inline(sch.get_block(b.name));
      } catch (const schedule::ScheduleError &e) {
        return R::fail("elementwise block '" + b.name + "' cannot be inlined: " + e.brief());
      }
      out.blocks.push_back(b.name);
    }
    out.info = analysis::analyze(sch.func());
  } catch (const UserError &e) {
    return R::fail(e.what());
  }
  return out;
}

namespace {

/// The loops of `b` form one chain with `b` alone at its bottom.
bool alone_under_its_loops(const BlockInfo &b) {
  for (size_t i = 0; i < b.loops.size(); ++i) {
    const ir::Stmt &body = b.loops[i].as<ir::For>()->body;
    const ir::Stmt &next = i + 1 < b.loops.size() ? b.loops[i + 1] : b.block;
    if (!body.same_as(next)) return false;
  }
  return true;
}

bool loops_start_at_zero(const BlockInfo &b) {
  return std::all_of(b.loops.begin(), b.loops.end(),
                     [](const ir::Stmt &l) { return ir::is_const_int(l.as<ir::For>()->min, 0); });
}

std::string common_checks(const BlockInfo &b) {
  if (!b.trivial_binding) return "block '" + b.name + "' is not bound one-to-one to its loops";
  if (!loops_start_at_zero(b)) return "a loop of block '" + b.name + "' does not start at 0";
  if (b.is_guarded) return "block '" + b.name + "' is under a condition";
  if (!alone_under_its_loops(b)) return "block '" + b.name + "' shares its loops with other statements";
  if (!b.block.as<ir::Block>()->allocs.empty()) return "block '" + b.name + "' allocates buffers";
  return "";
}

}  // namespace

std::string why_not_splittable_reduction(const BlockInfo &b) {
  if (!b.is_reduction() && !b.is_tuple_reduction())
    return "block '" + b.name + "' (" + b.dom_kind() + ") is not a reduction with a recognised combiner";
  if (std::string why = common_checks(b); !why.empty()) return why;
  bool is_int = true;  // every output: bitwise combiners are for integers
  for (const Access &w : b.writes) {  // one, or a tuple's
    if (!w.is_simple) return "block '" + b.name + "' writes '" + w.buffer.name() + "' at computed indices";
    std::vector<int> used = w.iters();
    for (size_t i = 0; i < b.iters.size(); ++i) {
      if (b.iters[i].kind != IterKind::Spatial) continue;
      if (!std::count(used.begin(), used.end(), static_cast<int>(i)))
        return "block '" + b.name + "' does not index its output '" + w.buffer.name() + "' by the spatial iter '" +
               b.iters[i].var.name() + "'";
    }
    is_int &= w.buffer.dtype().is_integer();
  }
  switch (b.combiner) {
    case Combiner::Sum:
    case Combiner::Product:
    case Combiner::Max:
    case Combiner::Min:
      break;
    case Combiner::BitAnd:
    case Combiner::BitOr:
    case Combiner::BitXor:
      if (is_int) break;
      [[fallthrough]];
    default:
      return "block '" + b.name + "' combines with '" + analysis::to_string(b.combiner) +
             "', which threads cannot combine";
  }
  return "";
}

std::string why_not_plain_injective(const BlockInfo &b) {
  if (!b.is_injective()) return "block '" + b.name + "' (" + b.dom_kind() + ") is not injective";
  return common_checks(b);
}

const Access *dominant_read(const BlockInfo &b) {
  auto uses_reduce = [&](const Access &a) {
    for (int i : a.iters())
      if (b.iters[i].kind == IterKind::Reduce) return true;
    return false;
  };
  const Access *best = nullptr;
  for (bool need_reduce : {true, false}) {
    for (const Access &a : b.reads) {
      if (need_reduce && !uses_reduce(a)) continue;
      if (!best || a.iters().size() > best->iters().size()) best = &a;
    }
    if (best) return best;
  }
  return nullptr;
}

std::string why_contraction(const BlockInfo &b) {
  std::vector<std::string> out;
  for (size_t i = 0; i < b.iters.size(); ++i) {
    if (b.iters[i].kind != IterKind::Spatial) continue;
    for (const Access &a : b.reads) {
      std::vector<int> used = a.iters();
      bool reduces = std::any_of(used.begin(), used.end(),
                                 [&](int k) { return b.iters[k].kind == IterKind::Reduce; });
      if (reduces && !std::count(used.begin(), used.end(), static_cast<int>(i))) {
        out.push_back(b.iters[i].var.name());
        break;
      }
    }
  }
  if (out.size() < 2) return "";
  std::string list;
  for (const std::string &a : out) list += (list.empty() ? "'" : ", '") + a + "'";
  return "block '" + b.name + "' contracts operands that are reused along the output axes " + list +
         " (a matmul or convolution, not a reduction)";
}


std::optional<int64_t> const_extent(const ir::Stmt &loop) { return ir::as_const_int(loop.as<ir::For>()->extent); }

std::optional<int64_t> iter_extent(const BlockInfo &b, IterKind kind) {
  int64_t n = 1;
  for (const analysis::IterInfo &it : b.iters) {
    if (it.kind != kind) continue;
    auto e = ir::as_const_int(it.dom.extent);
    if (!e) return std::nullopt;
    n *= *e;
  }
  return n;
}

int64_t pow2_floor(int64_t x) {
  int64_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

int64_t pow2_ceil(int64_t x) {
  int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t target_block_threads(const Arch &arch) {
  int64_t t = 2 * int64_t{arch.compute.warp_schedulers_per_sm} * arch.compute.warp_size;
  return std::clamp<int64_t>(t, arch.compute.warp_size, arch.limits.max_threads_per_block);
}

int64_t row_threads(std::optional<int64_t> extent, const Arch &arch) {
  int64_t most = target_block_threads(arch);
  if (!extent) return most;
  constexpr int64_t kElemsPerThread = 8;
  int64_t fewest = std::min<int64_t>(arch.compute.warp_size, pow2_ceil(*extent));
  return std::clamp(pow2_floor(std::max<int64_t>(1, *extent / kElemsPerThread)), fewest, most);
}

int64_t serial_unroll(std::optional<int64_t> extent) {
  constexpr int64_t kUnroll = 4;
  return extent ? std::clamp<int64_t>(*extent, 1, kUnroll) : kUnroll;
}

ThreadSplit split_for_threads(schedule::Schedule &sch, const schedule::LoopRef &loop, std::optional<int64_t> extent,
                              int64_t threads, int64_t unroll, int64_t vector, const std::string &prefix) {
  if (vector > 1 && extent && *extent % vector == 0) {
    // The vector piece first, exactly: the tail predicate of the other
    // pieces then does not involve it, so lowering can keep whole vectors.
    std::vector<schedule::LoopRef> vv = sch.split(loop, {std::nullopt, vector}, {prefix, prefix + "_v"});
    ThreadSplit out = split_for_threads(sch, vv[0], *extent / vector, threads, unroll, 1, prefix);
    out.vector = vv[1];
    out.whole_vectors = true;
    return out;
  }
  std::optional<int64_t> serial_extent;
  if (extent) serial_extent = ceil_div(*extent, threads * vector);
  // An unroll covering the whole serial loop unrolls that loop: no 1-trip loop around it.
  bool unroll_serial = unroll > 1 && serial_extent && unroll >= *serial_extent;
  bool split_unroll = unroll > 1 && !unroll_serial;
  std::vector<std::optional<int64_t>> factors{std::nullopt};
  std::vector<std::string> names{prefix + "_o"};
  if (split_unroll) factors.push_back(unroll), names.push_back(prefix + "_u");
  if (threads > 1) factors.push_back(threads), names.push_back(prefix + "_t");
  if (vector > 1) factors.push_back(vector), names.push_back(prefix + "_v");
  ThreadSplit out;
  out.constant = extent.has_value();
  std::vector<schedule::LoopRef> parts = factors.size() == 1 ? std::vector{loop} : sch.split(loop, factors, names);
  size_t next = 0;
  out.serial = parts[next++];
  if (split_unroll) out.unrolled = parts[next++];
  if (threads > 1) out.thread = parts[next++];
  if (vector > 1) out.vector = parts[next++];
  out.unroll_serial = unroll_serial && *serial_extent > 1;
  return out;
}

std::vector<schedule::LoopRef> ThreadSplit::serial_loops() const {
  std::vector<schedule::LoopRef> out{serial};
  if (unrolled) out.push_back(*unrolled);
  return out;
}

void thread_outermost(schedule::Schedule &sch, const ThreadSplit &s) {
  if (!s.thread || !s.constant) return;
  std::vector<schedule::LoopRef> order{*s.thread};
  for (const schedule::LoopRef &l : s.serial_loops()) order.push_back(l);
  sch.reorder(order);
}

void unroll_pieces(schedule::Schedule &sch, const ThreadSplit &s) {
  if (s.unrolled) sch.unroll(*s.unrolled);
  if (s.unroll_serial) sch.unroll(s.serial);
}

void vector_loads(schedule::Schedule &sch, const ThreadSplit &s) {
  if (!s.vector) return;
  sch.unroll(*s.vector);
  sch.annotate(*s.vector, ir::kVectorLoadsAnnotation, ir::AnnValue(int64_t(1)));
}

schedule::LoopRef fuse_all(schedule::Schedule &sch, const std::vector<schedule::LoopRef> &loops,
                           const std::string &name) {
  return loops.size() == 1 ? loops[0] : sch.fuse(loops, name);
}

void require_block_threads(const char *rule, const std::string &field, int64_t threads, const Arch &arch) {
  require(threads <= arch.limits.max_threads_per_block, rule, field, threads,
          "threads per block exceed the " + std::to_string(arch.limits.max_threads_per_block) + " of " + arch.name);
  // The registers every thread may use when the whole block is resident on
  // one SM; below this the compiler would have to spill.
  constexpr int64_t kRegsPerThread = 32;
  require(threads * kRegsPerThread <= arch.limits.regs_per_block, rule, field, threads,
          "threads per block at " + std::to_string(kRegsPerThread) + " registers each exceed the " +
              std::to_string(arch.limits.regs_per_block) + " registers per block of " + arch.name);
}

void require_unroll(const char *rule, int64_t unroll) {
  constexpr int64_t kMaxUnroll = 64;
  require(unroll >= 1 && unroll <= kMaxUnroll, rule, "unroll", unroll,
          "is outside [1, " + std::to_string(kMaxUnroll) + "]");
}

}  // namespace tessera::rules::reduction_detail
