//===- tessera/tune/ApplyBest.h - Schedule a function by its stored best ----===//
//
// What a program that was tuned before does at startup: look the workload up
// in the database and schedule it with the fastest config measured for it on
// this GPU and toolchain, without measuring anything again:
//
//   Database db = Database::open("tuning.jsonl");
//   if (auto best = apply_best(func, runtime::detect_arch(), db))
//     compile(best->func);               // best->record says which rule, config and time
//   else
//     ...tune, or rules::apply_default_schedule(func, arch)
//
// Only a record of exactly TuningKey::of(func, arch, toolchain) is used: never
// one measured on another GPU, for another shape or dtype, or with another
// NVRTC, driver or tessera.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>

#include "tessera/arch/Arch.h"
#include "tessera/ir/Func.h"
#include "tessera/tune/Database.h"

namespace tessera::tuning {

/// A function scheduled by a database record.
struct AppliedRecord {
  ir::PrimFunc func;  ///< `func` scheduled by record.rule with record.config
  Record record;      ///< the best "ok" record of the function's key
};

/// The best record of TuningKey::of(func, arch, toolchain) re-applied:
/// rules::find_rule(rule), match on `func`, config_from_json, validate on
/// `arch`, apply. nullopt when the database has no "ok" record of that key.
/// A record that no longer applies (an unknown rule, a rule that does not
/// match, a config the rule rejects) is a DatabaseError naming the key, the
/// rule and why; UserError for a function with symbolic shapes.
std::optional<AppliedRecord> apply_best(const ir::PrimFunc &func, const Arch &arch, const Database &db,
                                        const Toolchain &toolchain = Toolchain::current());

}  // namespace tessera::tuning
