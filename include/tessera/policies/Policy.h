//===- tessera/policies/Policy.h - Top-k configs for a matched rule ---------===//
//
// A policy reads the matched function and the GPU description and proposes
// the configs worth measuring, best first (Roller, OSDI'22, and fast dlight:
// ../shared/reference/ROLLER_DLIGHT.md section 2). One policy serves one or
// more rules:
//
//   const rules::Rule &rule = *rules::find_rule("matmul");
//   auto m = rule.match(func, arch);
//   std::vector<Candidate> top = policies::propose(func, rule, **m, arch, 20);
//   for (const Candidate &c : top) ... c.config->str(), c.score, c.why ...
//
// Contract, for every policy:
//   - deterministic: the same (function, arch, k) gives the same list, in the
//     same order; ties are broken by an explicit key, never by container order;
//   - every emitted config passes the rule's validate(arch) and is accepted by
//     the rule's apply() for this match (propose() filters out anything
//     apply() would refuse by construction, e.g. a symbolic reduce extent
//     split over threads);
//   - no duplicates (compared by Config::str());
//   - every number comes from the Arch (SMs, limits, transaction sizes,
//     bandwidths), none from a constant naming a GPU;
//   - fast: milliseconds for k = 20 (bench/PolicyBench.cpp).
//
// Symbolic extents: a policy sizes tiles for `options.symbolic_hint` (the
// value an application expects, default 4096) but only emits configs the rule
// accepts for any value.
//
// The tensor-core policy slots in as one more Policy for the tensor-core rule
// (a later issue): register it in all_policies() before the default ones.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/arch/Arch.h"
#include "tessera/ir/Func.h"
#include "tessera/rules/Rule.h"

namespace tessera::policies {

/// One proposed config with the policy's estimate.
struct Candidate {
  std::unique_ptr<rules::Config> config;
  /// Estimated time in microseconds under the policy's cost model (lower is
  /// better); only comparable between candidates of one propose() call.
  double score = 0;
  /// One line: what the estimate is made of ("traffic 12.5 MB, 2 waves, 128 thr").
  std::string why;
};

struct ProposeOptions {
  int64_t topk = 20;
  /// The value assumed for symbolic extents when sizing tiles.
  int64_t symbolic_hint = 4096;
  /// Values of named shape variables (a cell of a dynamic-shape plan, tune
  /// DynamicPlan.h); the others take symbolic_hint. The configs stay valid for
  /// every value: only the estimates read these.
  std::map<std::string, int64_t> sizes;
  /// Set by estimate(): score these configs (of the rule) instead of
  /// enumerating; a policy that can returns one candidate per config, in
  /// order, with a null `config` and the estimate (NaN: not its type).
  const std::vector<const rules::Config *> *score_only = nullptr;
  /// Propose Hopper's wgmma kernels where the Arch has wgmma (off: the
  /// mma.sync family alone, e.g. to compare the two).
  bool hopper_kernels = true;
  /// Propose kernels that take tensor maps (TMA-fed, lower/TensorMaps.h):
  /// off where the caller's launches cannot pass them.
  bool tensor_map_kernels = true;
  /// The value assumed for shape variable `name`.
  int64_t size_of(const std::string &name) const {
    auto it = sizes.find(name);
    return it == sizes.end() ? symbolic_hint : it->second;
  }
};

/// `extent` with every shape variable at options.size_of(its name): a
/// constant, at least 1.
int64_t sized_extent(const ir::Expr &extent, const ProposeOptions &options);

class Policy {
 public:
  virtual ~Policy() = default;
  virtual const char *name() const = 0;
  /// Whether this policy proposes configs for the rule named `rule`.
  virtual bool handles(const std::string &rule) const = 0;
  /// Up to options.topk candidates, best (lowest score) first. `m` is the
  /// rule's match on `f`. May return fewer (a tiny problem has few tilings),
  /// never zero: at worst the rule's default config.
  virtual std::vector<Candidate> propose(const ir::PrimFunc &f, const rules::Rule &rule, const rules::Match &m,
                                         const Arch &arch, const ProposeOptions &options) const = 0;
};

/// Every policy, tried in order; the first that handles a rule serves it.
const std::vector<const Policy *> &all_policies();
/// The policy serving `rule`, or nullptr.
const Policy *find_policy(const std::string &rule);

/// What propose() returns: the candidates, and the configs the policy emitted
/// that broke the contract (failed validate(arch), or duplicated an earlier
/// one), each with the reason; tests require `dropped` to be empty, the tuner
/// reports it and goes on.
struct Proposal {
  std::vector<Candidate> candidates;
  std::vector<std::string> dropped;
};

/// The policy's estimate (us) of each of `configs` at options' sizes, in
/// order, whether or not it would propose them there: the shape is read
/// once, then each config scored (a dynamic-shape plan scores every
/// candidate at every cell this way). NaN for a config the policy cannot
/// score (a policy without the score_only hook: the configs it proposes at
/// these sizes only; a rule without a policy: none).
std::vector<double> estimate(const ir::PrimFunc &f, const rules::Rule &rule, const rules::Match &m, const Arch &arch,
                             const std::vector<const rules::Config *> &configs, const ProposeOptions &options = {});

/// find_policy(rule.name())->propose(...) with the contract enforced: invalid
/// and duplicate configs moved to `dropped`, the list cut to options.topk. A
/// rule without a policy gets its default config alone.
Proposal propose(const ir::PrimFunc &f, const rules::Rule &rule, const rules::Match &m, const Arch &arch,
                 const ProposeOptions &options = {});

}  // namespace tessera::policies
