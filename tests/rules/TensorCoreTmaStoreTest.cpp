//===- tests/rules/TensorCoreTmaStoreTest.cpp - The epilogue by TMA store ===//
//
// matmul_tensor_core warp specialised with `tma_store`: each consumer warp
// writes its 16 rows of the output tile, box by box, into two swizzled
// shared slots, and its lane 0 stores each box with T.tma_store. Emulated
// (a CPU thread per GPU thread; a store reads its slot when lane 0's wait
// retires it, and a slot that changes before then is an error) against the
// float64 reference: float32 and float16 outputs (boxes of 32 and 64
// columns), a bias + ReLU + cast epilogue, a batched product, persistent
// blocks walking several tiles (an even and an odd count of boxes per
// tile), a symbolic M, an N that ends inside a box, an output written
// C[j, i]. Outputs TMA cannot store (rows not a multiple of 16 bytes,
// block_n not a whole number of boxes, no warp specialisation) are refused
// with the reason;
// the policy gives the persistent twins the TMA-store epilogue where the
// output allows it.
//
//===----------------------------------------------------------------------===//
#include "RuleTestUtil.h"
#include "TensorCoreSimtUtil.h"
#include "TensorCoreTestUtil.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/policies/Policy.h"
#include "tessera/rules/MatmulTensorCore.h"
#include "tessera/script/Parser.h"

namespace tessera::test {
namespace {

/// A warp-specialised TMA config with the TMA-store epilogue (`blocks`
/// persistent blocks when > 0).
rules::TensorCoreConfig store_config(int64_t groups, int64_t n, int64_t stages, int64_t blocks = 0) {
  rules::TensorCoreConfig c = wgmma_config(2, groups, n, stages);
  c.tma = c.warp_specialized = c.tma_store = true;
  c.persistent = blocks;
  c.validate(test_arch());
  return c;
}

/// D = float16(max(A B^T + bias, 0)), M symbolic, N = 72, K = 96.
const char *const kBiasReluHalf = R"(
@T.prim_func
def main(a: T.handle, b: T.handle, bias: T.handle, d: T.handle) -> None:
    m = T.int64()
    A = T.match_buffer(a, (m, 96), "float16")
    B = T.match_buffer(b, (72, 96), "float16")
    Bias = T.match_buffer(bias, (72,), "float32")
    D = T.match_buffer(d, (m, 72), "float16")
    C = T.alloc_buffer((m, 72), "float32")
    for i, j, k in T.grid(m, 72, 96):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vj, vk])
    for i, j in T.grid(m, 72):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.Cast("float16", T.max(C[vi, vj] + Bias[vj], T.float32(0.0)))
)";

/// The product written transposed: C[j, i] (so C's rows are the matmul's M).
const char *const kTransposedOutput = R"(
@T.prim_func
def main(A: T.Buffer((128, 64), "float16"), B: T.Buffer((64, 64), "float16"), C: T.Buffer((64, 128), "float32")) -> None:
    for i, j, k in T.grid(128, 64, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vj, vi] = T.float32(0.0)
            C[vj, vi] = C[vj, vi] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vj, vk])
)";

/// Stores into `buffer` the scheduled function makes (not through TMA).
int stores_into(const ir::PrimFunc &f, const std::string &buffer) {
  int n = 0;
  ir::pre_order_visit(f.body(), nullptr, [&](const ir::Stmt &s) {
    const auto *st = s.as<ir::Store>();
    n += st && st->buffer.name() == buffer;
  });
  return n;
}

TEST(TensorCoreTmaStore, EpiloguesStoredByTmaMatchTheReferenceInTheEmulator) {
  // float32 out, N = 56: boxes of 32 columns, the last tile's second box
  // (columns 32..63 of 56) clipped; M = 7 rows of a 64-row tile.
  ir::PrimFunc plain = script::parse_func(matmul_text("float16", true, true, "m", 56, 200));
  for (auto [groups, n, stages] : {std::tuple<int64_t, int64_t, int64_t>{1, 64, 2}, {2, 32, 3}, {1, 128, 2}}) {
    SCOPED_TRACE("block " + std::to_string(64 * groups) + " x " + std::to_string(n));
    ir::PrimFunc s = expect_emulated(plain, store_config(groups, n, stages), {{"m", 7}});
    EXPECT_EQ(count_calls(s, ir::Intrinsic::TmaStore), n / 32) << "one store per 32-column box";
    EXPECT_EQ(stores_into(s, "C"), 0) << "the output is written by TMA only";
  }
  // float16 out through bias, ReLU and a cast: boxes of 64 columns; N = 72
  // ends 8 columns into the second tile.
  ir::PrimFunc biased = script::parse_func(kBiasReluHalf);
  for (int64_t n : {64, 128}) {
    SCOPED_TRACE("bias relu, block_n " + std::to_string(n));
    ir::PrimFunc s = expect_emulated(biased, store_config(1, n, 2), {{"m", 70}});
    EXPECT_EQ(count_calls(s, ir::Intrinsic::TmaStore), n / 64);
    EXPECT_EQ(stores_into(s, "D"), 0);
  }
  // 128 rows on one warpgroup (two m64 subtiles), float32 boxes of 32
  // columns, N = 72: each subtile's last box (columns 96..127) lies wholly
  // past N and writes nothing, and the next subtile's first box reuses the
  // slot of the box before it (the waits count on every box being stored).
  rules::TensorCoreConfig two_subtiles = wgmma_config(2, 1, 128, 2);
  two_subtiles.block_m = 128;
  two_subtiles.tma = two_subtiles.warp_specialized = two_subtiles.tma_store = true;
  two_subtiles.validate(test_arch());
  expect_emulated(script::parse_func(matmul_text("float16", true, true, "m", 72, 200)), two_subtiles, {{"m", 100}});
  // Batched: a box of one batch element, its coordinate the block's.
  expect_emulated(script::parse_func(batched_product_text()), store_config(1, 64, 2), {{"m", 70}});
  // Written transposed, C[j, i]: the matmul's M is C's rows, whatever the
  // program calls them.
  expect_emulated(script::parse_func(kTransposedOutput), store_config(1, 64, 2), {});
}

TEST(TensorCoreTmaStore, PersistentBlocksReuseTheirSlotsAcrossTiles) {
  // M = 200: four 64-row tiles over three blocks (block 0 stores two). Two
  // boxes per tile (block_n 64, float32), and one (block_n 32): the slot
  // of box 0 was the previous tile's last.
  ir::PrimFunc f = script::parse_func(matmul_text("float16", true, true, "m", 56, 200));
  for (auto [groups, n, stages, blocks] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t>{1, 64, 2, 3}, {1, 32, 3, 3}, {2, 64, 2, 1}}) {
    SCOPED_TRACE("block " + std::to_string(64 * groups) + " x " + std::to_string(n) + ", " + std::to_string(blocks) +
                 " blocks");
    expect_emulated(f, store_config(groups, n, stages, blocks), {{"m", 200}});
  }
  expect_emulated(script::parse_func(batched_product_text()), store_config(1, 32, 2, 4), {{"m", 70}});
  // The JSON keeps the flag; a config without it has none.
  EXPECT_TRUE(rules::TensorCoreConfig::from_json(store_config(1, 64, 2).to_json()).tma_store);
  EXPECT_FALSE(rules::TensorCoreConfig::from_json(wgmma_config(2, 1, 64).to_json()).tma_store);
  // The slots: two 16-row boxes of 128 bytes per consumer warp.
  EXPECT_EQ(store_config(2, 128, 3).store_slot_bytes(), 8 * 4096);
}

TEST(TensorCoreTmaStore, OutputsTmaCannotStoreAreRefusedWithTheReason) {
  // float32 rows of 50 elements: 200 bytes (M symbolic: the rows' stride is known).
  std::string e = config_refusal(matmul_text("float16", true, true, "m", 50, 200), store_config(1, 64, 2));
  EXPECT_NE(e.find("multiples of 16 bytes"), std::string::npos) << e;
  // float16 out, block_n 32: half a 64-element box row.
  rules::TensorCoreConfig narrow = wgmma_config(2, 1, 32, 2);
  narrow.tma = narrow.warp_specialized = narrow.tma_store = true;
  e = config_refusal(kBiasReluHalf, narrow);
  EXPECT_NE(e.find("block_n = 32 is not a multiple of the 64 float16 elements"), std::string::npos) << e;
  // Without the producer warpgroup.
  rules::TensorCoreConfig plain_tma = wgmma_config(2, 1, 64, 2);
  plain_tma.tma = plain_tma.tma_store = true;
  e = config_refusal(matmul_text("float16", true, true, "m", 56, 200), plain_tma);
  EXPECT_NE(e.find("tma_store"), std::string::npos) << e;
  EXPECT_NE(e.find("needs warp_specialized"), std::string::npos) << e;
}

TEST(TensorCoreTmaStore, ThePolicyGivesPersistentTwinsTheTmaStoreEpilogue) {
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  // (persistent twins, those with tma_store, other candidates with tma_store)
  auto count = [&](int64_t n) {
    ir::PrimFunc f =
        analysis::specialize(script::parse_func(matmul_text("float16", true, true, "m", n, 4096)), {{"m", 4096}});
    auto m = rule.match(f, test_arch());
    EXPECT_TRUE(m) << m.reason();
    int persistent = 0, stored = 0, others = 0;
    for (const policies::Candidate &c : policies::propose(f, rule, **m, test_arch(), {.topk = 40}).candidates) {
      const auto &tc = dynamic_cast<const rules::TensorCoreConfig &>(*c.config);
      EXPECT_NO_THROW(tc.validate(test_arch())) << tc.str();
      if (tc.persistent > 0) ++persistent, stored += tc.tma_store;
      else others += tc.tma_store;
    }
    return std::tuple{persistent, stored, others};
  };
  auto [persistent, stored, others] = count(4096);
  EXPECT_GE(persistent, 2);
  EXPECT_EQ(stored, persistent);
  EXPECT_EQ(others, 0);
  // float32 rows of 4099 elements are not a multiple of 16 bytes: the
  // persistent twins store by the lanes.
  std::tie(persistent, stored, others) = count(4099);
  EXPECT_GE(persistent, 2);
  EXPECT_EQ(stored, 0);
}

}  // namespace
}  // namespace tessera::test
