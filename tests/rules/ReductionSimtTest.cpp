//===- tests/rules/ReductionSimtTest.cpp - Reduction kernels, thread by thread ===//
//
// The kernels the reduction and general_reduction rules produce (every case
// of ReductionCases.h), lowered and run by the CPU SIMT emulator of
// tests/codegen: one std::thread per GPU thread, real barriers and warp
// shuffles, with races, divergent barriers and reads of never-written
// local/shared memory reported. The first, a middle and the last thread
// block must store what the interpreter computes. This is the parallel
// semantics the interpreter (serial) cannot check, without a GPU.
//
//===----------------------------------------------------------------------===//
#include "../codegen/SimtEmulator.h"
#include "ReductionCases.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/lower/Lower.h"
#include "tessera/script/Parser.h"

namespace tessera::test {
namespace {

class ReductionSimtTest : public ::testing::TestWithParam<ReductionCase> {};

TEST_P(ReductionSimtTest, EmulatedBlocksMatchTheInterpreter) {
  const ReductionCase &c = GetParam();
  const Entry &e = find_entry(c.workload);
  SmallWorkload w = small_workload(e);
  ir::PrimFunc f = c.scheduled(w);
  std::mt19937_64 rng(11);
  std::vector<runtime::NDArray> expected = runtime::make_random_args(w.func, w.dims, 5);
  prepare_inputs(e, expected, rng);
  std::vector<runtime::NDArray> actual = expected;
  runtime::Reference reference = runtime::compute_reference(w.func, expected);
  std::vector<bool> outputs = ir::written_params(w.func);
  lower::LoweredFunc kernel = lower::lower(f);
  std::vector<runtime::NDArray *> args;
  for (runtime::NDArray &a : actual) args.push_back(&a);
  int64_t blocks = *ir::as_const_int(kernel.launch.grid[0]);
  for (int64_t b : {int64_t{0}, blocks / 2, blocks - 1}) {
    simt::WrittenMask written;
    try {
      written = simt::emulate(kernel, args, {{b, 0, 0}});
    } catch (const simt::EmulationError &err) {
      FAIL() << "block " << b << ": " << err.what() << "\n" << codegen::codegen_cuda(kernel);
    }
    int stored = 0;
    for (size_t i = 0; i < actual.size(); ++i) {
      stored += int(std::count(written[i].begin(), written[i].end(), 1));
      if (!outputs[i]) continue;
      runtime::OutputCheck c = runtime::check_output("parameter " + std::to_string(i), actual[i],
                                                     reference.values[i], reference.variance[i], &written[i]);
      ASSERT_TRUE(c.ok) << "block " << b << ": " << c.str() << "\n" << codegen::codegen_cuda(kernel);
    }
    EXPECT_GT(stored, 0) << "block " << b << " stored nothing";
  }
}

/// The lowered kernel's arguments: the arrays of `f`'s parameters, and the
/// shape variables it takes as scalars from `dims` (kept in `scalars`).
std::vector<runtime::NDArray *> kernel_args(const lower::LoweredFunc &k, const ir::PrimFunc &f,
                                            std::vector<runtime::NDArray> &arrays,
                                            std::vector<runtime::NDArray> &scalars, const runtime::DimBindings &dims) {
  std::vector<runtime::NDArray *> out;
  scalars.reserve(k.params.size());
  for (const lower::KernelParam &p : k.params) {
    if (p.is_buffer()) {
      auto it = std::find_if(f.params().begin(), f.params().end(), [&](const ir::Var &v) { return v.same_as(p.var); });
      if (it == f.params().end()) throw std::runtime_error("kernel parameter '" + p.var.name() + "' is not f's");
      out.push_back(&arrays[it - f.params().begin()]);
      continue;
    }
    scalars.emplace_back(p.var.dtype(), std::vector<int64_t>{});
    scalars.back().set_int(0, dims.at(p.var.name()));
    out.push_back(&scalars.back());
  }
  return out;
}

/// Emulates every thread block of `scheduled` (lowered) on random inputs of
/// `original` at `dims` and expects each output within its float64 bound.
void expect_emulation_matches(const ir::PrimFunc &original, const ir::PrimFunc &scheduled,
                              const runtime::DimBindings &dims) {
  lower::LoweredFunc kernel = lower::lower(scheduled);
  std::vector<runtime::NDArray> expected = runtime::make_random_args(original, dims, 5), actual = expected, scalars;
  runtime::Reference reference = runtime::compute_reference(original, expected);
  std::vector<runtime::NDArray *> args = kernel_args(kernel, scheduled, actual, scalars, dims);
  try {
    simt::emulate(kernel, args);
  } catch (const simt::EmulationError &err) {
    FAIL() << err.what() << "\n" << codegen::codegen_cuda(kernel);
  }
  std::vector<bool> outputs = ir::written_params(original);
  for (size_t i = 0; i < actual.size(); ++i) {
    if (!outputs[i]) continue;
    runtime::OutputCheck check = runtime::check_output("parameter " + std::to_string(i), actual[i],
                                                       reference.values[i], reference.variance[i]);
    EXPECT_TRUE(check.ok) << check.str() << "\n" << codegen::codegen_cuda(kernel);
  }
}

/// A symbolic reduce extent split over threads, at extents from 0 (no
/// iteration: the serial program writes nothing, nor may the kernel) to
/// several passes of the block: every thread block of the grid stores what
/// the interpreter computes, and nothing else.
TEST(ReductionSimt, SymbolicReduceExtentsSplitOverThreads) {
  auto r = [](int64_t tx, int64_t ty, int64_t unroll, bool local) { return reduction_config(tx, ty, unroll, local); };
  auto g = general_reduction_config;
  std::vector<ReductionCase> cases;
  for (const char *w : {"reduce_sum_f32", "reduce_max_f16"})
    for (auto c : {r(32, 2, 2, false), r(16, 3, 1, true), r(64, 1, 4, false)})
      cases.push_back({w, &rules::reduction_rule(), c});
  for (auto c : {r(4, 8, 2, true), r(2, 16, 1, false), r(1, 32, 2, true)})
    cases.push_back({"reduce_sum_outer_f32", &rules::reduction_rule(), c});
  for (const char *w : {"softmax_f16", "rmsnorm_f16", "layernorm_f16"}) {
    cases.push_back({w, &rules::general_reduction_rule(), nullptr});
    for (auto c : {g(64, 2, 1, 1, false), g(32, 3, 1, 2, true)}) cases.push_back({w, &rules::general_reduction_rule(), c});
  }
  for (const ReductionCase &c : cases) {
    const Entry &e = find_entry(c.workload);
    SmallWorkload w{load_func(e), {}};
    ir::PrimFunc f = c.scheduled(w);  // both sizes symbolic
    for (int64_t cols : {0, 1, 5, 33, 300}) {
      SCOPED_TRACE(c.workload + " " + (c.config ? c.config->str() : "default") + " cols " + std::to_string(cols));
      expect_emulation_matches(w.func, f, {{"rows", 3}, {"cols", cols}});
    }
  }
}

/// One row without a row axis (relax's batch-1 rmsnorm: the reduced value
/// read at [0, 0]): one thread block reduces the whole tensor.
TEST(ReductionSimt, OneRowWithoutARowAxis) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((1, 1, 300), "float16"), B: T.Buffer((300,), "float16"), out: T.Buffer((1, 300), "float16")):
    T.func_attr({"tir.noalias": True})
    Ared_temp = T.alloc_buffer((1, 1))
    for ax0 in range(300):
        with T.block("Ared_temp"):
            v0 = T.axis.reduce(300, ax0)
            with T.init():
                Ared_temp[0, 0] = T.float32(0.0)
            Ared_temp[0, 0] = Ared_temp[0, 0] + T.Cast("float32", A[0, 0, v0]) * T.Cast("float32", A[0, 0, v0])
    for ax0 in range(300):
        with T.block("out"):
            v0 = T.axis.spatial(300, ax0)
            out[0, v0] = T.Cast("float16", T.Cast("float32", B[v0]) * (T.Cast("float32", A[0, 0, v0]) / T.sqrt(Ared_temp[0, 0] * T.float32(0.0033333334) + T.float32(1e-06))))
)");
  const rules::Rule &g = rules::general_reduction_rule();
  auto m = g.match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  for (int64_t tx : {32, 128, 256}) {
    rules::GeneralReductionConfig c;
    c.threads_x = tx, c.rows_per_block = 1, c.vector = tx == 128 ? 2 : 1, c.unroll = 2, c.local_intermediates = tx != 32;
    SCOPED_TRACE(c.str());
    expect_emulation_matches(f, g.apply(f, **m, c).func(), {});
  }
}

/// relax's layer_norm: one block sums x and x * x (a tuple reduction); the
/// threads of a row combine both sums, for every number of rows (0 too).
TEST(ReductionSimt, TupleReductionAsRelaxPrintsLayerNorm) {
  ir::PrimFunc f = script::parse_func(relax_layer_norm(96));
  const rules::Rule &g = rules::general_reduction_rule();
  auto m = g.match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  for (auto c : {general_reduction_config(32, 2, 1, 2, true), general_reduction_config(64, 1, 4, 1, false),
                 general_reduction_config(1, 4, 1, 4, true)}) {
    SCOPED_TRACE(c->str());
    ir::PrimFunc scheduled = g.apply(f, **m, *c).func();
    for (int64_t rows : {0, 1, 5}) {
      SCOPED_TRACE("n = " + std::to_string(rows));
      expect_emulation_matches(f, scheduled, {{"n", rows}});
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Reductions, ReductionSimtTest, ::testing::ValuesIn(reduction_cases()), reduction_case_name);

}  // namespace
}  // namespace tessera::test
