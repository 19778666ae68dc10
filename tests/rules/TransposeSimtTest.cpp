//===- tests/rules/TransposeSimtTest.cpp - Tiled transposes on the SIMT emulator ===//
//
// The interpreter runs the thread loops of the elementwise rule's tiled form
// one after another, so a missing barrier between the shared tile's fetch
// and its reads would go unnoticed there. Here the kernels are lowered and
// run by the SIMT emulator (tests/codegen/SimtEmulator.h: one CPU thread per
// GPU thread, real barriers, race and uninitialised-read checks) and must
// match the interpreter on the unscheduled program, at shapes no tile
// divides and with several tiles.
//
//===----------------------------------------------------------------------===//
#include "../codegen/SimtEmulator.h"
#include "RuleTestUtil.h"

#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/rules/Elementwise.h"
#include "tessera/script/Parser.h"

namespace tessera::test {
namespace {

using rules::ElementwiseConfig;

ir::PrimFunc transpose_at(int64_t rows, int64_t cols) {
  for (const Entry &e : workload_entries())
    if (e.name == "transpose_f32")
      return analysis::specialize(load_func(e), {{"rows", rows}, {"cols", cols}});
  ADD_FAILURE() << "no workload transpose_f32";
  return {};
}

/// Schedules `f` in the tiled form (`tile` x `rows`, the default config when
/// `tile` is 0), lowers it and emulates the kernel on random inputs.
void expect_emulation_matches(const std::string &what, const ir::PrimFunc &f, int64_t tile = 0,
                              int64_t rows = 0, int64_t vector = 1) {
  const rules::Rule &rule = rules::elementwise_rule();
  auto m = rule.match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  ElementwiseConfig config =
      tile == 0 ? static_cast<const ElementwiseConfig &>(*rule.default_config(**m, test_arch()))
                : rules::tiled_elementwise_config(**m, tile, rows, test_arch(), vector);
  ASSERT_TRUE(config.is_tiled()) << config.str();
  SCOPED_TRACE(what + " " + config.str());
  lower::LoweredFunc kernel = lower::lower(rule.apply(f, **m, config).func());
  std::vector<runtime::NDArray> expected = runtime::make_random_args(f, {}, 9);
  std::vector<runtime::NDArray> actual = expected;
  runtime::Reference reference = runtime::compute_reference(f, expected);
  std::vector<runtime::NDArray *> args;
  for (runtime::NDArray &a : actual) args.push_back(&a);
  try {
    simt::emulate(kernel, args);
  } catch (const simt::EmulationError &err) {
    FAIL() << err.what() << "\n" << codegen::codegen_cuda(kernel);
  }
  expect_outputs_match(what, f, actual, reference);
}

TEST(TransposeSimt, TailTilesWithoutRacesOrMissingBarriers) {
  ir::PrimFunc f = transpose_at(33, 70);
  expect_emulation_matches("transpose_f32 33x70", f);
  expect_emulation_matches("transpose_f32 33x70", f, 16, 4);
  expect_emulation_matches("transpose_f32 33x70", f, 64, 8);
  expect_emulation_matches("transpose_f32 5x40", transpose_at(5, 40));
}

TEST(TransposeSimt, VectorMovesOnBothGlobalSides) {
  // Rows a multiple of the vector: float4 / float2 loads and stores (the
  // default is 32 x 32 tiles, 4 elements per access), tails in both axes.
  expect_emulation_matches("transpose_f32 64x96", transpose_at(64, 96));
  expect_emulation_matches("transpose_f32 36x40", transpose_at(36, 40), 16, 4, 2);
  expect_emulation_matches("transpose_f32 40x72", transpose_at(40, 72), 64, 8, 4);
}

TEST(TransposeSimt, BatchedChainWithABroadcast) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((2, 19, 40), "float32"), bias: T.Buffer((40,), "float32"), B: T.Buffer((2, 40, 19), "float32")):
    T.func_attr({"tir.noalias": True})
    S = T.alloc_buffer((2, 19, 40), "float32")
    for b, i, j in T.grid(2, 19, 40):
        with T.block("S"):
            v_b, v_i, v_j = T.axis.remap("SSS", [b, i, j])
            S[v_b, v_i, v_j] = A[v_b, v_i, v_j] * T.float32(2)
    for b, j, i in T.grid(2, 40, 19):
        with T.block("B"):
            v_b, v_j, v_i = T.axis.remap("SSS", [b, j, i])
            B[v_b, v_j, v_i] = S[v_b, v_i, v_j] + bias[v_j]
)");
  expect_emulation_matches("batched chain", f);
  expect_emulation_matches("batched chain", f, 16, 2);
}

}  // namespace
}  // namespace tessera::test
