//===- lib/api/Kernel.cpp - Running, saving and loading a tuned kernel -----===//
#include <fmt/format.h>

#include "KernelImpl.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/dispatch/Package.h"
#include "tessera/ir/DataType.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"
#include "tessera/support/Version.h"
#include "tessera/tune/PlanKernel.h"

namespace tessera {

namespace {

using Json = nlohmann::ordered_json;

const Kernel::Impl &checked(const std::shared_ptr<Kernel::Impl> &impl) {
  if (!impl) throw UserError("an empty tessera::Kernel (tune or load one first)");
  return *impl;
}

/// Each array's dtype against the parameter's (the plan's shapes check the rest).
void check_dtypes(const std::vector<runtime::NDArray> &args, const std::vector<dispatch::Argument> &params,
                  const std::string &name) {
  if (args.size() != params.size())
    throw UserError(fmt::format("'{}' takes {} arrays, not {}", name, params.size(), args.size()));
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].dtype().str() != params[i].dtype)
      throw UserError(fmt::format("argument {} ('{}') of '{}' is {}; the kernel takes {}", i, params[i].buffer.name,
                                  name, args[i].dtype().str(), params[i].dtype));
}

}  // namespace

std::unique_ptr<runtime::KernelCache> open_cache(const std::string &option) {
  if (option.empty()) return nullptr;
  return std::make_unique<runtime::KernelCache>(option == "default" ? runtime::KernelCache::default_dir()
                                                                    : std::filesystem::path(option));
}

ir::PrimFunc bound(const ir::PrimFunc &f, const std::map<std::string, int64_t> &dims) {
  if (dims.empty()) return f;
  runtime::DimBindings b(dims.begin(), dims.end());
  return analysis::specialize(f, b);
}

const dispatch::Dispatcher &Kernel::Impl::dispatcher() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (dynamic) {
    if (!dynamic->loaded()) dynamic->load(0);
    return dynamic->dispatcher();
  }
  if (!dispatcher_) dispatcher_ = std::make_unique<dispatch::Dispatcher>(plan, 0);
  return *dispatcher_;
}

std::shared_ptr<Kernel::Impl> cpu_kernel(const ir::PrimFunc &scheduled, Report report) {
  auto impl = std::make_shared<Kernel::Impl>();
  impl->target = Target::cpu();
  impl->name = scheduled.name();
  impl->func = scheduled;
  impl->script = script::print(scheduled);
  for (const ir::Var &v : scheduled.shape_vars()) impl->symbols.push_back(v.name());
  impl->arguments = tuning::plan_arguments(scheduled, impl->symbols);
  impl->report = std::move(report);
  std::unique_ptr<runtime::Backend> llvm = runtime::make_backend("llvm", {.fuse_multiply_add = true});
  if (std::string why = llvm->unavailable(); !why.empty()) throw UserError("the CPU target needs the LLVM JIT: " + why);
  impl->executable = llvm->build(scheduled);
  return impl;
}

Kernel::Kernel() = default;
const Target &Kernel::target() const { return checked(impl_).target; }
const std::string &Kernel::name() const { return checked(impl_).name; }
const Report &Kernel::report() const { return checked(impl_).report; }
const std::string &Kernel::script() const { return checked(impl_).script; }
const std::string &Kernel::cuda_source() const { return checked(impl_).cuda_source; }
const std::vector<std::string> &Kernel::symbols() const { return checked(impl_).symbols; }

std::vector<Parameter> Kernel::parameters() const {
  const Impl &k = checked(impl_);
  const std::vector<dispatch::Argument> &args =
      k.target.is_cpu() ? k.arguments : k.dynamic ? k.dynamic->kernel_plan()->arguments : k.plan->arguments;
  std::vector<Parameter> out;
  for (const dispatch::Argument &a : args) out.push_back({a.buffer.name, a.dtype, a.written});
  return out;
}

void Kernel::run(std::vector<runtime::NDArray> &args) const {
  const Impl &k = checked(impl_);
  if (k.target.is_cpu()) {
    check_dtypes(args, k.arguments, k.name);
    k.executable->run(args);
    return;
  }
  const dispatch::Dispatcher &d = k.dispatcher();
  const dispatch::KernelPlan &plan = d.plan();
  check_dtypes(args, plan.arguments, k.name);
  std::vector<std::vector<int64_t>> shapes;
  for (const runtime::NDArray &a : args) shapes.push_back(a.shape());
  const std::vector<int64_t> sizes = plan.sizes_of(shapes);
  std::vector<runtime::DeviceBuffer> buffers;
  std::vector<uint64_t> pointers;
  for (const runtime::NDArray &a : args) {
    buffers.push_back(runtime::DeviceBuffer::from_host(a, d.device()));
    pointers.push_back(buffers.back().ptr());
  }
  d.launch(pointers, sizes);
  runtime::Device::get(d.device()).synchronize();
  for (size_t i = 0; i < args.size(); ++i)
    if (plan.arguments[i].written) buffers[i].copy_to(args[i]);
}

void Kernel::run(const std::vector<DLTensor *> &args, void *stream) const {
  const Impl &k = checked(impl_);
  if (k.target.is_gpu()) {
    k.dispatcher().launch(args.data(), args.size(), stream);
    return;
  }
  if (stream) throw UserError("a CPU kernel runs on no stream: pass none");
  if (args.size() != k.arguments.size())
    throw UserError(fmt::format("'{}' takes {} tensors, not {}", k.name, k.arguments.size(), args.size()));
  // Host tensors are run in place: arrays over their memory, no copies.
  std::vector<runtime::NDArray> views;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i]) throw UserError(fmt::format("tensor {} of '{}' is null", i, k.name));
    const uint64_t address = dispatch::tensor_address(*args[i], k.arguments[i], i, -1);
    std::optional<ir::DataType> dtype = ir::DataType::parse(k.arguments[i].dtype);
    views.push_back(runtime::NDArray::wrap(*dtype, dispatch::tensor_shape(*args[i]),
                                           reinterpret_cast<void *>(uintptr_t(address))));
  }
  k.executable->run(views);
}

void Kernel::run(const std::vector<uint64_t> &device_pointers, const std::vector<int64_t> &sizes, void *stream) const {
  const Impl &k = checked(impl_);
  if (k.target.is_cpu()) throw UserError("'" + k.name + "' is a CPU kernel: run it on arrays or host tensors");
  k.dispatcher().launch(device_pointers, sizes, stream);
}

void Kernel::save(const std::string &path) const {
  const Impl &k = checked(impl_);
  dispatch::Package p;
  p.kind = k.target.is_cpu() ? "cpu" : "cuda";
  p.meta = {{"name", k.name},
            {"target", k.target.is_cpu() ? "cpu" : k.target.arch().to_json().dump()},
            {"script", k.script},
            {"cuda_source", k.cuda_source},
            {"report", report_json(k.report)},
            {"tessera", std::string(tessera::version())}};
  // A dynamic kernel's plan as it stands (with what measure() reassigned); no device needed.
  if (k.target.is_gpu()) p.plan = std::make_shared<dispatch::KernelPlan>(k.dynamic ? *k.dynamic->kernel_plan() : *k.plan);
  dispatch::save_package(path, p);
}

Kernel load(const std::string &path) {
  dispatch::Package p = dispatch::load_package(path);
  Report report;
  try {
    report = report_from_json(p.meta.at("report"));
  } catch (const Json::exception &e) {
    throw UserError(path + ": its report is damaged: " + e.what());
  }
  const std::string text = p.meta.value("script", "");
  if (p.kind == "cpu") {
    ir::PrimFunc f = script::parse_func(text, path + " (its scheduled function)");
    return Kernel(cpu_kernel(f, std::move(report)));
  }
  auto impl = std::make_shared<Kernel::Impl>();
  try {
    impl->target = Target::gpu(Arch::parse(p.meta.at("target").get<std::string>(), path + " (its GPU)"));
  } catch (const Json::exception &e) {
    throw UserError(path + ": its GPU description is damaged: " + e.what());
  }
  impl->name = p.plan->name;
  impl->symbols = p.plan->symbols;
  impl->script = text;
  impl->cuda_source = p.meta.value("cuda_source", "");
  impl->report = std::move(report);
  impl->plan = p.plan;
  return Kernel(std::move(impl));
}

Json report_json(const Report &r) {
  Json ranked = Json::array();
  for (const Candidate &c : r.ranked)
    ranked.push_back({{"origin", c.origin},
                      {"config", c.config},
                      {"status", c.status},
                      {"error", c.error},
                      {"measured", c.measured},
                      {"time_us", c.time_us},
                      {"estimate_us", c.estimate_us}});
  return {{"target", r.target},       {"rule", r.rule},         {"measured", r.measured},
          {"why_unmeasured", r.why_unmeasured}, {"reference", r.reference}, {"from_database", r.from_database},
          {"tune_ms", r.tune_ms},     {"ranked", ranked},       {"json", r.json}};
}

Report report_from_json(const Json &j) {
  Report r;
  r.target = j.at("target").get<std::string>();
  r.rule = j.at("rule").get<std::string>();
  r.measured = j.at("measured").get<bool>();
  r.why_unmeasured = j.at("why_unmeasured").get<std::string>();
  r.reference = j.at("reference").get<std::string>();
  r.from_database = j.at("from_database").get<bool>();
  r.tune_ms = j.at("tune_ms").get<double>();
  r.json = j.at("json").get<std::string>();
  for (const Json &c : j.at("ranked"))
    r.ranked.push_back({c.at("origin").get<std::string>(), c.at("config").get<std::string>(),
                        c.at("status").get<std::string>(), c.at("error").get<std::string>(),
                        c.at("measured").get<bool>(), c.at("time_us").get<double>(), c.at("estimate_us").get<double>()});
  return r;
}

}  // namespace tessera
