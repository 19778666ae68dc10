//===- tests/analysis/ParallelTest.cpp - The loop dependence test ----------===//
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tessera/analysis/Parallel.h"
#include "tessera/ir/Functor.h"
#include "tessera/script/Parser.h"

namespace tessera::analysis {
namespace {

ir::PrimFunc parse_file(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return script::parse_func(ss.str(), path);
}

/// The loop named `name` in `f`.
ir::Stmt loop_named(const ir::PrimFunc &f, const std::string &name) {
  ir::Stmt found;
  ir::pre_order_visit(f.body(), nullptr, [&](const ir::Stmt &s) {
    if (const auto *l = s.as<ir::For>(); l && l->loop_var.name() == name && !found.defined()) found = s;
  });
  EXPECT_TRUE(found.defined()) << "no loop " << name;
  return found;
}

std::string why(const std::string &text, const std::string &loop) {
  return why_not_parallel(loop_named(script::parse_func(text, "t.py"), loop));
}

std::string longtail(const std::string &name, const std::string &loop) {
  return why_not_parallel(loop_named(parse_file(std::string(TESSERA_LONGTAIL_DIR) + "/" + name), loop));
}

TEST(Parallel, LongTailLoops) {
  EXPECT_EQ(longtail("inplace.py", "i_"), "");
  EXPECT_EQ(longtail("nonzero_start.py", "i_"), "");
  EXPECT_EQ(longtail("if_nest.py", "i"), "");
  EXPECT_EQ(longtail("if_nest.py", "j"), "");
  std::string prefix = longtail("prefix_sum.py", "i_");
  EXPECT_NE(prefix.find("loop 'i_' is not parallel"), std::string::npos) << prefix;
  EXPECT_NE(prefix.find("'B'"), std::string::npos) << prefix;
}

const char *kMatmul = R"(
@T.prim_func
def mm(A: T.Buffer((8, 4), "float32"), B: T.Buffer((4, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i, j, k in T.grid(8, 8, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)";

TEST(Parallel, SpatialLoopsOfAMatmulButNotItsReduction) {
  EXPECT_EQ(why(kMatmul, "i"), "");
  EXPECT_EQ(why(kMatmul, "j"), "");
  EXPECT_NE(why(kMatmul, "k"), "");
}

TEST(Parallel, IndexMixingAnInnerLoopIsNotSeparated) {
  // Iterations (i=0, j=1) and (i=1, j=0) both write B[1].
  std::string w = why(R"(
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), B: T.Buffer((16,), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi + vj] = A[vi, vj]
)",
                      "i");
  EXPECT_NE(w, "");
  // A stride of 2 still separates iterations.
  EXPECT_EQ(why(R"(
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi * 2 + 1] = A[vi]
)",
                "i"),
            "");
}

TEST(Parallel, PrivateAllocationsDoNotCount) {
  EXPECT_EQ(why(R"(
@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("row"):
            vi = T.axis.remap("S", [i])
            acc = T.alloc_buffer((1,), "float32", scope="local")
            acc[0] = T.float32(0)
            for k in range(4):
                acc[0] = acc[0] + A[vi, k]
            B[vi] = acc[0]
)",
                "i"),
            "");
}

/// The loop variables of cpu_parallel_loops(f), with their private copies.
std::vector<std::string> cpu_loops(const std::string &text) {
  std::vector<std::string> out;
  // The loops point into the function: it must outlive them.
  const ir::PrimFunc f = script::parse_func(text, "t.py");
  for (const CpuParallelLoop &l : cpu_parallel_loops(f)) {
    std::string s = l.loop->loop_var.name();
    for (const ir::Buffer &b : l.private_copies) s += " " + b.name();
    out.push_back(s);
  }
  return out;
}

TEST(CpuParallelLoops, TheOutermostIndependentLoopsOfEachNest) {
  // A matmul: its row loop (not the loops inside it); a prefix sum after it:
  // not; a row softmax's normalisation: its row loop.
  EXPECT_EQ(cpu_loops(R"(
@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((4, 6), "float32"), C: T.Buffer((8, 6), "float32"),
      P: T.Buffer((8,), "float32"), N: T.Buffer((8, 6), "float32")):
    for i, j, k in T.grid(8, 6, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for p in range(7):
        with T.block("scan"):
            vp = T.axis.remap("S", [p])
            P[vp + 1] = P[vp] + C[vp + 1, 0]
    for r, c in T.grid(8, 6):
        with T.block("N"):
            vr, vc = T.axis.remap("SS", [r, c])
            N[vr, vc] = C[vr, vc] / P[vr]
)"),
            (std::vector<std::string>{"i", "r"}));
}

TEST(CpuParallelLoops, GpuBlocksRunAtOnceWithTheirOwnSharedMemory) {
  // blockIdx: parallel by the program's semantics, each worker with its own
  // copy of the shared tile it writes (allocated at the root); threadIdx at
  // the top (threads of one block): not.
  EXPECT_EQ(cpu_loops(R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), C: T.Buffer((32,), "float32")):
    A_shared = T.alloc_buffer((16,), "float32", scope="shared")
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            with T.block("load"):
                v = T.axis.spatial(64, bx * 16 + tx)
                A_shared[v % 16] = A[v]
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            with T.block("store"):
                v = T.axis.spatial(64, bx * 16 + tx)
                B[v] = A_shared[15 - v % 16]
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        with T.block("tail"):
            v = T.axis.spatial(32, tx)
            C[v] = B[v]
)"),
            (std::vector<std::string>{"bx A_shared"}));
  // Memory every block sees, whatever TVM calls it ("global.vtcm", as its
  // Hexagon tests print): written by one kernel, read by the next; never a
  // private copy.
  EXPECT_EQ(cpu_loops(R"(
@T.prim_func
def f(a: T.Buffer((128,), "int8"), c: T.Buffer((128,), "int8")):
    B = T.alloc_buffer([128], dtype="int8", scope="global.vtcm")
    for bx in T.thread_binding(128, thread="blockIdx.x"):
        with T.sblock("B"):
            B[bx] = a[bx] * T.int8(2)
    for bx in T.thread_binding(128, thread="blockIdx.x"):
        with T.sblock("C"):
            c[bx] = B[bx] * T.int8(3)
)"),
            (std::vector<std::string>{"bx", "bx"}));
  // A CPU's parallel loop shares its root "local" buffer (TVM's CPU
  // programs read it in the next loop).
  EXPECT_EQ(cpu_loops(R"(
@T.prim_func
def f(a: T.Buffer((128,), "float32"), c: T.Buffer((128,), "float32")):
    B = T.alloc_buffer([128], scope="local")
    for i in T.parallel(128):
        with T.sblock("B"):
            B[i] = a[i] * T.float32(2)
    for i in range(128):
        with T.sblock("C"):
            c[i] = B[i]
)"),
            (std::vector<std::string>{"i", "i"}));
  // A parameter in a block's scope ("warp", as TVM prints its mma
  // descriptions) is the caller's memory: written in place, never copied.
  EXPECT_EQ(cpu_loops(R"(
@T.prim_func
def f(c: T.handle):
    C = T.match_buffer(c, (32, 8), "float16", scope="warp")
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for j in range(8):
            with T.sblock("C"):
                C[bx * 8 + j, 0] = T.float16(1)
)"),
            (std::vector<std::string>{"bx"}));
}

}  // namespace
}  // namespace tessera::analysis
