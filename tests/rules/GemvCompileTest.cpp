//===- tests/rules/GemvCompileTest.cpp - Gemv kernels compile (nvrtc) --------===//
//
// Every schedule shape of the gemv rule, at full and at tail sizes, with
// symbolic sizes, lowers and compiles with NVRTC for sm_80 and sm_90; the
// default schedules of the full-size workloads load the matrix with 16-byte
// vector loads and spill nothing.
//
//===----------------------------------------------------------------------===//
#include "GemvPrograms.h"
#include "RuleTestUtil.h"
#include "tessera/rules/Gemv.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/script/Parser.h"

namespace tessera::test {
namespace {

using rules::GemvConfig;

GemvConfig cfg(int64_t tx, int64_t ty, int64_t vector, int64_t step, bool unroll, bool x_shared) {
  GemvConfig c;
  c.threads_x = tx, c.threads_y = ty, c.vector = vector, c.reduce_step = step, c.unroll = unroll;
  c.x_in_shared = x_shared;
  return c;
}

ir::PrimFunc workload_func(const std::string &name, const Sizes &sizes) {
  for (const Entry &e : workload_entries())
    if (e.name == name) return sizes.empty() ? load_func(e) : analysis::specialize(load_func(e), sizes);
  ADD_FAILURE() << "no workload " << name;
  return {};
}

/// Compiles `f` scheduled with `c` (the default when null) for sm_80 and
/// sm_90; returns the CUDA source.
std::string compile(const std::string &what, const ir::PrimFunc &f, const GemvConfig *c) {
  const rules::Rule &rule = rules::gemv_rule();
  auto m = rule.match(f, test_arch());
  EXPECT_TRUE(m) << what << ": " << m.reason();
  if (!m) return "";
  std::unique_ptr<rules::Config> def = rule.default_config(**m, test_arch());
  const GemvConfig &config = c ? *c : static_cast<const GemvConfig &>(*def);
  try {
    ir::PrimFunc scheduled = rule.apply(f, **m, config).func();
    auto fns = runtime::CudaFunction::build_for_archs(scheduled, {"sm_80", "sm_90"});
    EXPECT_EQ(fns.size(), 2u);
    for (const auto &fn : fns) {
      EXPECT_FALSE(fn.compiled().cubin.empty()) << what << " " << fn.arch();
      for (const auto &k : fn.compiled().kernels)
        EXPECT_EQ(k.spill_stores, 0) << what << " " << config.str() << " spills on " << fn.arch();
    }
    return fns.empty() ? "" : fns[0].source();
  } catch (const UserError &err) {
    ADD_FAILURE() << what << " " << config.str() << ": " << err.what();
  }
  return "";
}

TEST(GemvCompile, FullSizeDefaultsUseVectorLoads) {
  std::string f16 = compile("gemv_f16 4096x4096", workload_func("gemv_f16", {{"m", 4096}, {"k", 4096}}), nullptr);
  EXPECT_NE(f16.find("*(const uint4*)(W + "), std::string::npos) << f16;
  EXPECT_NE(f16.find("__shfl_xor_sync"), std::string::npos) << f16;
  std::string int4 = compile("gemv_int4 11008x4096", workload_func("gemv_int4", {{"m", 11008}, {"k", 4096}}), nullptr);
  EXPECT_NE(int4.find("*(const uint4*)(Wq + "), std::string::npos) << int4;
}

TEST(GemvCompile, EveryScheduleShape) {
  for (const char *name : {"gemv_f16", "gemv_int4"}) {
    for (const Entry &e : workload_entries()) {
      if (e.name != name) continue;
      ir::PrimFunc small = small_workload(e).func;
      GemvConfig masked = cfg(32, 4, 8, 2, true, true), per_row = cfg(1, 16, 8, 2, true, true);
      compile(e.name + " small", small, &masked);
      compile(e.name + " small", small, &per_row);
      compile(e.name + " symbolic", load_func(e), nullptr);
    }
  }
  compile("gemv_f16 symbolic m", workload_func("gemv_f16", {{"k", 4096}}), nullptr);
  GemvConfig staged_batch = cfg(32, 2, 8, 1, true, true);
  compile("batch 4", script::parse_func(batch_gemv(4, 4096, 4096)), &staged_batch);
  compile("batch 3 tail", script::parse_func(batch_gemv(3, 37, 40)), nullptr);
  compile("outer", script::parse_func(outer_gemv(4096, 4096)), nullptr);
  GemvConfig serial = cfg(32, 1, 4, 4, true, true);
  compile("outer serial", script::parse_func(outer_gemv(4096, 4096)), &serial);
  GemvConfig split = cfg(32, 8, 1, 2, true, true);
  compile("outer batch", script::parse_func(outer_batch_gemv(2, 1000, 999)), &split);
  compile("bias", script::parse_func(bias_gemv(4096, 4096)), nullptr);
}

}  // namespace
}  // namespace tessera::test
