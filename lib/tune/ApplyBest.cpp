//===- lib/tune/ApplyBest.cpp - The stored best config, re-applied ---------===//
#include "tessera/tune/ApplyBest.h"

#include <fmt/format.h>

#include "tessera/rules/Rule.h"

namespace tessera::tuning {

std::optional<AppliedRecord> apply_best(const ir::PrimFunc &func, const Arch &arch, const Database &db,
                                        const Toolchain &toolchain) {
  TuningKey key = TuningKey::of(func, arch, toolchain);
  std::optional<Record> best = db.best(key);
  if (!best) return std::nullopt;

  auto fail = [&](const std::string &why) -> DatabaseError {
    return DatabaseError(
        fmt::format("tuning database {}: the best record of {} (rule '{}', config {}) does "
                    "not apply: {}",
                    db.path(), key.str(), best->rule,
                    best->config.dump(-1, ' ', false, Json::error_handler_t::replace), why));
  };
  const rules::Rule *rule = rules::find_rule(best->rule);
  if (!rule) throw fail("tessera has no rule of that name");
  auto match = rule->match(func, arch);
  if (!match) throw fail("the rule does not match the function: " + match.reason());
  try {
    std::unique_ptr<rules::Config> config = rule->config_from_json(best->config);
    config->validate(arch);
    schedule::Schedule scheduled = rule->apply(func, **match, *config);
    return AppliedRecord{.func = scheduled.func(), .record = *best};
  } catch (const UserError &e) {
    // A ConfigError or a ScheduleError: the record was written by another
    // rule version or edited by hand.
    throw fail(e.what());
  }
}

}  // namespace tessera::tuning
