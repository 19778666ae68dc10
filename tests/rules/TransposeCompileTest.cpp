//===- tests/rules/TransposeCompileTest.cpp - Tiled transposes compile (nvrtc) ===//
//
// The elementwise rule's tiled form (a transpose through a padded shared
// tile) lowers and compiles with NVRTC for sm_80 and sm_90 at full, tail and
// symbolic sizes and several tiles; the kernel stages the tile in __shared__
// memory with rows tile + pad elements apart, synchronises before reading
// it back, and spills nothing.
//
//===----------------------------------------------------------------------===//
#include "RuleTestUtil.h"

#include "tessera/rules/Elementwise.h"
#include "tessera/runtime/CudaFunction.h"

namespace tessera::test {
namespace {

using rules::ElementwiseConfig;

ir::PrimFunc transpose_func(const Sizes &sizes) {
  for (const Entry &e : workload_entries())
    if (e.name == "transpose_f32")
      return sizes.empty() ? load_func(e) : analysis::specialize(load_func(e), sizes);
  ADD_FAILURE() << "no workload transpose_f32";
  return {};
}

/// Compiles `f` scheduled with the tiled form (the default config when
/// `tile` is 0) for sm_80 and sm_90; returns the CUDA source and the config.
std::pair<std::string, ElementwiseConfig> compile(const std::string &what, const ir::PrimFunc &f,
                                                  int64_t tile = 0, int64_t rows = 0) {
  const rules::Rule &rule = rules::elementwise_rule();
  auto m = rule.match(f, test_arch());
  EXPECT_TRUE(m) << what << ": " << m.reason();
  if (!m) return {};
  ElementwiseConfig config =
      tile == 0 ? static_cast<const ElementwiseConfig &>(*rule.default_config(**m, test_arch()))
                : rules::tiled_elementwise_config(**m, tile, rows, test_arch());
  EXPECT_TRUE(config.is_tiled()) << what << " " << config.str();
  try {
    config.validate(test_arch());
    ir::PrimFunc scheduled = rule.apply(f, **m, config).func();
    auto fns = runtime::CudaFunction::build_for_archs(scheduled, {"sm_80", "sm_90"});
    EXPECT_EQ(fns.size(), 2u);
    for (const auto &fn : fns) {
      EXPECT_FALSE(fn.compiled().cubin.empty()) << what << " " << fn.arch();
      for (const auto &k : fn.compiled().kernels)
        EXPECT_EQ(k.spill_stores, 0) << what << " " << config.str() << " spills on " << fn.arch();
    }
    return {fns.empty() ? "" : fns[0].source(), config};
  } catch (const UserError &err) {
    ADD_FAILURE() << what << " " << config.str() << ": " << err.what();
  }
  return {};
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// The store side reads the tile down a column: threadIdx.x steps `vector`
/// padded rows (tile + pad elements each) at a time.
void expect_padded_tile(const std::string &what, const std::string &cuda, const ElementwiseConfig &c) {
  const std::string pitch = std::to_string((c.transpose_tile + c.transpose_pad) * c.vector);
  EXPECT_TRUE(contains(cuda, "__shared__")) << what << "\n" << cuda;
  EXPECT_TRUE(contains(cuda, "A_shared[tx * " + pitch + " + ")) << what << " row pitch " << pitch << "\n"
                                                                << cuda;
  EXPECT_TRUE(contains(cuda, "__syncthreads();")) << what << "\n" << cuda;
  EXPECT_TRUE(contains(
      cuda, "block (" + std::to_string(c.transpose_tile / c.vector) + ", " + std::to_string(c.tile_rows) + ", 1)"))
      << what << "\n"
      << cuda;
}

TEST(TransposeCompile, DefaultTileIsPaddedAndSynchronised) {
  for (auto [rows, cols] : {std::pair{4096, 4096}, std::pair{33, 70}}) {
    std::string what = "transpose_f32 " + std::to_string(rows) + "x" + std::to_string(cols);
    auto [cuda, c] = compile(what, transpose_func({{"rows", rows}, {"cols", cols}}));
    EXPECT_EQ(c.transpose_tile, 32) << what;
    EXPECT_EQ(c.transpose_pad, 1) << what;
    EXPECT_EQ(c.vector, 4) << what;
    // A 32-element tile row padded to 33, four rows per thread; float4 on
    // both global sides where the rows are a multiple of 4 long.
    EXPECT_TRUE(contains(cuda, "A_shared[tx * 132 + ")) << what << "\n" << cuda;
    if (cols % 4 == 0 && rows % 4 == 0) {
      EXPECT_TRUE(contains(cuda, "*(float4*)A_vec = *(const float4*)(A + ")) << what << "\n" << cuda;
      EXPECT_TRUE(contains(cuda, "*(float4*)(B + ")) << what << "\n" << cuda;
    }
    expect_padded_tile(what, cuda, c);
  }
}

TEST(TransposeCompile, OtherTilesAndSymbolicSizes) {
  ir::PrimFunc tail = transpose_func({{"rows", 45}, {"cols", 67}});
  for (auto [tile, rows] : {std::pair{64, 8}, std::pair{16, 4}, std::pair{32, 32}}) {
    std::string what = "transpose_f32 45x67 tile " + std::to_string(tile) + "x" + std::to_string(rows);
    auto [cuda, c] = compile(what, tail, tile, rows);
    expect_padded_tile(what, cuda, c);
  }
  auto [cuda, c] = compile("transpose_f32 symbolic", transpose_func({}));
  expect_padded_tile("transpose_f32 symbolic", cuda, c);
  EXPECT_TRUE(contains(cuda, "int rows, int cols")) << cuda;
}

}  // namespace
}  // namespace tessera::test
