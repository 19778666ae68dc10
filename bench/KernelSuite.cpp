//===- bench/KernelSuite.cpp - Copy bandwidth and every corpus kernel (GPU) -===//
//
// The GPU numbers of the CUDA backend, measured in one run on one device:
//   1. the physical ceiling: a device-to-device copy of 1 GiB (cuMemcpyDtoD,
//      read + write bytes over the median time);
//   2. every scheduled kernel in a directory of TVMScript files (default:
//      tests/codegen/kernels), built for the device's architecture, timed as
//      KernelTimer does (warm-up, median of many runs, L2 flushed when the
//      buffers fit in it) on random inputs, with its effective bandwidth
//      (bytes of every buffer argument over the median) as a fraction of the
//      measured copy bandwidth.
// Correctness of the same kernels is the gpu test tessera_codegen_gpu_test.
//
//   tessera_bench_kernels [--dir DIR] [--dim n=4096]... [--json OUT] [--git HASH]
//   tessera_bench_kernels --copy-only      # the ceiling alone (one line)
//
// Prints a Markdown table (the form kept in bench/results/) and, with --json,
// every number with the device, driver, NVRTC version and git hash. Without a
// usable CUDA driver it says so and exits 0 (nothing to measure).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/bench/BenchEnvironment.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/script/Parser.h"
#include "tessera/support/DataPaths.h"

namespace fs = std::filesystem;
using namespace tessera;
using nlohmann::json;

namespace {

struct Options {
  fs::path dir = support::data_root() / "tests" / "codegen" / "kernels";
  runtime::DimBindings dims;
  std::string json_out;
  std::string git = "unknown";
  bool copy_only = false;
};

Options parse_args(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UserError(a + " needs a value");
      return argv[++i];
    };
    if (a == "--copy-only") o.copy_only = true;
    else if (a == "--dir") o.dir = value();
    else if (a == "--json") o.json_out = value();
    else if (a == "--git") o.git = value();
    else if (a == "--dim") {
      std::string d = value();
      auto eq = d.find('=');
      if (eq == std::string::npos) throw UserError("--dim expects NAME=VALUE, got '" + d + "'");
      o.dims[d.substr(0, eq)] = std::stoll(d.substr(eq + 1));
    } else {
      throw UserError("unknown argument '" + a + "' (see the comment at the top of bench/KernelSuite.cpp)");
    }
  }
  return o;
}

std::string read_text(const fs::path &p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

json time_kernel_file(const fs::path &file, const Options &o, double copy_gbps) {
  json r = {{"kernel", file.stem().string()}};
  try {
    ir::PrimFunc f = script::parse_func(read_text(file), file.filename().string());
    runtime::DimBindings dims = o.dims;
    for (const ir::Var &v : f.shape_vars())
      if (!dims.count(v.name())) dims[v.name()] = 4096;
    runtime::CudaFunction fn = runtime::CudaFunction::build(f);
    std::vector<runtime::NDArray> args = runtime::make_random_args(f, dims, /*seed=*/1);
    runtime::LaunchDims launch = fn.launch_dims(args).at(0);
    runtime::TimingResult t = fn.time(args);
    size_t bytes = 0;
    for (const runtime::NDArray &a : args)
      if (!a.shape().empty()) bytes += a.nbytes();
    double gbps = bytes / (t.median_ms * 1e-3) / 1e9;
    std::string dim_text;
    for (const auto &[k, v] : dims)
      if (std::any_of(f.shape_vars().begin(), f.shape_vars().end(), [&](const ir::Var &x) { return x.name() == k; }))
        dim_text += (dim_text.empty() ? "" : " ") + k + "=" + std::to_string(v);
    r.update({{"status", "ok"},
              {"dims", dim_text},
              {"grid", launch.grid.str()},
              {"block", launch.block.str()},
              {"kernels", fn.kernels().size()},
              {"registers", fn.attributes().registers},
              {"median_ms", t.median_ms},
              {"min_ms", t.min_ms},
              {"max_ms", t.max_ms},
              {"repetitions", t.repetitions},
              {"l2_flushed", t.l2_flushed},
              {"bytes", bytes},
              {"gbps", gbps},
              {"fraction_of_copy", copy_gbps > 0 ? gbps / copy_gbps : 0.0}});
  } catch (const std::exception &e) {
    r.update({{"status", "error"}, {"error", e.what()}});
  }
  return r;
}

}  // namespace

int main(int argc, char **argv) {
  try {
    Options o = parse_args(argc, argv);
    if (runtime::driver_status() != runtime::DriverStatus::Ok) {
      std::cout << "no CUDA device: " << runtime::driver_message() << "\nnothing measured\n";
      return 0;
    }
    runtime::DeviceProperties p = runtime::query_device(0);
    json report = bench::run_environment(o.git);
    bench::CopyBandwidth copy = bench::measure_copy_bandwidth();
    report["copy"] = copy.to_json();
    double copy_gbps = copy.gbps;
    if (o.copy_only) {
      std::printf("copy bandwidth (cuMemcpyDtoD, %zu MiB, read + write): %.0f GB/s median of %d (min %.4f ms, max %.4f "
                  "ms); theoretical DRAM %.0f GB/s on %s\n",
                  copy.bytes >> 20, copy_gbps, copy.timing.repetitions, copy.timing.min_ms, copy.timing.max_ms,
                  p.peak_dram_gbps(), p.name.c_str());
      if (!o.json_out.empty()) std::ofstream(o.json_out) << report.dump(2) << "\n";
      return 0;
    }

    std::vector<fs::path> files;
    for (const auto &e : fs::directory_iterator(o.dir))
      if (e.path().extension() == ".py") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    report["kernels"] = json::array();
    for (const fs::path &file : files) report["kernels"].push_back(time_kernel_file(file, o, copy_gbps));

    std::printf("# GPU kernel suite, %s\n\n", report["date"].get<std::string>().c_str());
    std::printf("%s (%s, %d SMs), %s, NVRTC %s, git %s\n\n", p.name.c_str(), p.arch().c_str(), p.sm_count,
                runtime::driver_message().c_str(), runtime::nvrtc_version().c_str(), o.git.c_str());
    std::printf("Copy bandwidth (cuMemcpyDtoD, 1 GiB, read + write): **%.0f GB/s** median (theoretical DRAM %.0f GB/s)\n\n",
                copy_gbps, p.peak_dram_gbps());
    std::printf("| kernel | dims | grid | block | regs | median ms | min ms | max ms | runs | GB/s | of copy |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const json &k : report["kernels"]) {
      if (k["status"] != "ok") {
        std::printf("| %s | error: %s |\n", k["kernel"].get<std::string>().c_str(),
                    k["error"].get<std::string>().c_str());
        continue;
      }
      std::printf("| %s | %s | %s | %s | %d | %.4f | %.4f | %.4f | %d | %.0f | %.0f%% |\n",
                  k["kernel"].get<std::string>().c_str(), k["dims"].get<std::string>().c_str(),
                  k["grid"].get<std::string>().c_str(), k["block"].get<std::string>().c_str(), k["registers"].get<int>(),
                  k["median_ms"].get<double>(), k["min_ms"].get<double>(), k["max_ms"].get<double>(),
                  k["repetitions"].get<int>(), k["gbps"].get<double>(), 100 * k["fraction_of_copy"].get<double>());
    }
    if (!o.json_out.empty()) std::ofstream(o.json_out) << report.dump(2) << "\n";
    return 0;
  } catch (const std::exception &e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
