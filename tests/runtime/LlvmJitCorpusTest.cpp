//===- LlvmJitCorpusTest.cpp - The LLVM JIT equals the interpreter ---------===//
//
// Issue 17, point 5: every program of tests/corpus, the workloads, the
// long-tail examples, examples/ and the golden kernels of tests/codegen
// and tests/codegen/hopper (hand-scheduled: ldmatrix, mma.sync, cp.async
// pipelines, wgmma, TMA copies and mbarriers), at small sizes (symbolic dims bound to 1,
// 7 and 33), runs through the interpreter and through the LLVM JIT on the same
// random inputs: every argument is bit for bit the same afterwards (integers
// and floats alike, a NaN for a NaN: the JIT computes what the interpreter
// computes), or both
// fail with the same message. The same for the float64 reference program of
// the verification bound (runtime/Verify.h) and for the program scheduled by
// the default rule for an H100 (serial semantics: thread-bound loops run as
// loops). Programs the JIT refuses (warp-level statements) must say so with a
// JitUnsupportedError, and only those.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "tessera/arch/Arch.h"
#include "tessera/rules/Rule.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/runtime/Verify.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"
#include "tessera/support/DataPaths.h"
#include "tessera/tune/Reference.h"

namespace tessera::runtime {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> programs() {
  std::vector<std::string> out;
  for (const fs::path &dir : {support::data_root() / "tests" / "corpus", support::data_root() / "workloads",
                              support::data_root() / "examples", support::data_root() / "workloads" / "longtail",
                              support::data_root() / "tests" / "codegen" / "kernels",
                              support::data_root() / "tests" / "codegen" / "hopper"}) {
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".py") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// What one executor left: the arguments, or the error message.
struct Outcome {
  std::vector<NDArray> args;
  std::string error;
};

template <typename Run>
Outcome run_on(const std::vector<NDArray> &inputs, Run run) {
  Outcome o;
  o.args = inputs;
  try {
    run(o.args);
  } catch (const InterpretError &e) {
    o.error = e.what();
  }
  return o;
}

/// Interpreter and JIT on the same inputs: the same bits or the same error.
/// Returns false when the JIT refused the program.
bool expect_same(const ir::PrimFunc &f, const std::vector<NDArray> &inputs, const std::string &what) {
  SCOPED_TRACE(what);
  // What the interpreter refuses to compile, the JIT refuses with the same error.
  std::string refused;
  try {
    Interpreter check(f);
  } catch (const InterpretError &e) {
    refused = e.what();
  }
  if (!refused.empty()) {
    try {
      LlvmJit jit(f);
      ADD_FAILURE() << "the JIT compiled what the interpreter refuses: " << refused;
    } catch (const InterpretError &e) {
      EXPECT_EQ(std::string(e.what()), refused);
    }
    return false;
  }
  std::optional<LlvmJit> jit;
  try {
    jit.emplace(f);
  } catch (const JitUnsupportedError &e) {
    EXPECT_NE(std::string(e.what()).find("the LLVM JIT cannot compile T."), std::string::npos) << e.what();
    return false;
  }
  Outcome want = run_on(inputs, [&](std::vector<NDArray> &a) { interpret(f, a); });
  Outcome got = run_on(inputs, [&](std::vector<NDArray> &a) {
    std::vector<NDArray *> p;
    for (NDArray &x : a) p.push_back(&x);
    jit->run(p);
  });
  EXPECT_EQ(got.error, want.error);
  if (!want.error.empty() || !got.error.empty()) return true;
  for (size_t i = 0; i < want.args.size(); ++i) {
    const NDArray &w = want.args[i], &g = got.args[i];
    EXPECT_EQ(w.nbytes(), g.nbytes());
    if (w.nbytes() != g.nbytes()) continue;
    if (std::memcmp(w.data(), g.data(), w.nbytes()) == 0) continue;
    // The first element that differs, a NaN matching a NaN (payloads are not
    // part of the contract, LlvmJit.h).
    int64_t first = 0;
    size_t eb = size_t(w.dtype().bytes());
    auto same = [&](int64_t k) {
      if (std::memcmp(w.data() + k * eb, g.data() + k * eb, eb) == 0) return true;
      return w.dtype().is_float() && std::isnan(w.get(k)) && std::isnan(g.get(k));
    };
    while (first < w.numel() && same(first)) ++first;
    if (first == w.numel()) continue;
    auto show = [&](const NDArray &a) {
      std::ostringstream os;
      if (a.dtype().is_float())
        os << std::hexfloat << a.get(first);
      else
        os << a.get_int(first);
      return os.str();
    };
    ADD_FAILURE() << "argument " << i << " differs first at element " << first << ": interpreter " << show(w)
                  << ", JIT " << show(g) << " in\n"
                  << script::print(f);
  }
  return true;
}

class LlvmJitCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(LlvmJitCorpus, SameBitsAsTheInterpreter) {
  const std::string &file = GetParam();
  ir::Module m = script::parse_file(file);
  const Arch arch = Arch::by_name("h100");
  int compiled = 0;
  for (const ir::PrimFunc &f : m.funcs) {
    std::vector<std::string> symbols;
    for (const ir::Var &v : f.shape_vars()) symbols.push_back(v.name());
    for (int64_t n : {1, 7, 33}) {
      DimBindings dims;
      for (const std::string &s : symbols) dims[s] = n;
      std::string what = f.name() + " n=" + std::to_string(n);
      // Full-size workloads with constant shapes are too slow to interpret here.
      if (tuning::loop_iterations(f, dims) > (int64_t(1) << 21)) break;
      std::vector<NDArray> inputs;
      try {
        inputs = make_random_args(f, dims, 17);
      } catch (const InterpretError &) {
        break;  // e.g. a dimension that is negative at this size
      }
      compiled += expect_same(f, inputs, what + " (program)");
      // The float64 reference program, on the widened inputs.
      // (None for a hand-scheduled kernel with warp-level statements.)
      std::optional<ReferenceProgram> ref;
      try {
        ref = make_reference_program(f);
      } catch (const UserError &e) {
        EXPECT_NE(std::string(e.what()).find("give the unscheduled program"), std::string::npos) << e.what();
      }
      if (ref) compiled += expect_same(ref->func, reference_args(*ref, f, inputs), what + " (reference program)");
      // Scheduled by the default rule (one config) when a rule applies.
      try {
        rules::DefaultSchedule s = rules::apply_default_schedule(f, arch);
        if (!s.rule.empty()) compiled += expect_same(s.func, inputs, what + " (scheduled by " + s.rule + ")");
      } catch (const UserError &) {
        // No rule for it: nothing scheduled to compare.
      }
      if (symbols.empty()) break;
    }
  }
  SUCCEED() << compiled << " programs compiled";
}

INSTANTIATE_TEST_SUITE_P(Corpus, LlvmJitCorpus, ::testing::ValuesIn(programs()), [](const auto &info) {
  std::string name = fs::path(info.param).parent_path().filename().string() + "_" + fs::path(info.param).stem().string();
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
});

/// The corpus is really there (a missing directory would make the suite vacuous).
TEST(LlvmJitCorpusSize, FindsThePrograms) { EXPECT_GE(programs().size(), 60u); }

}  // namespace
}  // namespace tessera::runtime
