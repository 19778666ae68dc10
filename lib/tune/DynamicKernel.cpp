//===- lib/tune/DynamicKernel.cpp - A function's kernels for size ranges --===//
#include "tessera/tune/DynamicKernel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <optional>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/lower/Lower.h"
#include "tessera/lower/TensorMaps.h"
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
  rules::Json j = {{"steps", rules::Json::array()}, {"workspace", rules::Json::array()}};
  for (const PlannedKernel::Step &st : k.steps) {
    rules::Json s = {{"entry", st.entry},
                     {"cubin_key", st.cache_key},
                     {"target", st.target},
                     {"dynamic_shared_bytes", st.dynamic_shared_bytes},
                     {"params", rules::Json::array()}};
    for (const PlannedKernel::Param &p : st.params)
      s["params"].push_back(
          {{"name", p.name}, {"symbol", p.symbol}, {"bytes", p.bytes}, {"buffer", p.buffer}, {"workspace", p.workspace}});
    for (const PlannedKernel::TensorMap &m : st.tensor_maps) {
      rules::Json shape = rules::Json::array();
      for (const SizeProgram &d : m.tensor.shape) shape.push_back(d.to_json());
      s["tensor_maps"].push_back({{"buffer", m.buffer}, {"name", m.tensor.name}, {"dtype", m.dtype.str()},
                                  {"shape", shape}, {"box", m.box.extent}, {"swizzle", m.box.swizzle_bytes}});
    }
    for (int d = 0; d < 3; ++d) {
      s["grid"].push_back(st.grid[d].to_json());
      s["block"].push_back(st.block[d].to_json());
    }
    j["steps"].push_back(std::move(s));
  }
  for (const PlannedKernel::BufferShape &w : k.workspace) {
    rules::Json shape = rules::Json::array();
    for (const SizeProgram &d : w.shape) shape.push_back(d.to_json());
    j["workspace"].push_back({{"name", w.name}, {"shape", shape}, {"element_bits", w.element_bits}});
  }
  return j;
}

/// A plan kernel as the manifest holds it, its cubins read from `cache`;
/// UserError (so the start is rebuilt cold) for anything not whole.
PlannedKernel kernel_from_json(const rules::Json &j, size_t symbols, const std::string &sm,
                               runtime::KernelCache &cache) {
  PlannedKernel k;
  for (const rules::Json &s : j.at("steps")) {
    PlannedKernel::Step st;
    st.entry = s.at("entry").get<std::string>();
    st.cache_key = s.at("cubin_key").get<std::string>();
    st.target = s.value("target", sm);
    st.dynamic_shared_bytes = s.at("dynamic_shared_bytes").get<int64_t>();
    for (const rules::Json &p : s.at("params"))
      st.params.push_back({p.at("name").get<std::string>(), p.at("symbol").get<int>(), p.at("bytes").get<int>(),
                           p.at("buffer").get<int>(), p.at("workspace").get<int>()});
    for (const rules::Json &m : s.value("tensor_maps", rules::Json::array())) {
      PlannedKernel::TensorMap t;
      t.buffer = m.at("buffer").get<int>();
      std::optional<ir::DataType> dtype = ir::DataType::parse(m.at("dtype").get<std::string>());
      if (t.buffer < 0 || !dtype) throw UserError("a tensor map names no buffer or type");
      t.dtype = *dtype;
      t.tensor = {m.at("name").get<std::string>(), {}, int64_t(dtype->bits())};
      for (const rules::Json &d : m.at("shape")) t.tensor.shape.push_back(SizeProgram::from_json(d, symbols));
      t.box = {m.at("box").get<std::vector<int64_t>>(), m.at("swizzle").get<int>(), dtype->bytes()};
      if (!t.box.check().empty() || t.box.extent.size() != t.tensor.shape.size())
        throw UserError("a tensor map's box is not one TMA copies");
      st.tensor_maps.push_back(std::move(t));
    }
    if (st.tensor_maps.size() > size_t(BoundLaunch::kMaxTensorMaps)) throw UserError("too many tensor maps");
    for (int d = 0; d < 3; ++d) {
      st.grid[d] = SizeProgram::from_json(s.at("grid").at(d), symbols);
      st.block[d] = SizeProgram::from_json(s.at("block").at(d), symbols);
    }
    std::optional<runtime::CompileResult> r = cache.load(st.cache_key, st.target);
    if (!r) throw UserError("the cubin of kernel " + st.entry + " is not in the cache");
    st.cubin = std::move(r->cubin);
    k.steps.push_back(std::move(st));
  }
  for (const rules::Json &w : j.at("workspace")) {
    PlannedKernel::BufferShape ws{w.at("name").get<std::string>(), {}, w.at("element_bits").get<int64_t>()};
    for (const rules::Json &d : w.at("shape")) ws.shape.push_back(SizeProgram::from_json(d, symbols));
    k.workspace.push_back(std::move(ws));
  }
  // Every parameter names a slot that exists.
  for (const PlannedKernel::Step &st : k.steps)
    for (const PlannedKernel::Param &p : st.params)
      if (p.workspace >= int(k.workspace.size()) || p.symbol >= int(symbols) ||
          (p.symbol < 0 && p.workspace < 0 && p.buffer < 0))
        throw UserError("a kernel parameter names no slot");
  if (k.steps.empty() || k.steps.size() > size_t(KernelLaunch::kMaxSteps))
    throw UserError("a kernel has " + std::to_string(k.steps.size()) + " steps");
  return k;
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
        for (const rules::Json &j : m.at("kernels"))
          k.kernels_.push_back(kernel_from_json(j, k.symbols_.size(), sm, *options.cache));
        for (int c : cell_kernels)
          if (c < 0 || c >= int(k.kernels_.size())) throw UserError("a cell names no kernel");
        k.kernel_of_cell_.assign(cell_kernels);
        k.counters_.warm = true;
        k.counters_.kernels = static_cast<int64_t>(k.kernels_.size());
        for (const PlannedKernel &pk : k.kernels_) k.counters_.cache_reads += int64_t(pk.steps.size());
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
    k.kernels_.push_back(k.plan_kernel(s, sm, options.cache, jobs));
    k.scheduled_.push_back(s);
  }
  k.counters_.build_ms = ms_since(t_build);  // the rest when the wave is done
  k.counters_.total_ms = ms_since(start);
  return k;
}

PlannedKernel DynamicKernel::plan_kernel(const ir::PrimFunc &s, const std::string &sm, runtime::KernelCache *cache,
                                        std::vector<runtime::CompileJob> &jobs) const {
  lower::KernelSplit split = lower::split_kernels(s);
  if (split.kernels.size() > size_t(KernelLaunch::kMaxSteps))
    throw UserError("'" + func_.name() + "' runs as " + std::to_string(split.kernels.size()) +
                    " kernels; a dynamic kernel takes at most " + std::to_string(KernelLaunch::kMaxSteps));
  PlannedKernel pk;
  // Every kernel of the split takes the function's parameters, in order,
  // then one buffer per workspace buffer: each parameter's slot.
  std::unordered_map<const ir::VarNode *, std::pair<int, int>> slot;  // (buffer, workspace)
  const std::vector<ir::Var> &split_params = split.kernels[0].params();
  int buffers = 0;
  for (size_t i = 0; i < split_params.size(); ++i) {
    if (i >= s.params().size()) slot[split_params[i].get()] = {-1, int(i - s.params().size())};
    else if (s.buffer_of(s.params()[i]).defined()) slot[split_params[i].get()] = {buffers++, -1};
  }
  for (const ir::Buffer &w : split.workspace) pk.workspace.push_back(PlannedKernel::BufferShape::of(w, symbols_));
  // An undefined extent is an unused axis: 1.
  auto program = [&](const ir::Expr &e) {
    return e.defined() ? SizeProgram::compile(e, symbols_) : SizeProgram::constant(1);
  };
  for (const ir::PrimFunc &kf : split.kernels) {
    lower::LoweredFunc l = lower::lower(kf);
    PlannedKernel::Step st;
    // TMA copies: a tensor map per (tensor, box), encoded at bind().
    for (const lower::TensorMapParam &m : lower::tensor_map_params(l)) {
      const ir::Var &v = l.params[m.param].var;
      auto it = slot.find(v.get());
      const size_t i = size_t(std::find_if(split_params.begin(), split_params.end(),
                                           [&](const ir::Var &p) { return p.same_as(v); }) -
                              split_params.begin());
      if (it == slot.end() || it->second.first < 0 || i >= s.params().size())
        throw UserError("kernel '" + l.name + "' of '" + func_.name() + "' copies '" + v.name() +
                        "' by TMA; a dynamic kernel encodes tensor maps of the function's buffers only");
      const ir::Buffer &b = s.buffer_of(s.params()[i]);
      st.tensor_maps.push_back({it->second.first, PlannedKernel::BufferShape::of(b, symbols_), b.dtype(), m.box});
    }
    if (st.tensor_maps.size() > size_t(BoundLaunch::kMaxTensorMaps))
      throw UserError("kernel '" + l.name + "' takes " + std::to_string(st.tensor_maps.size()) +
                      " tensor maps; a bound launch holds " + std::to_string(BoundLaunch::kMaxTensorMaps));
    st.entry = codegen::cuda_kernel_name(l);
    for (const lower::KernelParam &p : l.params) {
      if (p.is_buffer()) {
        auto it = slot.find(p.var.get());
        if (it == slot.end()) throw InternalError("kernel buffer parameter '" + p.var.name() + "' is not a parameter");
        st.params.push_back({p.buffer.name(), -1, 0, it->second.first, it->second.second});
        continue;
      }
      auto it = std::find(symbols_.begin(), symbols_.end(), p.var.name());
      if (it == symbols_.end()) throw UserError("kernel parameter '" + p.var.name() + "' is not a symbol of the plan");
      st.params.push_back({p.var.name(), int(it - symbols_.begin()), p.var.dtype().bytes()});
    }
    for (int d = 0; d < 3; ++d) st.grid[d] = program(l.launch.grid[d]), st.block[d] = program(l.launch.block[d]);
    st.dynamic_shared_bytes = l.dynamic_shared_bytes;
    st.target = codegen::cuda_target_for(sm, l.body);
    runtime::CompileOptions o{.arch = st.target, .name = l.name, .cache = cache};
    std::string source = codegen::codegen_cuda(l, codegen::CudaOptions{.arch = st.target});
    if (cache) st.cache_key = runtime::kernel_cache_key(source, o);
    jobs.push_back({std::move(source), o});
    pk.steps.push_back(std::move(st));
  }
  return pk;
}

PlannedKernel::BufferShape PlannedKernel::BufferShape::of(const ir::Buffer &buffer,
                                                          const std::vector<std::string> &symbols) {
  BufferShape s{buffer.name(), {}, int64_t(buffer.dtype().bits()) * buffer.dtype().lanes()};
  for (const ir::Expr &d : buffer.shape()) s.shape.push_back(SizeProgram::compile(d, symbols));
  return s;
}

int64_t PlannedKernel::BufferShape::bytes(const int64_t *sizes) const {
  int64_t elements = 1;
  for (const SizeProgram &d : shape) elements *= std::max<int64_t>(d.eval(sizes), 0);
  return (elements * element_bits + 7) / 8;
}

bool KernelLaunch::has_work() const {
  for (int s = 0; s < steps; ++s)
    if (step[s].has_work) return true;
  return false;
}

void DynamicKernel::finish(std::vector<runtime::CompileOutcome> &built, double wave_ms,
                           runtime::KernelCache *cache) {
  if (counters_.warm) return;
  size_t job = first_job_;
  for (PlannedKernel &k : kernels_)
    for (PlannedKernel::Step &st : k.steps) {
      runtime::CompileOutcome &o = built.at(job++);
      if (!o.ok()) throw *o.error;
      (o.result->from_cache ? counters_.cache_reads : counters_.nvrtc_compiles) += 1;
      st.cubin = std::move(o.result->cubin);
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
  l.steps = static_cast<int>(k.steps.size());
  for (int s = 0; s < l.steps; ++s) {
    const PlannedKernel::Step &st = k.steps[size_t(s)];
    LaunchDims &out = l.step[s];
    int64_t g[3], b[3];
    out.has_work = true;
    for (int d = 0; d < 3; ++d) {
      g[d] = st.grid[d].eval(sizes), b[d] = st.block[d].eval(sizes);
      if (g[d] <= 0 || b[d] <= 0) out.has_work = false;
    }
    if (out.has_work) {
      out.grid = runtime::Dim3(unsigned(g[0]), unsigned(g[1]), unsigned(g[2]));
      out.block = runtime::Dim3(unsigned(b[0]), unsigned(b[1]), unsigned(b[2]));
    }
    out.dynamic_shared_bytes = size_t(st.dynamic_shared_bytes);
  }
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

namespace {

/// Every combination of the cells' edges, one value per symbol: where a
/// workspace size is largest when it grows or shrinks with each symbol.
template <typename Fn>
void for_each_cell_corner(const std::vector<std::vector<int64_t>> &ends, const std::vector<int64_t> &lows, Fn &&fn) {
  std::vector<std::vector<int64_t>> values(ends.size());
  for (size_t s = 0; s < ends.size(); ++s) {
    values[s].push_back(lows[s]);
    for (size_t i = 0; i < ends[s].size(); ++i) {
      values[s].push_back(ends[s][i]);
      if (i + 1 < ends[s].size()) values[s].push_back(ends[s][i] + 1);
    }
  }
  std::vector<int64_t> at(ends.size());
  std::vector<size_t> index(ends.size(), 0);
  while (true) {
    for (size_t s = 0; s < ends.size(); ++s) at[s] = values[s][index[s]];
    fn(at.data());
    size_t s = ends.size();
    while (s > 0 && ++index[s - 1] == values[s - 1].size()) index[--s] = 0;
    if (s == 0) return;
  }
}

}  // namespace

void DynamicKernel::load(int device) {
  auto loaded = std::make_shared<Loaded>();
  loaded->device = device;
  // One workspace for the whole plan (a launch uses one plan kernel's
  // buffers), each buffer reserved at its largest over the cells' edges.
  size_t total = 0;
  for (const PlannedKernel &k : kernels_) {
    std::vector<std::pair<size_t, int64_t>> spans;
    size_t offset = 0;
    for (const PlannedKernel::BufferShape &w : k.workspace) {
      int64_t most = 0;
      for_each_cell_corner(ends_, lows_, [&](const int64_t *sizes) { most = std::max(most, w.bytes(sizes)); });
      offset = (offset + 255) / 256 * 256;
      spans.emplace_back(offset, most);
      offset += size_t(most);
    }
    total = std::max(total, offset);
    loaded->spans.push_back(std::move(spans));
  }
  if (total > 0) loaded->workspace = runtime::DeviceBuffer(total, device);
  for (const PlannedKernel &k : kernels_) {
    std::vector<runtime::Kernel> steps;
    for (const PlannedKernel::Step &st : k.steps) {
      loaded->modules.push_back(runtime::Module::load(st.cubin, device));
      steps.push_back(loaded->modules.back().kernel(st.entry));
      if (st.dynamic_shared_bytes > 0) steps.back().set_dynamic_shared_memory(size_t(st.dynamic_shared_bytes));
    }
    loaded->kernels.push_back(std::move(steps));
  }
  loaded_ = std::move(loaded);
}

uint64_t DynamicKernel::workspace_address(int kernel, int w, const int64_t *sizes) const {
  const auto [offset, reserved] = loaded_->spans[size_t(kernel)][size_t(w)];
  const PlannedKernel::BufferShape &ws = kernels_[size_t(kernel)].workspace[size_t(w)];
  if (ws.bytes(sizes) > reserved)
    throw UserError("launch: the workspace buffer '" + ws.name + "' needs " + std::to_string(ws.bytes(sizes)) +
                    " bytes at these sizes, more than its largest at the cells' edges (" + std::to_string(reserved) +
                    ")");
  return loaded_->workspace.ptr() + offset;
}

std::vector<runtime::TensorMapEncoding> DynamicKernel::tensor_map_encodings(int kernel, int step,
                                                                          const int64_t *sizes) const {
  if (kernel < 0 || kernel >= int(kernels_.size()) || step < 0 || step >= int(kernels_[size_t(kernel)].steps.size()))
    throw UserError("no step " + std::to_string(step) + " of kernel " + std::to_string(kernel));
  std::vector<runtime::TensorMapEncoding> out;
  for (const PlannedKernel::TensorMap &m : kernels_[size_t(kernel)].steps[size_t(step)].tensor_maps) {
    std::vector<int64_t> shape;
    for (const SizeProgram &d : m.tensor.shape) shape.push_back(d.eval(sizes));
    out.push_back(runtime::tensor_map_encoding(m.box, m.dtype, shape, m.tensor.name));
  }
  return out;
}

BoundLaunch DynamicKernel::bind(const int64_t *sizes, const uint64_t *buffers, size_t buffer_count) const {
  return bind_kernel(-1, sizes, buffers, buffer_count);
}

BoundLaunch DynamicKernel::bind_kernel(int kernel, const int64_t *sizes, const uint64_t *buffers,
                                       size_t buffer_count) const {
  if (!loaded_) throw UserError("a dynamic kernel launches after load(device)");
  if (kernel >= int(kernels_.size())) throw UserError("no kernel " + std::to_string(kernel));
  BoundLaunch b;
  b.dims = select(sizes);
  if (kernel >= 0 && kernel != b.dims.kernel) {
    b.dims.kernel = kernel;  // another kernel of the plan at these sizes: its own launch extents
    fill_dims(b.dims, sizes);
  }
  const PlannedKernel &k = kernels_[size_t(b.dims.kernel)];
  for (size_t s = 0; s < k.steps.size(); ++s) {
    const PlannedKernel::Step &st = k.steps[s];
    BoundLaunch::Step &out = b.step[s];
    out.kernel = &loaded_->kernels[size_t(b.dims.kernel)][s];
    out.count = 0;
    out.map_count = 0;
    if (!st.tensor_maps.empty()) {
      std::vector<runtime::TensorMapEncoding> encodings = tensor_map_encodings(b.dims.kernel, int(s), sizes);
      for (size_t i = 0; i < encodings.size(); ++i) {
        const int buffer = st.tensor_maps[i].buffer;
        if (size_t(buffer) >= buffer_count)
          throw UserError("launch: " + std::to_string(buffer_count) + " buffers for kernel " + st.entry +
                          ", which copies buffer " + std::to_string(buffer + 1) + " by TMA");
        auto map = runtime::encode_tensor_map(encodings[i], buffers[buffer], loaded_->device);
        std::memcpy(out.maps[out.map_count++], map.data(), map.size());
      }
    }
    for (const PlannedKernel::Param &p : st.params) {
      if (out.count == BoundLaunch::kMaxParams)
        throw UserError(st.entry + " has more parameters than a bound launch holds");
      uint64_t &v = out.values[out.count++];
      if (p.symbol >= 0) {
        const int64_t size = sizes[size_t(p.symbol)];
        v = p.bytes == 8 ? uint64_t(size) : uint64_t(uint32_t(int32_t(size)));  // a 4-byte scalar: the low 4 bytes
      } else if (p.workspace >= 0) {
        v = workspace_address(b.dims.kernel, p.workspace, sizes);
      } else {
        if (size_t(p.buffer) >= buffer_count)
          throw UserError("launch: " + std::to_string(buffer_count) + " buffers for kernel " + st.entry +
                          ", which reads buffer " + std::to_string(p.buffer + 1) + " ('" + p.name + "')");
        v = buffers[p.buffer];
      }
    }
  }
  return b;
}

void BoundLaunch::launch(void *stream) {
  for (int s = 0; s < dims.steps; ++s) {
    const LaunchDims &d = dims.step[s];
    if (d.has_work) step[s].kernel->launch_raw(d.grid, d.block, params(s), d.dynamic_shared_bytes, stream);
  }
}

void DynamicKernel::launch(const std::vector<uint64_t> &buffers, const std::vector<int64_t> &sizes,
                           void *stream) const {
  if (sizes.size() != symbols_.size())
    throw UserError("launch: " + std::to_string(sizes.size()) + " sizes for " + std::to_string(symbols_.size()) +
                    " symbols");
  bind(sizes.data(), buffers.data(), buffers.size()).launch(stream);
}

}  // namespace tessera::tune
