//===- tools/Commands.cpp - The `tessera` subcommands ----------------------===//
#include "Commands.h"

#include <charconv>
#include <filesystem>
#include <fmt/format.h>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>
#include <unordered_set>

#include "tessera/ir/Functor.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/schedule/Schedule.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"
#include "tessera/codegen/CodegenCUDA.h"

namespace tessera::cli {

namespace {

/// Runs `body`, mapping exceptions to the documented exit statuses.
template <typename F>
int guarded(std::ostream &err, F &&body) {
  try {
    return body();
  } catch (const script::ParseError &e) {
    err << e.what() << "\n";
    return 1;
  } catch (const UserError &e) {
    err << "error: " << e.what() << "\n";
    return 1;
  } catch (const InternalError &e) {
    err << e.what() << "\n";
    return 2;
  } catch (const std::exception &e) {
    err << "internal error (this is a bug in tessera): " << e.what() << "\n";
    return 2;
  }
}

ir::PrimFunc select_func(const ir::Module &m, const std::string &wanted, const std::string &file) {
  if (!wanted.empty()) {
    if (ir::PrimFunc f = m.lookup(wanted); f.defined()) return f;
    throw UserError(file + ": no function named '" + wanted + "'");
  }
  if (m.funcs.size() == 1) return m.funcs[0];
  if (ir::PrimFunc f = m.lookup("main"); f.defined()) return f;
  std::string names;
  for (const ir::PrimFunc &f : m.funcs) names += (names.empty() ? "" : ", ") + f.name();
  throw UserError(file + " holds several functions (" + names + "): choose one with --func");
}


/// Every symbolic dimension of `f` needs a value.
void check_dims(const ir::PrimFunc &f, const runtime::DimBindings &dims) {
  for (const ir::Var &v : f.shape_vars())
    if (!dims.count(v.name()))
      throw UserError("function '" + f.name() + "' has a symbolic dimension '" + v.name() +
                      "' with no value: pass --dim " + v.name() + "=N");
}

std::string read_text(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw UserError("cannot read '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The buffers `f` stores into (its outputs).
std::unordered_set<const void *> written_buffers(const ir::PrimFunc &f) {
  std::unordered_set<const void *> out;
  ir::pre_order_visit(f.body(), nullptr, [&](const ir::Stmt &s) {
    if (const auto *st = s.as<ir::Store>()) out.insert(st->buffer.get());
  });
  return out;
}

}  // namespace

std::pair<std::string, int64_t> parse_dim_binding(const std::string &text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UserError("--dim expects NAME=VALUE, got '" + text + "'");
  std::string name = text.substr(0, eq);
  std::string value = text.substr(eq + 1);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size() || value.empty())
    throw UserError("--dim " + name + ": expected an integer, got '" + value + "'");
  if (v < 0) throw UserError("--dim " + name + ": a dimension cannot be negative, got " + value);
  return {name, v};
}

namespace {

/// The function of a command: its `--dim` bindings (checked first) and the
/// function `func` of `file`.
struct LoadedFunc {
  ir::PrimFunc f;
  runtime::DimBindings dims;
};

LoadedFunc load_func(const std::string &file, const std::string &func, const std::vector<std::string> &dim_texts) {
  runtime::DimBindings dims;
  for (const std::string &d : dim_texts) {
    auto [name, value] = parse_dim_binding(d);
    dims[name] = value;
  }
  ir::Module m = script::parse_file(file);
  return {select_func(m, func, file), dims};
}

}  // namespace

int fmt_command(const FmtOptions &opts, std::ostream &out, std::ostream &err) {
  int status = 0;
  for (const std::string &file : opts.files) {
    int rc = guarded(err, [&] {
      ir::Module m = script::parse_file(file);
      out << script::print(m);
      return 0;
    });
    status = std::max(status, rc);
  }
  return status;
}

namespace {

/// `tessera run --device cuda`: the GPU's result, checked against the interpreter's.
int run_on_gpu(const RunOptions &opts, const ir::PrimFunc &f, const runtime::DimBindings &dims, std::ostream &out,
               std::ostream &err) {
  if (runtime::driver_status() != runtime::DriverStatus::Ok)
    throw UserError("--device cuda: no CUDA device (" + runtime::driver_message() + ")");
  runtime::CudaFunction fn = runtime::CudaFunction::build(f, {.arch = opts.arch});
  std::vector<runtime::NDArray> got = runtime::make_random_args(f, dims, opts.seed);
  std::vector<runtime::NDArray> want = got;
  fn.run(got);
  runtime::interpret(f, want);
  for (size_t i = 0; i < f.params().size(); ++i) {
    ir::Buffer b = f.buffer_of(f.params()[i]);
    if (b.defined()) out << got[i].summary(b.name()) << "\n";
  }
  std::unordered_set<const void *> outputs = written_buffers(f);
  int status = 0;
  for (size_t i = 0; i < f.params().size(); ++i) {
    ir::Buffer b = f.buffer_of(f.params()[i]);
    if (!b.defined() || !outputs.count(b.get())) continue;
    double rel = runtime::max_rel_error(got[i], want[i]), scaled = runtime::max_scaled_error(got[i], want[i]);
    double rtol = runtime::default_rtol(b.dtype());
    bool ok = scaled <= rtol;
    out << fmt::format("# check: {} max_rel_error={:.3g} max_scaled_error={:.3g} (rtol {:.3g}): {}\n", b.name(), rel,
                       scaled, rtol, ok ? "ok" : "MISMATCH");
    if (!ok) {
      err << "error: the GPU result for '" << b.name() << "' differs from the interpreter's (max_scaled_error "
          << scaled << " > rtol " << rtol << ")\n";
      status = 1;
    }
  }
  if (opts.time) {
    runtime::TimingResult t = fn.time(got);
    out << fmt::format("# time: {} median {:.4g} ms (min {:.4g}, max {:.4g}, {} runs{})\n", fn.kernel_name(),
                       t.median_ms, t.min_ms, t.max_ms, t.repetitions, t.l2_flushed ? ", L2 flushed" : "");
  }
  return status;
}

}  // namespace

int run_command(const RunOptions &opts, std::ostream &out, std::ostream &err) {
  return guarded(err, [&] {
    if (opts.device != "cpu" && opts.device != "cuda")
      throw UserError("--device must be cpu or cuda, got '" + opts.device + "'");
    if (opts.device == "cpu" && (opts.time || !opts.arch.empty()))
      throw UserError("--time and --arch need --device cuda");
    auto [f, dims] = load_func(opts.file, opts.func, opts.dims);
    check_dims(f, dims);
    if (opts.device == "cuda") return run_on_gpu(opts, f, dims, out, err);
    std::vector<runtime::NDArray> args = runtime::make_random_args(f, dims, opts.seed);
    runtime::interpret(f, args);
    for (size_t i = 0; i < f.params().size(); ++i) {
      ir::Buffer b = f.buffer_of(f.params()[i]);
      if (b.defined()) out << args[i].summary(b.name()) << "\n";
    }
    return 0;
  });
}

int schedule_command(const ScheduleCommandOptions &opts, std::ostream &out, std::ostream &err) {
  return guarded(err, [&] {
    auto [f, dims] = load_func(opts.file, opts.func, opts.dims);
    if (opts.verify) check_dims(f, dims);
    std::string trace = read_text(opts.trace);
    schedule::Schedule sch(f, schedule::ScheduleOptions{.verify = true,
                                                        .error_render_level = schedule::ErrorRenderLevel::Detail});
    sch.replay(trace);
    out << script::print(sch.func());
    if (!opts.verify) return 0;
    // Same seed, same parameters: both functions see the same inputs.
    std::vector<runtime::NDArray> want = runtime::make_random_args(f, dims, opts.seed);
    std::vector<runtime::NDArray> got = runtime::make_random_args(sch.func(), dims, opts.seed);
    runtime::interpret(f, want);
    runtime::interpret(sch.func(), got);
    std::unordered_set<const void *> outputs = written_buffers(f);
    int status = 0;
    for (size_t i = 0; i < f.params().size(); ++i) {
      ir::Buffer b = f.buffer_of(f.params()[i]);
      if (!b.defined() || !outputs.count(b.get())) continue;
      double e = runtime::max_rel_error(got[i], want[i]);
      double rtol = runtime::default_rtol(b.dtype());
      bool ok = e <= rtol;
      char line[256];
      std::snprintf(line, sizeof line, "# verify: %s max_rel_error=%.3g (rtol %.3g): %s\n", b.name().c_str(), e,
                    rtol, ok ? "ok" : "MISMATCH");
      out << line;
      if (!ok) {
        err << "error: scheduled function differs from the original in '" << b.name() << "' (max_rel_error "
            << e << " > rtol " << rtol << ")\n";
        status = 1;
      }
    }
    return status;
  });
}

int devices_command(std::ostream &out, std::ostream &err) {
  return guarded(err, [&] {
    auto size = [](int64_t bytes) {
      char buf[32];
      if (bytes >= (int64_t(1) << 30)) std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / double(1 << 30));
      else if (bytes >= (1 << 20)) std::snprintf(buf, sizeof buf, "%lld MiB", (long long)(bytes >> 20));
      else std::snprintf(buf, sizeof buf, "%lld KiB", (long long)(bytes >> 10));
      return std::string(buf);
    };
    using runtime::DriverStatus;
    if (runtime::driver_status() == DriverStatus::Ok)
      out << runtime::driver_message() << "\n";
    else
      out << "no CUDA device: " << runtime::driver_message() << "\n";
    if (runtime::nvrtc_available()) {
      out << "NVRTC " << runtime::nvrtc_version() << ":";
      for (int a : runtime::nvrtc_supported_archs()) out << " sm_" << a;
      out << "\n";
    } else {
      out << "NVRTC not available (built without the CUDA toolkit)\n";
    }
    for (int i = 0; i < runtime::device_count(); ++i) {
      runtime::DeviceProperties p = runtime::query_device(i);
      out << i << ": " << p.name << ", " << p.arch() << ", " << p.sm_count << " SMs, "
          << size(p.total_memory) << ", L2 " << size(p.l2_bytes) << ", smem/block "
          << size(p.smem_per_block) << " (opt-in " << size(p.smem_per_block_optin) << ")\n";
    }
    return 0;
  });
}

int codegen_command(const CodegenCommandOptions &opts, std::ostream &out, std::ostream &err) {
  return guarded(err, [&] {
    auto [f, dims] = load_func(opts.file, opts.func, {});
    out << codegen::codegen_cuda(f, codegen::CudaOptions{.arch = opts.arch});
    return 0;
  });
}

int compile_command(const CompileCommandOptions &opts, std::ostream &out, std::ostream &err) {
  return guarded(err, [&] {
    std::vector<std::string> archs;
    std::stringstream list(opts.archs);
    for (std::string a; std::getline(list, a, ',');)
      if (!a.empty()) archs.push_back(a);
    if (archs.empty()) throw UserError("--arch: no architecture given");
    auto [f, dims] = load_func(opts.file, opts.func, {});
    std::vector<runtime::CudaFunction> fns = runtime::CudaFunction::build_for_archs(f, archs);
    for (const runtime::CudaFunction &fn : fns) {
      const runtime::CompileResult &r = fn.compiled();
      out << fmt::format("{}: {} compiled in {:.1f} ms", fn.arch(), fn.kernel_name(), r.compile_ms);
      if (const runtime::KernelResources *k = r.find_kernel(fn.kernel_name())) {
        int64_t dyn = fn.lowered().dynamic_shared_bytes;
        out << fmt::format(", {} registers, {} bytes shared (static {}, dynamic {}), {} bytes spilled", k->registers,
                           k->shared_bytes + dyn, k->shared_bytes, dyn, k->spill_stores + k->spill_loads);
      }
      out << "\n";
      if (opts.output_dir.empty()) continue;
      std::filesystem::create_directories(opts.output_dir);
      std::filesystem::path dir(opts.output_dir);
      std::ofstream(dir / (fn.kernel_name() + ".cu")) << fn.source();
      std::ofstream bin(dir / (fn.kernel_name() + "." + fn.arch() + ".cubin"), std::ios::binary);
      bin.write(reinterpret_cast<const char *>(r.cubin.data()), static_cast<std::streamsize>(r.cubin.size()));
      if (!bin) throw UserError("cannot write to '" + opts.output_dir + "'");
    }
    if (!opts.output_dir.empty()) out << "wrote the source and cubins to " << opts.output_dir << "\n";
    return 0;
  });
}

}  // namespace tessera::cli
