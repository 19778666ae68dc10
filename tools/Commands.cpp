//===- tools/Commands.cpp - The `tessera` subcommands ----------------------===//
#include "Commands.h"

#include "CommandSupport.h"

#include <chrono>
#include <charconv>
#include <filesystem>
#include <functional>
#include <fmt/format.h>
#include <cstdio>
#include <fstream>
#include <future>
#include <ostream>
#include <sstream>

#include "tessera/analysis/Specialize.h"
#include "tessera/runtime/DetectArch.h"
#include "tessera/arch/Arch.h"
#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Functor.h"
#include "tessera/arch/Arch.h"
#include "tessera/rules/Rule.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/runtime/Sass.h"
#include "tessera/schedule/Schedule.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/cpu/CpuLoops.h"
#include "tessera/cpu/CpuSchedule.h"
#include "tessera/runtime/Backend.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/runtime/Oracle.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"
#include "tessera/support/DataPaths.h"
#include "tessera/tune/Reference.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/lower/Lower.h"

namespace tessera::cli {

int fmt_command(const FmtOptions &opts, std::ostream &out, std::ostream &err) {
  int status = 0;
  for (const std::string &file : opts.files) {
    int rc = guarded(err, [&] {
      ir::Module m = script::parse_file(file);
      for (const std::string &w : m.warnings) err << w << "\n";
      out << script::print(m);
      return 0;
    });
    status = std::max(status, rc);
  }
  return status;
}

namespace {

/// `tessera run --device cuda`: the GPU's result, checked against the interpreter's.
/// Runs `f` with a compiled backend (llvm, cuda) on random inputs, checks
/// every written buffer against the float64 reference, and times it.
int run_compiled(const RunOptions &opts, const runtime::Backend &backend, const ir::PrimFunc &f,
                 const runtime::DimBindings &dims, std::ostream &out, std::ostream &err) {
  if (std::string why = backend.unavailable(); !why.empty())
    throw UserError("--device " + opts.device + ": " + why);
  std::unique_ptr<runtime::Executable> exe = backend.build(f);
  std::vector<runtime::NDArray> got = runtime::make_random_args(f, dims, opts.seed);
  runtime::Reference want = runtime::compute_reference(f, got);
  exe->run(got);
  for (size_t i = 0; i < f.params().size(); ++i) {
    ir::Buffer b = f.buffer_of(f.params()[i]);
    if (b.defined()) out << got[i].summary(b.name()) << "\n";
  }
  int status = report_checks(runtime::check_outputs(f, got, want), "# check: ",
                             "the " + opts.device + " result is outside what rounding explains", out, err);
  if (opts.time) {
    runtime::TimingResult t = exe->time(got);
    out << fmt::format("# time: {} median {:.4g} ms (min {:.4g}, max {:.4g}, {} runs{}{})\n", opts.device,
                       t.median_ms, t.min_ms, t.max_ms, t.repetitions, t.l2_flushed ? ", L2 flushed" : "",
                       opts.device == "llvm" ? fmt::format(", {} threads", runtime::llvm_jit_threads()) : "");
  }
  return status;
}

}  // namespace

std::string resolve_target(const std::string &target, const ir::PrimFunc &f) {
  if (target == "gpu" || target == "cpu") return target;
  if (target != "auto") throw UserError("--target must be auto, gpu or cpu, got '" + target + "'");
  const std::string kind = rules::target_kind(f);
  return kind == "llvm" || kind == "c" ? "cpu" : "gpu";
}

int run_command(const RunOptions &opts, std::ostream &out, std::ostream &err) {
  return guarded(err, [&] {
    // make_backend knows the devices (and names them for any other).
    std::unique_ptr<runtime::Backend> backend;
    try {
      backend = runtime::make_backend(opts.device, {.arch = opts.arch});
    } catch (const UserError &e) {
      throw UserError(std::string("--device: ") + e.what());
    }
    const bool interpreted = backend->name() == "interpreter";
    if (backend->name() != "cuda" && !opts.arch.empty()) throw UserError("--arch needs --device cuda");
    if (interpreted && opts.time) throw UserError("--time needs --device llvm or cuda");
    auto [f, dims] = load_func(opts.file, opts.func, opts.dims);
    default_dims(f, dims, out);
    if (!interpreted) return run_compiled(opts, *backend, f, dims, out, err);
    std::vector<runtime::NDArray> args = runtime::make_random_args(f, dims, opts.seed);
    backend->build(f)->run(args);
    for (size_t i = 0; i < f.params().size(); ++i) {
      ir::Buffer b = f.buffer_of(f.params()[i]);
      if (b.defined()) out << args[i].summary(b.name()) << "\n";
    }
    return 0;
  });
}

namespace {

/// The CUDA C of `f`, one source per kernel in launch order (a function of
/// several kernels: lower::split_kernels). UserError where the lowering or
/// the code generator refuses it.
std::vector<std::string> cuda_sources(const ir::PrimFunc &f, const codegen::CudaOptions &options) {
  std::vector<std::string> out;
  for (const ir::PrimFunc &kernel : lower::split_kernels(f).kernels) out.push_back(codegen::codegen_cuda(kernel, options));
  return out;
}


/// Why the CUDA path refuses `f` (cuda_sources, what `tessera codegen`
/// prints); "" when it takes it.
std::string cuda_refusal(const ir::PrimFunc &f) {
  try {
    cuda_sources(f, {});
  } catch (const UserError &e) {
    return e.what();
  }
  return "";
}

/// Schedules `f` by the rules; prints the result's comment lines to `notes`.
/// A function that was scheduled already is kept as it is; `refusal` gets
/// why the CUDA path would not take it ("" when it would).
ir::PrimFunc schedule_by_rules(const ScheduleCommandOptions &opts, const ir::PrimFunc &original, const Arch &arch,
                               std::string &notes, std::string &refusal) {
  if (opts.rule.empty()) {
    if (!opts.config.empty()) throw UserError("--config needs --rule (a config belongs to one rule)");
    rules::DefaultSchedule s = rules::apply_default_schedule(original, arch);
    if (opts.verbose)
      for (const auto &[rule, why] : s.declined) notes += "# declined: " + rule + ": " + why + "\n";
    notes += "# rule: " + (s.rule.empty() ? std::string("none (already scheduled)") : s.rule) + "\n";
    if (!s.rule.empty()) notes += "# config: " + s.config.dump() + "\n";
    if (s.rule.empty()) refusal = cuda_refusal(s.func);
    return s.func;
  }
  rules::check_gpu_target(original);
  ir::PrimFunc f = schedule::unique_block_names(original);
  const rules::Rule *rule = rules::find_rule(opts.rule);
  if (!rule) {
    std::string names;
    for (const rules::Rule *r : rules::all_rules()) names += (names.empty() ? "" : ", ") + std::string(r->name());
    throw UserError("unknown rule '" + opts.rule + "' (rules: " + names + ")");
  }
  auto m = rule->match(f, arch);
  if (!m) throw UserError("rule '" + opts.rule + "' does not match '" + f.name() + "': " + m.reason());
  std::unique_ptr<rules::Config> config;
  if (opts.config.empty()) {
    config = rule->default_config(**m, arch);
  } else {
    std::string text = opts.config[0] == '@' ? read_text(opts.config.substr(1)) : opts.config;
    rules::Json j;
    try {
      j = rules::Json::parse(text);
    } catch (const rules::Json::exception &e) {
      throw UserError(std::string("--config is not valid JSON: ") + e.what());
    }
    config = rule->config_from_json(j);
  }
  config->validate(arch);
  schedule::Schedule sch = rule->apply(f, **m, *config);
  notes += "# rule: " + opts.rule + "\n# config: " + config->str() + "\n";
  return sch.func();
}

}  // namespace

int schedule_command(const ScheduleCommandOptions &opts, std::ostream &out, std::ostream &err) {
  return guarded(err, [&] {
    auto [f, dims] = load_func(opts.file, opts.func, opts.dims);
    if (opts.specialize) {
      if (dims.empty()) throw UserError("--specialize needs the sizes: --dim NAME=VALUE");
      f = analysis::specialize(f, dims);
      dims.clear();  // now constants: nothing left to bind for --verify
    }
    std::ostringstream defaulted;  // printed with the verification, after the schedule
    if (opts.verify) default_dims(f, dims, defaulted);
    ir::PrimFunc scheduled;
    std::string notes;
    if (!opts.trace.empty()) {
      if (!opts.rule.empty() || !opts.config.empty()) throw UserError("--trace cannot be combined with --rule/--config");
      std::string trace = read_text(opts.trace);
      schedule::Schedule sch(f, schedule::ScheduleOptions{.verify = true,
                                                          .error_render_level = schedule::ErrorRenderLevel::Detail});
      try {
        sch.replay(trace);
      } catch (const schedule::ScheduleError &e) {
        throw UserError("--trace " + opts.trace + ": " + e.what());
      }
      scheduled = sch.func();
    } else if (resolve_target(opts.target, f) == "cpu") {
      if (!opts.rule.empty()) throw UserError("--rule chooses a GPU rule; --target cpu has its own schedule");
      cpu::CpuArch host = cpu::CpuArch::by_name(opts.cpu);
      const std::string text = opts.config.empty() || opts.config[0] != '@' ? opts.config : read_text(opts.config.substr(1));
      if (std::optional<cpu::CpuLoopConfig> loops = text.empty() ? std::nullopt : cpu::CpuLoopConfig::parse(text)) {
        scheduled = cpu::schedule_loops_for_cpu(f, *loops);
        notes += "# target: cpu (" + host.str() + ")\n# cpu schedule: loops " + loops->str() + "\n";
      } else {
        std::optional<cpu::CpuMatmulConfig> config;
        if (!text.empty()) config = cpu::CpuMatmulConfig::parse(text);
        cpu::CpuSchedule s = cpu::schedule_for_cpu(f, host, config);
        scheduled = s.func;
        notes += "# target: cpu (" + host.str() + ")\n# cpu schedule: " + s.kind +
                 (s.config ? " " + s.config->str() : " (" + s.why + ")") + "\n";
      }
    } else {
      Arch arch = resolve_arch(opts.arch, out);
      std::string refusal;
      scheduled = schedule_by_rules(opts, f, arch, notes, refusal);
      if (!refusal.empty()) {
        out << script::print(scheduled) << notes;
        throw UserError("'" + f.name() + "' is scheduled already, and the CUDA code generator refuses it: " + refusal);
      }
    }
    out << script::print(scheduled) << notes;
    if (!opts.verify) return 0;
    return verify_scheduled(opts, f, scheduled, dims, defaulted.str(), out, err);
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
    out << "LLVM JIT (the CPU target): " << (runtime::llvm_jit_available() ? "yes" : "not in this build") << "\n";
    for (int i = 0; i < runtime::device_count(); ++i) {
      runtime::DeviceProperties p = runtime::query_device(i);
      out << i << ": " << p.name << ", " << p.arch() << ", " << p.sm_count << " SMs, "
          << size(p.total_memory) << ", L2 " << size(p.l2_bytes) << ", smem/block "
          << size(p.smem_per_block) << " (opt-in " << size(p.smem_per_block_optin) << ")\n";
    }
    // Where presets, workloads and suites are read from (support/DataPaths.h).
    out << "data: " << support::data_root().string() << " (" << support::data_root_origin() << ")\n";
    return 0;
  });
}

int codegen_command(const CodegenCommandOptions &opts, std::ostream &out, std::ostream &err) {
  return guarded(err, [&] {
    auto [f, dims] = load_func(opts.file, opts.func, {});
    std::vector<std::string> sources = cuda_sources(f, codegen::CudaOptions{.arch = opts.arch});
    for (size_t i = 0; i < sources.size(); ++i) out << (i ? "\n" : "") << sources[i];
    return 0;
  });
}

namespace {

/// The `  sass:` line of one kernel: its summary, or why there is none.
std::string sass_line(const std::string &listing, const std::string &error, const std::string &kernel) {
  if (!error.empty()) return "not available: " + error.substr(0, error.find('\n'));
  for (const runtime::SassSummary &s : runtime::parse_sass(listing))
    if (s.name == kernel) return s.str();
  return "not available: the listing has no function '" + kernel + "'";
}

/// The SASS of every kernel of every arch, disassembled in parallel (a
/// cuobjdump run is mostly its own start-up, ~0.3 s of CPU); slot [f][k] holds
/// function f's kernel k: the listing, or the error that replaced it.
std::vector<std::vector<std::pair<std::string, std::string>>> disassemble_all(
    const std::vector<runtime::CudaFunction> &fns, const std::filesystem::path &tool) {
  std::vector<std::vector<std::future<std::string>>> pending(fns.size());
  for (size_t f = 0; f < fns.size(); ++f)
    for (const runtime::CompiledKernel &k : fns[f].kernels())
      pending[f].push_back(std::async(std::launch::async,
                                      [&tool, &k] { return runtime::disassemble(k.compiled.cubin, tool); }));
  std::vector<std::vector<std::pair<std::string, std::string>>> out(fns.size());
  for (size_t f = 0; f < fns.size(); ++f)
    for (std::future<std::string> &p : pending[f]) {
      try {
        out[f].push_back({p.get(), ""});
      } catch (const std::exception &e) {
        out[f].push_back({"", e.what()});
      }
    }
  return out;
}

}  // namespace

int compile_command(const CompileCommandOptions &opts, std::ostream &out, std::ostream &err) {
  return guarded(err, [&] {
    std::vector<std::string> archs;
    std::stringstream list(opts.archs);
    for (std::string a; std::getline(list, a, ',');) {
      if (a.empty()) continue;
      // A GPU preset (h100, a100, ...) as the other commands take it: its sm_XX.
      if (a.rfind("sm_", 0) != 0) {
        try {
          a = "sm_" + std::to_string(Arch::by_name(a).sm_version());
        } catch (const UserError &e) {
          throw UserError("--arch: '" + a + "' is neither sm_XX (e.g. sm_90) nor a GPU preset: " + e.what());
        }
      }
      archs.push_back(a);
    }
    if (archs.empty()) throw UserError("--arch: no architecture given");
    auto [f, dims] = load_func(opts.file, opts.func, {});
    std::vector<runtime::CudaFunction> fns = runtime::CudaFunction::build_for_archs(f, archs);
    // What the GPU will run (runtime/Sass.h), when cuobjdump is installed.
    std::optional<std::filesystem::path> tool = runtime::find_disassembler();
    std::vector<std::vector<std::pair<std::string, std::string>>> sass;
    if (tool) sass = disassemble_all(fns, *tool);
    for (size_t fi = 0; fi < fns.size(); ++fi) {
      const runtime::CudaFunction &fn = fns[fi];
      for (size_t ki = 0; ki < fn.kernels().size(); ++ki) {
        const runtime::CompiledKernel &k = fn.kernels()[ki];
        const runtime::CompileResult &r = k.compiled;
        out << fmt::format("{}: {} compiled in {:.1f} ms", fn.arch(), k.name, r.compile_ms);
        if (const runtime::KernelResources *res = r.find_kernel(k.name)) {
          int64_t dyn = k.lowered.dynamic_shared_bytes;
          out << fmt::format(", {} registers, {} bytes shared (static {}, dynamic {}), {} bytes spilled",
                             res->registers, res->shared_bytes + dyn, res->shared_bytes, dyn,
                             res->spill_stores + res->spill_loads);
        } else {
          out << " (the NVRTC log has no ptxas resource lines for it" << (r.log.empty() ? ": the log is empty" : "")
              << ")";
        }
        out << "\n";
        std::string listing = tool ? sass[fi][ki].first : "";
        if (tool) out << "  sass: " << sass_line(listing, sass[fi][ki].second, k.name) << "\n";
        if (opts.output_dir.empty()) continue;
        std::filesystem::create_directories(opts.output_dir);
        std::filesystem::path dir(opts.output_dir);
        std::ofstream(dir / (k.name + ".cu")) << k.source;
        std::ofstream(dir / (k.name + "." + fn.arch() + ".log")) << r.log;
        if (!listing.empty()) std::ofstream(dir / (k.name + "." + fn.arch() + ".sass")) << listing;
        std::ofstream bin(dir / (k.name + "." + fn.arch() + ".cubin"), std::ios::binary);
        bin.write(reinterpret_cast<const char *>(r.cubin.data()), static_cast<std::streamsize>(r.cubin.size()));
        if (!bin) throw UserError("cannot write to '" + opts.output_dir + "'");
      }
    }
    if (!tool) out << runtime::kNoDisassemblerHint << "\n";
    if (!opts.output_dir.empty())
      out << "wrote the source, cubins" << (tool ? ", SASS" : "") << " and NVRTC logs to " << opts.output_dir << "\n";
    return 0;
  });
}

namespace {

/// 232448 -> "227 KiB", 52428800 -> "50 MiB": exact binary units where they divide.
std::string format_bytes(int64_t bytes) {
  for (auto [shift, unit] : {std::pair{30, "GiB"}, std::pair{20, "MiB"}, std::pair{10, "KiB"}})
    if (bytes >= (int64_t(1) << shift) && bytes % (int64_t(1) << shift) == 0)
      return fmt::format("{} {}", bytes >> shift, unit);
  if (bytes >= (int64_t(1) << 30)) return fmt::format("{:.1f} GiB", double(bytes) / double(int64_t(1) << 30));
  return fmt::format("{} bytes", bytes);
}

/// 989.4 -> "989.4", 3350.0 -> "3350", 362.05 -> "362.05": two decimals at most.
std::string format_number(double v) {
  std::string s = fmt::format("{:.2f}", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string join_strings(const std::vector<std::string> &items, std::string_view sep = ", ") {
  std::string out;
  for (const std::string &s : items) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

void print_arch_text(const Arch &a, std::ostream &out) {
  auto row = [&](std::string_view label, const std::string &value) {
    out << fmt::format("  {:<26}{}\n", label, value);
  };
  auto yes_no = [](bool b) { return b ? "yes" : "no"; };
  out << fmt::format("{}: {} ({}, fingerprint {})\n", a.name, a.description, a.arch_flag(), a.fingerprint());
  if (!a.aliases.empty()) out << "aliases: " << join_strings(a.aliases) << "\n";
  const ArchCompute &c = a.compute;
  out << "compute\n";
  row("SMs", fmt::format("{} ({} warp schedulers each), warp size {}, boost clock {} MHz", c.sm_count,
                         c.warp_schedulers_per_sm, c.warp_size, c.boost_clock_mhz));
  row("peak fp32 / fp16", fmt::format("{} / {} TFLOPS (CUDA cores)", format_number(c.peak_fp32_tflops),
                                      format_number(c.peak_fp16_tflops)));
  const ArchMemory &m = a.memory;
  out << "memory\n";
  row("DRAM", fmt::format("{}, {} GB/s", format_bytes(m.dram_bytes), format_number(m.dram_bandwidth_gbps)));
  row("L2", format_bytes(m.l2_bytes));
  row("cache line / sector", fmt::format("{} / {} bytes, vector accesses up to {} bytes", m.cache_line_bytes,
                                         m.sector_bytes, m.max_vector_bytes));
  row("shared memory banks", fmt::format("{} x {} bytes, {} GB/s (derived)", m.smem_banks, m.smem_bank_bytes,
                                         format_number(m.smem_bandwidth_gbps)));
  row("cp.async / TMA", fmt::format("{} / {}", yes_no(m.cp_async), yes_no(m.tma)));
  const ArchLimits &l = a.limits;
  out << "limits\n";
  row("threads per block / SM", fmt::format("{} / {} ({} warps per SM), {} blocks per SM", l.max_threads_per_block,
                                            l.max_threads_per_sm, a.max_warps_per_sm(), l.max_blocks_per_sm));
  row("registers", fmt::format("{} per SM, {} per block, {} per thread", l.regs_per_sm, l.regs_per_block,
                               l.max_regs_per_thread));
  row("shared memory per SM", format_bytes(l.smem_per_sm_bytes));
  row("shared memory per block",
      fmt::format("{} static, {} opt-in ({} reserved per block)", format_bytes(l.smem_per_block_bytes),
                  format_bytes(l.smem_per_block_optin_bytes), format_bytes(l.smem_reserved_per_block_bytes)));
  out << "tensor cores (mma.sync, dense peak)\n";
  for (const MmaSupport &mma : a.tensor_cores.mma) {
    std::vector<std::string> shapes;
    for (const MmaShape &s : mma.shapes) shapes.push_back(s.str());
    const char *unit = mma.accumulator == "int32" ? "TOPS" : "TFLOPS";
    row(mma.dtype + " -> " + mma.accumulator,
        fmt::format("{} {}  {}", format_number(mma.peak_tops), unit, join_strings(shapes, " ")));
  }
  row("wgmma", a.tensor_cores.wgmma ? "yes (compile for " + a.arch_flag() + "a)" : "no");
  if (a.tensor_cores.mma_sync_fraction != 1)
    row("mma.sync ceiling", fmt::format("{:.0f}% of the mma peaks", 100 * a.tensor_cores.mma_sync_fraction));
  const ArchSources &src = a.sources;
  out << "sources\n";
  for (auto [label, text] : {std::pair{"compute", &src.compute}, std::pair{"memory", &src.memory},
                             std::pair{"limits", &src.limits}, std::pair{"tensor_cores", &src.tensor_cores},
                             std::pair{"derived", &src.derived}, std::pair{"notes", &src.notes}})
    if (!text->empty()) out << "  " << label << ": " << *text << "\n";
  if (!a.detected) return;
  const ArchDetection &d = *a.detected;
  out << "detected\n";
  row("device", fmt::format("{}: {}, base preset {}", d.ordinal, d.device_name, d.base_preset));
  row("from the device", join_strings(d.from_device));
  if (!d.rescaled.empty()) row("rescaled from the preset", join_strings(d.rescaled));
}

/// Every leaf field of the two descriptions that differs (the detection's own
/// record and the free-text sources excepted), as `/json/path: preset -> device`.
void print_arch_diff(const Arch &preset, const Arch &device, std::ostream &out) {
  ArchJson want = preset.to_json().flatten(), got = device.to_json().flatten();
  auto skipped = [](const std::string &path) {
    return path.starts_with("/detected") || path.starts_with("/sources") || path == "/name" ||
           path == "/description" || path.starts_with("/aliases");
  };
  int differ = 0;
  for (auto it = got.begin(); it != got.end(); ++it) {
    if (skipped(it.key())) continue;
    std::string before = want.contains(it.key()) ? want[it.key()].dump() : "(absent)";
    if (before == it.value().dump()) continue;
    out << fmt::format("{}: {} -> {}\n", it.key(), before, it.value().dump());
    ++differ;
  }
  for (auto it = want.begin(); it != want.end(); ++it)
    if (!skipped(it.key()) && !got.contains(it.key())) {
      out << fmt::format("{}: {} -> (absent)\n", it.key(), it.value().dump());
      ++differ;
    }
  out << fmt::format("{} field(s) of {} differ from the preset {} ({})\n", differ, device.detected->device_name,
                     preset.name, preset.description);
}

void print_arch_list(const std::vector<Arch> &presets, std::ostream &out) {
  for (const Arch &a : presets) {
    std::string aliases = a.aliases.empty() ? "" : "  (" + join_strings(a.aliases) + ")";
    out << fmt::format("{:<16} {:<6} {:>4} SMs  {}{}\n", a.name, a.arch_flag(), a.compute.sm_count, a.description,
                       aliases);
  }
}

}  // namespace

int arch_command(const ArchCommandOptions &opts, std::ostream &out, std::ostream &err) {
  return guarded(err, [&] {
    if (opts.detect && !opts.name.empty()) throw UserError("give a GPU name or --detect, not both");
    if (opts.list && (opts.detect || !opts.name.empty())) throw UserError("--list takes no GPU name and no --detect");
    if (!opts.detect && opts.name.empty()) {
      std::vector<Arch> all = Arch::presets();
      if (!opts.json) {
        print_arch_list(all, out);
        return 0;
      }
      ArchJson list = ArchJson::array();
      for (const Arch &a : all) list.push_back(a.to_json());
      out << list.dump(2) << "\n";
      return 0;
    }
    if (opts.diff && !opts.detect) throw UserError("--diff compares the live device with its preset: add --detect");
    Arch a = opts.detect ? runtime::detect_arch(opts.device) : Arch::by_name(opts.name);
    if (opts.diff) {
      print_arch_diff(Arch::by_name(a.detected->base_preset), a, out);
      return 0;
    }
    if (opts.json) out << a.to_json().dump(2) << "\n";
    else print_arch_text(a, out);
    return 0;
  });
}

}  // namespace tessera::cli
