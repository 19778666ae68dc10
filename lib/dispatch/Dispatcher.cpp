//===- lib/dispatch/Dispatcher.cpp - A kernel plan on a device: bind, launch ==//
#include "tessera/dispatch/Dispatcher.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string>

#include "tessera/support/Error.h"

namespace tessera::dispatch {

namespace {

/// The DLPack type of a TVMScript dtype name ("float16", "int32",
/// "bfloat16", "float16x4"); false for one DLPack has no code for.
bool dlpack_type(const std::string &dtype, DLDataType &out) {
  std::string base = dtype;
  uint16_t lanes = 1;
  if (size_t x = dtype.find('x'); x != std::string::npos) {
    base = dtype.substr(0, x);
    unsigned v = 0;
    auto [p, ec] = std::from_chars(dtype.data() + x + 1, dtype.data() + dtype.size(), v);
    if (ec != std::errc() || p != dtype.data() + dtype.size() || v == 0) return false;
    lanes = uint16_t(v);
  }
  struct Prefix {
    const char *name;
    uint8_t code;
  };
  if (base == "bool") return out = {kDLUInt, 8, lanes}, true;
  for (Prefix p : {Prefix{"bfloat", kDLBfloat}, Prefix{"float", kDLFloat}, Prefix{"uint", kDLUInt}, Prefix{"int", kDLInt}}) {
    const size_t n = std::strlen(p.name);
    if (base.compare(0, n, p.name) != 0) continue;
    unsigned bits = 0;
    auto [q, ec] = std::from_chars(base.data() + n, base.data() + base.size(), bits);
    if (ec != std::errc() || q != base.data() + base.size() || bits == 0 || bits > 64) return false;
    return out = {p.code, uint8_t(bits), lanes}, true;
  }
  return false;
}

std::string dlpack_type_text(DLDataType t) {
  const char *code = t.code == kDLInt ? "int" : t.code == kDLUInt ? "uint" : t.code == kDLFloat ? "float"
                   : t.code == kDLBfloat ? "bfloat" : nullptr;
  std::string s = code ? code + std::to_string(t.bits)
                       : "DLPack type code " + std::to_string(t.code) + " of " + std::to_string(t.bits) + " bits";
  return t.lanes > 1 ? s + "x" + std::to_string(t.lanes) : s;
}

/// Whether a cubin for `target` ("sm_86", "sm_90a") runs on a device of
/// compute capability `cc` (86 for 8.6): an architecture-specific one on
/// exactly its own, another on its major version from its minor on.
bool runs_on(const std::string &target, int cc) {
  int v = 0;
  const bool specific = target.ends_with('a');
  const char *end = target.data() + target.size() - (specific ? 1 : 0);
  if (!target.starts_with("sm_") || std::from_chars(target.data() + 3, end, v).ptr != end) return false;
  return specific ? v == cc : v / 10 == cc / 10 && v <= cc;
}

}  // namespace

struct Dispatcher::Loaded {
  std::vector<runtime::Module> modules;
  /// By plan kernel, then step.
  std::vector<std::vector<runtime::Kernel>> kernels;
  runtime::DeviceBuffer workspace;
  KernelPlan::WorkspaceLayout layout;
};

Dispatcher::Dispatcher(std::shared_ptr<const KernelPlan> plan, int device) : plan_(std::move(plan)), device_(device) {
  const KernelPlan &p = *plan_;
  const runtime::DeviceProperties &props = runtime::Device::get(device).properties();
  const int device_cc = props.cc_major * 10 + props.cc_minor;
  for (const PlanKernel &k : p.kernels)
    for (const KernelStep &st : k.steps)
      if (!runs_on(st.target, device_cc))
        throw UserError("'" + p.name + "': kernel " + st.entry + " is compiled for " + st.target + "; device " +
                        std::to_string(device) + " (" + props.name + ") is " + props.arch());
  auto loaded = std::make_shared<Loaded>();
  loaded->layout = p.workspace_layout();
  if (loaded->layout.bytes > 0) loaded->workspace = runtime::DeviceBuffer(loaded->layout.bytes, device);
  for (const PlanKernel &k : p.kernels) {
    std::vector<runtime::Kernel> steps;
    for (const KernelStep &st : k.steps) {
      loaded->modules.push_back(runtime::Module::load(st.cubin, device));
      steps.push_back(loaded->modules.back().kernel(st.entry));
      if (st.dynamic_shared_bytes > 0) steps.back().set_dynamic_shared_memory(size_t(st.dynamic_shared_bytes));
    }
    loaded->kernels.push_back(std::move(steps));
  }
  loaded_ = std::move(loaded);
}

BoundLaunch Dispatcher::bind(const int64_t *sizes, const uint64_t *buffers, size_t buffer_count) const {
  return bind_kernel(-1, sizes, buffers, buffer_count);
}

BoundLaunch Dispatcher::bind_kernel(int kernel, const int64_t *sizes, const uint64_t *buffers,
                                    size_t buffer_count) const {
  const KernelPlan &p = *plan_;
  if (kernel >= int(p.kernels.size())) throw UserError("no kernel " + std::to_string(kernel));
  BoundLaunch b;
  b.dims = p.select(sizes);
  if (kernel >= 0 && kernel != b.dims.kernel) {
    b.dims.kernel = kernel;  // another kernel of the plan at these sizes: its own launch extents
    p.fill_dims(b.dims, sizes);
  }
  const PlanKernel &k = p.kernels[size_t(b.dims.kernel)];
  for (size_t s = 0; s < k.steps.size(); ++s) {
    const KernelStep &st = k.steps[s];
    BoundLaunch::Step &out = b.step[s];
    out.kernel = &loaded_->kernels[size_t(b.dims.kernel)][s];
    out.count = 0;
    out.map_count = 0;
    if (st.tensor_maps.size() > size_t(BoundLaunch::kMaxTensorMaps))
      throw UserError(st.entry + " takes " + std::to_string(st.tensor_maps.size()) +
                      " tensor maps; a bound launch holds " + std::to_string(BoundLaunch::kMaxTensorMaps));
    if (!st.tensor_maps.empty()) {
      std::vector<runtime::TensorMapEncoding> encodings = p.tensor_map_encodings(b.dims.kernel, int(s), sizes);
      for (size_t i = 0; i < encodings.size(); ++i) {
        const int buffer = st.tensor_maps[i].buffer;
        if (size_t(buffer) >= buffer_count)
          throw UserError("launch: " + std::to_string(buffer_count) + " buffers for kernel " + st.entry +
                          ", which copies buffer " + std::to_string(buffer + 1) + " by TMA");
        auto map = runtime::encode_tensor_map(encodings[i], buffers[buffer], device_);
        std::memcpy(out.maps[out.map_count++], map.data(), map.size());
      }
    }
    out.count = p.bind_values(b.dims.kernel, int(s), sizes, buffers, buffer_count, loaded_->workspace.ptr(),
                              loaded_->layout, out.values);
  }
  return b;
}

void BoundLaunch::launch(void *stream) {
  for (int s = 0; s < dims.steps; ++s) {
    const LaunchDims &d = dims.step[s];
    if (d.has_work) step[s].kernel->launch_raw(d.grid, d.block, params(s), d.dynamic_shared_bytes, stream);
  }
}

void Dispatcher::launch(const std::vector<uint64_t> &buffers, const std::vector<int64_t> &sizes, void *stream) const {
  if (sizes.size() != plan_->symbols.size())
    throw UserError("launch: " + std::to_string(sizes.size()) + " sizes for " + std::to_string(plan_->symbols.size()) +
                    " symbols");
  bind(sizes.data(), buffers.data(), buffers.size()).launch(stream);
}

void Dispatcher::launch(const DLTensor *const *tensors, size_t count, void *stream) const {
  const KernelPlan &p = *plan_;
  if (count != p.arguments.size())
    throw UserError("'" + p.name + "' takes " + std::to_string(p.arguments.size()) + " tensors, not " +
                    std::to_string(count));
  std::vector<uint64_t> buffers;
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < count; ++i) {
    if (!tensors[i]) throw UserError("tensor " + std::to_string(i) + " of '" + p.name + "' is null");
    buffers.push_back(tensor_address(*tensors[i], p.arguments[i], i, device_));
    shapes.push_back(tensor_shape(*tensors[i]));
  }
  std::vector<int64_t> sizes = p.sizes_of(shapes);
  bind(sizes.data(), buffers.data(), buffers.size()).launch(stream);
}

std::vector<int64_t> tensor_shape(const DLTensor &t) {
  if (t.ndim < 0 || (t.ndim > 0 && !t.shape)) throw UserError("a DLPack tensor of " + std::to_string(t.ndim) + " dimensions has no shape");
  return std::vector<int64_t>(t.shape, t.shape + t.ndim);
}

uint64_t tensor_address(const DLTensor &t, const Argument &argument, size_t index, int device) {
  const std::string what = "argument " + std::to_string(index) + " ('" + argument.buffer.name + "')";
  if (device >= 0 && (t.device.device_type != kDLCUDA || t.device.device_id != device))
    throw UserError(what + " is not on CUDA device " + std::to_string(device) + " (DLPack device type " +
                    std::to_string(int(t.device.device_type)) + ", id " + std::to_string(t.device.device_id) + ")");
  if (device < 0 && t.device.device_type != kDLCPU && t.device.device_type != kDLCUDAHost)
    throw UserError(what + " is not in host memory (DLPack device type " + std::to_string(int(t.device.device_type)) + ")");
  DLDataType want{};
  if (!dlpack_type(argument.dtype, want)) throw UserError(what + " is of type " + argument.dtype + ", which DLPack cannot describe");
  const bool bool_alias = argument.dtype == "bool" && t.dtype.bits == 8 && t.dtype.lanes == 1 &&
                          (t.dtype.code == 6 || t.dtype.code == kDLInt || t.dtype.code == kDLUInt);
  if (!bool_alias && (t.dtype.code != want.code || t.dtype.bits != want.bits || t.dtype.lanes != want.lanes))
    throw UserError(what + " is " + dlpack_type_text(t.dtype) + "; the kernel takes " + argument.dtype);
  const std::vector<int64_t> shape = tensor_shape(t);
  if (shape.size() != argument.buffer.shape.size())
    throw UserError(what + " has " + std::to_string(shape.size()) + " dimensions, not " +
                    std::to_string(argument.buffer.shape.size()));
  if (t.strides) {
    int64_t expect = 1;
    for (int d = t.ndim; d-- > 0;) {
      if (shape[size_t(d)] != 1 && t.strides[d] != expect)
        throw UserError(what + " is not compact row-major: dimension " + std::to_string(d) + " has stride " +
                        std::to_string(t.strides[d]) + " elements, not " + std::to_string(expect) +
                        " (make it contiguous first)");
      expect *= shape[size_t(d)];
    }
  }
  return uint64_t(reinterpret_cast<uintptr_t>(t.data)) + t.byte_offset;
}

}  // namespace tessera::dispatch
