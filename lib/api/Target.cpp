//===- lib/api/Target.cpp - Where a kernel runs ----------------------------===//
#include <fmt/format.h>

#include "tessera/cpu/CpuArch.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/DetectArch.h"
#include "tessera/tessera.h"

namespace tessera {

Target Target::detect() {
  if (runtime::driver_status() != runtime::DriverStatus::Ok) {
    Target t = cpu();
    t.note_ = "no CUDA device (" + runtime::driver_message() + "): the CPU target";
    return t;
  }
  Target t;
  t.cpu_ = false;
  t.arch_ = std::make_shared<const Arch>(runtime::detect_arch(0));
  return t;
}

Target Target::detect_gpu(std::string_view fallback) {
  if (runtime::driver_status() == runtime::DriverStatus::Ok) return detect();
  Target t = gpu(fallback);
  t.note_ = "no CUDA device, scheduling for " + std::string(fallback) + " (pass --arch)";
  return t;
}

Target Target::gpu(std::string_view name) {
  Target t;
  t.cpu_ = false;
  t.arch_ = std::make_shared<const Arch>(Arch::by_name(name));
  return t;
}

Target Target::gpu(const Arch &arch) {
  Target t;
  t.cpu_ = false;
  t.arch_ = std::make_shared<const Arch>(arch);
  return t;
}

Target Target::cpu() { return Target(); }

Target Target::parse(std::string_view name) {
  if (name == "cpu") return cpu();
  if (name == "auto") return detect();
  return gpu(name);
}

const Arch &Target::arch() const {
  if (cpu_) throw UserError("the CPU target has no GPU description (Arch)");
  return *arch_;
}

std::string Target::str() const {
  if (cpu_) return "cpu (" + cpu::CpuArch::detect().str() + ")";
  return fmt::format("{} (sm_{})", arch_->name, arch_->compute_capability.sm_version());
}

std::string Report::table() const {
  std::string out = fmt::format("# {}: rule {}, {}\n", target, rule.empty() ? "none" : rule,
                                measured ? "measured" : "not measured: " + why_unmeasured);
  out += fmt::format("{:>4}  {:>10}  {:<14}  {:<22}  {}\n", "rank", measured ? "time(us)" : "est.(us)", "status",
                     "origin", "config");
  for (size_t rank = 1; const Candidate &c : ranked) {
    const double t = c.measured ? c.time_us : c.estimate_us;
    const std::string origin = c.origin + (rank == 1 && c.status == "ok" ? " *" : "");
    out += fmt::format("{:>4}  {:>10}  {:<14}  {:<22}  {}\n", rank++,
                       c.status != "ok" || t <= 0 ? std::string("-") : fmt::format("{:.2f}", t), c.status, origin,
                       c.config);
    if (!c.error.empty()) out += "        " + c.error.substr(0, c.error.find('\n')) + "\n";
  }
  return out;
}

}  // namespace tessera
