//===- lib/tune/DynamicKernel.cpp - A function's kernels for size ranges --===//
#include "tessera/tune/DynamicKernel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "tessera/runtime/NVRTC.h"
#include "tessera/tune/PlanKernel.h"
#include "tessera/schedule/Schedule.h"
#include "tessera/script/Printer.h"
#include "tessera/support/Error.h"
#include "tessera/support/Version.h"

namespace tessera::tuning {

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
  const std::string sm = arch.arch_flag();
  auto kp = std::make_shared<dispatch::KernelPlan>();
  kp->name = k.func_.name();
  kp->target = sm;
  kp->arch = arch.fingerprint();
  // (plan_dynamic checks the spec against the function; a manifest exists
  // only for a spec it accepted.)
  for (const SymbolRange &r : spec.symbols) kp->symbols.push_back(r.name);
  // The cell table: the symbols' cells, the last symbol fastest (as the plan's).
  for (const SymbolRange &r : spec.symbols) {
    std::vector<int64_t> ends;
    for (auto [lo, hi] : symbol_cells(r, spec)) ends.push_back(hi);
    kp->ends.push_back(std::move(ends));
    kp->lows.push_back(r.lo);
  }
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
        runtime::KernelCache &cache = *options.cache;
        dispatch::KernelPlan read = dispatch::KernelPlan::from_json(m.at("dispatch"), [&](const rules::Json &step) {
          const std::string key = step.at("cubin_key").get<std::string>();
          std::optional<runtime::CompileResult> r = cache.load(key, step.at("target").get<std::string>());
          if (!r) throw UserError("the cubin of kernel " + step.at("entry").get<std::string>() + " is not in the cache");
          return std::move(r->cubin);
        });
        if (read.symbols != kp->symbols || read.lows != kp->lows || read.ends != kp->ends || read.target != sm)
          throw UserError("the manifest's cells are not the spec's");
        *kp = std::move(read);
        k.kernel_plan_ = std::move(kp);
        k.counters_.warm = true;
        k.counters_.kernels = static_cast<int64_t>(k.kernels().size());
        for (const PlannedKernel &pk : k.kernels()) k.counters_.cache_reads += int64_t(pk.steps.size());
        k.scheduled_.resize(k.kernels().size());
        k.counters_.total_ms = ms_since(start);
        return k;
      } catch (const std::exception &) {
        // Not whole: built again below, and the manifest rewritten.
        k.plan_ = rules::Json();
        k.configs_.clear();
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
  kp->cells.assign(cell_kernels);
  kp->arguments = plan_arguments(k.func_, kp->symbols);
  auto t_build = Clock::now();
  const rules::Rule &rule = *rules::find_rule(plan.rule);
  auto match = rule.match(k.func_, arch);
  if (!match) throw InternalError("the plan's rule no longer matches: " + match.reason());
  k.first_job_ = jobs.size();
  for (const auto &config : plan.configs) {
    k.configs_.push_back(config->to_json());
    ir::PrimFunc s = rule.apply(k.func_, **match, *config).func();
    ++k.counters_.rule_applications;
    kp->kernels.push_back(plan_kernel(s, kp->symbols, sm, options.cache, jobs));
    k.scheduled_.push_back(s);
  }
  k.kernel_plan_ = std::move(kp);
  k.counters_.build_ms = ms_since(t_build);  // the rest when the wave is done
  k.counters_.total_ms = ms_since(start);
  return k;
}

void DynamicKernel::finish(std::vector<runtime::CompileOutcome> &built, double wave_ms,
                           runtime::KernelCache *cache) {
  if (counters_.warm) return;
  size_t job = first_job_;
  for (PlannedKernel &k : kernel_plan_->kernels)
    for (dispatch::KernelStep &st : k.steps) {
      runtime::CompileOutcome &o = built.at(job++);
      if (!o.ok()) throw *o.error;
      (o.result->from_cache ? counters_.cache_reads : counters_.nvrtc_compiles) += 1;
      st.cubin = std::move(o.result->cubin);
    }
  counters_.kernels = static_cast<int64_t>(kernels().size());
  kernel_plan_->validate();
  counters_.build_ms += wave_ms;
  counters_.total_ms += wave_ms;
  if (cache) write_manifest(*cache);
}

void DynamicKernel::write_manifest(runtime::KernelCache &cache) const {
  rules::Json m = {{"plan", plan_}, {"dispatch", kernel_plan_->to_json()}};
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

ir::PrimFunc DynamicKernel::scheduled(int i) const {
  if (i < 0 || i >= int(kernels().size())) throw UserError("no kernel " + std::to_string(i));
  if (!scheduled_[size_t(i)].defined()) {
    const rules::Rule &rule = *rules::find_rule(rule_);
    auto m = rule.match(func_, arch_);
    if (!m) throw InternalError("the plan's rule no longer matches: " + m.reason());
    scheduled_[size_t(i)] = rule.apply(func_, **m, *rule.config_from_json(configs_[size_t(i)])).func();
  }
  return scheduled_[size_t(i)];
}

void DynamicKernel::load(int device) { loaded_ = std::make_shared<dispatch::Dispatcher>(kernel_plan_, device); }

const dispatch::Dispatcher &DynamicKernel::dispatcher() const {
  if (!loaded_) throw UserError("a dynamic kernel launches after load(device)");
  return *loaded_;
}

BoundLaunch DynamicKernel::bind(const int64_t *sizes, const uint64_t *buffers, size_t buffer_count) const {
  return dispatcher().bind(sizes, buffers, buffer_count);
}

BoundLaunch DynamicKernel::bind_kernel(int kernel, const int64_t *sizes, const uint64_t *buffers,
                                       size_t buffer_count) const {
  return dispatcher().bind_kernel(kernel, sizes, buffers, buffer_count);
}

void DynamicKernel::launch(const std::vector<uint64_t> &buffers, const std::vector<int64_t> &sizes,
                           void *stream) const {
  dispatcher().launch(buffers, sizes, stream);
}

}  // namespace tessera::tuning
