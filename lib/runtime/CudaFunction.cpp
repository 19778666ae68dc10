//===- lib/runtime/CudaFunction.cpp - A PrimFunc as a runnable GPU kernel ---===//
//
// build: lower -> codegen_cuda -> compile_cuda. run/time: bind the arrays to
// the kernel parameters (the interpreter's binding rules), evaluate the
// launch extents, copy, launch.
//
//===----------------------------------------------------------------------===//
#include "tessera/runtime/CudaFunction.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "tessera/arith/Analyzer.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/lower/TensorMaps.h"
#include "tessera/runtime/TmaEncoding.h"
#include "tessera/script/Printer.h"
#include "SolveDimension.h"

namespace tessera::runtime {

struct CudaFunction::State {
  ir::PrimFunc func;
  std::vector<CompiledKernel> kernels;
  std::vector<ir::Buffer> workspace;
  /// The parameters every kernel takes: the function's, then one handle per
  /// workspace buffer (lower::split_kernels).
  std::vector<ir::Var> kernel_params;
  /// Buffers the function stores into (copied back after a run).
  std::vector<bool> param_written;
  /// Every kernel's source, in launch order.
  std::string all_sources;

  std::mutex mutex;
  /// Loaded modules by device ordinal, one per kernel.
  std::unordered_map<int, std::vector<std::unique_ptr<Module>>> modules;
};

namespace {

std::string default_arch() {
  if (driver_status() == DriverStatus::Ok) return query_device(0).arch();
  return "sm_90";
}

/// "sm_90" / "sm_90a" -> {9, 0}; UserError otherwise.
std::pair<int, int> parse_arch(const std::string &arch) {
  std::string digits;
  if (arch.rfind("sm_", 0) == 0) {
    for (char c : arch.substr(3)) {
      if (!std::isdigit(static_cast<unsigned char>(c))) break;
      digits += c;
    }
  }
  if (digits.size() < 2) throw UserError("malformed architecture '" + arch + "' (expected sm_XX, e.g. sm_90)");
  return {std::stoi(digits.substr(0, digits.size() - 1)), digits.back() - '0'};
}

/// The values of the kernel's integer parameters and shape variables for one
/// call, checked against every buffer dimension (the interpreter's rules).
class ArgBinder {
 public:
  ArgBinder(const ir::PrimFunc &f, const std::vector<NDArray> &args) : f_(f), args_(args) {
    const auto &params = f.params();
    if (args.size() != params.size())
      throw UserError("function '" + f.name() + "' takes " + std::to_string(params.size()) + " arguments, got " +
                      std::to_string(args.size()));
    // Scalar parameters.
    for (size_t i = 0; i < params.size(); ++i) {
      const ir::Var &v = params[i];
      if (f.buffer_of(v).defined()) continue;
      if (args[i].numel() != 1)
        throw UserError(arg_name(i) + ": scalar parameter of type " + v.dtype().str() +
                        " needs a one-element array, got " + args[i].type_str());
      if (!v.dtype().is_float()) bind(v, args[i].dtype().is_float() ? int64_t(args[i].get(0)) : args[i].get_int(0));
    }
    // Types, ranks, shape variables by first appearance.
    for (size_t i = 0; i < params.size(); ++i) {
      ir::Buffer b = f.buffer_of(params[i]);
      if (!b.defined()) continue;
      const NDArray &a = args[i];
      if (a.dtype() != b.dtype())
        throw UserError(arg_name(i) + ": buffer '" + b.name() + "' has dtype " + b.dtype().str() + " but the array is " +
                        a.type_str());
      if (static_cast<int>(a.shape().size()) != b.ndim())
        throw UserError(arg_name(i) + ": buffer '" + b.name() + "' has " + std::to_string(b.ndim()) +
                        " dimensions but the array is " + a.type_str());
      for (int d = 0; d < b.ndim(); ++d)
        if (const auto *v = b.shape()[d].as<ir::VarNode>(); v && !values_.count(v))
          bind(ir::Var::from(b.shape()[d]), a.shape()[d]);
    }
    solve_inner_shape_vars();
    // Every dimension and stride.
    for (size_t i = 0; i < params.size(); ++i) {
      ir::Buffer b = f.buffer_of(params[i]);
      if (!b.defined()) continue;
      const NDArray &a = args[i];
      for (int d = 0; d < b.ndim(); ++d) {
        int64_t want = eval(b.shape()[d], "dimension " + std::to_string(d) + " of buffer '" + b.name() + "'");
        if (want != a.shape()[d])
          throw UserError("shape mismatch for buffer '" + b.name() + "' dimension " + std::to_string(d) +
                          ": expected " + script::print(b.shape()[d]) + " = " + std::to_string(want) + ", got " +
                          std::to_string(a.shape()[d]) + " (array " + a.type_str() + ")");
      }
      if (!b->strides.empty() && a.numel() > 0) {
        int64_t last = 0;
        for (int d = 0; d < b.ndim(); ++d)
          last += (a.shape()[d] - 1) * eval(b->strides[d], "stride " + std::to_string(d) + " of '" + b.name() + "'");
        if (last >= a.numel())
          throw UserError(arg_name(i) + ": the strides of buffer '" + b.name() + "' reach element " +
                          std::to_string(last) + " but the array " + a.type_str() + " has " +
                          std::to_string(a.numel()));
      }
    }
  }

  /// A shape variable found only inside dimensions (`n * 32`) from a
  /// dimension affine in it and in no other unbound variable, as the
  /// interpreter solves it (the dimension check after catches a wrong guess).
  void solve_inner_shape_vars() {
    for (bool progress = true; progress;) {
      progress = false;
      for (size_t i = 0; i < args_.size(); ++i) {
        ir::Buffer b = f_.buffer_of(f_.params()[i]);
        if (!b.defined()) continue;
        for (int d = 0; d < b.ndim(); ++d) {
          std::vector<ir::Var> unbound;
          ir::pre_order_visit(ir::Evaluate::make(b.shape()[d]), [&](const ir::Expr &x) {
            const auto *v = x.as<ir::VarNode>();
            if (!v || values_.count(v)) return;
            for (const ir::Var &u : unbound)
              if (u.get() == v) return;
            unbound.push_back(ir::Var::from(x));
          }, nullptr);
          if (unbound.size() != 1) continue;
          const ir::Var &v = unbound[0];
          auto at = [&](int64_t x) {
            values_[v.get()] = x;
            int64_t r = eval(b.shape()[d], "dimension " + std::to_string(d) + " of buffer '" + b.name() + "'");
            values_.erase(v.get());
            return r;
          };
          const int64_t f0 = at(0), f1 = at(1), f2 = at(2);
          std::optional<int64_t> value = detail::solve_affine_dimension(f0, f1, f2, args_[i].shape()[d]);
          if (!value) continue;
          bind(v, *value);
          progress = true;
        }
      }
    }
  }

  /// `e` (an integer expression of the parameters and shape variables) as a
  /// constant; UserError naming `what` when a variable has no value.
  int64_t eval(const ir::Expr &e, const std::string &what) const {
    struct CollectVars : ir::IRVisitor {
      std::vector<ir::Var> vars;
      void visit(const ir::Expr &x) override {
        if (x.as<ir::VarNode>()) vars.push_back(ir::Var::from(x));
        IRVisitor::visit(x);
      }
      using IRVisitor::visit;
    } collect;
    collect.visit(e);
    std::vector<std::pair<ir::Var, ir::Expr>> map;
    std::string missing;
    for (const ir::Var &v : collect.vars) {
      auto it = values_.find(v.get());
      if (it == values_.end()) missing = v.name();
      else map.emplace_back(v, ir::make_int(v.dtype(), it->second));
    }
    if (!missing.empty())
      throw UserError(what + " of function '" + f_.name() + "' uses '" + missing +
                      "', which no argument determines (bind it through a buffer dimension or a scalar parameter)");
    ir::Expr c = arith::simplify(ir::substitute(e, map));
    auto v = ir::as_const_int(c);
    TESSERA_ICHECK(v) << what << " did not evaluate to a constant: " << script::print(c);
    return *v;
  }

  int64_t value_of(const ir::Var &v) const {
    auto it = values_.find(v.get());
    if (it == values_.end())
      throw UserError("the kernel parameter '" + v.name() + "' of function '" + f_.name() +
                      "' is not determined by the arguments");
    return it->second;
  }

 private:
  void bind(const ir::Var &v, int64_t value) { values_.emplace(v.get(), value); }
  std::string arg_name(size_t i) const {
    return "argument " + std::to_string(i) + " ('" + f_.params()[i].name() + "')";
  }

  const ir::PrimFunc &f_;
  const std::vector<NDArray> &args_;
  std::unordered_map<const ir::VarNode *, int64_t> values_;
};

LaunchDims eval_launch(const lower::LoweredFunc &lf, const ArgBinder &binder) {
  LaunchDims out;
  auto dim = [&](const ir::Expr &e, const char *what) -> unsigned {
    if (!e.defined()) return 1;
    int64_t v = binder.eval(e, what);
    if (v <= 0) out.has_work = false;
    if (v > int64_t(UINT32_MAX)) throw UserError(std::string(what) + " of " + std::to_string(v) + " is too large");
    return static_cast<unsigned>(std::max<int64_t>(v, 0));
  };
  static const char *kGrid[] = {"grid x", "grid y", "grid z"}, *kBlock[] = {"block x", "block y", "block z"};
  out.grid = Dim3(dim(lf.launch.grid[0], kGrid[0]), dim(lf.launch.grid[1], kGrid[1]), dim(lf.launch.grid[2], kGrid[2]));
  out.block =
      Dim3(dim(lf.launch.block[0], kBlock[0]), dim(lf.launch.block[1], kBlock[1]), dim(lf.launch.block[2], kBlock[2]));
  out.dynamic_shared_bytes = static_cast<size_t>(lf.dynamic_shared_bytes);
  return out;
}

/// Device copies of the buffer arguments and the workspace, and each
/// kernel's argument list in its parameter order.
struct DeviceArgs {
  std::vector<DeviceBuffer> buffers;    // one per PrimFunc parameter (empty for scalars)
  std::vector<DeviceBuffer> workspace;  // one per workspace buffer
  std::vector<KernelArgs> args;         // one per kernel
};

DeviceArgs upload(const CudaFunction::State &s, const std::vector<NDArray> &host, const ArgBinder &binder,
                  int device) {
  DeviceArgs out;
  const auto &params = s.func.params();
  out.buffers.resize(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    if (!s.func.buffer_of(params[i]).defined()) continue;
    // cuMemAlloc refuses 0 bytes; an empty array gets a small buffer it never reads.
    out.buffers[i] = DeviceBuffer(std::max<size_t>(host[i].nbytes(), 16), device);
    if (host[i].nbytes() > 0) out.buffers[i].copy_from_host(host[i].data(), host[i].nbytes());
  }
  // Each workspace buffer's shape, bound (its allocation; a tensor map's extents).
  std::vector<std::vector<int64_t>> workspace_shapes;
  for (const ir::Buffer &w : s.workspace) {
    std::vector<int64_t> &shape = workspace_shapes.emplace_back();
    int64_t n = w.dtype().bytes();
    for (size_t d = 0; d < w.shape().size(); ++d) {
      shape.push_back(binder.eval(w.shape()[d], "dimension " + std::to_string(d) + " of the workspace buffer '" +
                                                    w.name() + "'"));
      n *= shape.back();
    }
    out.workspace.emplace_back(std::max<size_t>(static_cast<size_t>(std::max<int64_t>(n, 0)), 16), device);
  }
  // Kernel parameter -> (is workspace, index).
  std::unordered_map<const ir::VarNode *, std::pair<bool, size_t>> slot;
  for (size_t i = 0; i < s.kernel_params.size(); ++i)
    slot[s.kernel_params[i].get()] = i < params.size() ? std::pair{false, i} : std::pair{true, i - params.size()};
  for (const CompiledKernel &k : s.kernels) {
    KernelArgs args;
    for (const lower::KernelParam &p : k.lowered.params) {
      auto it = slot.find(p.var.get());
      if (p.is_buffer()) {
        TESSERA_ICHECK(it != slot.end()) << "kernel buffer parameter '" << p.var.name() << "' is not a parameter";
        args.buffer(it->second.first ? out.workspace[it->second.second] : out.buffers[it->second.second]);
        continue;
      }
      // A scalar: from its array (converted to the parameter's dtype) or, for
      // a shape variable, from the binding.
      NDArray v(p.var.dtype(), {});
      if (it != slot.end() && !it->second.first && p.var.dtype().is_float()) v.set(0, host[it->second.second].get(0));
      else v.set_int(0, binder.value_of(p.var));
      args.raw(v.data(), v.nbytes(), v.nbytes());
    }
    // Then one tensor map per lower::tensor_map_params entry, encoded from
    // the device copy and the shape of the array its buffer parameter is.
    for (const lower::TensorMapParam &m : k.tensor_maps) {
      const lower::KernelParam &p = k.lowered.params[m.param];
      auto it = slot.find(p.var.get());
      TESSERA_ICHECK(it != slot.end()) << "tensor map source '" << p.var.name() << "' is not a parameter";
      auto [is_workspace, index] = it->second;
      const ir::DataType dtype = is_workspace ? s.workspace[index].dtype() : host[index].dtype();
      const std::vector<int64_t> &shape = is_workspace ? workspace_shapes[index] : host[index].shape();
      const DeviceBuffer &buffer = is_workspace ? out.workspace[index] : out.buffers[index];
      TensorMapEncoding e = tensor_map_encoding(m.box, dtype, shape, p.buffer.name());
      std::array<unsigned char, kTensorMapBytes> map = encode_tensor_map(e, buffer.ptr(), device);
      args.raw(map.data(), map.size(), kTensorMapAlignment);
    }
    out.args.push_back(std::move(args));
  }
  return out;
}

}  // namespace

CudaFunction CudaFunction::build(const ir::PrimFunc &f, const CudaBuildOptions &options) {
  std::string arch = options.arch.empty() ? default_arch() : options.arch;
  return build_for_archs(f, {arch}, options)[0];
}

std::vector<CudaFunction> CudaFunction::build_for_archs(const ir::PrimFunc &f, const std::vector<std::string> &archs,
                                                        const CudaBuildOptions &options) {
  if (archs.empty()) throw UserError("no architecture to compile for");
  lower::KernelSplit split = lower::split_kernels(f);
  std::vector<lower::LoweredFunc> lowered;
  for (const ir::PrimFunc &k : split.kernels) lowered.push_back(lower::lower(k));
  // One NVRTC program per (architecture, kernel), all compiled in parallel.
  std::vector<CompileJob> jobs;
  for (const std::string &arch : archs) {
    parse_arch(arch);
    for (const lower::LoweredFunc &l : lowered)
      jobs.push_back({codegen::codegen_cuda(l, codegen::CudaOptions{.arch = arch}),
                      CompileOptions{.arch = arch,
                                     .name = l.name,
                                     .extra_options = options.extra_options,
                                     .cache = options.cache}});
  }
  std::vector<CompileOutcome> outcomes;
  if (jobs.size() == 1) {
    CompileOutcome o;
    o.result = compile_cuda(jobs[0].source, jobs[0].options);
    outcomes.push_back(std::move(o));
  } else {
    outcomes = compile_many(jobs);
  }
  for (const CompileOutcome &o : outcomes)
    if (!o.ok()) throw *o.error;
  std::vector<CudaFunction> out;
  std::vector<bool> written = ir::written_params(f);
  size_t job = 0;
  for (size_t a = 0; a < archs.size(); ++a) {
    auto s = std::make_shared<State>();
    s->func = f;
    s->workspace = split.workspace;
    s->kernel_params = split.kernels[0].params();
    s->param_written = written;
    for (const lower::LoweredFunc &l : lowered) {
      CompiledKernel k{l, codegen::cuda_kernel_name(l), jobs[job].source, std::move(*outcomes[job].result),
                       lower::tensor_map_params(l)};
      s->all_sources += (s->all_sources.empty() ? "" : "\n") + k.source;
      s->kernels.push_back(std::move(k));
      ++job;
    }
    out.push_back(CudaFunction(std::move(s)));
  }
  return out;
}

const ir::PrimFunc &CudaFunction::func() const { return s_->func; }
const std::vector<CompiledKernel> &CudaFunction::kernels() const { return s_->kernels; }
const std::vector<ir::Buffer> &CudaFunction::workspace() const { return s_->workspace; }
const lower::LoweredFunc &CudaFunction::lowered() const { return s_->kernels[0].lowered; }
const std::string &CudaFunction::source() const { return s_->all_sources; }
const CompileResult &CudaFunction::compiled() const { return s_->kernels[0].compiled; }
const std::string &CudaFunction::kernel_name() const { return s_->kernels[0].name; }
const std::string &CudaFunction::arch() const { return s_->kernels[0].compiled.arch; }

std::vector<LaunchDims> CudaFunction::launch_dims(const std::vector<NDArray> &args) const {
  ArgBinder binder(s_->func, args);
  std::vector<LaunchDims> out;
  for (const CompiledKernel &k : s_->kernels) out.push_back(eval_launch(k.lowered, binder));
  return out;
}

namespace {

/// The kernels of `s` on `device`, loading the modules on first use. A cubin
/// runs only on its own major architecture, at the same or a later minor.
std::vector<Kernel> load_kernels(CudaFunction::State &s, int device) {
  std::lock_guard<std::mutex> lock(s.mutex);
  auto &mods = s.modules[device];
  if (mods.empty()) {
    const DeviceProperties &props = Device::get(device).properties();
    const std::string &arch = s.kernels[0].compiled.arch;
    auto [major, minor] = parse_arch(arch);
    if (major != props.cc_major || minor > props.cc_minor)
      throw UserError("kernel '" + s.kernels[0].name + "' was compiled for " + arch + " but device " +
                      std::to_string(device) + " (" + props.name + ") is " + props.arch() + ": compile for " +
                      props.arch());
    for (const CompiledKernel &k : s.kernels)
      mods.push_back(std::make_unique<Module>(Module::load(k.compiled.cubin, device)));
  }
  std::vector<Kernel> out;
  for (size_t i = 0; i < s.kernels.size(); ++i) out.push_back(mods[i]->kernel(s.kernels[i].name));
  return out;
}

/// Everything one call needs on the device.
struct PreparedCall {
  std::vector<Kernel> kernels;
  std::vector<LaunchDims> dims;
  DeviceArgs dev;

  /// Enqueues every kernel that has work; `wait` makes each launch checked
  /// and synchronous (an execution fault names its kernel).
  void launch(bool wait) {
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (!dims[i].has_work) continue;
      if (wait)
        kernels[i].run(dims[i].grid, dims[i].block, dev.args[i], dims[i].dynamic_shared_bytes);
      else
        kernels[i].launch(dims[i].grid, dims[i].block, dev.args[i], dims[i].dynamic_shared_bytes);
    }
  }
};

PreparedCall prepare(CudaFunction::State &s, const std::vector<NDArray> &args, int device) {
  ArgBinder binder(s.func, args);
  PreparedCall call;
  for (const CompiledKernel &k : s.kernels) call.dims.push_back(eval_launch(k.lowered, binder));
  call.kernels = load_kernels(s, device);
  call.dev = upload(s, args, binder, device);
  for (size_t i = 0; i < call.kernels.size(); ++i)
    if (call.dims[i].dynamic_shared_bytes > 0) call.kernels[i].set_dynamic_shared_memory(call.dims[i].dynamic_shared_bytes);
  return call;
}

}  // namespace

void CudaFunction::run(std::vector<NDArray> &args, int device) const {
  PreparedCall call = prepare(*s_, args, device);
  call.launch(/*wait=*/true);
  for (size_t i = 0; i < args.size(); ++i)
    if (s_->param_written[i] && args[i].nbytes() > 0)
      call.dev.buffers[i].copy_to_host(args[i].data(), args[i].nbytes());
}

TimingResult CudaFunction::time(const std::vector<NDArray> &args, const TimingOptions &options, int device) const {
  PreparedCall call = prepare(*s_, args, device);
  if (std::none_of(call.dims.begin(), call.dims.end(), [](const LaunchDims &d) { return d.has_work; }))
    throw UserError("function '" + s_->func.name() + "' launches nothing for these arguments: nothing to time");
  // One checked run first, so a faulting kernel is reported as such, not as a timing failure.
  call.launch(/*wait=*/true);
  size_t bytes = 0;
  for (const DeviceBuffer &b : call.dev.buffers) bytes += b.size();
  for (const DeviceBuffer &b : call.dev.workspace) bytes += b.size();
  return time_launches([&] { call.launch(/*wait=*/false); }, bytes, options, device);
}

KernelAttributes CudaFunction::attributes(int device) const { return load_kernels(*s_, device)[0].attributes(); }

}  // namespace tessera::runtime
