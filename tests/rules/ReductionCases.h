//===- tests/rules/ReductionCases.h - Reduction rule configs under test -----===//
//
// The workloads of the reduction and general_reduction rules at their small
// sizes, each at the default config and at configs whose splits do not
// divide those sizes: power-of-two and odd thread counts, serial rows
// (threads_x 1) and serial columns (threads_y 1), partial row blocks,
// vectors that do not divide the row, "shared" and "local" per-row values.
// Shared by the nvrtc and SIMT-emulator tests.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <ostream>

#include "RuleTestUtil.h"
#include "tessera/rules/GeneralReduction.h"
#include "tessera/rules/Reduction.h"

namespace tessera::test {

struct ReductionCase {
  std::string workload;
  const rules::Rule *rule;
  std::shared_ptr<rules::Config> config;  ///< nullptr: the default

  /// Is the per-row value in "local" memory (the default is)?
  bool local() const { return !config || config->to_json()["local_intermediates"] == true; }
  /// The workload at its small size, scheduled.
  ir::PrimFunc scheduled(const SmallWorkload &w) const {
    auto m = rule->match(w.func, test_arch());
    if (!m) throw std::runtime_error(m.reason());
    std::unique_ptr<rules::Config> def = rule->default_config(**m, test_arch());
    const rules::Config &c = config ? *config : *def;
    c.validate(test_arch());
    return rule->apply(w.func, **m, c).func();
  }
};

inline std::ostream &operator<<(std::ostream &os, const ReductionCase &c) {
  return os << c.workload << " " << (c.config ? c.config->str() : "default");
}

/// A reduction config (shared: a ReductionCase holds it).
inline std::shared_ptr<rules::Config> reduction_config(int64_t tx, int64_t ty, int64_t unroll, bool local,
                                                       int64_t vector = 1) {
  auto c = std::make_shared<rules::ReductionConfig>();
  c->threads_x = tx, c->threads_y = ty, c->unroll = unroll, c->local_intermediates = local;
  c->vector = vector;
  return c;
}

/// A general_reduction config.
inline std::shared_ptr<rules::Config> general_reduction_config(int64_t tx, int64_t rows, int64_t vector,
                                                               int64_t unroll, bool local) {
  auto c = std::make_shared<rules::GeneralReductionConfig>();
  c->threads_x = tx, c->rows_per_block = rows, c->vector = vector, c->unroll = unroll, c->local_intermediates = local;
  return c;
}

inline std::vector<ReductionCase> reduction_cases() {
  auto r = [](int64_t tx, int64_t ty, int64_t unroll, bool local, int64_t vector = 1) {
    return reduction_config(tx, ty, unroll, local, vector);
  };
  auto g = general_reduction_config;
  std::vector<ReductionCase> out;
  for (const char *w : {"reduce_sum_f32", "reduce_max_f16", "reduce_sum_outer_f32", "gemv_f16", "gemv_int4"}) {
    out.push_back({w, &rules::reduction_rule(), nullptr});
    for (auto c : {r(64, 2, 1, false), r(48, 3, 3, true), r(1, 8, 4, false), r(16, 1, 2, false), r(8, 5, 8, true)})
      out.push_back({w, &rules::reduction_rule(), c});
    // Vector loads along the row (inner reductions only), dividing the
    // small sizes' rows or not (a tail: scalar loads, still exact).
    if (std::string(w) != "reduce_sum_outer_f32")
      for (auto c : {r(32, 2, 2, true, 2), r(16, 3, 1, false, 8), r(8, 2, 4, true, 4)})
        out.push_back({w, &rules::reduction_rule(), c});
    else  // outer: adjacent outputs per thread, threads splitting the reduction
      for (auto c : {r(4, 8, 2, true, 4), r(2, 16, 1, false, 2), r(8, 3, 3, true, 8)})
        out.push_back({w, &rules::reduction_rule(), c});
  }
  for (const char *w : {"softmax_f16", "rmsnorm_f16", "layernorm_f16"}) {
    out.push_back({w, &rules::general_reduction_rule(), nullptr});
    for (auto c : {g(64, 2, 1, 1, false), g(32, 3, 4, 2, true), g(16, 1, 8, 1, false), g(48, 2, 2, 4, true)})
      out.push_back({w, &rules::general_reduction_rule(), c});
  }
  return out;
}

inline std::string reduction_case_name(const ::testing::TestParamInfo<ReductionCase> &info) {
  return info.param.workload + "_" + std::to_string(info.index);
}

}  // namespace tessera::test
