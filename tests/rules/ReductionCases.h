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

/// relax's layer_norm over (1, n, cols) float32 rows, cast to float16: one
/// block sums x and x * x at once through T.let values (a tuple reduction),
/// as TVM prints it.
inline std::string relax_layer_norm(int cols) {
  std::string c = "T.int64(" + std::to_string(cols) + ")";
  std::string inv = std::to_string(1.0 / cols);
  return R"(
@T.prim_func(private=True)
def layer_norm(p_lv6: T.handle, weight1: T.Buffer(()" + c + R"(,), "float32"), bias: T.Buffer(()" + c +
         R"(,), "float32"), p_output0: T.handle):
    T.func_attr({"tir.noalias": T.bool(True)})
    n = T.int64()
    lv6 = T.match_buffer(p_lv6, (T.int64(1), n, )" + c + R"())
    var_compute_intermediate = T.match_buffer(p_output0, (T.int64(1), n, )" + c + R"(), "float16")
    # with T.block("root"):
    A_red_temp_v0 = T.alloc_buffer((T.int64(1), n))
    A_red_temp_v1 = T.alloc_buffer((T.int64(1), n))
    var_T_layer_norm_intermediate = T.alloc_buffer((T.int64(1), n, )" + c + R"())
    for ax0, ax1, k2 in T.grid(T.int64(1), n, )" + c + R"():
        with T.block("A_red_temp"):
            v_ax0, v_ax1, v_k2 = T.axis.remap("SSR", [ax0, ax1, k2])
            T.reads(lv6[v_ax0, v_ax1, v_k2])
            T.writes(A_red_temp_v0[v_ax0, v_ax1], A_red_temp_v1[v_ax0, v_ax1])
            with T.init():
                A_red_temp_v0[v_ax0, v_ax1] = T.float32(0.0)
                A_red_temp_v1[v_ax0, v_ax1] = T.float32(0.0)
            v_A_red_temp_v0: T.float32 = A_red_temp_v0[v_ax0, v_ax1] + lv6[v_ax0, v_ax1, v_k2]
            v_A_red_temp_v1: T.float32 = A_red_temp_v1[v_ax0, v_ax1] + lv6[v_ax0, v_ax1, v_k2] * lv6[v_ax0, v_ax1, v_k2]
            A_red_temp_v0[v_ax0, v_ax1] = v_A_red_temp_v0
            A_red_temp_v1[v_ax0, v_ax1] = v_A_red_temp_v1
    for ax0, ax1, ax2 in T.grid(T.int64(1), n, )" + c + R"():
        with T.block("T_layer_norm"):
            v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            T.reads(lv6[v_ax0, v_ax1, v_ax2], A_red_temp_v0[v_ax0, v_ax1], A_red_temp_v1[v_ax0, v_ax1], weight1[v_ax2], bias[v_ax2])
            T.writes(var_T_layer_norm_intermediate[v_ax0, v_ax1, v_ax2])
            var_T_layer_norm_intermediate[v_ax0, v_ax1, v_ax2] = (lv6[v_ax0, v_ax1, v_ax2] - A_red_temp_v0[v_ax0, v_ax1] * T.float32()" + inv + R"()) * T.rsqrt(A_red_temp_v1[v_ax0, v_ax1] * T.float32()" + inv + R"() - A_red_temp_v0[v_ax0, v_ax1] * T.float32()" + inv + R"() * (A_red_temp_v0[v_ax0, v_ax1] * T.float32()" + inv + R"()) + T.float32(1e-05)) * weight1[v_ax2] + bias[v_ax2]
    for i0, i1, i2 in T.grid(T.int64(1), n, )" + c + R"():
        with T.block("compute"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            T.reads(var_T_layer_norm_intermediate[v_i0, v_i1, v_i2])
            T.writes(var_compute_intermediate[v_i0, v_i1, v_i2])
            var_compute_intermediate[v_i0, v_i1, v_i2] = T.Cast("float16", var_T_layer_norm_intermediate[v_i0, v_i1, v_i2])
)";
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
