//===- IssueTraceTest.cpp - The trace of the schedule issue ----------------===//
//
// The issue's example trace (tests/schedule/data/matmul_trace.json) on the
// 64x80x48 float32 matmul (data/matmul_64x80x48.py): tile, bind, cache A in
// shared memory, compute it at k0, decompose the reduction. It must replay,
// give the expected program, record itself back byte for byte, and compute
// what the unscheduled matmul computes, through the API and the CLI.
//
//===----------------------------------------------------------------------===//
#include <fstream>
#include <sstream>

#include "Commands.h"
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;

std::string data_path(const char *name) { return std::string(TESSERA_TEST_DATA_DIR) + "/schedule/data/" + name; }

std::string read(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ir::PrimFunc matmul() { return script::parse_file(data_path("matmul_64x80x48.py")).funcs.at(0); }

const char *kExpected = R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    A_shared = T.alloc_buffer((64, 48), scope="shared")
    for i0 in T.thread_binding(4, thread="blockIdx.y"):
        for j0 in T.thread_binding(5, thread="blockIdx.x"):
            for i1_init, j1_init in T.grid(16, 16):
                with T.block("C_init"):
                    vi = T.axis.spatial(64, i0 * 16 + i1_init)
                    vj = T.axis.spatial(80, j0 * 16 + j1_init)
                    C[vi, vj] = T.float32(0)
            for k0 in range(6):
                for ax0, ax1 in T.grid(16, 8):
                    with T.block("AS"):
                        v0 = T.axis.spatial(64, i0 * 16 + ax0)
                        v1 = T.axis.spatial(48, k0 * 8 + ax1)
                        A_shared[v0, v1] = A[v0, v1]
                for i1, j1, k1 in T.grid(16, 16, 8):
                    with T.block("C"):
                        vi = T.axis.spatial(64, i0 * 16 + i1)
                        vj = T.axis.spatial(80, j0 * 16 + j1)
                        vk = T.axis.reduce(48, k0 * 8 + k1)
                        T.reads(C[vi, vj], A_shared[vi, vk], B[vk, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B[vk, vj]
)";

TEST(IssueTrace, ReplaysVerifiesAndRecordsItself) {
  ir::PrimFunc f = matmul();
  std::string json = read(data_path("matmul_trace.json"));
  Schedule sch = make_schedule(f);
  sch.replay(json);
  check_schedule(f, sch, kExpected);
  EXPECT_EQ(sch.trace().to_json(), json);
}

TEST(IssueTrace, SameScheduleThroughTheApi) {
  ir::PrimFunc f = matmul();
  Schedule sch = make_schedule(f);
  BlockRef c = sch.get_block("C");
  IssueTiles t = tile_like_the_issue(sch, c);
  BlockRef as = sch.cache_read(c, 0, "shared", "AS");
  sch.compute_at(as, t.k[0]);
  BlockRef init = sch.decompose_reduction(c, t.k[0]);
  EXPECT_EQ(init.name, "C_init");
  check_schedule(f, sch, kExpected);
  EXPECT_EQ(sch.trace().to_json(), read(data_path("matmul_trace.json")));
}

TEST(IssueTrace, ThroughTheCommandLine) {
  cli::ScheduleCommandOptions opts;
  opts.file = data_path("matmul_64x80x48.py");
  opts.trace = data_path("matmul_trace.json");
  opts.verify = true;
  std::ostringstream out, err;
  EXPECT_EQ(cli::schedule_command(opts, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("# verify: C: ok, worst C["), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("with T.block(\"C_init\")"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace tessera::test
