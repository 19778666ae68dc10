//===- tessera/tune/DynamicPlan.h - Kernels for ranges of symbolic sizes ----===//
//
// An inference engine meets symbolic sizes (tokens, batch, sequence length)
// and needs good kernels for all of them at startup. One kernel sized for a
// single hint (what a symbolic function gets from the default schedule) is
// slow away from the hint; one kernel per size costs a compile each. A plan
// chooses a few configs that together serve every size of a range well
// (../shared/reference/DYNAMIC_SHAPES.md sections 2 and 4):
//
//   1. cells: per symbol, its exact small values (up to `exact_up_to`) and
//      its hot values get cells of their own, the rest of [lo, hi] is cut into
//      `cells_per_octave` cells per octave (2^j, 2^(j+1)]; the cells of several
//      symbols are the product of theirs;
//   2. scores: the rule (the first that matches, as the default schedule
//      picks it) is matched once on the symbolic function; its policy
//      proposes its best 16 configs at each cell's representative (the
//      upper ends: a kernel must serve its cell's largest size) through
//      ProposeOptions::sizes; the union of those are the candidates, and
//      policies::estimate scores every candidate at every cell (one call
//      per cell: the shape is read once);
//   3. cover: at most `max_kernels` configs chosen greedily, each time the
//      one that most lowers the sum over cells of (the best chosen config's
//      estimate / the best estimate there): a k-median cover, so one kernel
//      serves many cells, adjacent or not;
//   4. every chosen config is applied to the symbolic function (a config
//      the rule refuses for some size is dropped and the cover redone), and
//      each cell takes the chosen config with its lowest estimate.
//
// The plan reports the predicted regret (assigned estimate / best estimate)
// per cell, with two baselines scored the same way: one kernel (the policy's
// top-1 at the hint, today's symbolic kernel) and power-of-two buckets (each
// bucket the config best at its upper end). Deterministic: the same function,
// spec and Arch give the same plan.
//
//   DynamicSpec spec{.symbols = {SymbolRange::parse("m=1:4096")}, .max_kernels = 8};
//   DynamicPlan p = plan_dynamic(func, spec, Arch::by_name("h100"));
//   p.configs[p.cells[p.cell_of({37})].config]   // the kernel for M = 37
//
// A function without symbolic sizes gets one cell and one kernel (the decode
// step's gemv at M = 1); every symbolic size must have a range.
//
// Errors: UserError for a spec that does not fit the function (a symbol it
// lacks or one without a range, an empty range, too many cells) or a
// function no rule schedules.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/arch/Arch.h"
#include "tessera/ir/Func.h"
#include "tessera/rules/Rule.h"

namespace tessera::tuning {

/// One symbol's range: `m=1:4096`.
struct SymbolRange {
  std::string name;
  int64_t lo = 1, hi = 4096;
  /// Exact values that get cells of their own (decode's M = 1, a batch size
  /// served all the time).
  std::vector<int64_t> hot;

  /// "m=1:4096" (or "m=64": one value). UserError naming the text otherwise.
  static SymbolRange parse(const std::string &text);
};

struct DynamicSpec {
  std::vector<SymbolRange> symbols;
  int64_t max_kernels = 16;
  int64_t cells_per_octave = 2;
  /// Values up to this get cells of their own.
  int64_t exact_up_to = 4;
  /// The most cells a plan may have (the product over symbols).
  int64_t max_cells = 4096;

  /// A spec from "m=1:4096" ranges and "m=1" hot values (each naming a
  /// symbol that has a range). UserError naming a bad one.
  static DynamicSpec parse(const std::vector<std::string> &ranges, const std::vector<std::string> &hot,
                           int64_t max_kernels = 16);
};

/// A box of sizes: one inclusive range per symbol (the spec's order).
struct Cell {
  std::vector<std::pair<int64_t, int64_t>> bounds;
  /// The chosen config (an index into DynamicPlan::configs).
  int config = -1;
  /// Estimates (us) at the representative sizes (the upper ends): of the
  /// assigned config, and the best of every candidate.
  double predicted_us = 0, best_us = 0;
  /// The estimate of each of the plan's configs here (inf: none), in the
  /// plan's order: which kernels are close enough to measure here too.
  std::vector<double> kernel_us;

  double regret() const { return best_us > 0 ? predicted_us / best_us : 1; }
  bool contains(const std::vector<int64_t> &values) const;
  /// "m 17..24", "m 1, n 129..192".
  std::string str(const std::vector<std::string> &symbols) const;
};

/// A comparison scored like the plan: its kernel count and predicted regret.
struct PlanBaseline {
  std::string name;
  int64_t kernels = 0;
  double geomean_regret = 1, max_regret = 1;
};

struct DynamicPlan {
  std::string rule;
  std::vector<std::string> symbols;
  /// The configs to build, in the order the cover chose them.
  std::vector<std::unique_ptr<rules::Config>> configs;
  std::vector<Cell> cells;
  std::vector<PlanBaseline> baselines;
  /// The one-kernel baseline's config: the policy's top-1 at the hint (text).
  std::string one_kernel_config;
  /// Distinct configs scored, policy calls, rule applications (the checks of
  /// step 4), and the planning time.
  int64_t candidates = 0, policy_calls = 0, rule_applications = 0;
  double plan_ms = 0;

  double geomean_regret() const;
  double max_regret() const;
  /// The cell holding `values` (one per symbol, in order), or -1.
  int cell_of(const std::vector<int64_t> &values) const;
  rules::Json to_json() const;
  /// The plan as text: the cells with their kernel and estimates, the
  /// kernels, the baselines.
  std::string table() const;
};

/// Predicted regret at one size of a sweep: each series' estimate over the
/// best estimate of any config at exactly that size.
struct RegretPoint {
  std::vector<int64_t> sizes;
  double best_us = 0;
  /// Regrets (>= 1); NaN where the policy cannot score that series' config
  /// at this size (policies::estimate: a policy without the hook).
  double plan = 1, one_kernel = 1, pow2 = 1;
};
struct RegretSummary {
  double geomean = 1, p95 = 1, max = 1;
  int64_t unestimated = 0;  ///< points left out: no estimate
};
struct RegretCurve {
  std::vector<RegretPoint> points;
  RegretSummary plan, one_kernel, pow2;
  int64_t pow2_kernels = 0;  ///< distinct configs the power-of-two buckets use
};

/// The sizes a regret curve is drawn at (../shared/reference/DYNAMIC_SHAPES.md
/// section 4): one symbol: every value up to 64, multiples of 8 up to 512,
/// then 8 points per octave, within the range; two or more: a log grid of
/// up to 24 distinct values per symbol plus 200 random points (a fixed seed).
std::vector<std::vector<int64_t>> regret_sweep(const DynamicSpec &spec);

/// The plan's predicted regret at `points` against one kernel (the policy's
/// top-1 at the hint) and power-of-two buckets (each the config best at its
/// upper end), all from the policy's estimates at each exact size.
RegretCurve predict_regret(const ir::PrimFunc &f, const DynamicSpec &spec, const DynamicPlan &plan, const Arch &arch,
                           const std::vector<std::vector<int64_t>> &points);

/// The cells of one symbol (step 1 of the file comment), in order.
std::vector<std::pair<int64_t, int64_t>> symbol_cells(const SymbolRange &range, const DynamicSpec &spec);

/// Plans kernels for `f` over `spec` (see the file comment).
DynamicPlan plan_dynamic(const ir::PrimFunc &f, const DynamicSpec &spec, const Arch &arch);

}  // namespace tessera::tuning
