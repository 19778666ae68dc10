//===- tests/tune/AvgPoolProgram.h - A function that runs as two kernels ----===//
//
// For the dynamic-kernel tests (CPU and GPU): a symbolic batch, and a
// schedule (the fallback's) of two kernels sharing a workspace.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tessera/script/Parser.h"

namespace tessera::test {

/// Average pooling over a dynamic batch as relax prints it: the window sums
/// into pool_sum, then a second block divides. The fallback runs the two
/// blocks as two kernels, pool_sum in a workspace.
inline ir::PrimFunc avg_pool_dynamic_batch() {
  return script::parse_func(R"(@T.prim_func(private=True)
def avg_pool2d(var_x: T.handle, var_pool_avg: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int64()
    x = T.match_buffer(var_x, (n, T.int64(8), T.int64(12), T.int64(12)))
    pool_avg = T.match_buffer(var_pool_avg, (n, T.int64(8), T.int64(10), T.int64(10)))
    # with T.block("root"):
    pool_sum = T.alloc_buffer((n, T.int64(8), T.int64(10), T.int64(10)))
    for ax0, ax1, ax2, ax3, rv0, rv1 in T.grid(
        n, T.int64(8), T.int64(10), T.int64(10), T.int64(3), T.int64(3)
    ):
        with T.block("pool_sum"):
            v_ax0, v_ax1, v_ax2, v_ax3, v_rv0, v_rv1 = T.axis.remap(
                "SSSSRR", [ax0, ax1, ax2, ax3, rv0, rv1]
            )
            T.reads(x[v_ax0, v_ax1, v_ax2 + v_rv0, v_ax3 + v_rv1])
            T.writes(pool_sum[v_ax0, v_ax1, v_ax2, v_ax3])
            with T.init():
                pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(0.0)
            pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = (
                pool_sum[v_ax0, v_ax1, v_ax2, v_ax3]
                + x[v_ax0, v_ax1, v_ax2 + v_rv0, v_ax3 + v_rv1]
            )
    for ax0, ax1, ax2, ax3 in T.grid(n, T.int64(8), T.int64(10), T.int64(10)):
        with T.block("pool_avg"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            T.reads(pool_sum[v_ax0, v_ax1, v_ax2, v_ax3])
            T.writes(pool_avg[v_ax0, v_ax1, v_ax2, v_ax3])
            T.block_attr({"schedule_rule": "meta_schedule.pool_avg"})
            pool_avg[v_ax0, v_ax1, v_ax2, v_ax3] = pool_sum[
                v_ax0, v_ax1, v_ax2, v_ax3
            ] / T.Cast("float32", T.int64(9))
)");
}

}  // namespace tessera::test
