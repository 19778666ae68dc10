//===- tests/rules/VectorWidthSassTest.cpp - Vector widths in the machine code ===//
//
// A config's `vector` must survive to the SASS that the GPU runs: for every
// memory-bound workload of the corpus at its full size, the policy's top-3
// configs and the default one are scheduled, compiled by NVRTC for sm_90 and
// disassembled (runtime/Sass.h), and
//   - nothing goes through local memory (no LDL/STL: no spills, no local
//     arrays indexed at run time);
//   - the widest global load is min(16, vector x element bytes) (the int4
//     gemv: its packed words, 8 weights in 4 bytes);
//   - for the rules whose stores run along the vectorized axis too
//     (elementwise, tiled transposes, general reductions) so is the widest
//     global store;
//   - narrower global loads (a per-group scale, a row's single value) are
//     at most as many as the full-width ones.
// Then, table-driven, a copy of each dtype at each width its bytes allow.
// Label nvrtc; skips itself without NVRTC or without cuobjdump (./dev.sh
// installs NVIDIA's wheel of it).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "RuleTestUtil.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/policies/Policy.h"
#include "tessera/rules/Elementwise.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/runtime/Sass.h"
#include "tessera/script/Parser.h"

namespace tessera::test {
namespace {

/// Bytes per element along each workload's vectorized axis (the int4 gemv:
/// half a byte, packed eight to a 4-byte word).
const std::map<std::string, double> kElementBytes = {
    {"copy_f16", 2},       {"add_f16", 2},        {"transpose_f32", 4}, {"reduce_sum_f32", 4},
    {"reduce_max_f16", 2}, {"reduce_sum_outer_f32", 4}, {"softmax_f16", 2}, {"rmsnorm_f16", 2},
    {"layernorm_f16", 2},  {"gemv_f16", 2},       {"gemv_int4", 0.5},
};

/// The rules whose global stores run along the vectorized axis.
bool stores_vectorized(const std::string &rule) { return rule == "elementwise" || rule == "general_reduction"; }

/// Scheduled functions compiled for sm_90 and their SASS, read for all of
/// them at once (runtime::summarise_cubins: a disassembler run costs more
/// than a compile, so the cubins share runs).
class SassOfMany {
 public:
  /// Compiles `scheduled`; its summary is slot `add`'s return value.
  size_t add(const ir::PrimFunc &scheduled) {
    fns_.push_back(runtime::CudaFunction::build(scheduled, {.arch = "sm_90"}));
    return fns_.size() - 1;
  }
  /// Every function's summary, all its kernels' counts together.
  std::vector<runtime::SassSummary> read(const std::filesystem::path &tool) const {
    std::vector<const std::vector<uint8_t> *> cubins;
    std::vector<size_t> owner;
    for (size_t i = 0; i < fns_.size(); ++i)
      for (const runtime::CompiledKernel &k : fns_[i].kernels()) {
        cubins.push_back(&k.compiled.cubin);
        owner.push_back(i);
      }
    std::vector<runtime::SassSummary> out(fns_.size());
    std::vector<runtime::CubinSass> sass = runtime::summarise_cubins(cubins, "sm_90", tool);
    for (size_t c = 0; c < sass.size(); ++c) {
      EXPECT_EQ(sass[c].error, "");
      for (const runtime::SassSummary &s : sass[c].functions) out[owner[c]] += s;
    }
    return out;
  }

 private:
  std::vector<runtime::CudaFunction> fns_;
};

int64_t count(const runtime::WidthCounts &c, const std::function<bool(int)> &width_ok) {
  int64_t n = 0;
  for (const auto &[width, k] : c)
    if (width_ok(width)) n += k;
  return n;
}

std::optional<std::filesystem::path> tool_or_skip_reason(std::string &why) {
  if (!runtime::nvrtc_available()) {
    why = "NVRTC is not available";
    return std::nullopt;
  }
  std::optional<std::filesystem::path> tool = runtime::find_disassembler();
  if (!tool) why = std::string(runtime::kNoDisassemblerHint);
  return tool;
}

void expect_widths(const std::string &what, const runtime::SassSummary &s, int expected, bool stores) {
  SCOPED_TRACE(what + ": " + s.str());
  EXPECT_EQ(s.local_loads + s.local_stores, 0) << "local memory traffic";
  EXPECT_EQ(s.widest_global_load(), expected);
  if (stores) EXPECT_EQ(s.widest_global_store(), expected);
  int64_t wide = count(s.global_loads, [&](int w) { return w == expected; });
  int64_t narrow = count(s.global_loads, [&](int w) { return w < expected; });
  EXPECT_LE(narrow, wide) << "more narrow global loads than " << expected << "-byte ones";
}

TEST(VectorWidthSass, PolicyTopThreeAndDefaultsKeepTheirWidthsAtFullSize) {
  std::string why;
  std::optional<std::filesystem::path> tool = tool_or_skip_reason(why);
  if (!tool) GTEST_SKIP() << why;
  const Arch arch = Arch::by_name("h100");
  struct Expected {
    std::string what;
    int bytes;
    bool stores;
  };
  std::vector<Expected> expected;
  SassOfMany many;
  for (const Entry &e : workload_entries()) {
    auto bytes = kElementBytes.find(e.name);
    if (bytes == kElementBytes.end()) continue;  // compute-bound: matmuls, conv2d
    SCOPED_TRACE(e.name);
    ir::PrimFunc f = analysis::specialize(load_func(e), e.specialized(e.full));
    rules::DefaultSchedule d = rules::apply_default_schedule(f, arch);
    const rules::Rule *rule = rules::find_rule(d.rule);
    ASSERT_NE(rule, nullptr) << d.rule;
    auto m = rule->match(f, arch);
    ASSERT_TRUE(m) << m.reason();
    policies::ProposeOptions options;
    options.topk = 3;
    policies::Proposal p = policies::propose(f, *rule, **m, arch, options);
    std::vector<std::unique_ptr<rules::Config>> configs;
    for (policies::Candidate &c : p.candidates) configs.push_back(std::move(c.config));
    configs.push_back(rule->default_config(**m, arch));
    for (const std::unique_ptr<rules::Config> &c : configs) {
      rules::Json j = c->to_json();
      int64_t vector = j.contains("vector") ? j["vector"].get<int64_t>() : 1;
      Expected x{e.name + " " + c->str(), int(std::min(16.0, double(vector) * bytes->second)),
                 stores_vectorized(d.rule)};
      try {
        many.add(rule->apply(f, **m, *c).func());
        expected.push_back(x);
      } catch (const UserError &err) {
        ADD_FAILURE() << x.what << ": " << err.what();
      }
    }
  }
  std::vector<runtime::SassSummary> sass = many.read(*tool);
  for (size_t i = 0; i < expected.size(); ++i)
    expect_widths(expected[i].what, sass[i], expected[i].bytes, expected[i].stores);
}

/// `B[i] = A[i]` over `n` elements of `dtype`, vectorized `vector` wide by
/// the elementwise rule.
ir::PrimFunc copy_of(const std::string &dtype, int64_t n) {
  std::string size = std::to_string(n);
  return script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer(()" + size + R"(,), ")" + dtype + R"("), B: T.Buffer(()" + size + R"(,), ")" + dtype + R"(")):
    T.func_attr({"tir.noalias": True})
    for i in range()" + size + R"():
        with T.block("B"):
            v_i = T.axis.spatial()" + size + R"(, i)
            B[v_i] = A[v_i]
)");
}

TEST(VectorWidthSass, EveryDtypeAtEveryWidth) {
  std::string why;
  std::optional<std::filesystem::path> tool = tool_or_skip_reason(why);
  if (!tool) GTEST_SKIP() << why;
  const Arch arch = Arch::by_name("h100");
  const rules::Rule &rule = rules::elementwise_rule();
  std::vector<std::pair<std::string, int>> expected;  // what, bytes
  SassOfMany many;
  for (auto [dtype, bytes] : std::vector<std::pair<std::string, int>>{
           {"float32", 4}, {"float16", 2}, {"bfloat16", 2}, {"int8", 1}, {"uint8", 1}, {"int32", 4}}) {
    ir::PrimFunc f = copy_of(dtype, 1 << 16);
    auto m = rule.match(f, arch);
    ASSERT_TRUE(m) << m.reason();
    for (int64_t vector = 1; vector * bytes <= 16; vector *= 2) {
      auto c = std::unique_ptr<rules::ElementwiseConfig>(
          static_cast<rules::ElementwiseConfig *>(rule.default_config(**m, arch).release()));
      c->vector = vector;
      many.add(rule.apply(f, **m, *c).func());
      expected.emplace_back(dtype + " x" + std::to_string(vector), int(vector) * bytes);
    }
  }
  std::vector<runtime::SassSummary> sass = many.read(*tool);
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto &[what, bytes] = expected[i];
    const runtime::SassSummary &s = sass[i];
    expect_widths(what, s, bytes, true);
    // The copy is nothing but accesses of exactly that width.
    EXPECT_EQ(count(s.global_loads, [&](int w) { return w != bytes; }), 0) << what << ": " << s.str();
    EXPECT_EQ(count(s.global_stores, [&](int w) { return w != bytes; }), 0) << what << ": " << s.str();
  }
}

}  // namespace
}  // namespace tessera::test
