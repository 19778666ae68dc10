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

INSTANTIATE_TEST_SUITE_P(Reductions, ReductionSimtTest, ::testing::ValuesIn(reduction_cases()), reduction_case_name);

}  // namespace
}  // namespace tessera::test
