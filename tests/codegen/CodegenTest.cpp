//===- tests/codegen/CodegenTest.cpp - CUDA C goldens and lowering errors ---===//
//
// Codegen replay (STYLE.md 3.6): every kernel in kernels/*.py is lowered and
// printed as CUDA C, and the text must match golden/<name>.cu byte for byte.
// TESSERA_UPDATE_GOLDEN=1 rewrites the goldens (review the diff like code).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/ir/Functor.h"
#include "tessera/lower/Passes.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"

namespace fs = std::filesystem;
using namespace tessera;

namespace {

const fs::path kDir = fs::path(TESSERA_TEST_DATA_DIR) / "codegen";

std::string read_file(const fs::path &p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto &e : fs::directory_iterator(kDir / "kernels"))
    if (e.path().extension() == ".py") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

ir::PrimFunc load_kernel(const std::string &name) {
  return script::parse_func(read_file(kDir / "kernels" / (name + ".py")), name + ".py");
}

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, MatchesGolden) {
  std::string cuda = codegen::codegen_cuda(load_kernel(GetParam()));
  fs::path golden = kDir / "golden" / (GetParam() + ".cu");
  if (std::getenv("TESSERA_UPDATE_GOLDEN")) {
    std::ofstream(golden) << cuda;
    GTEST_SKIP() << "rewrote " << golden;
  }
  ASSERT_TRUE(fs::exists(golden)) << "no golden " << golden << " (run with TESSERA_UPDATE_GOLDEN=1)\n" << cuda;
  EXPECT_EQ(read_file(golden), cuda) << "generated CUDA for " << GetParam() << " differs from " << golden;
}

INSTANTIATE_TEST_SUITE_P(Kernels, GoldenTest, ::testing::ValuesIn(kernel_names()),
                         [](const auto &info) { return info.param; });

TEST(Codegen, AtLeastTenKernels) { EXPECT_GE(kernel_names().size(), 10u); }

// Counts `__syncthreads();` lines.
int count_barriers(const std::string &cuda) {
  int n = 0;
  for (size_t p = cuda.find("__syncthreads();"); p != std::string::npos; p = cuda.find("__syncthreads();", p + 1)) ++n;
  return n;
}

TEST(InsertBarriers, TransposeHasOneBarrier) {
  EXPECT_EQ(count_barriers(codegen::codegen_cuda(load_kernel("transpose_shared"))), 1);
}

TEST(InsertBarriers, TiledMatmulSyncsBeforeComputeAndBeforeNextFetch) {
  std::string cuda = codegen::codegen_cuda(load_kernel("matmul_shared_f32"));
  EXPECT_EQ(count_barriers(cuda), 2);
  // Inside the k loop: fetch, barrier, compute, barrier.
  size_t fetch = cuda.find("A_shared[");
  size_t first = cuda.find("__syncthreads();");
  size_t compute = cuda.find("C_local[", first);
  ASSERT_NE(first, std::string::npos);
  EXPECT_LT(fetch, first);
  EXPECT_LT(first, compute);
}

TEST(InsertBarriers, NoSharedMemoryNoBarrier) {
  for (const char *k : {"elementwise_vectorized", "gemv", "softmax", "symbolic_elementwise"})
    EXPECT_EQ(count_barriers(codegen::codegen_cuda(load_kernel(k))), 0) << k;
}

TEST(Lower, LaunchConfigFromThreadBindings) {
  lower::LoweredFunc f = lower::lower(load_kernel("transpose_shared"));
  EXPECT_EQ(script::print(f.launch.grid[0]), "64");
  EXPECT_EQ(script::print(f.launch.grid[1]), "64");
  EXPECT_EQ(script::print(f.launch.block[0]), "32");
  EXPECT_EQ(script::print(f.launch.block[1]), "8");
  EXPECT_FALSE(f.launch.block[2].defined());
  EXPECT_EQ(f.launch.threads_per_block(), 256);
}

TEST(Lower, SymbolicExtentBecomesGridExpressionAndParameter) {
  lower::LoweredFunc f = lower::lower(load_kernel("symbolic_elementwise"));
  EXPECT_EQ(script::print(f.launch.grid[0]), "(n + 255) // 256");
  ASSERT_EQ(f.params.size(), 3u);
  EXPECT_FALSE(f.params[2].is_buffer());
  EXPECT_EQ(f.params[2].var.name(), "n");
  std::string cuda = codegen::codegen_cuda(f);
  EXPECT_NE(cuda.find("int n)"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("if (bx * 256 + tx < n)"), std::string::npos) << cuda;
}

TEST(Lower, IndexTypePerBufferSize) {
  // 2^31 elements need 64-bit indices; 2^20 do not.
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((65536, 32768), "float16"), B: T.Buffer((1024, 1024), "float16")):
    for i in T.thread_binding(1024, thread="blockIdx.x"):
        for j in T.thread_binding(1024, thread="threadIdx.x"):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi * 64, vj]
)");
  std::string cuda = codegen::codegen_cuda(f);
  EXPECT_NE(cuda.find("A[(long long)(bx * 64) * 32768LL + (long long)tx]"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("B[bx * 1024 + tx]"), std::string::npos) << cuda;
}

TEST(Lower, DumpPrintsEveryPass) {
  ::setenv("TESSERA_DUMP", "lower", 1);
  ::testing::internal::CaptureStderr();
  lower::lower(load_kernel("row_reduce"));
  std::string log = ::testing::internal::GetCapturedStderr();
  ::unsetenv("TESSERA_DUMP");
  for (const char *pass : {"lower_cross_thread_reduction", "lower_blocks", "insert_barriers", "extract_launch_config",
                           "flatten_buffers"})
    EXPECT_NE(log.find(std::string("=== lower: after ") + pass), std::string::npos) << pass << "\n" << log;
  EXPECT_NE(log.find("(unchanged)"), std::string::npos) << log;
}

TEST(LowerErrors, InconsistentThreadExtentsNameBothLoops) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for i in T.thread_binding(128, thread="threadIdx.x"):
        with T.block("A"):
            vi = T.axis.remap("S", [i])
            A[vi] = T.float32(1)
    for j in T.thread_binding(64, thread="threadIdx.x"):
        for k in range(2):
            with T.block("B"):
                vi = T.axis.spatial(128, j * 2 + k)
                B[vi] = A[vi]
)");
  try {
    lower::lower(f);
    FAIL() << "expected LowerError";
  } catch (const lower::LowerError &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("loops 'i' and 'j' are both bound to threadIdx.x but have different extents 128 and 64"),
              std::string::npos)
        << msg;
  }
}

TEST(LowerErrors, UnsupportedThreadTag) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((128,), "float32")):
    for i in T.thread_binding(128, thread="cthread"):
        with T.block("A"):
            vi = T.axis.remap("S", [i])
            A[vi] = T.float32(1)
)");
  EXPECT_THROW(lower::lower(f), lower::LowerError);
}

TEST(LowerErrors, GlobalAllocation) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((128,), "float32")):
    T_tmp = T.alloc_buffer((128,))
    for i in T.thread_binding(128, thread="threadIdx.x"):
        with T.block("A"):
            vi = T.axis.remap("S", [i])
            T_tmp[vi] = T.float32(1)
            A[vi] = T_tmp[vi]
)");
  try {
    lower::lower(f);
    FAIL() << "expected LowerError";
  } catch (const lower::LowerError &e) {
    EXPECT_NE(std::string(e.what()).find("buffer 'T_tmp'"), std::string::npos) << e.what();
  }
}

TEST(SyncThreadsIntrinsic, PrintsAndParsesBack) {
  const char *text = R"(
@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("A"):
            vi = T.axis.remap("S", [i])
            A[vi] = T.float32(1)
            T.evaluate(T.syncthreads())
)";
  std::string printed = script::print(script::parse_func(text));
  EXPECT_NE(printed.find("T.evaluate(T.syncthreads())"), std::string::npos) << printed;
  EXPECT_EQ(script::print(script::parse_func(printed)), printed);
}

}  // namespace
