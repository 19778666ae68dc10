//===- tests/rules/TensorCoreWgmmaTest.cpp - The rule's Hopper kernel -------===//
//
// matmul_tensor_core with `wgmma` (Hopper): "nt" float16, bfloat16 and int8
// GEMMs at shapes no tile divides (a symbolic M of 7, N = 56, K = 200: the
// pipeline wraps its stages) scheduled, interpreted and emulated (a CPU
// thread per GPU thread) against the float64 reference; the configs wgmma
// cannot run (an N-major B, K steps that are not 128 bytes, a GPU without
// wgmma) refused with the reason. (The cubins: TensorCoreWgmmaSassTest.cpp.)
//
//===----------------------------------------------------------------------===//
#include "../codegen/SimtEmulator.h"
#include "RuleTestUtil.h"
#include "TensorCoreTestUtil.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/rules/MatmulTensorCore.h"
#include "tessera/script/Parser.h"

namespace tessera::test {
namespace {

struct Case {
  const char *what;
  std::string text;
  int64_t in_bytes;
};

std::vector<Case> cases() {
  return {{"float16", matmul_text("float16", true, true, "m", 56, 200), 2},
          {"bfloat16", matmul_text("bfloat16", true, true, "m", 56, 200), 2},
          {"int8", int8_text(7, 56, 200), 1}};
}

TEST(TensorCoreWgmma, NtGemmsMatchTheReferenceInTheInterpreterAndTheEmulator) {
  for (const Case &c : cases()) {
    SCOPED_TRACE(c.what);
    ir::PrimFunc f = script::parse_func(c.text);
    for (auto [groups, n] : {std::pair<int64_t, int64_t>{1, 64}, {2, 32}}) {
      SCOPED_TRACE("block " + std::to_string(64 * groups) + " x " + std::to_string(n));
      rules::TensorCoreConfig config = wgmma_config(c.in_bytes, groups, n);
      ir::PrimFunc scheduled;
      expect_ok(run_checked(f, {{"m", 7}}, &config, &scheduled));
      // The emulator: threads concurrently, barriers, cp.async and wgmma
      // landing at their waits, races checked.
      lower::LoweredFunc kernel = lower::lower(scheduled);
      std::vector<runtime::NDArray> args = runtime::make_random_args(f, {{"m", 7}}, 4);
      runtime::Reference want = runtime::compute_reference(f, args);
      std::vector<runtime::NDArray *> ptrs;
      for (runtime::NDArray &a : args) ptrs.push_back(&a);
      // M, symbolic, is a scalar parameter after the buffers.
      std::vector<runtime::NDArray> scalars;
      for (size_t p = args.size(); p < kernel.params.size(); ++p) {
        scalars.emplace_back(kernel.params[p].var.dtype(), std::vector<int64_t>{});
        scalars.back().set_int(0, 7);
      }
      for (runtime::NDArray &v : scalars) ptrs.push_back(&v);
      simt::emulate(kernel, ptrs);
      expect_ok(runtime::check_outputs(f, args, want));
    }
  }
}

TEST(TensorCoreWgmma, ConfigsWgmmaCannotRunAreRefused) {
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  // B stored K x N (N-major): wgmma reads K-major tiles only (here).
  ir::PrimFunc nn = script::parse_func(matmul_text("float16", true, false, "m", 64, 64));
  auto m = rule.match(nn, test_arch());
  ASSERT_TRUE(m) << m.reason();
  rules::TensorCoreConfig c = wgmma_config(2, 1, 64);
  c.validate(test_arch());
  try {
    rule.apply(nn, **m, c);
    ADD_FAILURE() << "wgmma applied to an N-major B";
  } catch (const rules::ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("K-major"), std::string::npos) << e.what();
  }
  rules::TensorCoreConfig bad = wgmma_config(2, 1, 64);
  bad.block_k = 32;  // 64-byte rows
  EXPECT_THROW(bad.validate(test_arch()), rules::ConfigError);
  bad = wgmma_config(2, 1, 64);
  bad.warps_m = 2, bad.warps_n = 2;
  EXPECT_THROW(bad.validate(test_arch()), rules::ConfigError);
  bad = wgmma_config(2, 3, 64);  // three warpgroups: block_m 192
  EXPECT_THROW(bad.validate(test_arch()), rules::ConfigError);
  EXPECT_THROW(wgmma_config(2, 1, 64).validate(Arch::by_name("a100")), rules::ConfigError);
  // The JSON round trip keeps the flag; an mma.sync config's JSON has none.
  rules::TensorCoreConfig back = rules::TensorCoreConfig::from_json(c.to_json());
  EXPECT_TRUE(back.wgmma);
  EXPECT_FALSE(rules::TensorCoreConfig().to_json().contains("wgmma"));
}

}  // namespace
}  // namespace tessera::test
