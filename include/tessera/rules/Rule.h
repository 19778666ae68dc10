//===- tessera/rules/Rule.h - Scheduling rules and their configs -----------===//
//
// A rule recognises one kind of computation and schedules it for a GPU
// through schedule primitives only:
//
//   const Rule &r = *find_rule("elementwise");
//   auto m = r.match(func, arch);                 // a match, or why not
//   if (!m) std::cout << m.reason();
//   auto cfg = r.default_config(**m, arch);       // a typed config, erased
//   cfg->validate(arch);                          // ConfigError naming a field
//   schedule::Schedule s = r.apply(func, **m, *cfg);   // may throw ScheduleError
//
// Rules never branch on a GPU's name: everything that differs between GPUs
// comes from Arch fields. match() never throws for a valid PrimFunc; apply()
// may throw ScheduleError (or ConfigError for a config of another rule),
// which apply_default_schedule treats as "try the next rule".
//
// Configs are typed per rule (rules/<Rule>.h) so a policy can vary tile
// sizes, thread counts, vector widths, unroll, reduction steps and stages; here
// they are erased behind Config with a JSON round trip:
//   {"rule": "elementwise", "threads": 256, "vector": 4, "per_thread": 1, "unroll": true,
//    "transpose_tile": 0, "tile_rows": 0, "transpose_pad": 0, "staged_bytes": 0}
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessera/analysis/Match.h"
#include "tessera/arch/Arch.h"
#include "tessera/ir/Func.h"
#include "tessera/schedule/Schedule.h"
#include "tessera/support/Error.h"

namespace tessera::rules {

using Json = nlohmann::ordered_json;

/// A config that is malformed (JSON) or cannot run on an Arch. The message
/// names the rule and the field: "elementwise config: threads = 2048 exceeds
/// the 1024 threads per block of h100_sxm".
class ConfigError : public UserError {
 public:
  using UserError::UserError;
};

/// A rule's configuration (see the file comment).
class Config {
 public:
  virtual ~Config() = default;
  /// The rule this config belongs to.
  virtual const char *rule() const = 0;
  /// {"rule": ..., fields...}; Rule::config_from_json reads it back exactly.
  virtual Json to_json() const = 0;
  /// Throws ConfigError when the config cannot run on `arch` or is
  /// inconsistent (a factor of zero, a vector width the loads cannot use).
  virtual void validate(const Arch &arch) const = 0;
  /// Compact one-line text, the JSON without spaces.
  std::string str() const { return to_json().dump(); }
};

/// What a rule's match found (blocks, roles, extents), passed back to
/// default_config and apply. describe() says it in one line for `-v`.
class Match {
 public:
  virtual ~Match() = default;
  virtual std::string describe() const = 0;
};

using MatchPtr = std::shared_ptr<const Match>;

class Rule {
 public:
  virtual ~Rule() = default;
  /// "elementwise", "reduction", ..., "fallback".
  virtual const char *name() const = 0;
  /// A match or the reason the rule does not apply; never throws for a valid function.
  virtual analysis::MatchResult<MatchPtr> match(const ir::PrimFunc &f, const Arch &arch) const = 0;
  /// The config used without a policy: valid for `arch`.
  virtual std::unique_ptr<Config> default_config(const Match &m, const Arch &arch) const = 0;
  /// Reads a config written by Config::to_json; ConfigError naming the field
  /// for a missing, mistyped or unknown field, or another rule's config.
  virtual std::unique_ptr<Config> config_from_json(const Json &j) const = 0;
  /// Schedules `f` (the function `m` was matched on): the rule's schedule,
  /// then keep_cross_kernel_buffers_global. Throws ScheduleError when a
  /// primitive refuses, ConfigError when `config` is another rule's.
  schedule::Schedule apply(const ir::PrimFunc &f, const Match &m, const Config &config) const;

 protected:
  /// The rule's own schedule of `f` (apply's first step).
  virtual schedule::Schedule build_schedule(const ir::PrimFunc &f, const Match &m, const Config &config) const = 0;
};

/// An intermediate the function allocates with a scope that does not outlive
/// a kernel ("shared", "local", ...: TVM's cache_read/cache_write write them
/// so into unscheduled programs) but that several top-level loop nests (the
/// kernels lowering makes) access: set to "global" by set_scope on the block
/// that writes it, so the value crosses the kernel boundary as the serial
/// program says. Others are left as they are.
void keep_cross_kernel_buffers_global(schedule::Schedule &sch);

/// Every rule, specific first, the fallback last (the order
/// apply_default_schedule tries them in).
const std::vector<const Rule *> &all_rules();
/// The rule named `name`, or nullptr.
const Rule *find_rule(const std::string &name);

/// What apply_default_schedule did.
struct DefaultSchedule {
  ir::PrimFunc func;
  /// The rule that scheduled it ("" when the function was already scheduled).
  std::string rule;
  /// Its config (empty when none).
  Json config;
  /// The rules tried before it, with the reason each declined or failed.
  std::vector<std::pair<std::string, std::string>> declined;
  /// The trace of primitives that produced `func`, as JSON.
  Json trace;
};

/// The compilation target the function names in its attributes
/// (`T.func_attr({"target": T.target("llvm")})` or a target dictionary), by
/// its kind ("cuda", "llvm", ...); "" when it names none.
std::string target_kind(const ir::PrimFunc &f);

/// UserError when the function names a target that is not a GPU tessera
/// generates code for (cuda, nvptx): "function 'main' is for target 'llvm'
/// (T.func_attr target): the rules schedule CUDA kernels ...", or holds an
/// opaque call (ir/Opaque.h).
void check_gpu_target(const ir::PrimFunc &f);

/// The first rule of all_rules() that matches `f` and applies at its
/// (validated) default config, with its match, config and schedule; every
/// rule tried before it is in `declined` with its reason. `rule` is null when
/// none applies. `f` should have unique block names
/// (schedule::unique_block_names). The choice apply_default_schedule makes.
struct RuleChoice {
  const Rule *rule = nullptr;
  MatchPtr match;
  std::unique_ptr<Config> config;
  std::optional<schedule::Schedule> schedule;
  std::vector<std::pair<std::string, std::string>> declined;
  /// "\n  RULE: reason" per declined rule.
  std::string why_declined() const;
};
RuleChoice choose_rule(const ir::PrimFunc &f, const Arch &arch);

/// Tries the rules in order; the first that matches and applies wins. A rule
/// whose apply throws is recorded in `declined` and the next one is tried.
/// Functions that are already scheduled (thread-bound loops) are returned as
/// they are. The fallback matches every valid function, so this only throws
/// when the fallback itself fails (an InternalError: a bug), or when the
/// function names a target that is not a GPU (check_gpu_target).
DefaultSchedule apply_default_schedule(const ir::PrimFunc &f, const Arch &arch);

}  // namespace tessera::rules
