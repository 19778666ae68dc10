//===- tests/analysis/BlockInfoTest.cpp - Blocks, accesses, dataflow -------===//
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tessera/analysis/BlockInfo.h"
#include "tessera/script/Parser.h"

namespace tessera::analysis {
namespace {

FuncInfo analyze_text(const std::string &text) { return analyze(script::parse_func(text, "test.py")); }

FuncInfo analyze_longtail(const std::string &name) {
  std::ifstream in(std::string(TESSERA_LONGTAIL_DIR) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return analyze(script::parse_func(ss.str(), name));
}

const char *kSoftmax = R"(
@T.prim_func
def softmax(A: T.Buffer((64, 128), "float32"), B: T.Buffer((64, 128), "float32")):
    T.func_attr({"tir.noalias": True})
    m = T.alloc_buffer((64,))
    e = T.alloc_buffer((64, 128))
    s = T.alloc_buffer((64,))
    for i, k in T.grid(64, 128):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                m[vi] = T.min_value("float32")
            m[vi] = T.max(m[vi], A[vi, vk])
    for i, j in T.grid(64, 128):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            e[vi, vj] = T.exp(A[vi, vj] - m[vi])
    for i, k in T.grid(64, 128):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                s[vi] = T.float32(0)
            s[vi] = s[vi] + e[vi, vk]
    for i, j in T.grid(64, 128):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = e[vi, vj] / s[vi]
)";

TEST(BlockInfo, SoftmaxKindsCombinersAndDataflow) {
  FuncInfo info = analyze_text(kSoftmax);
  ASSERT_EQ(info.blocks.size(), 4u);
  EXPECT_FALSE(info.is_scheduled);
  EXPECT_FALSE(info.has_opaque_structure);
  const BlockInfo &mx = info.blocks[0], &ex = info.blocks[1], &sm = info.blocks[2], &nm = info.blocks[3];
  EXPECT_EQ(mx.dom_kind(), "SR");
  EXPECT_EQ(ex.dom_kind(), "SS");
  EXPECT_TRUE(mx.is_reduction());
  EXPECT_EQ(mx.combiner, Combiner::Max);
  EXPECT_EQ(sm.combiner, Combiner::Sum);
  EXPECT_TRUE(sm.init_value.defined());
  // The update read is not a read: max reads only A.
  ASSERT_EQ(mx.reads.size(), 1u);
  EXPECT_EQ(mx.reads[0].buffer.name(), "A");
  EXPECT_TRUE(ex.is_spatial());
  EXPECT_TRUE(ex.is_elementwise());  // m[vi] is a broadcast of the row
  EXPECT_TRUE(ex.is_inlinable());
  EXPECT_FALSE(nm.is_inlinable());  // writes the output B
  EXPECT_TRUE(nm.writes_output);
  EXPECT_EQ(ex.producers, std::vector<int>({0}));
  EXPECT_EQ(ex.consumers, std::vector<int>({2, 3}));
  EXPECT_EQ(nm.producers, std::vector<int>({1, 2}));
  EXPECT_EQ(info.reduction_blocks(), std::vector<int>({0, 2}));
  EXPECT_EQ(info.find("sum"), 2);
  EXPECT_EQ(info.find("nope"), -1);
  for (const BlockInfo &b : info.blocks) EXPECT_TRUE(b.trivial_binding) << b.name;
}

TEST(BlockInfo, AccessPatternsNameTheIterOfEachDimension) {
  FuncInfo info = analyze_text(R"(
@T.prim_func
def f(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32, 16), "float32"), C: T.Buffer((16, 32), "float32")):
    for i, j in T.grid(16, 32):
        with T.block("T"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vj, vi] = A[vi, vj]
    for i, j in T.grid(16, 32):
        with T.block("P"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj * 0 + vj] + A[vi, 3]
)");
  const BlockInfo &t = info.blocks[0];
  EXPECT_TRUE(t.is_injective());
  EXPECT_FALSE(t.is_elementwise());  // a transpose
  EXPECT_EQ(t.writes[0].dim_iters, (std::vector<std::vector<int>>{{1}, {0}}));
  EXPECT_EQ(t.writes[0].inner_iter(), 0);
  EXPECT_EQ(t.reads[0].inner_iter(), 1);
  const BlockInfo &p = info.blocks[1];
  ASSERT_EQ(p.reads.size(), 2u);
  EXPECT_FALSE(p.reads[0].is_simple);        // vj * 0 + vj is arithmetic
  EXPECT_TRUE(p.reads[1].is_simple);         // a constant column
  EXPECT_TRUE(p.reads[1].dim_iters[1].empty());
  EXPECT_EQ(p.reads[1].inner_iter(), -1);
  EXPECT_FALSE(p.is_elementwise());
}

TEST(BlockInfo, SplitLoopsAreNotATrivialBindingAndThreadsMarkScheduled) {
  FuncInfo info = analyze_text(R"(
@T.prim_func
def f(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    for i_0 in T.thread_binding(2, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(256, i_0 * 128 + i_1)
                B[vi] = A[vi]
)");
  ASSERT_EQ(info.blocks.size(), 1u);
  EXPECT_TRUE(info.is_scheduled);
  EXPECT_TRUE(info.blocks[0].is_thread_bound);
  EXPECT_FALSE(info.blocks[0].trivial_binding);
  EXPECT_FALSE(info.blocks[0].iters[0].loop.defined());
  EXPECT_EQ(info.blocks[0].loops.size(), 2u);
}

TEST(BlockInfo, LongTailProgramsAreDescribedNotRejected) {
  FuncInfo prefix = analyze_longtail("prefix_sum.py");
  EXPECT_TRUE(prefix.has_opaque_structure);  // B[0] = 0 outside any block
  ASSERT_EQ(prefix.blocks.size(), 1u);
  EXPECT_EQ(prefix.blocks[0].dom_kind(), "R");
  EXPECT_EQ(prefix.blocks[0].combiner, Combiner::None);  // reads B[i], writes B[i + 1]
  EXPECT_FALSE(prefix.blocks[0].is_reduction());

  FuncInfo ifs = analyze_longtail("if_nest.py");
  ASSERT_EQ(ifs.blocks.size(), 2u);
  EXPECT_TRUE(ifs.blocks[0].is_guarded);
  EXPECT_TRUE(ifs.blocks[1].is_guarded);

  FuncInfo nonzero = analyze_longtail("nonzero_start.py");
  ASSERT_EQ(nonzero.blocks.size(), 1u);
  EXPECT_FALSE(nonzero.blocks[0].trivial_binding);  // the loop starts at 1

  FuncInfo inplace = analyze_longtail("inplace.py");
  ASSERT_EQ(inplace.blocks.size(), 1u);
  EXPECT_FALSE(inplace.blocks[0].is_spatial());  // reads the buffer it writes
  EXPECT_FALSE(inplace.blocks[0].is_reduction());
}

}  // namespace
}  // namespace tessera::analysis
