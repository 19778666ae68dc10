//===- lib/tune/TuningKey.cpp - Workload hash, toolchain versions, keys ------===//
#include "tessera/tune/TuningKey.h"

#include <fmt/format.h>

#include "tessera/ir/Expr.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/script/Printer.h"
#include "tessera/support/Version.h"

namespace tessera::tuning {

namespace {

constexpr const char *kNone = "none";

/// cuDriverGetVersion's 13000 as "13.0" (12080 as "12.8").
std::string driver_version_text(int version) {
  if (version <= 0) return kNone;
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

void check_concrete_shapes(const ir::PrimFunc &func) {
  std::vector<ir::Var> vars = func.shape_vars();
  if (vars.empty()) return;
  std::string names;
  for (const ir::Var &v : vars) names += (names.empty() ? "" : ", ") + v.name();
  throw UserError(
      fmt::format("function '{}' has symbolic shapes ({}): a tuning result holds for concrete sizes only; "
                  "bind them first (analysis::specialize)",
                  func.name(), names));
}

}  // namespace

Toolchain Toolchain::current() {
  std::string nvrtc = runtime::nvrtc_version();
  return Toolchain{.nvrtc = nvrtc.empty() ? kNone : nvrtc,
                   .driver = driver_version_text(runtime::driver_version()),
                   .tessera = std::string(tessera::version())};
}

TuningKey TuningKey::of(const ir::PrimFunc &func, const Arch &arch, const Toolchain &toolchain) {
  return TuningKey{.workload = workload_hash(func),
                   .arch = arch.fingerprint(),
                   .nvrtc = toolchain.nvrtc,
                   .driver = toolchain.driver,
                   .tessera = toolchain.tessera};
}

Json TuningKey::to_json() const {
  return Json{
      {"workload", workload}, {"arch", arch}, {"nvrtc", nvrtc}, {"driver", driver}, {"tessera", tessera}};
}

std::string TuningKey::str() const {
  return fmt::format("{} {} nvrtc {} driver {} tessera {}", workload, arch, nvrtc, driver, tessera);
}

ir::PrimFunc normalize_workload(const ir::PrimFunc &func) {
  ir::Annotations attrs;
  for (const auto &[key, value] : func.attrs()) {
    if (key == "global_symbol") continue;  // the function's name again
    if (key.starts_with("tirx."))
      attrs.emplace("tir." + key.substr(5), value);
    else
      attrs.emplace(key, value);
  }
  return ir::PrimFunc::make("main", func.params(), func.buffer_map(), func.body(), attrs);
}

std::string workload_hash(const ir::PrimFunc &func) {
  check_concrete_shapes(func);
  return fmt::format("{:016x}", static_cast<uint64_t>(ir::structural_hash(normalize_workload(func))));
}

Json workload_summary(const ir::PrimFunc &func) {
  Json buffers = Json::array();
  for (const ir::Buffer &b : func.param_buffers()) {
    Json shape = Json::array();
    for (const ir::Expr &dim : b.shape()) {
      if (const auto *imm = dim.as<ir::IntImm>())
        shape.push_back(imm->value);
      else
        shape.push_back(script::print(dim));
    }
    buffers.push_back(Json{{"name", b.name()}, {"dtype", b.dtype().str()}, {"shape", shape}});
  }
  return Json{{"name", func.name()}, {"buffers", buffers}};
}

}  // namespace tessera::tuning
