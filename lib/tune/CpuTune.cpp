//===- lib/tune/CpuTune.cpp - Every CPU schedule of a function, timed -------===//
#include "tessera/tune/CpuTune.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "tessera/runtime/Backend.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/runtime/Verify.h"
#include "tessera/support/Error.h"
#include "tessera/support/Version.h"

namespace tessera::tuning {

TuningKey cpu_tuning_key(const ir::PrimFunc &f, const cpu::CpuArch &arch) {
  return TuningKey{.workload = workload_hash(f),
                   .arch = fmt::format("cpu/{}/{}c/{}b/{}t", arch.name, arch.cores, arch.vector_bits,
                                       runtime::llvm_jit_threads()),
                   .nvrtc = "none",
                   .driver = "none",
                   .tessera = std::string(version())};
}

namespace {

/// A candidate's config as the database stores it.
Json config_json(const CpuCandidate &c) {
  if (c.config) return Json::parse(c.config->str());
  if (c.loops) return Json::parse(c.loops->str());
  return Json{{"plain", true}};
}

/// The stored best of `f`, re-applied; nullopt when there is none. DatabaseError
/// when its config no longer applies.
std::optional<CpuCandidate> stored_best(const ir::PrimFunc &f, const cpu::CpuArch &arch, const Database &db) {
  std::optional<Record> best = db.best(cpu_tuning_key(f, arch));
  if (!best) return std::nullopt;
  CpuCandidate c{.name = "database " + best->config.dump(), .ok = true, .median_ms = *best->time_us / 1000};
  try {
    if (best->rule != "cpu") throw UserError("the rule '" + best->rule + "' is not the CPU target's");
    const std::string json = best->config.dump();
    if (best->config.value("plain", false)) {
      c.func = f;
    } else if (std::optional<cpu::CpuLoopConfig> loops = cpu::CpuLoopConfig::parse(json)) {
      c.loops = *loops;
      c.func = cpu::schedule_loops_for_cpu(f, *loops);
    } else {
      c.config = cpu::CpuMatmulConfig::parse(json);
      c.func = cpu::schedule_for_cpu(f, arch, *c.config).func;
    }
  } catch (const UserError &e) {
    throw DatabaseError(fmt::format("tuning database {}: the best record of {} (config {}) does not apply: {}",
                                    db.path(), best->key.str(), best->config.dump(), e.what()));
  }
  return c;
}

/// Every candidate as a record: ok with its time, a wrong answer, or one that
/// did not schedule or build.
std::vector<Record> cpu_records(const ir::PrimFunc &f, const cpu::CpuArch &arch, const CpuTuneResult &r) {
  TuningKey key = cpu_tuning_key(f, arch);
  Json summary = workload_summary(f);
  std::vector<Record> out;
  for (const CpuCandidate &c : r.candidates) {
    Record rec{.key = key, .workload = summary, .rule = "cpu", .config = config_json(c)};
    if (c.ok) {
      rec.status = RecordStatus::Ok;
      rec.time_us = std::max(c.median_ms * 1000, 1e-3);
    } else {
      rec.status = c.error.starts_with("wrong:") ? RecordStatus::WrongAnswer : RecordStatus::CompileError;
      rec.error = c.error;
    }
    out.push_back(std::move(rec));
  }
  return out;
}

}  // namespace

nlohmann::json to_json(const CpuTuneResult &r) {
  nlohmann::json cands = nlohmann::json::array();
  // NaN has no JSON form: an untimed median is null.
  auto number = [](double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); };
  for (const CpuCandidate &c : r.candidates) {
    cands.push_back({{"name", c.name},
                     {"config", c.config || c.loops ? nlohmann::json(config_json(c)) : nlohmann::json()},
                     {"ok", c.ok},
                     {"error", c.error},
                     {"median_ms", number(c.median_ms)},
                     {"error_ratio", c.error_ratio}});
  }
  return {{"target", "cpu"},           {"threads", r.threads}, {"reference", r.reference},
          {"plain_ms", number(r.plain_ms)}, {"from_db", r.from_db}, {"db_note", r.db_note},
          {"candidates", cands}};
}

CpuTuneResult tune_for_cpu(const ir::PrimFunc &f, const cpu::CpuArch &arch, const CpuTuneOptions &options) {
  std::unique_ptr<runtime::Backend> llvm = runtime::make_backend("llvm", {.fuse_multiply_add = true});
  if (std::string why = llvm->unavailable(); !why.empty()) throw UserError("the CPU target needs the LLVM JIT: " + why);
  if (!f.shape_vars().empty())
    throw UserError("the CPU target times '" + f.name() + "' at given sizes: bind '" + f.shape_vars()[0].name() +
                    "' (and the other symbolic sizes) with --dim");
  CpuTuneResult result;
  result.threads = runtime::llvm_jit_threads();
  std::vector<CpuCandidate> &cands = result.candidates;
  if (options.db) {
    try {
      if (std::optional<CpuCandidate> hit = stored_best(f, arch, *options.db)) {
        result.from_db = true;
        result.reference = "database";
        cands.push_back(std::move(*hit));
        return result;
      }
    } catch (const DatabaseError &e) {
      result.db_note = std::string("the stored best cannot be applied, tuning again: ") + e.what();
    }
  }
  cands.push_back({.name = "plain (as written)", .func = f});
  // A candidate the schedule fails for keeps the reason, and is not run.
  auto add = [&](CpuCandidate cand, const std::function<ir::PrimFunc()> &schedule) {
    try {
      cand.func = schedule();
    } catch (const Error &e) {
      cand.error = e.what();
    }
    cands.push_back(std::move(cand));
  };
  for (const cpu::CpuMatmulConfig &c : cpu::cpu_matmul_candidates(f, arch))
    add({.name = "matmul " + c.str(), .config = c}, [&] { return cpu::schedule_for_cpu(f, arch, c).func; });
  for (const cpu::CpuLoopConfig &c : cpu::cpu_loop_candidates(f))
    add({.name = "loops " + c.str(), .loops = c}, [&] { return cpu::schedule_loops_for_cpu(f, c); });

  std::vector<runtime::NDArray> inputs = runtime::make_random_args(f, {}, options.seed);
  runtime::Oracle used = runtime::Oracle::Auto;
  runtime::Reference want = runtime::compute_reference(f, inputs, runtime::Oracle::Auto, &used);
  result.reference = runtime::oracle_name(used);
  for (CpuCandidate &c : cands) {
    if (!c.error.empty()) continue;
    try {
      std::unique_ptr<runtime::Executable> exe = llvm->build(c.func);
      std::vector<runtime::NDArray> args = inputs;
      exe->run(args);
      const runtime::ChecksSummary checks = runtime::summarize_checks(runtime::check_outputs(f, args, want));
      c.error_ratio = checks.worst_ratio;
      c.ok = checks.ok();
      if (!c.ok) c.error = "wrong: " + checks.failures;
      if (c.ok) c.median_ms = exe->time(args, options.timing).median_ms;
    } catch (const Error &e) {
      c.ok = false;
      c.error = e.what();
    }
  }
  result.plain_ms = cands[0].ok ? cands[0].median_ms : NAN;
  std::stable_sort(cands.begin(), cands.end(), [](const CpuCandidate &a, const CpuCandidate &b) {
    return a.ok != b.ok ? a.ok : (a.ok && a.median_ms < b.median_ms);
  });
  if (options.db && result.ok()) options.db->append(cpu_records(f, arch, result));
  return result;
}

}  // namespace tessera::tuning
