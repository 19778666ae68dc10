//===- CommandsTest.cpp - The `tessera` subcommands ------------------------===//
#include "Commands.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/support/Error.h"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

/// Writes `text` to a fresh file under the test's temp directory.
std::string write_temp(const std::string &name, const std::string &text) {
  fs::path dir = fs::temp_directory_path() / "tessera_cli_test";
  fs::create_directories(dir);
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
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

TEST(RunCommand, UnboundSymbolicDimIsReportedByName) {
  std::string path = write_temp("softmax.py", "");
  fs::copy_file(fs::path(TESSERA_TEST_DATA_DIR) / "../examples/softmax.py", path,
                fs::copy_options::overwrite_existing);
  std::ostringstream out, err;
  EXPECT_EQ(run_command({.file = path, .dims = {}, .seed = 0, .func = ""}, out, err), 1);
  EXPECT_NE(err.str().find("symbolic dimension 'rows'"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("--dim rows=N"), std::string::npos) << err.str();

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

}  // namespace
}  // namespace tessera::cli
