//===- lib/tune/DynamicKernel.cpp - A function's kernels for size ranges --===//
#include "tessera/tune/DynamicKernel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/lower/Lower.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/schedule/Schedule.h"
#include "tessera/script/Printer.h"
#include "tessera/support/Error.h"
#include "tessera/support/Version.h"

namespace tessera::tune {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }


rules::Json spec_json(const DynamicSpec &spec) {
  rules::Json j = {{"max_kernels", spec.max_kernels},
                   {"cells_per_octave", spec.cells_per_octave},
                   {"exact_up_to", spec.exact_up_to}};
  for (const SymbolRange &r : spec.symbols) j["symbols"].push_back({{"name", r.name}, {"lo", r.lo}, {"hi", r.hi}, {"hot", r.hot}});
  return j;
}

rules::Json kernel_json(const PlannedKernel &k) {
  rules::Json j = {{"entry", k.entry},
                   {"cubin_key", k.cache_key},
                   {"target", k.target},
                   {"dynamic_shared_bytes", k.dynamic_shared_bytes}};
  for (const PlannedKernel::Param &p : k.params)
    j["params"].push_back({{"name", p.name}, {"symbol", p.symbol}, {"bytes", p.bytes}});
  for (int d = 0; d < 3; ++d) {
    j["grid"].push_back(k.grid[d].to_json());
    j["block"].push_back(k.block[d].to_json());
  }
  return j;
}

}  // namespace

std::string DynamicKernelCounters::str() const {
  return fmt::format("{} start: {} kernels, {} NVRTC compiles, {} read from the cache, {} rule applications, {} policy "
                     "calls; plan {:.1f} ms, build {:.1f} ms, total {:.1f} ms",
                     warm ? "warm" : "cold", kernels, nvrtc_compiles, cache_reads, rule_applications, policy_calls,
                     plan_ms, build_ms, total_ms);
}

DynamicKernel DynamicKernel::begin(const DynamicRequest &request, const Arch &arch,
                                   const DynamicKernelOptions &options, std::vector<runtime::CompileJob> &jobs) {
  const ir::PrimFunc &original = request.func;
  const DynamicSpec &spec = request.spec;
  const auto start = Clock::now();
  DynamicKernel k;
  k.func_ = schedule::unique_block_names(original);
  k.arch_ = arch;
  // (plan_dynamic checks the spec against the function; a manifest exists
  // only for a spec it accepted.)
  for (const SymbolRange &r : spec.symbols) k.symbols_.push_back(r.name);
  // The cell table: the symbols' cells, the last symbol fastest (as the plan's).
  for (const SymbolRange &r : spec.symbols) {
    std::vector<int64_t> ends;
    for (auto [lo, hi] : symbol_cells(r, spec)) ends.push_back(hi);
    k.ends_.push_back(std::move(ends));
    k.lows_.push_back(r.lo);
  }
  const std::string sm = arch.arch_flag();
  k.manifest_ =
      "dynamic/" + runtime::KernelCache::digest(script::print(k.func_) + "\n" + spec_json(spec).dump() + "\n" +
                                                arch.fingerprint() + "\nnvrtc " + runtime::nvrtc_version() +
                                                "\ntessera " + std::string(tessera::version())) +
      ".json";

  // Warm: everything from the cache, or nothing from it.
  if (options.cache) {
    if (std::optional<std::string> text = options.cache->read_file(k.manifest_)) {
      try {
        rules::Json m = rules::Json::parse(*text);
        k.plan_ = m.at("plan");
        k.rule_ = k.plan_.at("rule").get<std::string>();
        for (const rules::Json &c : k.plan_.at("configs")) k.configs_.push_back(c);
        std::vector<int> cell_kernels;
        for (const rules::Json &c : k.plan_.at("cells")) cell_kernels.push_back(c.at("config").get<int>());
        size_t cells = 1;
        for (const auto &e : k.ends_) cells *= e.size();
        if (cell_kernels.size() != cells) throw UserError("the manifest's cells are not the spec's");
        for (const rules::Json &j : m.at("kernels")) {
          PlannedKernel pk;
          pk.entry = j.at("entry").get<std::string>();
          pk.cache_key = j.at("cubin_key").get<std::string>();
          pk.target = j.value("target", sm);
          pk.dynamic_shared_bytes = j.at("dynamic_shared_bytes").get<int64_t>();
          for (const rules::Json &p : j.at("params"))
            pk.params.push_back({p.at("name").get<std::string>(), p.at("symbol").get<int>(), p.at("bytes").get<int>()});
          for (int d = 0; d < 3; ++d) {
            pk.grid[d] = SizeProgram::from_json(j.at("grid").at(d), k.symbols_.size());
            pk.block[d] = SizeProgram::from_json(j.at("block").at(d), k.symbols_.size());
          }
          std::optional<runtime::CompileResult> r = options.cache->load(pk.cache_key, pk.target);
          if (!r) throw UserError("the cubin of kernel " + pk.entry + " is not in the cache");
          pk.cubin = std::move(r->cubin);
          k.kernels_.push_back(std::move(pk));
        }
        for (int c : cell_kernels)
          if (c < 0 || c >= int(k.kernels_.size())) throw UserError("a cell names no kernel");
        k.kernel_of_cell_.assign(cell_kernels);
        k.counters_.warm = true;
        k.counters_.kernels = static_cast<int64_t>(k.kernels_.size());
        k.counters_.cache_reads = k.counters_.kernels;
        k.scheduled_.resize(k.kernels_.size());
        k.counters_.total_ms = ms_since(start);
        return k;
      } catch (const std::exception &) {
        // Not whole: built again below, and the manifest rewritten.
        k.plan_ = rules::Json();
        k.configs_.clear(), k.kernels_.clear();
      }
    }
  }

  // Cold: plan (unless the caller did), schedule, lower, generate, compile
  // in one parallel wave.
  std::optional<DynamicPlan> own;
  if (!request.plan) own = plan_dynamic(k.func_, spec, arch);
  const DynamicPlan &plan = request.plan ? *request.plan : *own;
  k.counters_.plan_ms = plan.plan_ms;
  k.counters_.policy_calls = plan.policy_calls;
  k.counters_.rule_applications = plan.rule_applications;
  k.plan_ = plan.to_json();
  k.rule_ = plan.rule;
  std::vector<int> cell_kernels;
  for (const Cell &c : plan.cells) cell_kernels.push_back(c.config);
  k.kernel_of_cell_.assign(cell_kernels);
  auto t_build = Clock::now();
  const rules::Rule &rule = *rules::find_rule(plan.rule);
  auto match = rule.match(k.func_, arch);
  if (!match) throw InternalError("the plan's rule no longer matches: " + match.reason());
  k.first_job_ = jobs.size();
  for (const auto &config : plan.configs) {
    k.configs_.push_back(config->to_json());
    ir::PrimFunc s = rule.apply(k.func_, **match, *config).func();
    ++k.counters_.rule_applications;
    lower::KernelSplit split = lower::split_kernels(s);
    if (split.kernels.size() != 1 || !split.workspace.empty())
      throw UserError("'" + k.func_.name() + "' runs as " + std::to_string(split.kernels.size()) +
                      " kernels at config " + config->str() + "; a dynamic kernel takes one");
    lower::LoweredFunc l = lower::lower(split.kernels[0]);
    PlannedKernel pk;
    pk.entry = codegen::cuda_kernel_name(l);
    for (const lower::KernelParam &p : l.params) {
      if (p.is_buffer()) {
        pk.params.push_back({p.buffer.name(), -1, 0});
        continue;
      }
      auto it = std::find(k.symbols_.begin(), k.symbols_.end(), p.var.name());
      if (it == k.symbols_.end())
        throw UserError("kernel parameter '" + p.var.name() + "' is not a symbol of the plan");
      pk.params.push_back({p.var.name(), int(it - k.symbols_.begin()), p.var.dtype().bytes()});
    }
    // An undefined extent is an unused axis: 1.
    auto program = [&](const ir::Expr &e) {
      return e.defined() ? SizeProgram::compile(e, k.symbols_) : SizeProgram::constant(1);
    };
    for (int d = 0; d < 3; ++d) pk.grid[d] = program(l.launch.grid[d]), pk.block[d] = program(l.launch.block[d]);
    pk.dynamic_shared_bytes = l.dynamic_shared_bytes;
    pk.target = codegen::cuda_target_for(sm, l.body);
    runtime::CompileOptions o{.arch = pk.target, .name = l.name, .cache = options.cache};
    std::string source = codegen::codegen_cuda(l, codegen::CudaOptions{.arch = pk.target});
    if (options.cache) pk.cache_key = runtime::kernel_cache_key(source, o);
    jobs.push_back({std::move(source), o});
    k.kernels_.push_back(std::move(pk));
    k.scheduled_.push_back(s);
  }
  k.counters_.build_ms = ms_since(t_build);  // the rest when the wave is done
  k.counters_.total_ms = ms_since(start);
  return k;
}

void DynamicKernel::finish(std::vector<runtime::CompileOutcome> &built, double wave_ms,
                           runtime::KernelCache *cache) {
  if (counters_.warm) return;
  for (size_t i = 0; i < kernels_.size(); ++i) {
    runtime::CompileOutcome &o = built.at(first_job_ + i);
    if (!o.ok()) throw *o.error;
    (o.result->from_cache ? counters_.cache_reads : counters_.nvrtc_compiles) += 1;
    kernels_[i].cubin = std::move(o.result->cubin);
  }
  counters_.kernels = static_cast<int64_t>(kernels_.size());
  counters_.build_ms += wave_ms;
  counters_.total_ms += wave_ms;
  if (cache) write_manifest(*cache);
}

void DynamicKernel::write_manifest(runtime::KernelCache &cache) const {
  rules::Json m = {{"plan", plan_}, {"kernels", rules::Json::array()}};
  for (const PlannedKernel &pk : kernels_) m["kernels"].push_back(kernel_json(pk));
  cache.store_file(manifest_, m.dump(1) + "\n");
}

DynamicKernel DynamicKernel::create(const ir::PrimFunc &f, const DynamicSpec &spec, const Arch &arch,
                                    const DynamicKernelOptions &options) {
  return std::move(create_many({{f, spec}}, arch, options).at(0));
}

std::vector<DynamicKernel> DynamicKernel::create_many(const std::vector<DynamicRequest> &requests, const Arch &arch,
                                                      const DynamicKernelOptions &options) {
  // Plans in parallel (each is the policy's work), then every kernel of every
  // cold one in a single NVRTC wave.
  std::vector<std::optional<DynamicKernel>> made(requests.size());
  std::vector<std::vector<runtime::CompileJob>> jobs(requests.size());
  std::vector<std::exception_ptr> errors(requests.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  const unsigned n = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  for (unsigned w = 0; w < std::min<size_t>(n, requests.size()); ++w)
    workers.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < requests.size();) {
        try {
          made[i] = begin(requests[i], arch, options, jobs[i]);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      }
    });
  for (std::thread &t : workers) t.join();
  for (const std::exception_ptr &e : errors)
    if (e) std::rethrow_exception(e);
  std::vector<runtime::CompileJob> wave;
  std::vector<size_t> offset(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    offset[i] = wave.size();
    for (runtime::CompileJob &j : jobs[i]) wave.push_back(std::move(j));
  }
  auto t0 = Clock::now();
  std::vector<runtime::CompileOutcome> built;
  if (!wave.empty()) built = runtime::compile_many(wave, options.threads);
  const double wave_ms = ms_since(t0);
  std::vector<DynamicKernel> out;
  for (size_t i = 0; i < requests.size(); ++i) {
    made[i]->first_job_ += offset[i];
    made[i]->finish(built, wave_ms, options.cache);
    out.push_back(std::move(*made[i]));
  }
  return out;
}

void DynamicKernel::CellKernels::assign(const std::vector<int> &kernels) {
  table_ = std::make_shared<std::vector<std::atomic<int>>>(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) (*table_)[i].store(kernels[i], std::memory_order_relaxed);
}

KernelLaunch DynamicKernel::select(const int64_t *sizes) const {
  KernelLaunch l;
  size_t cell = 0;
  for (size_t s = 0; s < ends_.size(); ++s) {
    const std::vector<int64_t> &e = ends_[s];
    if (sizes[s] < lows_[s] || sizes[s] > e.back())
      throw UserError(symbols_[s] + " = " + std::to_string(sizes[s]) + " is outside the planned range " +
                      std::to_string(lows_[s]) + ":" + std::to_string(e.back()));
    cell = cell * e.size() + size_t(std::lower_bound(e.begin(), e.end(), sizes[s]) - e.begin());
  }
  l.cell = static_cast<int>(cell);
  l.kernel = kernel_of_cell_[cell];
  fill_dims(l, sizes);
  return l;
}

void DynamicKernel::fill_dims(KernelLaunch &l, const int64_t *sizes) const {
  const PlannedKernel &k = kernels_[static_cast<size_t>(l.kernel)];
  int64_t g[3], b[3];
  l.has_work = true;
  for (int d = 0; d < 3; ++d) {
    g[d] = k.grid[d].eval(sizes), b[d] = k.block[d].eval(sizes);
    if (g[d] <= 0 || b[d] <= 0) l.has_work = false;
  }
  if (l.has_work) {
    l.grid = runtime::Dim3(unsigned(g[0]), unsigned(g[1]), unsigned(g[2]));
    l.block = runtime::Dim3(unsigned(b[0]), unsigned(b[1]), unsigned(b[2]));
  }
  l.dynamic_shared_bytes = size_t(k.dynamic_shared_bytes);
}

ir::PrimFunc DynamicKernel::scheduled(int i) const {
  if (i < 0 || i >= int(kernels_.size())) throw UserError("no kernel " + std::to_string(i));
  if (!scheduled_[size_t(i)].defined()) {
    const rules::Rule &rule = *rules::find_rule(rule_);
    auto m = rule.match(func_, arch_);
    if (!m) throw InternalError("the plan's rule no longer matches: " + m.reason());
    scheduled_[size_t(i)] = rule.apply(func_, **m, *rule.config_from_json(configs_[size_t(i)])).func();
  }
  return scheduled_[size_t(i)];
}

void DynamicKernel::load(int device) {
  auto modules = std::make_shared<std::vector<runtime::Module>>();
  std::vector<runtime::Kernel> kernels;
  for (const PlannedKernel &k : kernels_) {
    modules->push_back(runtime::Module::load(k.cubin, device));
    kernels.push_back(modules->back().kernel(k.entry));
    if (k.dynamic_shared_bytes > 0) kernels.back().set_dynamic_shared_memory(size_t(k.dynamic_shared_bytes));
  }
  modules_ = std::move(modules);
  loaded_ = std::move(kernels);
}

BoundLaunch DynamicKernel::bind(const int64_t *sizes, const uint64_t *buffers, size_t buffer_count) const {
  return bind_kernel(-1, sizes, buffers, buffer_count);
}

BoundLaunch DynamicKernel::bind_kernel(int kernel, const int64_t *sizes, const uint64_t *buffers,
                                       size_t buffer_count) const {
  if (loaded_.size() != kernels_.size()) throw UserError("a dynamic kernel launches after load(device)");
  if (kernel >= int(kernels_.size())) throw UserError("no kernel " + std::to_string(kernel));
  BoundLaunch b;
  b.dims = select(sizes);
  if (kernel >= 0 && kernel != b.dims.kernel) {
    b.dims.kernel = kernel;  // another kernel of the plan at these sizes: its own launch extents
    fill_dims(b.dims, sizes);
  }
  const PlannedKernel &k = kernels_[size_t(b.dims.kernel)];
  b.kernel = &loaded_[size_t(b.dims.kernel)];
  size_t next = 0;
  for (const PlannedKernel::Param &p : k.params) {
    if (b.count == BoundLaunch::kMaxParams) throw UserError(k.entry + " has more parameters than a bound launch holds");
    if (p.symbol < 0) {
      if (next >= buffer_count)
        throw UserError("launch: " + std::to_string(buffer_count) + " buffers for kernel " + k.entry);
      b.values[b.count++] = buffers[next++];
    } else if (p.bytes == 8) {
      b.values[b.count++] = uint64_t(sizes[size_t(p.symbol)]);
    } else {
      b.values[b.count++] = uint64_t(uint32_t(int32_t(sizes[size_t(p.symbol)])));  // the low 4 bytes
    }
  }
  return b;
}

void BoundLaunch::launch(void *stream) {
  if (!dims.has_work) return;
  kernel->launch_raw(dims.grid, dims.block, params(), dims.dynamic_shared_bytes, stream);
}

void DynamicKernel::launch(const std::vector<uint64_t> &buffers, const std::vector<int64_t> &sizes,
                           void *stream) const {
  if (sizes.size() != symbols_.size())
    throw UserError("launch: " + std::to_string(sizes.size()) + " sizes for " + std::to_string(symbols_.size()) +
                    " symbols");
  bind(sizes.data(), buffers.data(), buffers.size()).launch(stream);
}

}  // namespace tessera::tune
