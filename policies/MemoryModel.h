//===- policies/MemoryModel.h - What the memory-bound policies share (private) -===//
//
// The elementwise, fallback, reduction, general_reduction and gemv policies
// rank configs of kernels that stream memory: their time is the bytes they
// move over the bandwidth they reach. On top of CostModel.h's roofline (sector
// rounding, occupancy, waves, SM fill) this adds the effects that decide
// between configs of such kernels:
//
//   - latency hiding (Little's law): the bandwidth an SM reaches is the bytes
//     it has in flight over the memory latency. The Arch carries no latency,
//     so the target is expressed in its own limits: half of what an SM can
//     have in flight at most (every resident thread with one max_vector_bytes
//     load outstanding): 12-16 KiB on the presets, within a factor of two of
//     the bandwidth x ~600 ns per SM that published latencies give. Fewer
//     bytes in flight scale the time up in proportion;
//   - cross-thread reductions: log2(threads) warp-shuffle steps, plus shared
//     memory rounds when the threads span several warps, exposed once per
//     round of row groups an SM runs;
//   - instruction issue: the warp instructions (loads, stores, index math)
//     over the warp schedulers of the SMs in use, one per cycle each. It
//     overlaps the memory time only in part and is added: what makes a
//     16-byte load better than eight 2-byte ones that keep as many bytes in
//     flight;
//   - on-chip reuse (reuse_capacity): data read again (a row per reduction
//     of a softmax) comes from DRAM again unless what the resident blocks
//     hold fits half of the SM's unified L1 / shared memory.
//
// It also holds the facts the policies read from a function (shapes sized at
// the symbolic hint, the function after inlining, the bytes of its
// parameters) and the final ranking (score, then the config's text).
//
//   memory::Estimate e;
//   e.cost = {.dram_bytes = 64e6, .grid = 2048};
//   e.threads = 256; e.occ = occupancy(arch, {.threads = 256, .regs_per_thread = 32});
//   e.in_flight_per_thread = 16; e.active_threads = 1 << 20;
//   double us = e.us(arch);  // roofline / latency hiding + reduction latency + issue
//   memory::rank(candidates, 20, explain);  // sorted by (score, str), unique,
//                                           // cut to 20, each explained
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tessera/analysis/BlockInfo.h"
#include "tessera/arch/Arch.h"
#include "tessera/ir/Func.h"
#include "tessera/policies/CostModel.h"
#include "tessera/policies/Policy.h"

namespace tessera::policies::memory {

// ---- Facts about the function ---------------------------------------------

/// `f` with every shape variable bound to options.size_of(its name) (the
/// sizes estimates use).
ir::PrimFunc sized_for(const ir::PrimFunc &f, const ProposeOptions &options);

/// analyze() of `f` after inlining every block BlockInfo::is_inlinable says
/// may be (on a scratch schedule; a block compute_inline refuses stays).
analysis::FuncInfo analyze_inlined(const ir::PrimFunc &f);

/// The extent of a For statement when constant.
std::optional<int64_t> loop_extent(const ir::Stmt &loop);

/// Product of the extents of `b`'s loops whose iter has `kind` (nullopt when
/// one is symbolic), or of all its loops when `kind` is not given.
std::optional<int64_t> iter_extent(const analysis::BlockInfo &b,
                                   std::optional<ir::IterKind> kind = std::nullopt);

/// Elements of a buffer with a constant shape (nullopt otherwise).
std::optional<int64_t> numel(const ir::Buffer &b);

/// Bytes of one element as memory holds it (sub-byte types: a fraction).
double element_bytes(const ir::Buffer &b);

/// `b` is one of `f`'s buffer parameters.
bool is_param(const ir::PrimFunc &f, const ir::Buffer &b);

/// Bytes of every parameter buffer loaded or stored under `s` (their whole
/// constant shapes; a symbolic one counts nothing).
double param_bytes(const ir::PrimFunc &f, const ir::Stmt &s);

// ---- Candidate spaces ------------------------------------------------------

/// Powers of two in [lo, hi] (lo rounded up to one).
std::vector<int64_t> powers_of_two(int64_t lo, int64_t hi);

int64_t ceil_div(int64_t a, int64_t b);
int64_t ceil_log2(int64_t n);

/// Registers per thread: a base for addresses and indices plus the 32-bit
/// registers `staged_bytes` take, within the Arch's per-thread limit.
int64_t registers(const Arch &arch, double staged_bytes);

// ---- The estimate ----------------------------------------------------------

/// The bytes an SM needs in flight to run at full bandwidth (see the file
/// comment: half of its most, from the Arch's limits).
double in_flight_target(const Arch &arch);

/// Bytes of an SM's on-chip memory that keep data a kernel reads again (the
/// unified L1 / shared memory, Arch smem_per_sm_bytes): half of it, since an
/// LRU cache that also streams the first reads keeps a reused set well only
/// below about half its capacity. Lines held by loads in flight come off it.
double reuse_capacity(const Arch &arch);

/// Cycles a group of `n` threads takes to combine their partial values, the
/// partners `stride` lanes apart (1: threadIdx.x; threads_x: threadIdx.y):
/// shuffle steps within a warp, then two shared-memory rounds and the
/// remaining steps across warps.
double reduce_cycles(const Arch &arch, int64_t n, int64_t stride = 1);

/// Warp instructions besides the loads, stores and arithmetic for each step of
/// a per-thread loop of `trips` steps unrolled by `unroll` (1: not): the index
/// math, and the loop's test and branch shared by the unrolled steps (none
/// without a loop, trips <= 1).
double step_instructions(int64_t trips, int64_t unroll);

/// Cycles of one shared-memory round trip between the threads of a block
/// (store, barrier, load).
double shared_round_cycles();

double cycles_to_us(const Arch &arch, double cycles);

/// One config's estimate.
struct Estimate {
  KernelCost cost;
  Occupancy occ;
  int64_t threads = 1;              ///< per block
  double in_flight_per_thread = 0;  ///< bytes of independent loads a thread has outstanding
  int64_t active_threads = 1;       ///< threads of the whole grid that have work
  /// Row groups (sets of threads that reduce together) in the grid and per
  /// block, and the cycles one group's combining takes (0: none).
  int64_t groups = 0, groups_per_block = 1;
  double reduce_cycles = 0;
  /// Warp instructions the whole grid issues (0: not estimated).
  double warp_instructions = 0;
  /// Time added outside the roofline (e.g. a barrier per row), microseconds.
  double extra_us = 0;

  /// Fraction of the bandwidth latency hiding allows, in (0, 1].
  double hiding(const Arch &arch) const;
  /// Cross-thread reduction latency exposed: once per round of the row
  /// groups resident on an SM.
  double reduce_us(const Arch &arch) const;
  /// Issuing warp_instructions on the SMs the grid uses.
  double issue_us(const Arch &arch) const;
  /// roofline_us / hiding + reduce_us + issue_us + extra_us; infinite when a
  /// block cannot run.
  double us(const Arch &arch) const;
  /// "21.3 us; roofline 20.1 us: 67.11 MB, ...; 256 thr/block; 16 B/thread in
  /// flight x 2048 thr/SM = 100% of the bandwidth, issue 1.2 us"
  std::string why(const Arch &arch) const;
};

/// Sorts by (score, config text), drops later duplicates of a config text,
/// keeps the first `topk` and sets their `why` to explain(config) (the
/// candidates are scored without one: formatting is the costly part).
void rank(std::vector<Candidate> &candidates, int64_t topk,
          const std::function<std::string(const rules::Config &)> &explain);

}  // namespace tessera::policies::memory
