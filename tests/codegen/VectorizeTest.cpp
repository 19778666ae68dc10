//===- tests/codegen/VectorizeTest.cpp - Vector accesses or scalar fallback -===//
//
// lower::legalize_vectorize: which vectorized loops become vector moves (and
// which buffers they move), which fall back to unrolled scalar loops and why,
// the CUDA C of the moves, and, numerically, that the lowered kernels compute
// what the scheduled ones do: kernels without shared memory run in the
// interpreter with their launch variables turned back into loops.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/analysis/Specialize.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/lower/Passes.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"

namespace fs = std::filesystem;
using namespace tessera;

namespace {

const fs::path kDir = fs::path(TESSERA_TEST_DATA_DIR) / "codegen";

ir::PrimFunc load_kernel(const std::string &name) {
  std::ifstream in(kDir / "kernels" / (name + ".py"));
  std::stringstream ss;
  ss << in.rdbuf();
  return script::parse_func(ss.str(), name + ".py");
}

/// A vector move left by the pass: `dst[...] = src[...]` under a vectorized loop.
struct Move {
  std::string dst, src;
  int64_t lanes;
};

std::vector<Move> moves(const lower::LoweredFunc &f) {
  std::vector<Move> out;
  ir::pre_order_visit(f.body, nullptr, [&](const ir::Stmt &s) {
    const auto *loop = s.as<ir::For>();
    if (!loop || loop->for_kind != ir::ForKind::Vectorized) return;
    const auto *st = loop->body.as<ir::Store>();
    const auto *ld = st ? st->value.as<ir::Load>() : nullptr;
    ASSERT_NE(ld, nullptr) << "a vectorized loop that is not a move:\n" << lower::print(f);
    out.push_back({st->buffer.name(), ld->buffer.name(), *ir::as_const_int(loop->extent)});
  });
  return out;
}

/// The reasons of the loops that stayed scalar: `vectorize_fallback` (a
/// vectorized loop, now unrolled) or `vector_loads_fallback` (a loop that
/// keeps its kind).
std::vector<std::string> fallbacks(const lower::LoweredFunc &f, const std::string &key = "vectorize_fallback") {
  std::vector<std::string> out;
  ir::pre_order_visit(f.body, nullptr, [&](const ir::Stmt &s) {
    const auto *loop = s.as<ir::For>();
    if (!loop) return;
    auto it = loop->annotations.find(key);
    if (it == loop->annotations.end()) return;
    if (key == "vectorize_fallback") EXPECT_EQ(loop->for_kind, ir::ForKind::Unrolled);
    else EXPECT_NE(loop->for_kind, ir::ForKind::Vectorized);
    out.push_back(it->second.as_string());
  });
  return out;
}

std::string names(const std::vector<Move> &ms) {
  std::string s;
  for (const Move &m : ms) s += m.src + "->" + m.dst + "x" + std::to_string(m.lanes) + " ";
  return s;
}

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

/// The lowered kernel as a PrimFunc that the interpreter can run: the launch
/// variables become thread-bound loops again (run serially, so only for
/// kernels whose threads do not communicate), the allocations a root block's.
ir::PrimFunc as_runnable(const lower::LoweredFunc &f) {
  ir::Stmt body = f.body;
  for (int a = 0; a < 3; ++a)
    if (const ir::Var &v = f.launch.thread_vars[a]; v.defined())
      body = ir::For::make(v, ir::i32(0), ir::cast(v.dtype(), f.launch.block[a]), ir::ForKind::ThreadBinding, body, v.name());
  for (int a = 0; a < 3; ++a)
    if (const ir::Var &v = f.launch.block_vars[a]; v.defined())
      body = ir::For::make(v, ir::i32(0), ir::cast(v.dtype(), f.launch.grid[a]), ir::ForKind::ThreadBinding, body, v.name());
  std::vector<ir::Var> params;
  std::vector<std::pair<ir::Var, ir::Buffer>> buffer_map;
  for (const lower::KernelParam &p : f.params) {
    ir::Var h(p.var.name(), ir::DataType::handle());
    params.push_back(h);
    buffer_map.emplace_back(h, p.buffer);
  }
  ir::Stmt root = ir::Block::make("root", {}, {}, ir::Expr(), {}, {}, f.allocs, std::nullopt, body);
  return ir::PrimFunc::make(f.name, params, buffer_map, root);
}

/// Interprets `f` and its lowered form on the same random inputs; every
/// buffer must end up bit-identical.
void expect_lowered_computes_the_same(const ir::PrimFunc &f) {
  lower::LoweredFunc lowered = lower::lower(f);
  ir::PrimFunc runnable = as_runnable(lowered);
  std::vector<runtime::NDArray> want = runtime::make_random_args(f, {}, 7);
  std::vector<runtime::NDArray> got = runtime::make_random_args(runnable, {}, 8);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(want[i].nbytes(), got[i].nbytes());
    std::memcpy(got[i].data(), want[i].data(), want[i].nbytes());
  }
  runtime::interpret(f, want);
  runtime::interpret(runnable, got);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(std::memcmp(want[i].data(), got[i].data(), want[i].nbytes()), 0)
        << "buffer " << i << " differs after lowering:\n" << lower::print(lowered);
}

TEST(LegalizeVectorize, ElementwiseLoadsAndStoresFloat4ThroughRegisters) {
  lower::LoweredFunc f = lower::lower(load_kernel("elementwise_vectorized"));
  std::vector<Move> ms = moves(f);
  ASSERT_EQ(ms.size(), 2u) << names(ms);
  EXPECT_EQ(names(ms), "A->A_vecx4 B_vec->Bx4 ");
  EXPECT_TRUE(fallbacks(f).empty());
  std::string cuda = codegen::codegen_cuda(f);
  EXPECT_TRUE(contains(cuda, "*(float4*)A_vec = *(const float4*)(A + (bx * 1024 + tx * 4));")) << cuda;
  EXPECT_TRUE(contains(cuda, "B_vec[i_2] = A_vec[i_2] * 2.0f + 1.0f;")) << cuda;
  EXPECT_TRUE(contains(cuda, "*(float4*)(B + (bx * 1024 + tx * 4)) = *(const float4*)B_vec;")) << cuda;
  EXPECT_TRUE(contains(cuda, "__align__(16) float A_vec[4];")) << cuda;
}

TEST(LegalizeVectorize, HalfCopyIsOneUint4MoveWithoutRegisters) {
  lower::LoweredFunc f = lower::lower(load_kernel("vector_copy_f16"));
  EXPECT_EQ(names(moves(f)), "A->Bx8 ");
  EXPECT_TRUE(f.allocs.empty());
  std::string cuda = codegen::codegen_cuda(f);
  EXPECT_TRUE(contains(cuda, "*(uint4*)(B + (bx * 2048 + tx * 8)) = *(const uint4*)(A + (bx * 2048 + tx * 8));"))
      << cuda;
  EXPECT_FALSE(contains(cuda, "for (")) << cuda;
}

TEST(LegalizeVectorize, MisalignedAndStridedLoadsStayScalarUnderVectorStores) {
  // Neither load is an aligned run; the stores are, so the lanes load
  // scalars into registers that one float4 store writes.
  lower::LoweredFunc f = lower::lower(load_kernel("vector_fallback"));
  EXPECT_EQ(names(moves(f)), "B_vec->Bx4 C_vec->Cx4 ");
  EXPECT_TRUE(fallbacks(f).empty());
  std::string cuda = codegen::codegen_cuda(f);
  EXPECT_TRUE(contains(cuda, "  #pragma unroll\n  for (int i_2 = 0; i_2 < 4; ++i_2) {\n"
                             "    B_vec[i_2] = A[bx * 1024 + tx * 4 + i_2 + 1];\n  }\n"
                             "  *(float4*)(B + (bx * 1024 + tx * 4)) = *(const float4*)B_vec;"))
      << cuda;
  EXPECT_TRUE(contains(cuda, "C_vec[i_2] = S[bx * 2048 + tx * 8 + i_2 * 2];")) << cuda;
}

TEST(LegalizeVectorize, CooperativeFetchMovesFloat4FromGlobalToShared) {
  lower::LoweredFunc f = lower::lower(load_kernel("matmul_shared_f32_vec"));
  EXPECT_EQ(names(moves(f)), "A->A_sharedx4 B->B_sharedx4 C_local->Cx4 ");
  EXPECT_EQ(f.allocs.size(), 3u) << "direct moves need no registers";
  std::string cuda = codegen::codegen_cuda(f);
  EXPECT_TRUE(contains(cuda, "*(float4*)(A_shared + tx * 4) = *(const float4*)(A + (by * 16384 + tx / 4 * 256 + "
                             "k_0 * 16 + tx % 4 * 4));"))
      << cuda;
  EXPECT_TRUE(contains(cuda, "*(float4*)(C + (by * 16384 + tx / 16 * 1024 + i * 256 + bx * 64 + tx % 16 * 4)) = "
                             "*(const float4*)(C_local + i * 4);"))
      << cuda;
}

TEST(LegalizeVectorize, RunsWiderThan16BytesSplitIntoPieces) {
  lower::LoweredFunc f = lower::lower(load_kernel("matmul_dynamic_shared_f32"));
  std::vector<Move> ms = moves(f);
  ASSERT_EQ(ms.size(), 3u) << names(ms);
  EXPECT_EQ(ms[2].lanes, 4) << "8 floats are two float4 moves";
  std::string cuda = codegen::codegen_cuda(f);
  EXPECT_TRUE(contains(cuda, "for (int j_piece = 0; j_piece < 2; ++j_piece) {\n"
                             "      *(float4*)(C + (by * 32768 + tx / 16 * 2048 + i * 256 + bx * 128 + tx % 16 * 8 + "
                             "j_piece * 4)) = *(const float4*)(C_local + (i * 8 + j_piece * 4));"))
      << cuda;
}

TEST(LegalizeVectorize, VectorTypePerDtypeAndWidth) {
  lower::LoweredFunc f = lower::lower(load_kernel("vector_dtypes"));
  EXPECT_TRUE(fallbacks(f).empty()) << lower::print(f);
  std::string cuda = codegen::codegen_cuda(f);
  for (const char *want : {
           "*(float4*)(F_vec + v_piece * 4) = *(const float4*)(F + (bx * 1024 + tx * 16 + v_piece * 4));",
           "*(uint4*)(H + (bx * 1024 + tx * 16 + v_piece * 8)) = *(const uint4*)(H_vec + v_piece * 8);",
           "*(__nv_bfloat162*)X_vec = *(const __nv_bfloat162*)(X + (bx * 128 + tx * 2));",
           "*(uint4*)I_vec = *(const uint4*)(I + (bx * 1024 + tx * 16));",
           "*(unsigned short*)(K + (bx * 128 + tx * 2)) = *(const unsigned short*)K_vec;",
           "*(unsigned int*)P_vec = *(const unsigned int*)(P + (bx * 256 + tx * 4));",
       })
    EXPECT_TRUE(contains(cuda, want)) << want << "\n" << cuda;
}

// Inline kernels: one thread-bound loop of 64 threads around one vectorized
// loop of 4 float32 lanes whose body is `body` (v_i = t * 4 + v).
ir::PrimFunc lane_kernel(const std::string &body) {
  return script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((260,), "float32"), B: T.Buffer((260,), "float32")):
    for t in T.thread_binding(64, thread="threadIdx.x"):
        for v in T.vectorized(4):
            with T.block("B"):
                v_i = T.axis.spatial(256, t * 4 + v)
                )" + body + "\n");
}

std::string only_fallback(const ir::PrimFunc &f) {
  lower::LoweredFunc l = lower::lower(f);
  std::vector<std::string> why = fallbacks(l);
  EXPECT_TRUE(moves(l).empty()) << names(moves(l));
  return why.size() == 1 ? why[0] : "(" + std::to_string(why.size()) + " fallbacks)";
}

TEST(LegalizeVectorize, ReductionIntoMemoryFallsBack) {
  std::string why = only_fallback(lane_kernel("B[0] = B[0] + A[v_i]"));
  EXPECT_TRUE(contains(why, "the store to B[0] writes the same element from every lane")) << why;
}

TEST(LegalizeVectorize, WrittenBufferReadAtAnotherRunFallsBack) {
  std::string why = only_fallback(lane_kernel("B[v_i] = B[v_i + 4] + A[v_i]"));
  EXPECT_EQ(why, "the load of B[threadIdx.x * 4 + v + 4] and the store to B[threadIdx.x * 4 + v] may touch another "
                 "lane's element");
}

TEST(LegalizeVectorize, GuardedLoadFallsBack) {
  std::string why = only_fallback(lane_kernel("B[v_i] = T.if_then_else(v_i < 250, A[v_i], T.float32(0))"));
  EXPECT_EQ(why, "a load is guarded by T.if_then_else");
}

/// The versions of a loop: the run-time test, and the scalar loop's reason.
struct Versions {
  std::string test, why_scalar;
  int count = 0;
};
Versions versions(const lower::LoweredFunc &f, const std::string &key = "vectorize_fallback") {
  Versions out;
  ir::pre_order_visit(f.body, nullptr, [&](const ir::Stmt &s) {
    const auto *branch = s.as<ir::IfThenElse>();
    const auto *scalar = branch && branch->else_case ? branch->else_case->as<ir::For>() : nullptr;
    if (!scalar || !scalar->annotations.count(key)) return;
    ++out.count;
    out.test = script::print(branch->cond);
    out.why_scalar = scalar->annotations.at(key).as_string();
  });
  return out;
}

TEST(LegalizeVectorize, ALaneMaskingTailIsTestedAtRunTime) {
  // 62 whole vectors and a tail of 2 lanes: the vectors whose last lane
  // passes take one move, the tail the scalar loop (with its reason).
  ir::PrimFunc f = lane_kernel("T.where(v_i < 250)\n                B[v_i] = A[v_i]");
  lower::LoweredFunc l = lower::lower(f);
  EXPECT_EQ(names(moves(l)), "A->Bx4 ");
  Versions v = versions(l);
  EXPECT_EQ(v.count, 1) << lower::print(l);
  EXPECT_EQ(v.test, "threadIdx.x < 62");  // t * 4 + 3 < 250
  EXPECT_EQ(v.why_scalar, "the body has a branch");
  expect_lowered_computes_the_same(f);
}

TEST(LegalizeVectorize, APredicateNotOverARunHasNoVectorVersion) {
  // Every other lane: no test of one lane says all pass.
  std::string why = only_fallback(lane_kernel("T.where(v_i % 2 == 0)\n                B[v_i] = A[v_i]"));
  EXPECT_EQ(why, "the body has a branch");
  EXPECT_EQ(versions(lower::lower(lane_kernel("T.where(v_i % 2 == 0)\n                B[v_i] = A[v_i]"))).count, 0);
}

TEST(LegalizeVectorize, OddWidthFallsBack) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((192,), "float32"), B: T.Buffer((192,), "float32")):
    for t in T.thread_binding(64, thread="threadIdx.x"):
        for v in T.vectorized(3):
            with T.block("B"):
                v_i = T.axis.spatial(192, t * 3 + v)
                B[v_i] = A[v_i]
)");
  std::string why = only_fallback(f);
  EXPECT_TRUE(contains(why, "spans 3 x float32 = 12 bytes, not 2, 4, 8, 16 or a multiple of 16")) << why;
}

// A copy between a (64, n) buffer, whose rows start at no provable multiple
// of 4, and a (64, 4) one, in either direction.
ir::PrimFunc symbolic_stride_copy(bool into_symbolic) {
  std::string store = into_symbolic ? "A[vt, vv] = B[vt, vv]" : "B[vt, vv] = A[vt, vv]";
  return script::parse_func(R"(
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (64, n), "float32")
    B = T.match_buffer(b, (64, 4), "float32")
    for t in T.thread_binding(64, thread="threadIdx.x"):
        for v in T.vectorized(4):
            with T.block("B"):
                vt, vv = T.axis.remap("SS", [t, v])
                )" + store + "\n");
}

TEST(LegalizeVectorize, SymbolicStrideIsNotProvablyAligned) {
  // The symbolic rows' side stays scalar (each lane its own element), the
  // aligned side is one vector access: a load into registers, or a store
  // from them.
  lower::LoweredFunc into = lower::lower(symbolic_stride_copy(true));
  EXPECT_EQ(names(moves(into)), "B->B_vecx4 ");
  EXPECT_TRUE(fallbacks(into).empty());
  std::string cuda = codegen::codegen_cuda(into);
  EXPECT_TRUE(contains(cuda, "A[(long long)tx * (long long)n + (long long)v] = B_vec[v];")) << cuda;
  lower::LoweredFunc from = lower::lower(symbolic_stride_copy(false));
  EXPECT_EQ(names(moves(from)), "B_vec->Bx4 ");
  EXPECT_TRUE(fallbacks(from).empty());
}

TEST(LegalizeVectorize, RunsNotProvablyAlignedAreTestedAtRunTime) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (64, n), "float32")
    B = T.match_buffer(b, (64, n), "float32")
    for t in T.thread_binding(64, thread="threadIdx.x"):
        for v in T.vectorized(4):
            with T.block("B"):
                vt, vv = T.axis.remap("SS", [t, v])
                B[vt, vv] = A[vt, vv]
)");
  lower::LoweredFunc l = lower::lower(f);
  EXPECT_EQ(names(moves(l)), "A->Bx4 ");
  Versions v = versions(l);
  EXPECT_EQ(v.count, 1) << lower::print(l);
  EXPECT_EQ(v.test, "T.Cast(\"int64\", threadIdx.x) * T.Cast(\"int64\", n) % T.int64(4) == T.int64(0)");
  EXPECT_TRUE(contains(v.why_scalar, "the load of A[") && contains(v.why_scalar, "is not aligned")) << v.why_scalar;
  // Rows of 6: every other one aligned (the test is on the thread); of 5:
  // one in four.
  for (int64_t n : {6, 5}) {
    ir::PrimFunc sized = analysis::specialize(f, {{"n", n}});
    EXPECT_EQ(versions(lower::lower(sized)).count, 1);
    expect_lowered_computes_the_same(sized);
  }
}

TEST(LegalizeVectorize, InvariantLoadsAndLocalAccumulatorsStayScalarInTheLaneLoop) {
  // A[0] is the same for every lane; the local accumulator keeps its
  // scalar order; only B's loads and stores are vector moves.
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((260,), "float32"), B: T.Buffer((256,), "float32"), C: T.Buffer((64,), "float32")):
    for t in T.thread_binding(64, thread="threadIdx.x"):
        with T.block("row"):
            vt = T.axis.remap("S", [t])
            acc = T.alloc_buffer((1,), scope="local")
            acc[0] = T.float32(0)
            for v in T.vectorized(4):
                with T.block("B"):
                    v_i = T.axis.spatial(256, vt * 4 + v)
                    B[v_i] = B[v_i] * A[0]
                    acc[0] = acc[0] + B[v_i]
            C[vt] = acc[0]
)");
  lower::LoweredFunc l = lower::lower(f);
  EXPECT_EQ(names(moves(l)), "B->B_vecx4 B_vec->Bx4 ");
  std::string cuda = codegen::codegen_cuda(l);
  EXPECT_TRUE(contains(cuda, "B_vec[v] = B_vec[v] * A[0];\n    acc[0] = acc[0] + B_vec[v];")) << cuda;
  expect_lowered_computes_the_same(f);
}

// A row sum whose reduce loop's inner piece is annotated for vector loads
// (as the reduction rules schedule it): 64 rows of `cols`, `guard` on the
// update (a tail predicate).
ir::PrimFunc vector_loads_kernel(int64_t cols, const std::string &guard) {
  std::string n = std::to_string(cols);
  return script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((64, )" + n + R"(), "float32"), C: T.Buffer((64,), "float32")):
    for t in T.thread_binding(64, thread="threadIdx.x"):
        with T.block("row"):
            vt = T.axis.remap("S", [t])
            acc = T.alloc_buffer((1,), scope="local")
            acc[0] = T.float32(0)
            for k_o in range(64):
                for k_v in T.serial(4, annotations={"vector_loads": 1}):
                    with T.block("sum"):
                        vk = T.axis.reduce(256, k_o * 4 + k_v)
                        )" + guard + R"(
                        acc[0] = acc[0] + A[vt, vk]
            C[vt] = acc[0]
)");
}

/// The `vector_loads_fallback` reasons (those loops keep their kind).
std::vector<std::string> vector_loads_fallbacks(const lower::LoweredFunc &f) {
  return fallbacks(f, "vector_loads_fallback");
}

TEST(LegalizeVectorize, VectorLoadsInAReduceLoopKeepTheLanesInOrder) {
  ir::PrimFunc f = vector_loads_kernel(256, "T.where(True)");
  lower::LoweredFunc l = lower::lower(f);
  EXPECT_EQ(names(moves(l)), "A->A_vecx4 ");
  EXPECT_TRUE(vector_loads_fallbacks(l).empty()) << lower::print(l);
  std::string cuda = codegen::codegen_cuda(l);
  EXPECT_TRUE(contains(cuda, "*(float4*)A_vec = *(const float4*)(A + (tx * 256 + k_o * 4));")) << cuda;
  EXPECT_TRUE(contains(cuda, "acc[0] = acc[0] + A_vec[k_v];")) << cuda;
  expect_lowered_computes_the_same(f);
}

TEST(LegalizeVectorize, VectorLoadsUnderAPredicateOverWholeVectors) {
  // 62 whole vectors of a row of 248: the guard does not depend on the lane,
  // so it goes around the vector load.
  ir::PrimFunc f = vector_loads_kernel(248, "T.where(k_o < 62)");
  lower::LoweredFunc l = lower::lower(f);
  EXPECT_EQ(names(moves(l)), "A->A_vecx4 ");
  EXPECT_TRUE(vector_loads_fallbacks(l).empty()) << lower::print(l);
  expect_lowered_computes_the_same(f);
}

TEST(LegalizeVectorize, VectorLoadsWithATailOrAnOddStrideAreVersioned) {
  // A tail inside a vector (250 = 62 * 4 + 2) and a row stride of 258 (not
  // a multiple of 4): vector loads where the run-time test passes, the
  // serial loop (lanes in order, with its reason) where it does not.
  ir::PrimFunc tail = vector_loads_kernel(250, "T.where(k_o * 4 + k_v < 250)");
  lower::LoweredFunc l = lower::lower(tail);
  EXPECT_EQ(names(moves(l)), "A->A_vecx4 ");
  Versions v = versions(l, "vector_loads_fallback");
  // k_o * 4 + 3 < 250, and rows of 250 start aligned at even threads.
  EXPECT_EQ(v.test, "k_o < 62 and threadIdx.x % 2 == 0");
  EXPECT_EQ(v.why_scalar, "the body has a branch");
  expect_lowered_computes_the_same(tail);
  ir::PrimFunc stride = vector_loads_kernel(258, "T.where(True)");
  l = lower::lower(stride);
  EXPECT_EQ(names(moves(l)), "A->A_vecx4 ");
  v = versions(l, "vector_loads_fallback");
  EXPECT_EQ(v.test, "threadIdx.x % 2 == 0");  // rows of 258
  EXPECT_TRUE(contains(v.why_scalar, "is not aligned")) << v.why_scalar;
  expect_lowered_computes_the_same(stride);
}

TEST(LegalizeVectorize, Int64IndicesVectorizeLikeInt32) {
  // TVM prints relax's functions with T.int64 loops; their flattened indices
  // are int32 casts of int64 sums, `(int)((long long)tx * 4LL + v)`, whose
  // runs in v show once the cast is moved inside (no value changes).
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((T.int64(64), T.int64(256)), "float32"), B: T.Buffer((T.int64(64), T.int64(256)), "float32")):
    for i in T.thread_binding(T.int64(64), thread="blockIdx.x"):
        for t in T.thread_binding(T.int64(64), thread="threadIdx.x"):
            for v in T.vectorized(T.int64(4)):
                with T.block("B"):
                    vi = T.axis.spatial(T.int64(64), i)
                    vj = T.axis.spatial(T.int64(256), t * T.int64(4) + v)
                    B[vi, vj] = A[vi, vj] * T.float32(2)
)");
  lower::LoweredFunc l = lower::lower(f);
  EXPECT_EQ(names(moves(l)), "A->A_vecx4 B_vec->Bx4 ");
  EXPECT_TRUE(fallbacks(l).empty());
  expect_lowered_computes_the_same(f);
  // Eight float32 per thread over a symbolic number of rows (the flattened
  // index stays int64): each move is two 16-byte pieces, their index
  // base + piece * 4 + lane (codegen reads the lane back out of it).
  ir::PrimFunc wide = script::parse_func(R"(
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n, T.int64(256)), "float32")
    B = T.match_buffer(b, (n, T.int64(256)), "float32")
    for i in T.thread_binding(T.int64(64), thread="blockIdx.x"):
        for t in T.thread_binding(T.int64(32), thread="threadIdx.x"):
            for v in T.vectorized(T.int64(8)):
                with T.block("B"):
                    vi = T.axis.spatial(T.int64(64), i)
                    vj = T.axis.spatial(T.int64(256), t * T.int64(8) + v)
                    B[vi, vj] = A[vi, vj] * T.float32(2)
)");
  l = lower::lower(wide);
  EXPECT_EQ(names(moves(l)), "A->A_vecx4 B_vec->Bx4 ");  // one move of 4 lanes under an unrolled piece loop
  std::string cuda = codegen::codegen_cuda(l);
  EXPECT_NE(cuda.find("*(float4*)(A_vec + v_piece * 4) = *(const float4*)(A + "), std::string::npos) << cuda;
}

TEST(LegalizeVectorize, LoweredKernelsComputeWhatTheScheduledOnesDo) {
  for (const char *k : {"elementwise_vectorized", "vector_copy_f16", "vector_fallback", "vector_dtypes"}) {
    SCOPED_TRACE(k);
    expect_lowered_computes_the_same(load_kernel(k));
  }
  expect_lowered_computes_the_same(lane_kernel("B[v_i] = A[v_i + 4] - A[v_i]"));
}

}  // namespace
