//===- examples/dynamic_startup/DynamicStartup.cpp - A decoder layer's kernels ===//
//
// What an inference engine does at startup with tessera: the operators of an
// LLM decoder layer (7B-class: hidden 4096, MLP 11008) have symbolic sizes
// (the tokens of a step, M in [1, 4096]; the context length of attention);
// each becomes a tessera::DynamicKernel (tessera/tessera.h): a plan of a few
// kernels covering its ranges, built once in a parallel NVRTC wave, kept in
// a kernel cache (beside it, the tuning database its measurements go to),
// and read back on every later start.
//
//   tessera_dynamic_startup [--arch h100] [--cache DIR] [--max-kernels 8] [--plans] [--measure MS]
//
// Without --cache it starts from an empty temporary store, so one run shows
// a cold start, then a warm one. With --cache DIR (DIR/kernels,
// DIR/tuning.jsonl) the first start is cold only when DIR holds nothing for
// this layer yet. --measure MS, on a GPU: after the first start, each
// operator's cells are measured (MS in all) and the fastest kernels kept,
// so the warm start uses them.
//
//===----------------------------------------------------------------------===//
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tessera/tessera.h"

namespace {

std::string read(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw tessera::UserError("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Operator {
  std::string name, file;
  std::map<std::string, int64_t> bind;  ///< sizes fixed by the model
  std::map<std::string, tessera::SizeRange> ranges;
};

/// A 7B-class decoder layer: hidden 4096, 32 heads, MLP 11008. Tokens (and
/// rows) from 1 to 4096, one token (decode) served all the time.
const tessera::SizeRange kTokens{1, 4096, {1}};
const std::vector<Operator> kLayer = {
    {"rmsnorm", "workloads/rmsnorm_f16.py", {{"cols", 4096}}, {{"rows", kTokens}}},
    {"qkv_proj", "workloads/matmul_nt_f16.py", {{"n", 12288}, {"k", 4096}}, {{"m", kTokens}}},
    // Attention scores: M = tokens, N = the context so far (two symbols).
    {"attn_scores", "workloads/matmul_nt_f16.py", {{"k", 128}}, {{"m", {1, 4096}}, {"n", {16, 4096}}}},
    // Their softmax: rows = tokens, columns = the context (two symbols, one
    // general_reduction kernel per cell).
    {"attn_softmax", "workloads/softmax_f16.py", {}, {{"rows", {1, 4096}}, {"cols", {16, 4096}}}},
    {"o_proj", "workloads/matmul_nt_f16.py", {{"n", 4096}, {"k", 4096}}, {{"m", kTokens}}},
    {"gate_up_proj", "workloads/matmul_nt_f16.py", {{"n", 22016}, {"k", 4096}}, {{"m", kTokens}}},
    {"down_proj", "workloads/matmul_nt_f16.py", {{"n", 4096}, {"k", 11008}}, {{"m", kTokens}}},
    {"decode_int4_gemv", "workloads/gemv_int4.py", {{"m", 11008}, {"k", 4096}}, {}},
};

struct Options {
  std::string arch, cache;
  int64_t max_kernels = 8;
  bool plans = false;
  double measure_ms = 0;
};


/// Every operator of the layer as a tessera::DynamicKernel, in one call as a
/// new process would make it (the plans in parallel, then every kernel in
/// one NVRTC wave); one row each. With --measure and a GPU, the cells are
/// measured afterwards (the next start uses what was measured).
double start(const std::vector<tessera::DynamicRequest> &requests, const tessera::Target &target,
             const std::filesystem::path &dir, const Options &o, const char *what, bool measure) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<tessera::DynamicKernel> kernels =
      tessera::dynamic(requests, target,
                       {.max_kernels = o.max_kernels, .kernel_cache = (dir / "kernels").string(),
                        .database = (dir / "tuning.jsonl").string()});
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  tessera::DynamicCounters sum;
  std::cout << fmt::format("\n{} start\n{:<18} {:<20} {:>6} {:>8} {:>14} {:>10} {:>7} {:>6} {:>9}\n", what, "operator",
                           "rule", "cells", "kernels", "regret geo/max", "pow2 geo", "nvrtc", "read", "plan ms");
  for (size_t i = 0; i < kLayer.size(); ++i) {
    const tessera::DynamicCounters c = kernels[i].counters();
    const nlohmann::json p = nlohmann::json::parse(kernels[i].plan());
    double pow2 = 0;
    for (const nlohmann::json &b : p.at("baselines"))
      if (b.at("name") == "power-of-two buckets") pow2 = b.at("geomean_regret").get<double>();
    std::cout << fmt::format("{:<18} {:<20} {:>6} {:>8} {:>7.3f}/{:<6.3f} {:>10.3f} {:>7} {:>6} {:>9.1f}\n",
                             kLayer[i].name, p.at("rule").get<std::string>(), p.at("cells").size(), c.kernels,
                             p.at("geomean_regret").get<double>(), p.at("max_regret").get<double>(), pow2,
                             c.nvrtc_compiles, c.cache_reads, c.plan_ms);
    if (o.plans) std::cout << p.dump(1) << "\n";
    sum.kernels += c.kernels, sum.nvrtc_compiles += c.nvrtc_compiles, sum.cache_reads += c.cache_reads;
    sum.rule_applications += c.rule_applications, sum.policy_calls += c.policy_calls;
  }
  std::cout << fmt::format("# {} start: {} operators, {} kernels, {} NVRTC compiles, {} read from the cache, {} rule "
                           "applications, {} policy calls; {:.1f} ms on {} cores\n",
                           what, kLayer.size(), sum.kernels, sum.nvrtc_compiles, sum.cache_reads, sum.rule_applications,
                           sum.policy_calls, ms, std::thread::hardware_concurrency());
  if (measure) {
    if (!tessera::Target::detect().is_gpu()) {
      std::cout << "# --measure: no CUDA device: the predicted kernels stay\n";
    } else {
      for (size_t i = 0; i < kLayer.size(); ++i)
        std::cout << fmt::format("# {}: {}\n", kLayer[i].name, kernels[i].measure(o.measure_ms / double(kLayer.size())));
    }
  }
  return ms;
}

}  // namespace

int main(int argc, char **argv) {
  Options o;
  CLI::App app{"A decoder layer's dynamic-shape kernels at startup: cold, then warm"};
  app.add_option("--arch", o.arch, "GPU preset (default: the device, else h100)");
  app.add_option("--cache", o.cache, "Directory of the kernel store (default: a temporary one: cold, then warm)");
  app.add_option("--max-kernels", o.max_kernels, "Kernels per operator at most")->capture_default_str();
  app.add_flag("--plans", o.plans, "Print each operator's plan");
  app.add_option("--measure", o.measure_ms, "On a GPU: milliseconds to measure the cells in after the first start")
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    const tessera::Target target = !o.arch.empty() ? tessera::Target::gpu(o.arch) : tessera::Target::detect_gpu("h100");
    std::filesystem::path dir = o.cache;
    bool temporary = dir.empty();
    if (temporary) {
      dir = std::filesystem::temp_directory_path() /
            fmt::format("tessera-dynamic-startup-{}", std::chrono::steady_clock::now().time_since_epoch().count());
    }
    std::vector<tessera::DynamicRequest> requests;
    for (const Operator &op : kLayer) {
      tessera::ir::Module m = tessera::parse(read(std::string(TESSERA_SOURCE_DIR) + "/" + op.file), op.file);
      requests.push_back({m.funcs.at(0), op.ranges, op.bind});
    }
    std::cout << fmt::format("# a decoder layer's kernels for {}, kernel store {}\n", target.str(), dir.string());
    double first = start(requests, target, dir, o, temporary ? "cold" : "first", o.measure_ms > 0);
    double second = start(requests, target, dir, o, "warm", false);
    std::cout << fmt::format("# startup: {:.0f} ms, then {:.1f} ms from the cache\n", first, second);
    if (temporary) std::filesystem::remove_all(dir);
    return 0;
  } catch (const std::exception &e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
