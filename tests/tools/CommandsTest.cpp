//===- CommandsTest.cpp - The `tessera` subcommands ------------------------===//
#include "Commands.h"

#include <gtest/gtest.h>

#include "tessera/runtime/LlvmJit.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/support/HostMemory.h"
#include "tessera/tune/Reference.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/runtime/Sass.h"
#include "tessera/support/Error.h"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

/// Writes `text` to a fresh file in a directory of the running test's own, so
/// tests run in parallel by ctest never share a file.
std::string write_temp(const std::string &name, const std::string &text) {
  const ::testing::TestInfo *info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::temp_directory_path() / "tessera_cli_test" /
                 (std::string(info->test_suite_name()) + "." + info->name());
  fs::create_directories(dir);
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}

/// True when `err` is the message of `run --device cuda` without a driver.
bool runtime_has_no_device(const std::string &err) {
  return err.find("error: --device cuda: no CUDA device (") != std::string::npos;
}

const char *kAdd = R"(@T.prim_func
def add(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    for i, j in T.grid(4, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]
)";

TEST(DimBinding, ParsesNameAndValue) {
  auto [name, value] = parse_dim_binding("rows=64");
  EXPECT_EQ(name, "rows");
  EXPECT_EQ(value, 64);
}

TEST(DimBinding, RejectsMalformedText) {
  EXPECT_THROW(parse_dim_binding("rows"), UserError);
  EXPECT_THROW(parse_dim_binding("=4"), UserError);
  EXPECT_THROW(parse_dim_binding("n=4x"), UserError);
  EXPECT_THROW(parse_dim_binding("n="), UserError);
  EXPECT_THROW(parse_dim_binding("n=-3"), UserError);
}

TEST(FmtCommand, PrintsCanonicalTextThatIsAFixedPoint) {
  std::string path = write_temp("add.py", kAdd);
  std::ostringstream out, err;
  ASSERT_EQ(fmt_command({{path}}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("T.axis.remap(\"SS\""), std::string::npos) << out.str();
  // Formatting the formatted text changes nothing.
  std::string again = write_temp("add_fmt.py", out.str());
  std::ostringstream out2, err2;
  ASSERT_EQ(fmt_command({{again}}, out2, err2), 0) << err2.str();
  EXPECT_EQ(out.str(), out2.str());
}

TEST(FmtCommand, BadInputReportsPositionAndExitsOne) {
  std::string good = write_temp("good.py", kAdd);
  std::string bad = write_temp("bad.py", "@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\"):\n    pass\n");
  std::ostringstream out, err;
  EXPECT_EQ(fmt_command({{bad, good}}, out, err), 1);
  EXPECT_NE(err.str().find(bad + ":2:"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("error:"), std::string::npos) << err.str();
  // The good file after the bad one is still printed.
  EXPECT_NE(out.str().find("def add("), std::string::npos);
}

TEST(FmtCommand, MissingFileIsAUserError) {
  std::ostringstream out, err;
  EXPECT_EQ(fmt_command({{"/nonexistent/x.py"}}, out, err), 1);
  EXPECT_NE(err.str().find("/nonexistent/x.py"), std::string::npos) << err.str();
}

TEST(RunCommand, PrintsOneSummaryLinePerBufferWithTheSum) {
  std::string path = write_temp("add_run.py", kAdd);
  std::ostringstream out, err;
  ASSERT_EQ(run_command({.file = path, .dims = {}, .seed = 3, .func = ""}, out, err), 0) << err.str();
  std::istringstream lines(out.str());
  std::string a, b, c, extra;
  std::getline(lines, a);
  std::getline(lines, b);
  std::getline(lines, c);
  EXPECT_FALSE(std::getline(lines, extra)) << "one line per buffer parameter";
  EXPECT_EQ(a.rfind("A float32[4, 8] l2=", 0), 0u) << a;
  EXPECT_EQ(b.rfind("B float32[4, 8] l2=", 0), 0u) << b;
  EXPECT_EQ(c.rfind("C float32[4, 8] l2=", 0), 0u) << c;
  // Same seed, same answer; another seed, another answer.
  std::ostringstream again, other, err2;
  run_command({.file = path, .dims = {}, .seed = 3, .func = ""}, again, err2);
  run_command({.file = path, .dims = {}, .seed = 4, .func = ""}, other, err2);
  EXPECT_EQ(out.str(), again.str());
  EXPECT_NE(out.str(), other.str());
}

TEST(RunCommand, AnUnboundSymbolicDimTakesTheDefaultAndSaysSo) {
  std::string path = write_temp("softmax.py", "");
  fs::copy_file(fs::path(TESSERA_TEST_DATA_DIR) / "../examples/softmax.py", path,
                fs::copy_options::overwrite_existing);
  std::ostringstream out, err;
  EXPECT_EQ(run_command({.file = path, .dims = {}, .seed = 0, .func = ""}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("# rows = 64: no --dim rows=N given"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("B float32[64, 256]"), std::string::npos) << out.str();

  std::ostringstream out2, err2;
  EXPECT_EQ(run_command({.file = path, .dims = {"rows=3"}, .seed = 0, .func = ""}, out2, err2), 0) << err2.str();
  EXPECT_NE(out2.str().find("B float32[3, 256]"), std::string::npos) << out2.str();
}

TEST(RunCommand, OutOfBoundsAccessIsAnErrorNotACrash) {
  std::string path = write_temp("oob.py", R"(@T.prim_func
def oob(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi + 1]
)");
  std::ostringstream out, err;
  EXPECT_EQ(run_command({.file = path, .dims = {}, .seed = 0, .func = ""}, out, err), 1);
  EXPECT_NE(err.str().find("A"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("8"), std::string::npos) << err.str();
}

TEST(RunCommand, ModuleWithSeveralFunctionsNeedsFunc) {
  std::string path = write_temp("mod.py", R"(@I.ir_module
class Module:
    @T.prim_func
    def f(A: T.Buffer((2,), "int32")):
        for i in range(2):
            with T.block("A"):
                vi = T.axis.spatial(2, i)
                A[vi] = vi
    @T.prim_func
    def g(A: T.Buffer((2,), "int32")):
        for i in range(2):
            with T.block("A"):
                vi = T.axis.spatial(2, i)
                A[vi] = vi * 2
)");
  std::ostringstream out, err;
  EXPECT_EQ(run_command({.file = path, .dims = {}, .seed = 0, .func = ""}, out, err), 1);
  EXPECT_NE(err.str().find("--func"), std::string::npos) << err.str();
  std::ostringstream out2, err2;
  EXPECT_EQ(run_command({.file = path, .dims = {}, .seed = 0, .func = "g"}, out2, err2), 0) << err2.str();
  // g writes 0 and 2: max 2, mean 1.
  EXPECT_NE(out2.str().find("max=2"), std::string::npos) << out2.str();
  EXPECT_NE(out2.str().find("mean=1"), std::string::npos) << out2.str();
}

const char *kMatmul = R"(@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    for i, j, k in T.grid(64, 80, 48):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)";

const char *kMatmulTrace = R"([
  {"op": "get_block", "name": "C", "out": "C"},
  {"op": "get_loops", "block": "C", "out": ["i", "j", "k"]},
  {"op": "split", "loop": "i", "factors": [null, 16], "out": ["i0", "i1"]},
  {"op": "split", "loop": "j", "factors": [null, 16], "out": ["j0", "j1"]},
  {"op": "split", "loop": "k", "factors": [null, 8], "out": ["k0", "k1"]},
  {"op": "reorder", "loops": ["i0", "j0", "k0", "i1", "j1", "k1"]},
  {"op": "bind", "loop": "i0", "thread": "blockIdx.y"},
  {"op": "bind", "loop": "j0", "thread": "blockIdx.x"}
])";

TEST(ScheduleCommand, AppliesTheTraceAndVerifies) {
  std::string path = write_temp("matmul.py", kMatmul);
  std::string trace = write_temp("matmul_trace.json", kMatmulTrace);
  std::ostringstream out, err;
  ASSERT_EQ(schedule_command({.file = path, .trace = trace, .verify = true, .dims = {}, .seed = 3, .func = ""}, out,
                             err),
            0)
      << err.str();
  EXPECT_NE(out.str().find("for i0 in T.thread_binding(4, thread=\"blockIdx.y\"):"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("vk = T.axis.reduce(48, k0 * 8 + k1)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("# verify: C: ok, worst C["), std::string::npos) << out.str();
  // Without --verify only the script is printed, and it parses back.
  std::ostringstream out2, err2;
  ASSERT_EQ(schedule_command({.file = path, .trace = trace, .verify = false, .dims = {}, .seed = 0, .func = ""}, out2,
                             err2),
            0);
  EXPECT_EQ(out2.str().find("# verify"), std::string::npos);
  std::string again = write_temp("matmul_scheduled.py", out2.str());
  std::ostringstream out3, err3;
  EXPECT_EQ(fmt_command({{again}}, out3, err3), 0) << err3.str();
}

TEST(ScheduleCommand, BadTraceRendersTheError) {
  std::string path = write_temp("matmul.py", kMatmul);
  std::string trace = write_temp("bad_trace.json", R"([
  {"op": "get_block", "name": "C", "out": "C"},
  {"op": "get_loops", "block": "C", "out": ["i", "j", "k"]},
  {"op": "split", "loop": "i", "factors": [8, 4]}
])");
  std::ostringstream out, err;
  EXPECT_EQ(schedule_command({.file = path, .trace = trace, .verify = false, .dims = {}, .seed = 0, .func = ""}, out,
                             err),
            1);
  EXPECT_NE(err.str().find("bad_trace.json: trace instruction 2 (split): schedule primitive 'split' failed: split factors "
                           "multiply to 32 but loop 'i' has extent 64"),
            std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("for i in range(64):  # {0}"), std::string::npos) << err.str();

  std::string malformed = write_temp("malformed.json", R"([{"op": "split", "loop": 3}])");
  std::ostringstream out2, err2;
  EXPECT_EQ(schedule_command({.file = path, .trace = malformed, .verify = false, .dims = {}, .seed = 0, .func = ""},
                             out2, err2),
            1);
  EXPECT_NE(err2.str().find("trace instruction 0 (split): 'loop' must be a string"), std::string::npos) << err2.str();
}

TEST(ScheduleCommand, SymbolicDimensionsVerifyAtTheDefaultOrTheirDim) {
  std::string path = write_temp("sym.py", R"(@T.prim_func
def main(var_A: T.handle, var_B: T.handle):
    n = T.int32()
    A = T.match_buffer(var_A, (n,))
    B = T.match_buffer(var_B, (n,))
    for i in range(n):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(3)
)");
  std::string trace = write_temp("sym_trace.json", R"([
  {"op": "get_block", "name": "B", "out": "B"},
  {"op": "get_loops", "block": "B", "out": ["i"]},
  {"op": "split", "loop": "i", "factors": [null, 32], "out": ["bx", "tx"]},
  {"op": "bind", "loop": "bx", "thread": "blockIdx.x"},
  {"op": "bind", "loop": "tx", "thread": "threadIdx.x"}
])");
  std::ostringstream out, err;
  EXPECT_EQ(schedule_command({.file = path, .trace = trace, .verify = true, .dims = {}, .seed = 0, .func = ""}, out,
                             err),
            0)
      << err.str();
  EXPECT_NE(out.str().find("# n = 64: no --dim n=N given\n# oracle:"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("# verify: B: ok"), std::string::npos) << out.str();
  std::ostringstream out2, err2;
  EXPECT_EQ(schedule_command({.file = path, .trace = trace, .verify = true, .dims = {"n=77"}, .seed = 0, .func = ""},
                             out2, err2),
            0)
      << err2.str();
  EXPECT_NE(out2.str().find("T.where(bx * 32 + tx < n)"), std::string::npos) << out2.str();
  EXPECT_NE(out2.str().find("# verify: B: ok, worst B["), std::string::npos) << out2.str();
}

TEST(ScheduleCommand, RulesScheduleAndVerifyWithoutATrace) {
  std::string file = write_temp("add.py", kAdd);
  std::ostringstream out, err;
  ASSERT_EQ(schedule_command({.file = file, .arch = "h100", .verbose = true, .verify = true}, out, err), 0)
      << err.str();
  std::string text = out.str();
  EXPECT_NE(text.find("T.thread_binding("), std::string::npos) << text;
  EXPECT_NE(text.find("# rule: elementwise\n# config: {\"rule\":\"elementwise\",\"threads\":256,\"vector\":4"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# verify: C: ok, worst C["), std::string::npos) << text;
}

TEST(ScheduleCommand, AScheduledProgramTheCudaPathRefusesIsAnErrorNotAPass) {
  // Two loops of one kernel on threadIdx.x with 128 and 64 threads: serially
  // well defined (--verify alone would pass it), but no launch has both.
  std::string file = write_temp("two_extents.py", R"(@T.prim_func
def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"), C: T.Buffer((64,), "float32")) -> None:
    T.func_attr({"tir.is_scheduled": True})
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(128, tx)
                B[vi] = A[vi] * T.float32(2)
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("C"):
                vi = T.axis.spatial(64, tx)
                C[vi] = A[vi] + T.float32(1)
)");
  std::ostringstream out, err;
  EXPECT_EQ(schedule_command({.file = file, .arch = "h100", .verify = true}, out, err), 1);
  EXPECT_NE(out.str().find("# rule: none (already scheduled)"), std::string::npos) << out.str();
  EXPECT_NE(err.str().find("'main' is scheduled already, and the CUDA code generator refuses it: loops 'tx' and "
                           "'tx' are both bound to threadIdx.x but have different extents 128 and 64"),
            std::string::npos)
      << err.str();
  EXPECT_EQ(out.str().find("# verify:"), std::string::npos) << out.str();
}

TEST(ScheduleCommand, VerifyRefusesArraysThatWouldNotFitInMemory) {
  // Sixteen elements computed, but arrays of 2^44 bytes (and their float64
  // reference): refused up front with the sizes, not killed for memory.
  std::string file = write_temp("huge.py", R"(
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n, n), "float32")
    B = T.match_buffer(b, (n, n), "float32")
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[0, vi] = A[0, vi] * T.float32(2)
)");
  if (host_memory().available <= 0) GTEST_SKIP() << "no /proc/meminfo here";
  std::ostringstream out, err;
  EXPECT_EQ(schedule_command({.file = file, .arch = "h100", .verify = true, .dims = {"n=2097152"}}, out, err), 1);
  EXPECT_NE(err.str().find("--verify would hold about"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("bind smaller sizes with --dim"), std::string::npos) << err.str();
  // A program whose sizes are fixed: nothing to bind smaller, so the
  // refusal says what else to do.
  std::string fixed = write_temp("fixed.py", R"(
@T.prim_func
def main(A: T.Buffer((8192, 8192), "float32"), B: T.Buffer((8192, 8192), "float32"), C: T.Buffer((8192, 8192), "float32")):
    for i, j, k in T.grid(8192, 8192, 8192):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
  std::ostringstream out3, err3;
  // (All its blocks: a sample of them would fit, SampledVerify below.)
  EXPECT_EQ(schedule_command({.file = fixed, .arch = "h100", .verify = true, .verify_blocks = "all"}, out3, err3), 1);
  EXPECT_NE(err3.str().find("its sizes are fixed in the program: let `tessera tune` verify it on a GPU"),
            std::string::npos)
      << err3.str();
  // The same program at a size that fits verifies.
  std::ostringstream out2, err2;
  EXPECT_EQ(schedule_command({.file = file, .arch = "h100", .verify = true, .dims = {"n=64"}}, out2, err2), 0)
      << err2.str();
}

TEST(ScheduleCommand, SampledVerifyRunsSomeBlocksAndCoversTheWholeGrid) {
  // A float16 tensor-core matmul (128 x 256 tiles on the A100: 4 x 3 blocks).
  std::string file = write_temp("tc_sampled.py", R"(
@T.prim_func
def main(A: T.Buffer((512, 384), "float16"), B: T.Buffer((384, 640), "float16"), C: T.Buffer((512, 640), "float32")):
    for i, j, k in T.grid(512, 640, 384):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])
)");
  std::ostringstream out, err;
  ASSERT_EQ(schedule_command({.file = file, .arch = "a100", .verify = true, .verify_blocks = "2"}, out, err), 0)
      << err.str() << out.str();
  const std::string text = out.str();
  EXPECT_NE(text.find("T.mma_sync"), std::string::npos) << "the tensor-core rule scheduled it";
  EXPECT_NE(text.find("# verify: sampled 4 of 12 thread blocks (blockIdx.y 0, 3; blockIdx.x 0, 2), seed 0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# verify: coverage: the 12 thread blocks write every element of C"), std::string::npos) << text;
  // Rows 0-127 and 384-511, columns 0-255 and 512-639 (the last tile is half).
  EXPECT_NE(text.find("# verify: C: the sampled blocks wrote 98304 of its 327680 elements; 98304 checked"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# verify: C: ok, worst C["), std::string::npos) << text;
  // auto at this size: every block (within the limits), no sample.
  std::ostringstream out2, err2;
  ASSERT_EQ(schedule_command({.file = file, .arch = "a100", .verify = true}, out2, err2), 0) << err2.str();
  EXPECT_EQ(out2.str().find("# verify: sampled"), std::string::npos) << out2.str();
  EXPECT_NE(out2.str().find("# verify: C: ok, worst C["), std::string::npos) << out2.str();
  // auto with a limit of 2^25 iterations (1.26e8 for the whole grid): a
  // sample sized to it, one block of 1.05e7.
  std::ostringstream out3, err3;
  ASSERT_EQ(schedule_command({.file = file, .arch = "a100", .verify = true, .verify_limit = int64_t(1) << 25,
                              .llvm_verify_limit = 1},
                             out3, err3),
            0)
      << err3.str();
  EXPECT_NE(out3.str().find("# verify: sampled 1 of 12 thread blocks (blockIdx.y 0; blockIdx.x 0)"), std::string::npos)
      << out3.str();
  // A bad --verify-blocks.
  std::ostringstream out4, err4;
  EXPECT_EQ(schedule_command({.file = file, .arch = "a100", .verify = true, .verify_blocks = "some"}, out4, err4), 1);
  EXPECT_NE(err4.str().find("--verify-blocks must be auto, all or a positive number of blocks per grid axis, got 'some'"),
            std::string::npos)
      << err4.str();
}

TEST(ScheduleCommand, SpecializeSchedulesForTheSizesAndVerifies) {
  std::string file = write_temp("scale.py", R"(
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(2)
)");
  std::ostringstream out, err;
  ASSERT_EQ(schedule_command({.file = file, .arch = "h100", .verify = true, .dims = {"n=1024"}, .specialize = true},
                             out, err),
            0)
      << err.str();
  std::string text = out.str();
  EXPECT_EQ(text.find("T.int32()"), std::string::npos) << text;  // n is a constant now
  EXPECT_NE(text.find("1024"), std::string::npos) << text;
  EXPECT_NE(text.find("# verify: B: ok"), std::string::npos) << text;
  std::ostringstream out2, err2;
  EXPECT_EQ(schedule_command({.file = file, .arch = "h100", .specialize = true}, out2, err2), 1);
  EXPECT_NE(err2.str().find("--specialize needs the sizes"), std::string::npos) << err2.str();
  std::ostringstream out3, err3;
  EXPECT_EQ(schedule_command({.file = file, .arch = "h100", .dims = {"m=4"}, .specialize = true}, out3, err3), 1);
  EXPECT_NE(err3.str().find("--dim m=4: 'main' has no symbolic size or scalar parameter named 'm' (it has n)"),
            std::string::npos)
      << err3.str();
}

TEST(ScheduleCommand, NamedRuleAndConfigErrorsExitOne) {
  std::string file = write_temp("add.py", kAdd);
  auto run = [&](ScheduleCommandOptions o) {
    o.file = file;
    o.arch = "h100";
    std::ostringstream out, err;
    int rc = schedule_command(o, out, err);
    return std::pair{rc, err.str()};
  };
  auto [rc1, e1] = run({.rule = "nope"});
  EXPECT_EQ(rc1, 1);
  EXPECT_NE(e1.find("unknown rule 'nope' (rules: "), std::string::npos) << e1;
  EXPECT_NE(e1.find("elementwise, "), std::string::npos) << e1;
  auto [rc2, e2] = run({.rule = "elementwise", .config = "{\"rule\": \"elementwise\", \"threads\": 64}"});
  EXPECT_EQ(rc2, 1);
  EXPECT_NE(e2.find("elementwise config: missing the field 'vector'"), std::string::npos) << e2;
  auto [rc3, e3] = run({.rule = "elementwise", .config = "{threads"});
  EXPECT_EQ(rc3, 1);
  EXPECT_NE(e3.find("--config is not valid JSON"), std::string::npos) << e3;
  auto [rc4, e4] = run({.config = "{}"});
  EXPECT_EQ(rc4, 1);
  EXPECT_NE(e4.find("--config needs --rule"), std::string::npos) << e4;
  auto [rc5, e5] = run({.rule = "fallback",
                        .config = "{\"rule\": \"fallback\", \"threads\": 32}"});
  EXPECT_EQ(rc5, 0) << e5;
}

TEST(DevicesCommand, ListsDevicesOrSaysWhyNone) {
  std::ostringstream out, err;
  ASSERT_EQ(devices_command(out, err), 0) << err.str();
  EXPECT_TRUE(err.str().empty()) << err.str();
  std::string text = out.str();
  bool none = text.rfind("no CUDA device: ", 0) == 0;
  EXPECT_TRUE(none || text.rfind("CUDA driver", 0) == 0) << text;
  EXPECT_NE(text.find("NVRTC"), std::string::npos) << text;
  if (!none) {
    EXPECT_NE(text.find("0: "), std::string::npos) << text;
  }
}

const char *kScaledAdd = R"(@T.prim_func
def scaled(A: T.Buffer((1000,), "float32"), B: T.Buffer((1000,), "float32")):
    for i_0 in T.thread_binding(8, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(1000, i_0 * 128 + i_1)
                T.where(i_0 * 128 + i_1 < 1000)
                B[vi] = A[vi] * T.float32(2) + T.float32(1)
)";

TEST(CompileCommand, ReportsEachArchAndWritesSourceAndCubins) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "built without NVRTC";
  std::string file = write_temp("scaled.py", kScaledAdd);
  fs::path dir = fs::path(file).parent_path() / "out";
  std::ostringstream out, err;
  ASSERT_EQ(compile_command({.file = file, .archs = "sm_80,sm_90", .output_dir = dir.string()}, out, err), 0)
      << err.str();
  std::string text = out.str();
  EXPECT_NE(text.find("sm_80: scaled_kernel compiled in "), std::string::npos) << text;
  EXPECT_NE(text.find("sm_90: scaled_kernel compiled in "), std::string::npos) << text;
  EXPECT_NE(text.find(" registers, 0 bytes shared (static 0, dynamic 0), 0 bytes spilled"), std::string::npos)
      << text;
  EXPECT_TRUE(fs::exists(dir / "scaled_kernel.cu"));
  EXPECT_GT(fs::file_size(dir / "scaled_kernel.sm_80.cubin"), 0u);
  EXPECT_GT(fs::file_size(dir / "scaled_kernel.sm_90.cubin"), 0u);
}

// A GPU preset, as the other commands' --arch takes it, is its sm_XX.
TEST(CompileCommand, AGpuPresetNamesItsArchitecture) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "built without NVRTC";
  std::string file = write_temp("scaled.py", kScaledAdd);
  std::ostringstream out, err;
  ASSERT_EQ(compile_command({.file = file, .archs = "h100,a100"}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("sm_90: scaled_kernel compiled in "), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("sm_80: scaled_kernel compiled in "), std::string::npos) << out.str();
}

// With cuobjdump, every kernel's resource line is followed by its SASS
// summary, and -o also writes the listing (runtime/Sass.h).
TEST(CompileCommand, PrintsASassSummaryLineWhenCuobjdumpIsFound) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "built without NVRTC";
  if (!runtime::find_disassembler()) GTEST_SKIP() << runtime::kNoDisassemblerHint;
  std::string file = std::string(TESSERA_TEST_DATA_DIR) + "/codegen/kernels/vector_copy_f16.py";
  fs::path dir = fs::path(write_temp("unused", "")).parent_path() / "out";
  std::ostringstream out, err;
  ASSERT_EQ(compile_command({.file = file, .archs = "sm_80,sm_90", .output_dir = dir.string()}, out, err), 0)
      << err.str();
  std::string text = out.str();
  // One 16-byte load and one 16-byte store per thread, for both archs.
  const std::string line = "\n  sass: global ld 16B x1 | st 16B x1 | shared 0 | local 0 | mma 0 | FMA 0\n";
  size_t first = text.find(line);
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_NE(text.find(line, first + 1), std::string::npos) << text;
  EXPECT_EQ(text.find(runtime::kNoDisassemblerHint), std::string::npos) << text;
  std::ifstream sass(dir / "main_kernel.sm_90.sass");
  std::stringstream listing;
  listing << sass.rdbuf();
  EXPECT_NE(listing.str().find("Function : main_kernel"), std::string::npos);
  EXPECT_NE(listing.str().find("STG.E.128"), std::string::npos);
}

// Without one the command still succeeds and says once how to get it.
TEST(CompileCommand, WithoutCuobjdumpNoSassLineAndTheHintOnce) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "built without NVRTC";
  const char *saved = std::getenv("TESSERA_CUOBJDUMP");
  std::string keep = saved ? saved : "";
  setenv("TESSERA_CUOBJDUMP", "/nonexistent/cuobjdump", 1);
  std::string file = write_temp("scaled.py", kScaledAdd);
  std::ostringstream out, err;
  int status = compile_command({.file = file, .archs = "sm_80,sm_90"}, out, err);
  if (saved) setenv("TESSERA_CUOBJDUMP", keep.c_str(), 1);
  else unsetenv("TESSERA_CUOBJDUMP");
  ASSERT_EQ(status, 0) << err.str();
  std::string text = out.str();
  size_t hint = text.find(runtime::kNoDisassemblerHint);
  ASSERT_NE(hint, std::string::npos) << text;
  EXPECT_EQ(text.find(runtime::kNoDisassemblerHint, hint + 1), std::string::npos) << "said more than once: " << text;
  EXPECT_EQ(text.find("sass:"), std::string::npos) << text;
}

TEST(CompileCommand, LoweringAndArchErrorsExitOne) {
  std::string file = write_temp("scaled.py", kScaledAdd);
  std::ostringstream out, err;
  EXPECT_EQ(compile_command({.file = file, .archs = "sm_9"}, out, err), 1);
  EXPECT_NE(err.str().find("error: malformed architecture 'sm_9'"), std::string::npos) << err.str();
  // Not sm_XX and not a GPU preset: both forms named, and the presets listed.
  std::ostringstream out1, err1;
  EXPECT_EQ(compile_command({.file = file, .archs = "sm9"}, out1, err1), 1);
  EXPECT_NE(err1.str().find("--arch: 'sm9' is neither sm_XX (e.g. sm_90) nor a GPU preset: unknown GPU 'sm9'; known:"),
            std::string::npos)
      << err1.str();
  // An allocation in global scope has no kernel form.
  std::string bad = write_temp("bad.py", R"(@T.prim_func
def bad(A: T.Buffer((8,), "float32")):
    for i in T.thread_binding(8, thread="threadIdx.x"):
        with T.block("A"):
            vi = T.axis.spatial(8, i)
            G = T.alloc_buffer((8,), "float32")
            G[vi] = T.float32(1)
            A[vi] = G[vi]
)");
  std::ostringstream out2, err2;
  EXPECT_EQ(compile_command({.file = bad}, out2, err2), 1);
  EXPECT_NE(err2.str().find("error: "), std::string::npos) << err2.str();
  EXPECT_NE(err2.str().find("'G'"), std::string::npos) << err2.str();
}

TEST(RunCommand, OnCudaMatchesTheInterpreterOrSaysThereIsNoDevice) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "built without NVRTC";
  std::string file = write_temp("scaled.py", kScaledAdd);
  std::ostringstream out, err;
  int rc = run_command({.file = file, .device = "cuda", .time = true}, out, err);
  if (runtime_has_no_device(err.str())) {
    EXPECT_EQ(rc, 1);
    return;
  }
  ASSERT_EQ(rc, 0) << err.str();
  std::string text = out.str();
  EXPECT_NE(text.find("B float32[1000] l2="), std::string::npos) << text;
  EXPECT_NE(text.find("# check: B: ok, worst B["), std::string::npos) << text;
  EXPECT_NE(text.find("): ok"), std::string::npos) << text;
  EXPECT_NE(text.find("# time: scaled_kernel median "), std::string::npos) << text;
}

TEST(RunCommand, DeviceMustBeABackendAndTimeNeedsACompiledOne) {
  std::string file = write_temp("scaled.py", kScaledAdd);
  std::ostringstream out, err;
  EXPECT_EQ(run_command({.file = file, .device = "tpu"}, out, err), 1);
  EXPECT_NE(err.str().find("--device: unknown backend 'tpu' (backends: interpreter, llvm, cuda)"), std::string::npos) << err.str();
  std::ostringstream out2, err2;
  EXPECT_EQ(run_command({.file = file, .time = true}, out2, err2), 1);
  EXPECT_NE(err2.str().find("--time needs --device llvm or cuda"), std::string::npos) << err2.str();
  std::ostringstream out3, err3;
  EXPECT_EQ(run_command({.file = file, .device = "llvm", .arch = "sm_90"}, out3, err3), 1);
  EXPECT_NE(err3.str().find("--arch needs --device cuda"), std::string::npos) << err3.str();
}

TEST(ScheduleCommand, TheCpuTargetTilesAMatmulAndVerifiesIt) {
  std::string file = write_temp("mm.py", R"(@T.prim_func
def main(A: T.Buffer((24, 40), "float32"), B: T.Buffer((40, 70), "float32"), C: T.Buffer((24, 70), "float32")):
    for i, j, k in T.grid(24, 70, 40):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
  std::ostringstream out, err;
  ASSERT_EQ(schedule_command({.file = file, .config = R"({"tile_m":8,"tile_n":16})", .verify = true,
                              .target = "cpu", .cpu = "ci"},
                             out, err),
            0)
      << err.str();
  EXPECT_NE(out.str().find("T.parallel("), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("T.vectorized(16)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("# cpu schedule: matmul {\"tile_m\":8,\"tile_n\":16,\"tile_k\":0}"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("# verify: C: ok"), std::string::npos) << out.str();
  std::ostringstream out2, err2;
  EXPECT_EQ(schedule_command({.file = file, .rule = "matmul", .target = "cpu"}, out2, err2), 1);
  EXPECT_NE(err2.str().find("--rule chooses a GPU rule"), std::string::npos) << err2.str();
}

TEST(ScheduleCommand, ALoopConfigSchedulesAReductionForTheCpu) {
  std::string file = write_temp("cpu_colsum.py", R"(@T.prim_func
def main(A: T.Buffer((40, 300), "float32"), B: T.Buffer((300,), "float32")):
    for j, k in T.grid(300, 40):
        with T.block("B"):
            v_j, v_k = T.axis.remap("SR", [j, k])
            with T.init():
                B[v_j] = T.float32(0)
            B[v_j] = B[v_j] + A[v_k, v_j]
)");
  std::ostringstream out, err;
  ASSERT_EQ(schedule_command({.file = file, .config = R"({"loops": "reduce_outer", "tile": 64})", .verify = true,
                              .target = "cpu", .cpu = "ci"},
                             out, err),
            0)
      << err.str();
  EXPECT_NE(out.str().find("# cpu schedule: loops {\"loops\":\"reduce_outer\",\"tile\":64}"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("T.vectorized(64)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("# verify: B: ok"), std::string::npos) << out.str();
  std::ostringstream out2, err2;
  EXPECT_EQ(schedule_command({.file = file, .config = R"({"loops": "rfactor", "tile": 16})", .target = "cpu"}, out2,
                             err2),
            1);
  EXPECT_NE(err2.str().find("rfactor would leave partial results uninitialised"), std::string::npos) << err2.str();
}

TEST(ScheduleCommand, AFunctionForTheCpuGetsTheCpuTarget) {
  // As TVM's dlight tests print a CPU function: its target attribute
  // chooses the CPU target unless --target gpu says otherwise.
  std::string file = write_temp("cpu_func.py", R"(@T.prim_func
def cpu_func(A: T.Buffer((1, 32, 1, 128), "float16"), C: T.Buffer((1, 1, 4096), "float16")):
    T.func_attr({"target": T.target("llvm")})
    B = T.alloc_buffer((1, 1, 32, 128), "float16")
    for i, j, k, l in T.grid(1, 1, 32, 128):
        with T.block("T_transpose"):
            vi, vj, vk, vl = T.axis.remap("SSSS", [i, j, k, l])
            B[vi, vj, vk, vl] = A[vi, vk, vj, vl]
    for i, j, k in T.grid(1, 1, 4096):
        with T.block("T_reshape"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            C[vi, vj, vk] = B[0, 0, vk % 4096 // 128, vk % 128]
)");
  std::ostringstream out, err;
  ASSERT_EQ(schedule_command({.file = file, .verify = true}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("# target: cpu ("), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("# verify: C: ok"), std::string::npos) << out.str();
  std::ostringstream out2, err2;
  EXPECT_EQ(schedule_command({.file = file, .target = "gpu"}, out2, err2), 1);
  EXPECT_NE(err2.str().find("is for target 'llvm'"), std::string::npos) << err2.str();
}

TEST(RunCommand, TheLlvmBackendIsCheckedAndTimed) {
  if (!runtime::llvm_jit_available()) GTEST_SKIP() << "built without LLVM";
  std::string file = write_temp("scaled.py", kScaledAdd);
  std::ostringstream cpu, cpu_err, out, err;
  ASSERT_EQ(run_command({.file = file, .seed = 3}, cpu, cpu_err), 0) << cpu_err.str();
  ASSERT_EQ(run_command({.file = file, .seed = 3, .device = "llvm", .time = true}, out, err), 0)
      << err.str();
  // The same summaries as the interpreter's (the same bits), then the check
  // against the float64 reference and the time.
  EXPECT_EQ(out.str().rfind(cpu.str(), 0), 0u) << out.str() << "\nvs\n" << cpu.str();
  EXPECT_NE(out.str().find("# check: B: ok"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("# time: llvm median "), std::string::npos) << out.str();
}

TEST(CodegenCommand, ArchErrorsExitOneWithAMessage) {
  std::string path = write_temp("kernel.py", R"(@T.prim_func
def main(A: T.Buffer((256,), "float32")):
    for tx in T.thread_binding(256, thread="threadIdx.x"):
        with T.block("tile"):
            vtx = T.axis.remap("S", [tx])
            S = T.alloc_buffer((32768,), "float32", scope="shared")
            S[vtx] = A[vtx]
            A[vtx] = S[255 - vtx]
)");
  std::ostringstream out, err;
  EXPECT_EQ(codegen_command({.file = path, .arch = "sm_90"}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("dynamic shared memory 131072 bytes"), std::string::npos) << out.str();
  for (auto [arch, message] : {std::pair{"sm_70", "error: unknown CUDA architecture 'sm_70'"},
                               std::pair{"sm90", "error: malformed CUDA architecture 'sm90'"},
                               std::pair{"sm_86", "error: kernel 'main_kernel' uses 131072 bytes of shared memory"}}) {
    std::ostringstream out2, err2;
    EXPECT_EQ(codegen_command({.file = path, .arch = arch}, out2, err2), 1) << arch;
    EXPECT_EQ(err2.str().rfind(message, 0), 0u) << err2.str();
    EXPECT_TRUE(out2.str().empty()) << out2.str();
  }
}

}  // namespace
}  // namespace tessera::cli
