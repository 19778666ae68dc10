//===- lib/lower/Lower.cpp - The lowering pipeline --------------------------===//
//
// The whole pipeline, top to bottom (Halide's Lower.cpp shape). Each step is
// one pass from Passes.h; `run` prints the function after it for
// TESSERA_DUMP=lower and its time for TESSERA_TIME_PASSES=1.
//
//===----------------------------------------------------------------------===//
#include "tessera/lower/Lower.h"
#include "tessera/ir/Opaque.h"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string_view>
#include <unordered_set>

#include "tessera/lower/Passes.h"
#include "tessera/script/Printer.h"

namespace tessera::lower {

namespace {

bool env_lists(const char *name, std::string_view item) {
  const char *env = std::getenv(name);
  if (!env) return false;
  std::string_view list(env);
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view x = list.substr(0, comma);
    while (!x.empty() && x.front() == ' ') x.remove_prefix(1);
    while (!x.empty() && x.back() == ' ') x.remove_suffix(1);
    if (x == item || x == "all" || x == "1") return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

/// Logs and times one pass (Halide's LoweringLogger).
class PassRunner {
 public:
  explicit PassRunner(const LoweredFunc &f)
      : dump_(env_lists("TESSERA_DUMP", "lower")), time_(env_lists("TESSERA_TIME_PASSES", "lower")) {
    if (dump_) last_ = print(f);
  }

  template <typename Pass>
  void stmt_pass(const char *name, LoweredFunc &f, Pass pass) {
    auto t0 = std::chrono::steady_clock::now();
    f.body = pass(f.body);
    report(name, f, t0);
  }
  template <typename Pass>
  void func_pass(const char *name, LoweredFunc &f, Pass pass) {
    auto t0 = std::chrono::steady_clock::now();
    f = pass(f);
    report(name, f, t0);
  }

 private:
  void report(const char *name, const LoweredFunc &f, std::chrono::steady_clock::time_point t0) {
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
    if (time_) std::cerr << "lower: " << name << " " << us / 1000.0 << " ms\n";
    if (!dump_) return;
    std::string text = print(f);
    std::cerr << "=== lower: after " << name << "\n" << (text == last_ ? "(unchanged)\n" : text);
    last_ = std::move(text);
  }

  bool dump_, time_;
  std::string last_;
};

/// Buffer parameters in parameter order, then scalar parameters and the
/// symbolic shape variables that are not parameters already.
LoweredFunc make_signature(const ir::PrimFunc &f) {
  LoweredFunc out;
  out.name = f.name();
  std::unordered_set<const ir::VarNode *> seen;
  for (const ir::Var &p : f.params()) {
    seen.insert(p.get());
    if (ir::Buffer b = f.buffer_of(p); b.defined()) out.params.push_back({p, b});
  }
  for (const ir::Var &p : f.params())
    if (!f.buffer_of(p).defined()) out.params.push_back({p, {}});
  for (const ir::Var &v : f.shape_vars())
    if (seen.insert(v.get()).second) out.params.push_back({v, {}});
  out.body = f.body();
  return out;
}

}  // namespace

LoweredFunc lower(const ir::PrimFunc &func) {
  ir::check_no_opaque(func, "lower");
  LoweredFunc f = make_signature(func);
  f.allocs = collect_allocations(f.body);
  PassRunner run(f);
  run.stmt_pass("swizzle_shared_buffers", f, swizzle_shared_buffers);
  run.stmt_pass("lower_virtual_threads", f, lower_virtual_threads);
  run.func_pass("lower_cross_thread_reduction", f, lower_cross_thread_reduction);
  run.stmt_pass("lower_blocks", f, lower_blocks);
  run.func_pass("lower_warp_buffers", f, lower_warp_buffers);
  run.func_pass("compact_buffers", f, [&](const LoweredFunc &g) { return compact_buffers(g, func.body()); });
  run.func_pass("inject_software_pipeline", f, inject_software_pipeline);
  run.stmt_pass("simplify_division", f, simplify_division);
  run.stmt_pass("guard_single_thread_stores", f, guard_single_thread_stores);
  run.stmt_pass("insert_barriers", f, insert_barriers);
  run.func_pass("extract_launch_config", f, extract_launch_config);
  run.func_pass("flatten_buffers", f, flatten_buffers);
  run.func_pass("legalize_vectorize", f, legalize_vectorize);
  run.func_pass("plan_dynamic_shared_memory", f, plan_dynamic_shared_memory);
  return f;
}

std::string print(const LoweredFunc &f) {
  // As a PrimFunc: buffer parameters as handles, allocations in the root block.
  std::vector<ir::Var> params;
  std::vector<std::pair<ir::Var, ir::Buffer>> buffer_map;
  for (const KernelParam &p : f.params) {
    if (!p.is_buffer()) {
      params.push_back(p.var);
      continue;
    }
    ir::Var h(p.var.name(), ir::DataType::handle());
    params.push_back(h);
    buffer_map.emplace_back(h, p.buffer);
  }
  ir::Stmt root = ir::Block::make("root", {}, {}, ir::Expr(), {}, {}, f.allocs, std::nullopt, f.body);
  return script::print(ir::PrimFunc::make(f.name, params, buffer_map, root));
}

}  // namespace tessera::lower
