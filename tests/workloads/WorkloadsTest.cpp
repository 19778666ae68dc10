//===- tests/workloads/WorkloadsTest.cpp - The workload corpus is sound -----===//
//
// workloads/workloads.json lists the unscheduled programs the scheduling rules
// are tested and benchmarked on (workloads/README.md). For every entry:
//   - the file parses and verifies, and its symbolic shape variables are
//     exactly the keys of "full" and "small"; specialising the full size
//     leaves exactly the "symbolic" ones;
//   - specialised to its small size it runs in the interpreter on random
//     inputs, every array stays finite, and the output matches a plain C++
//     reference computed in double;
//   - the analysis facts fit the rule the entry names (a matmul block with the
//     expected layout, one reduction with the expected combiner, ...).
// A separate test checks the manifest itself (fields, names, files, sizes).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

#include "Workloads.h"
#include "tessera/analysis/BlockInfo.h"
#include "tessera/analysis/MatmulView.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/ir/Expr.h"
#include "tessera/ir/Verifier.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"
#include "tessera/script/Parser.h"
#include "tessera/support/Half.h"

namespace tessera {
namespace {

using analysis::Combiner;
using analysis::FuncInfo;
using nlohmann::json;
using runtime::NDArray;
using test::Entry;
using test::Sizes;
using test::load_func;
using test::load_manifest;
using test::prepare_inputs;
using Arrays = std::vector<NDArray>;

const std::set<std::string> kRules = {"elementwise", "reduction", "general_reduction", "gemv",
                                      "matmul",      "conv2d",    "fallback",          "transpose",
                                      "matmul_tensor_core"};
const std::set<std::string> kLongTail = {"if_nest", "inplace", "nonzero_start", "prefix_sum"};
/// The entries that keep shape variables symbolic when compiled (all others: none).
const std::map<std::string, std::vector<std::string>> kKeptSymbolic = {{"bmm_symbolic_m_f16", {"m"}}};
constexpr uint64_t kSeed = 2024;

//===----------------------------------------------------------------------===//
// The manifest
//===----------------------------------------------------------------------===//

/// [a-z0-9_]+: a valid gtest parameter name.
bool is_identifier(const std::string &s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

/// The entries to instantiate the per-workload tests with: none when the
/// manifest cannot be read, one per valid name (WorkloadManifest reports the
/// rest).
std::vector<Entry> entries_for_tests() {
  std::vector<Entry> out;
  try {
    std::set<std::string> seen;
    for (Entry &e : load_manifest())
      if (is_identifier(e.name) && seen.insert(e.name).second) out.push_back(std::move(e));
  } catch (const std::exception &) {
  }
  return out;
}

template <typename Map>
std::vector<std::string> keys(const Map &m) {
  std::vector<std::string> out;
  for (const auto &[k, v] : m) out.push_back(k);
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> shape_var_names(const ir::PrimFunc &f) {
  std::vector<std::string> out;
  for (const ir::Var &v : f.shape_vars()) out.push_back(v.name());
  return sorted(out);
}

//===----------------------------------------------------------------------===//
// References: the output (last parameter) computed in double from the inputs
//===----------------------------------------------------------------------===//

/// Row-major flat index of `idx` in `a`.
int64_t flat(const NDArray &a, std::initializer_list<int64_t> idx) {
  int64_t f = 0;
  size_t d = 0;
  for (int64_t i : idx) f = f * a.shape()[d++] + i;
  return f;
}
double at(const NDArray &a, std::initializer_list<int64_t> idx) {
  return a.get(flat(a, idx));
}
NDArray result_like(const NDArray &a) {
  return NDArray(ir::DataType::float64(), a.shape());
}

/// C[.., i, j] = sum_r A[.., i, r] * B[.., r, j] (B[.., j, r] when `b_is_nk`), any batch prefix.
/// `a` with every element rounded to tf32 (what T.round_to_tf32 makes of it).
NDArray tf32_rounded(const NDArray &a) {
  NDArray r = a;
  for (int64_t i = 0; i < r.numel(); ++i) r.set(i, round_to_tf32(static_cast<float>(r.get(i))));
  return r;
}

NDArray matmul(const NDArray &a, const NDArray &b, bool b_is_nk) {
  const auto &as = a.shape();
  const size_t rank = as.size();
  const int64_t m = as[rank - 2], k = as[rank - 1];
  const int64_t n = b_is_nk ? b.shape()[rank - 2] : b.shape()[rank - 1];
  const int64_t batch = a.numel() / (m * k);
  std::vector<int64_t> shape(as.begin(), as.end() - 1);
  shape.push_back(n);
  NDArray c(ir::DataType::float64(), shape);
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t r = 0; r < k; ++r)
          s += a.get((p * m + i) * k + r) * b.get(b_is_nk ? (p * n + j) * k + r : (p * k + r) * n + j);
        c.set((p * m + i) * n + j, s);
      }
  return c;
}

/// The row-wise reference of softmax/rmsnorm/layernorm: `row` maps one input
/// row to the output row.
NDArray per_row(const NDArray &a,
                const std::function<std::vector<double>(const std::vector<double> &, int64_t)> &row) {
  NDArray out = result_like(a);
  const int64_t rows = a.shape()[0], cols = a.shape()[1];
  for (int64_t i = 0; i < rows; ++i) {
    std::vector<double> x(cols);
    for (int64_t j = 0; j < cols; ++j) x[j] = at(a, {i, j});
    std::vector<double> y = row(x, i);
    for (int64_t j = 0; j < cols; ++j) out.set(flat(out, {i, j}), y[j]);
  }
  return out;
}

double mean(const std::vector<double> &x) {
  double s = 0;
  for (double v : x) s += v;
  return s / static_cast<double>(x.size());
}

/// `v` rounded to `dtype` (for references whose definition is a sequence of
/// operations in a narrow type).
double round_to(ir::DataType dtype, double v) {
  NDArray one(dtype, {});
  one.set(0, v);
  return one.get(0);
}

using Reference = std::function<NDArray(const Arrays &in)>;

const std::map<std::string, Reference> &references() {
  static const std::map<std::string, Reference> table = {
      {"copy_f16", [](const Arrays &in) { return in[0]; }},
      {"add_f16",
       [](const Arrays &in) {
         NDArray c = result_like(in[2]);
         for (int64_t i = 0; i < c.shape()[0]; ++i)
           for (int64_t j = 0; j < c.shape()[1]; ++j)
             c.set(flat(c, {i, j}), at(in[0], {i, j}) + in[1].get(j));
         return c;
       }},
      {"transpose_f32",
       [](const Arrays &in) {
         NDArray b = result_like(in[1]);
         for (int64_t i = 0; i < in[0].shape()[0]; ++i)
           for (int64_t j = 0; j < in[0].shape()[1]; ++j) b.set(flat(b, {j, i}), at(in[0], {i, j}));
         return b;
       }},
      {"reduce_sum_f32",
       [](const Arrays &in) {
         NDArray b = result_like(in[1]);
         for (int64_t i = 0; i < in[0].shape()[0]; ++i) {
           double s = 0;
           for (int64_t k = 0; k < in[0].shape()[1]; ++k) s += at(in[0], {i, k});
           b.set(i, s);
         }
         return b;
       }},
      {"reduce_max_f16",
       [](const Arrays &in) {
         NDArray b = result_like(in[1]);
         for (int64_t i = 0; i < in[0].shape()[0]; ++i) {
           double s = -INFINITY;
           for (int64_t k = 0; k < in[0].shape()[1]; ++k) s = std::max(s, at(in[0], {i, k}));
           b.set(i, s);
         }
         return b;
       }},
      {"reduce_sum_outer_f32",
       [](const Arrays &in) {
         NDArray b = result_like(in[1]);
         for (int64_t j = 0; j < in[0].shape()[1]; ++j) {
           double s = 0;
           for (int64_t k = 0; k < in[0].shape()[0]; ++k) s += at(in[0], {k, j});
           b.set(j, s);
         }
         return b;
       }},
      {"softmax_f16",
       [](const Arrays &in) {
         return per_row(in[0], [](const std::vector<double> &x, int64_t) {
           double mx = *std::max_element(x.begin(), x.end()), sum = 0;
           std::vector<double> y;
           for (double v : x) sum += std::exp(v - mx);
           for (double v : x) y.push_back(std::exp(v - mx) / sum);
           return y;
         });
       }},
      {"rmsnorm_f16",
       [](const Arrays &in) {
         const NDArray &weight = in[1];
         return per_row(in[0], [&](const std::vector<double> &x, int64_t) {
           std::vector<double> sq, y;
           for (double v : x) sq.push_back(v * v);
           double inv_rms = 1 / std::sqrt(mean(sq) + 1e-6);
           for (size_t j = 0; j < x.size(); ++j) y.push_back(x[j] * inv_rms * weight.get(j));
           return y;
         });
       }},
      {"layernorm_f16",
       [](const Arrays &in) {
         const NDArray &gamma = in[1], &beta = in[2];
         return per_row(in[0], [&](const std::vector<double> &x, int64_t) {
           double mu = mean(x);
           std::vector<double> dev, y;
           for (double v : x) dev.push_back((v - mu) * (v - mu));
           double inv_std = 1 / std::sqrt(mean(dev) + 1e-5);
           for (size_t j = 0; j < x.size(); ++j)
             y.push_back((x[j] - mu) * inv_std * gamma.get(j) + beta.get(j));
           return y;
         });
       }},
      {"matmul_nn_f16", [](const Arrays &in) { return matmul(in[0], in[1], false); }},
      {"matmul_nn_bf16", [](const Arrays &in) { return matmul(in[0], in[1], false); }},
      {"matmul_nn_tf32", [](const Arrays &in) { return matmul(tf32_rounded(in[0]), tf32_rounded(in[1]), false); }},
      {"matmul_nn_f16_acc16", [](const Arrays &in) { return matmul(in[0], in[1], false); }},
      {"matmul_nt_i8", [](const Arrays &in) { return matmul(in[0], in[1], true); }},
      {"matmul_nt_f16", [](const Arrays &in) { return matmul(in[0], in[1], true); }},
      {"matmul_nn_f32", [](const Arrays &in) { return matmul(in[0], in[1], false); }},
      {"matmul_nt_f32", [](const Arrays &in) { return matmul(in[0], in[1], true); }},
      {"bmm_symbolic_m_f16", [](const Arrays &in) { return matmul(in[0], in[1], false); }},
      {"matmul_bias_relu_f32",
       [](const Arrays &in) {
         NDArray d = matmul(in[0], in[1], false);
         for (int64_t i = 0; i < d.shape()[0]; ++i)
           for (int64_t j = 0; j < d.shape()[1]; ++j)
             d.set(flat(d, {i, j}), std::max(at(d, {i, j}) + in[2].get(j), 0.0));
         return d;
       }},
      {"conv2d_nhwc_f16",
       [](const Arrays &in) {
         const NDArray &x = in[0], &w = in[1];
         NDArray out = result_like(in[2]);
         const auto &s = out.shape();
         const int64_t h = s[1], wd = s[2], ci = x.shape()[3];
         for (int64_t b = 0; b < s[0]; ++b)
           for (int64_t y = 0; y < h; ++y)
             for (int64_t xx = 0; xx < wd; ++xx)
               for (int64_t o = 0; o < s[3]; ++o) {
                 double acc = 0;
                 for (int64_t r = 0; r < 3; ++r)
                   for (int64_t t = 0; t < 3; ++t) {
                     int64_t iy = y + r - 1, ix = xx + t - 1;
                     if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;  // zero padding
                     for (int64_t c = 0; c < ci; ++c) acc += at(x, {b, iy, ix, c}) * at(w, {r, t, c, o});
                   }
                 out.set(flat(out, {b, y, xx, o}), acc);
               }
         return out;
       }},
      {"gemv_f16",
       [](const Arrays &in) {
         NDArray y = result_like(in[2]);
         for (int64_t i = 0; i < y.numel(); ++i) {
           double s = 0;
           for (int64_t k = 0; k < in[1].numel(); ++k) s += at(in[0], {i, k}) * in[1].get(k);
           y.set(i, s);
         }
         return y;
       }},
      {"gemv_int4",
       [](const Arrays &in) {
         const NDArray &wq = in[0], &scale = in[1], &x = in[2];
         NDArray y = result_like(in[3]);
         for (int64_t i = 0; i < y.numel(); ++i) {
           double s = 0;
           for (int64_t k = 0; k < x.numel(); ++k) {
             uint64_t word = static_cast<uint64_t>(wq.get_int(flat(wq, {i, k / 8})));
             int64_t q = static_cast<int64_t>((word >> (4 * (k % 8))) & 15) - 8;
             s += static_cast<double>(q) * at(scale, {i, k / 128}) * x.get(k);
           }
           y.set(i, s);
         }
         return y;
       }},
      // The long tail (static shapes, workloads/longtail/).
      {"if_nest",
       [](const Arrays &in) {
         NDArray a = result_like(in[0]);
         for (int64_t i = 0; i < a.shape()[0]; ++i)
           for (int64_t j = 0; j < a.shape()[1]; ++j) a.set(flat(a, {i, j}), i % 2 == 0 ? 1 : 2);
         return a;
       }},
      {"inplace",
       [](const Arrays &in) {
         NDArray b = result_like(in[1]);
         for (int64_t i = 0; i < b.numel(); ++i) b.set(i, in[1].get(i) + in[0].get(i));
         return b;
       }},
      {"nonzero_start",
       [](const Arrays &in) {
         NDArray b = result_like(in[1]);
         b.set(0, in[1].get(0));  // the loop starts at 1: B[0] keeps its value
         for (int64_t i = 1; i < b.numel(); ++i) b.set(i, in[0].get(i) + 1);
         return b;
       }},
      {"prefix_sum",
       [](const Arrays &in) {
         // Defined as a running float16 sum: round after every step as the program does.
         NDArray b = result_like(in[1]);
         double s = 0;
         b.set(0, s);
         for (int64_t i = 1; i < b.numel(); ++i) {
           s = round_to(in[1].dtype(), s + in[0].get(i));
           b.set(i, s);
         }
         return b;
       }},
  };
  return table;
}

bool all_finite(const NDArray &a) {
  for (int64_t i = 0; i < a.numel(); ++i)
    if (!std::isfinite(a.get(i))) return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Analysis facts per rule
//===----------------------------------------------------------------------===//

/// What the analysis must find beyond the rule: a matmul's layout, a
/// reduction's combiner.
const std::map<std::string, std::string> kMatmulLayout = {
    {"matmul_nn_f16", "nn"}, {"matmul_nt_f16", "nt"},      {"matmul_nn_f32", "nn"}, {"matmul_nn_bf16", "nn"}, {"matmul_nt_i8", "nt"},
    {"matmul_nn_tf32", "nn"}, {"matmul_nn_f16_acc16", "nn"},
    {"matmul_nt_f32", "nt"}, {"bmm_symbolic_m_f16", "nn"}, {"matmul_bias_relu_f32", "nn"},
};
const std::map<std::string, Combiner> kReductionCombiner = {
    {"reduce_sum_f32", Combiner::Sum},
    {"reduce_max_f16", Combiner::Max},
    {"reduce_sum_outer_f32", Combiner::Sum},
};

/// Why only the fallback can schedule `info` (the first reason found), or "".
std::string fallback_reason(const FuncInfo &info) {
  if (info.is_scheduled) return "it is already scheduled";
  if (info.has_opaque_structure) return "it has statements outside blocks or nested blocks";
  for (const analysis::BlockInfo &b : info.blocks) {
    const std::string q = "block '" + b.name + "'";
    if (!b.trivial_binding) return q + " has a non-trivial binding";
    if (b.is_guarded) return q + " is guarded";
    if (!b.is_spatial() && !b.is_reduction()) return q + " is neither spatial nor a reduction";
  }
  return "";
}

std::string names_of(const FuncInfo &info, const std::vector<int> &blocks) {
  std::string out;
  for (int b : blocks) out += (out.empty() ? "'" : ", '") + info.blocks[b].name + "'";
  return out.empty() ? "none" : out;
}

/// The one reduction block; -1 (and a failure) unless there is exactly one.
int single_reduction(const FuncInfo &info) {
  std::vector<int> red = info.reduction_blocks();
  EXPECT_EQ(red.size(), 1u) << "reduction blocks: " << names_of(info, red);
  return red.size() == 1 ? red[0] : -1;
}

void expect_elementwise(const FuncInfo &info) {
  for (const analysis::BlockInfo &b : info.blocks)
    EXPECT_TRUE(b.is_elementwise()) << "block '" << b.name << "' is not elementwise";
}

void expect_transpose(const FuncInfo &info) {
  ASSERT_EQ(info.blocks.size(), 1u);
  const analysis::BlockInfo &b = info.blocks[0];
  EXPECT_TRUE(b.is_injective()) << "block '" << b.name << "' is not injective";
  EXPECT_FALSE(b.is_elementwise()) << "block '" << b.name << "' reads in the order it writes";
  ASSERT_EQ(b.reads.size(), 1u);
  EXPECT_TRUE(b.reads[0].is_simple);
  EXPECT_NE(b.reads[0].inner_iter(), b.writes[0].inner_iter()) << "the innermost dimensions agree";
}

void expect_reduction(const Entry &e, const FuncInfo &info) {
  ASSERT_TRUE(kReductionCombiner.contains(e.name))
      << "no expected combiner for '" << e.name << "' in this test";
  EXPECT_EQ(info.blocks.size(), 1u);
  int r = single_reduction(info);
  if (r < 0) return;
  EXPECT_STREQ(to_string(info.blocks[r].combiner), to_string(kReductionCombiner.at(e.name)));
  EXPECT_FALSE(analysis::match_matmul(info, r));
}

void expect_general_reduction(const FuncInfo &info) {
  std::vector<int> red = info.reduction_blocks();
  EXPECT_GE(red.size(), 1u) << "no reduction block";
  EXPECT_GE(info.blocks.size(), 2u) << "one block: that is the reduction rule's";
  for (int r : red)
    EXPECT_FALSE(analysis::match_matmul(info, r)) << "'" << info.blocks[r].name << "' is a matmul";
  for (const analysis::BlockInfo &b : info.blocks) {
    if (!b.writes_output) continue;
    EXPECT_TRUE(b.is_spatial()) << "the output is written by the reduction '" << b.name << "'";
  }
}

void expect_matmul(const Entry &e, const FuncInfo &info) {
  ASSERT_TRUE(kMatmulLayout.contains(e.name)) << "no expected layout for '" << e.name << "' in this test";
  int r = single_reduction(info);
  if (r < 0) return;
  auto m = analysis::match_matmul(info, r);
  ASSERT_TRUE(m) << m.reason();
  EXPECT_EQ(m->layout(), kMatmulLayout.at(e.name));
  // int8 products accumulate exactly in int32; everything else in float32,
  // but the one workload that accumulates float16 in float16.
  ir::DataType acc = m->a_dtype == ir::DataType::int_(8) ? ir::DataType::int32()
                     : e.name == "matmul_nn_f16_acc16"   ? ir::DataType::float16()
                                                         : ir::DataType::float32();
  EXPECT_EQ(m->acc_dtype, acc);
  EXPECT_EQ(m->tf32, e.name == "matmul_nn_tf32") << "both factors rounded by T.round_to_tf32";
  EXPECT_EQ(m->batch.empty(), m->a.buffer.ndim() == 2) << "batch iters and operand rank disagree";
  for (size_t i = 0; i < info.blocks.size(); ++i) {
    int b = static_cast<int>(i);
    bool around = std::count(m->prologue.begin(), m->prologue.end(), b) > 0 ||
                  std::count(m->epilogue.begin(), m->epilogue.end(), b) > 0;
    EXPECT_TRUE(b == r || around) << "block '" << info.blocks[i].name << "' is neither prologue nor epilogue";
  }
}

void expect_gemv(const FuncInfo &info) {
  int r = single_reduction(info);
  if (r < 0) return;
  EXPECT_EQ(info.blocks[r].combiner, Combiner::Sum);
  auto m = analysis::match_matmul(info, r);
  ASSERT_FALSE(m) << "matches as a " << m->layout() << " matmul";
  EXPECT_NE(m.reason().find("gemv"), std::string::npos) << m.reason();
  for (int p : info.blocks[r].producers)  // the int4 decode: a rule inlines it
    EXPECT_TRUE(info.blocks[p].is_inlinable()) << "producer '" << info.blocks[p].name << "' is not inlinable";
}

void expect_conv2d(const FuncInfo &info) {
  int r = single_reduction(info);
  if (r < 0) return;
  const analysis::BlockInfo &conv = info.blocks[r];
  EXPECT_EQ(conv.dom_kind(), "SSSSRRR");
  EXPECT_EQ(conv.combiner, Combiner::Sum);
  auto m = analysis::match_matmul(info, r);
  ASSERT_FALSE(m) << "matches as a matmul";
  EXPECT_NE(m.reason().find("convolution"), std::string::npos) << m.reason();
  ASSERT_EQ(conv.producers.size(), 1u) << "expected the padding block as the only producer";
  const analysis::BlockInfo &pad = info.blocks[conv.producers[0]];
  EXPECT_TRUE(pad.is_spatial() && !pad.is_elementwise()) << "'" << pad.name << "' is not a padding";
}

/// The facts of `info` fit `e.rule`.
void expect_rule(const Entry &e, const FuncInfo &info) {
  std::string why = fallback_reason(info);
  if (e.rule == "fallback") {
    EXPECT_NE(why, "") << "nothing needs the fallback";
    return;
  }
  EXPECT_EQ(why, "") << "only the fallback applies";
  if (e.rule == "elementwise") return expect_elementwise(info);
  if (e.rule == "transpose") return expect_transpose(info);
  if (e.rule == "reduction") return expect_reduction(e, info);
  if (e.rule == "general_reduction") return expect_general_reduction(info);
  // The convolution (on tensor cores by default, the conv2d rule's otherwise).
  if (e.is_conv2d()) return expect_conv2d(info);
  if (e.rule == "matmul" || e.rule == "matmul_tensor_core") return expect_matmul(e, info);
  if (e.rule == "gemv") return expect_gemv(info);
  if (e.rule == "conv2d") return expect_conv2d(info);
  ADD_FAILURE() << "unknown rule '" << e.rule << "'";
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

TEST(WorkloadManifest, IsWellFormed) {
  std::vector<Entry> entries;
  try {
    entries = load_manifest();
  } catch (const std::exception &err) {
    FAIL() << "workloads.json: " << err.what();
  }
  ASSERT_FALSE(entries.empty());
  std::set<std::string> names, listed_files;
  for (const Entry &e : entries) {
    SCOPED_TRACE("entry '" + e.name + "'");
    EXPECT_TRUE(is_identifier(e.name)) << "names are [a-z0-9_]+";
    EXPECT_TRUE(names.insert(e.name).second) << "duplicate name";
    EXPECT_TRUE(kRules.contains(e.rule)) << "unknown rule '" << e.rule << "'";
    EXPECT_TRUE(std::filesystem::is_regular_file(e.path())) << "no file " << e.path();
    listed_files.insert(e.file);
    EXPECT_EQ(keys(e.full), keys(e.small)) << "full and small bind different variables";
    for (const std::string &v : e.symbolic)
      EXPECT_TRUE(e.full.contains(v)) << "symbolic '" << v << "' has no size";
    auto kept = kKeptSymbolic.find(e.name);
    EXPECT_EQ(e.symbolic, kept == kKeptSymbolic.end() ? std::vector<std::string>{} : kept->second);
    for (const auto &[var, value] : e.full) EXPECT_GT(value, 0) << var;
    for (const auto &[var, value] : e.small) {
      EXPECT_GT(value, 0) << var;
      EXPECT_NE(value % 16, 0) << "small size " << var << " = " << value << " divides typical tiles";
    }
    EXPECT_EQ(kLongTail.contains(e.name), e.rule == "fallback");
    EXPECT_EQ(kLongTail.contains(e.name), e.file.starts_with("longtail/"));
    EXPECT_TRUE(references().contains(e.name)) << "no reference in this test";
  }
  for (const std::string &name : kLongTail)
    EXPECT_TRUE(names.contains(name)) << "long-tail '" << name << "' missing";
  for (const auto &file : std::filesystem::directory_iterator(test::workload_dir())) {
    if (file.path().extension() != ".py") continue;
    EXPECT_TRUE(listed_files.contains(file.path().filename().string()))
        << file.path().filename() << " is not in the manifest";
  }
}

class Workload : public testing::TestWithParam<Entry> {};

TEST_P(Workload, ParsesWithTheManifestsShapeVars) {
  const Entry &e = GetParam();
  ir::PrimFunc f = load_func(e);
  for (const std::string &problem : ir::verify(f)) ADD_FAILURE() << problem;
  EXPECT_EQ(shape_var_names(f), keys(e.full)) << "the shape variables differ from the keys of \"full\"";
  EXPECT_EQ(shape_var_names(f), keys(e.small)) << "the shape variables differ from the keys of \"small\"";
}

TEST_P(Workload, FullSizeLeavesExactlyTheSymbolicVars) {
  const Entry &e = GetParam();
  ir::PrimFunc f = load_func(e);
  ir::PrimFunc g = analysis::specialize(f, e.specialized(e.full));
  EXPECT_EQ(shape_var_names(g), sorted(e.symbolic));
  for (const std::string &problem : ir::verify(g)) ADD_FAILURE() << problem;
  // Fully bound, every buffer has a constant shape whose size int32 indices reach.
  ir::PrimFunc h = analysis::specialize(f, e.full);
  for (const ir::Buffer &b : h.param_buffers()) {
    int64_t numel = 1;
    for (const ir::Expr &d : b.shape()) {
      std::optional<int64_t> n = ir::as_const_int(d);
      ASSERT_TRUE(n && *n > 0) << "buffer '" << b.name() << "' has a non-constant or empty dimension";
      numel *= *n;
    }
    EXPECT_LT(numel, int64_t{1} << 31) << "buffer '" << b.name() << "' outgrows int32 indices";
  }
}

TEST_P(Workload, SmallSizeMatchesTheReference) {
  const Entry &e = GetParam();
  ir::PrimFunc g = analysis::specialize(load_func(e), e.specialized(e.small));
  Arrays args = runtime::make_random_args(g, e.small, kSeed);
  std::mt19937_64 rng(kSeed);
  prepare_inputs(e, args, rng);
  const Arrays inputs = args;
  // The rounding-error bounds of the workload's own dtypes (runtime/Verify.h).
  runtime::Reference model = runtime::compute_reference(g, inputs);
  std::vector<NDArray *> ptrs;
  for (NDArray &a : args) ptrs.push_back(&a);
  runtime::Interpreter(g).run(ptrs);
  for (size_t i = 0; i < args.size(); ++i)
    EXPECT_TRUE(all_finite(args[i])) << args[i].summary("argument " + std::to_string(i));

  ASSERT_TRUE(references().contains(e.name)) << "no reference for '" << e.name << "' in this test";
  const NDArray &got = args.back();
  NDArray want = references().at(e.name)(inputs);
  ASSERT_EQ(got.shape(), want.shape());
  runtime::OutputCheck c = runtime::check_output("output", got, want, model.variance.back());
  EXPECT_TRUE(c.ok) << c.str() << "\n" << got.summary("got") << "\n" << want.summary("want");
}

TEST_P(Workload, AnalysisFitsTheRule) {
  const Entry &e = GetParam();
  ir::PrimFunc f = load_func(e);
  {
    SCOPED_TRACE("symbolic sizes");
    expect_rule(e, analysis::analyze(f));
  }
  {
    SCOPED_TRACE("full sizes");
    expect_rule(e, analysis::analyze(analysis::specialize(f, e.specialized(e.full))));
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, Workload, testing::ValuesIn(entries_for_tests()),
                         [](const testing::TestParamInfo<Entry> &info) { return info.param.name; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Workload);

}  // namespace
}  // namespace tessera
