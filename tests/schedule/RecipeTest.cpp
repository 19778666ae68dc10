//===- RecipeTest.cpp - The classic shared-memory tiled matmul -------------===//
//
// TVM's GPU matmul recipe through the primitives: tile i, j, k; bind the
// outer tiles to blocks and the inner ones to threads; accumulate in a local
// cache written back under the block tile (cache_write + reverse_compute_at);
// stage A and B tiles in shared memory per k step (cache_read + compute_at)
// with a cooperative fetch (fuse the copy loops, split, bind to threadIdx.x);
// separate the init (decompose_reduction). Checked through the interpreter on
// shapes that divide the tiles and on shapes that do not, and by replay.
//
//===----------------------------------------------------------------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

std::string matmul_text(int m, int n, int k) {
  auto s = [](int v) { return std::to_string(v); };
  return "@T.prim_func\ndef main(A: T.Buffer((" + s(m) + ", " + s(k) + "), \"float32\"), B: T.Buffer((" + s(k) +
         ", " + s(n) + "), \"float32\"), C: T.Buffer((" + s(m) + ", " + s(n) + "), \"float32\")):\n" +
         "    for i, j, k in T.grid(" + s(m) + ", " + s(n) + ", " + s(k) + "):\n" +
         "        with T.block(\"C\"):\n"
         "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
         "            T.reads(A[vi, vk], B[vk, vj])\n"
         "            T.writes(C[vi, vj])\n"
         "            with T.init():\n"
         "                C[vi, vj] = T.float32(0)\n"
         "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";
}

void cooperative_fetch(Schedule &sch, const BlockRef &copy, int64_t threads) {
  auto loops = sch.get_loops(copy);
  // The copy's own loops are the last two (ax0, ax1) under the tile loops.
  LoopRef fused = sch.fuse({loops[loops.size() - 2], loops.back()});
  auto parts = sch.split(fused, {nullopt, threads});
  sch.bind(parts[1], "threadIdx.x");
}

Schedule shared_memory_matmul(const ir::PrimFunc &f) {
  Schedule sch = make_schedule(f);
  BlockRef c = sch.get_block("C");
  auto [i, j, k] = tile_like_the_issue(sch, c);
  sch.bind(i[1], "threadIdx.y");
  sch.bind(j[1], "threadIdx.x");
  // Accumulate in registers, write back per block tile, one element per thread.
  BlockRef cl = sch.cache_write(c, 0, "local");
  sch.reverse_compute_at(cl, j[0]);
  auto wb = sch.get_loops(cl);
  sch.bind(wb[wb.size() - 2], "threadIdx.y");
  sch.bind(wb.back(), "threadIdx.x");
  // Stage the A and B tiles of each k step in shared memory.
  BlockRef as = sch.cache_read(c, 0, "shared");
  BlockRef bs = sch.cache_read(c, 1, "shared");
  sch.compute_at(as, k[0]);
  sch.compute_at(bs, k[0]);
  cooperative_fetch(sch, as, 32);
  cooperative_fetch(sch, bs, 32);
  sch.storage_align(as, 0, 0, 32, 1);
  sch.decompose_reduction(c, k[0]);
  return sch;
}

TEST(Recipe, SharedMemoryTiledMatmulDividing) {
  ir::PrimFunc f = script::parse_func(matmul_text(64, 80, 48));
  Schedule sch = shared_memory_matmul(f);
  check_schedule(f, sch, nullptr);
  // The copies sit under k0, their fetch loops are bound to threads.
  std::string text = script::print(sch.func());
  EXPECT_NE(text.find("A_shared = T.alloc_buffer((64, 48), scope=\"shared\")"), std::string::npos) << text;
  EXPECT_NE(text.find("C_local = T.alloc_buffer((64, 80), scope=\"local\")"), std::string::npos) << text;
  auto as_loops = sch.get_loops(sch.get_block("A_shared"));
  EXPECT_EQ(as_loops[2].name(), "k0");
}

TEST(Recipe, SharedMemoryTiledMatmulNonDividing) {
  for (auto [m, n, k] : {std::tuple{50, 72, 40}, std::tuple{33, 17, 13}}) {
    ir::PrimFunc f = script::parse_func(matmul_text(m, n, k));
    Schedule sch = shared_memory_matmul(f);
    check_schedule(f, sch, nullptr);
  }
}

}  // namespace
}  // namespace tessera::test
