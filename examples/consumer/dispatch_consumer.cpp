//===- examples/consumer/dispatch_consumer.cpp - Launching saved kernels ---===//
//
// What an inference engine that only runs kernels built earlier links:
// tessera::dispatch, with no compiler in it. Loads a kernel package (written
// by `tessera tune ... --save FILE` or Kernel::save), prints what it holds,
// selects the kernel for the sizes given and binds it: on a GPU to device
// buffers, then launches it; without one to placeholder addresses, printing
// the argument block each kernel would get (the tensor maps of a TMA kernel
// need the driver).
//
//   tessera_dispatch_consumer PACKAGE [SIZE...]     (one SIZE per symbol)
//
//===----------------------------------------------------------------------===//
#include <cstdio>
#include <string>
#include <vector>

#include <tessera/dispatch/Dispatcher.h>
#include <tessera/dispatch/Package.h>

int main(int argc, char **argv) {
  using namespace tessera;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PACKAGE [SIZE...]\n", argv[0]);
    return 2;
  }
  try {
    dispatch::Package pkg = dispatch::load_package(argv[1]);
    if (pkg.kind != "cuda") {
      std::fprintf(stderr, "error: %s holds a %s kernel; tessera::dispatch launches GPU kernels\n", argv[1],
                   pkg.kind.c_str());
      return 1;
    }
    const dispatch::KernelPlan &plan = *pkg.plan;
    std::printf("%s: '%s' for %s: %zu kernels, %zu cells, %zu symbols\n", argv[1], plan.name.c_str(),
                plan.target.c_str(), plan.kernels.size(), plan.cell_count(), plan.symbols.size());
    std::vector<int64_t> sizes;
    for (int i = 2; i < argc; ++i) sizes.push_back(std::stoll(argv[i]));
    if (sizes.size() != plan.symbols.size()) {
      std::fprintf(stderr, "error: give one size per symbol (%zu)\n", plan.symbols.size());
      return 2;
    }
    dispatch::KernelLaunch l = plan.select(sizes.data());
    std::printf("selected: cell %d, kernel %d, %d step(s)", l.cell, l.kernel, l.steps);
    for (int s = 0; s < l.steps; ++s)
      std::printf("; %s grid %s block %s", plan.kernels[size_t(l.kernel)].steps[size_t(s)].entry.c_str(),
                  l.step[s].grid.str().c_str(), l.step[s].block.str().c_str());
    std::printf("\n");

    if (runtime::driver_status() != runtime::DriverStatus::Ok) {
      // Buffer i at 0x1000000 * (i + 1), the workspace at 0x70000000.
      std::vector<uint64_t> placeholders;
      for (size_t i = 0; i < plan.arguments.size(); ++i) placeholders.push_back(0x1000000ull * (i + 1));
      const dispatch::KernelPlan::WorkspaceLayout layout = plan.workspace_layout();
      for (int s = 0; s < l.steps; ++s) {
        uint64_t values[dispatch::KernelPlan::kMaxParams];
        int n = plan.bind_values(l.kernel, s, sizes.data(), placeholders.data(), placeholders.size(), 0x70000000ull,
                                 layout, values);
        std::printf("bound %s:", plan.kernels[size_t(l.kernel)].steps[size_t(s)].entry.c_str());
        for (int i = 0; i < n; ++i) std::printf(" 0x%llx", (unsigned long long)values[i]);
        std::printf("\n");
      }
      std::printf("no CUDA device (%s): not launched\n", runtime::driver_message().c_str());
      return 0;
    }
    auto shared = std::make_shared<const dispatch::KernelPlan>(plan);
    dispatch::Dispatcher d(shared, 0);
    std::vector<runtime::DeviceBuffer> buffers;
    std::vector<uint64_t> pointers;
    for (const dispatch::Argument &a : plan.arguments) {
      buffers.emplace_back(size_t(std::max<int64_t>(a.buffer.bytes(sizes.data()), 1)), 0);
      buffers.back().fill_bytes(0x3c);  // 1.0 in float16 halves; some nonzero pattern for any type
      pointers.push_back(buffers.back().ptr());
    }
    dispatch::BoundLaunch b = d.bind(sizes.data(), pointers.data(), pointers.size());
    b.launch();
    runtime::Device::get(0).synchronize();
    std::printf("launched on %s\n", runtime::Device::get(0).properties().name.c_str());
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
