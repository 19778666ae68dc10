//===- tests/analysis/SpecializeTest.cpp - Symbolic shapes to constants -----===//
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tessera/analysis/Specialize.h"
#include "tessera/ir/Verifier.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"

namespace tessera::analysis {
namespace {

ir::PrimFunc load(const std::string &rel) {
  std::ifstream in(std::string(TESSERA_TEST_DATA_DIR) + "/" + rel);
  std::stringstream ss;
  ss << in.rdbuf();
  return script::parse_func(ss.str(), rel);
}

TEST(Specialize, ShapesExtentsAndDomainsBecomeConstants) {
  ir::PrimFunc f = load("codegen/kernels/matmul_tail_f32.py");
  ir::PrimFunc g = specialize(f, {{"m", 70}});
  EXPECT_TRUE(g.shape_vars().empty());
  std::string text = script::print(g);
  EXPECT_NE(text.find("A: T.Buffer((70, 200), \"float32\")"), std::string::npos) << text;
  EXPECT_NE(text.find("T.thread_binding(2, thread=\"blockIdx.y\")"), std::string::npos) << text;
  EXPECT_EQ(text.find("T.int32()"), std::string::npos) << text;
  EXPECT_EQ(text.find(" < m"), std::string::npos) << text;
  EXPECT_NO_THROW(script::parse_func(text, "specialized.py"));
}

TEST(Specialize, GivesTheOriginalsResults) {
  ir::PrimFunc f = load("codegen/kernels/symbolic_elementwise.py");
  ir::PrimFunc g = specialize(f, {{"n", 1000}});
  EXPECT_NE(script::print(g).find("T.thread_binding(4, thread=\"blockIdx.x\")"), std::string::npos);
  std::vector<runtime::NDArray> want = runtime::make_random_args(f, {{"n", 1000}}, 3);
  std::vector<runtime::NDArray> got = want;
  runtime::interpret(f, want);
  runtime::interpret(g, got);
  EXPECT_EQ(runtime::max_rel_error(got[1], want[1]), 0);
}

TEST(Specialize, UnknownNamesNegativeValuesAndNothingToDo) {
  ir::PrimFunc f = load("codegen/kernels/matmul_tail_f32.py");
  try {
    specialize(f, {{"n", 4}});
    FAIL();
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("'n' is not a symbolic shape variable of function 'main' (it has: m)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(specialize(f, {{"m", -1}}), UserError);
  EXPECT_TRUE(specialize(f, {}).same_as(f));
}

}  // namespace
}  // namespace tessera::analysis
