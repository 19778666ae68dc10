//===- lib/codegen/CudaArch.cpp - What the CUDA output depends on per arch -===//
//
// The shared memory limits are "Maximum amount of shared memory per thread
// block" in the CUDA C++ Programming Guide, "Compute Capabilities" (Technical
// Specifications per Compute Capability): the opt-in maximum a kernel may
// request with cudaFuncAttributeMaxDynamicSharedMemorySize, which includes
// the 48 KB available without opt-in. bfloat16 arithmetic instructions exist
// from compute capability 8.0 on.
//
//===----------------------------------------------------------------------===//
#include <cctype>

#include "tessera/codegen/CodegenCUDA.h"

#include "tessera/ir/Functor.h"

namespace tessera::codegen {

namespace {

constexpr int64_t kKB = 1024;

const CudaArch kArchs[] = {
    {"sm_75", 75, 64 * kKB},     // Turing
    {"sm_80", 80, 163 * kKB},    // A100
    {"sm_86", 86, 99 * kKB},     // GA10x
    {"sm_87", 87, 163 * kKB},    // Jetson Orin
    {"sm_89", 89, 99 * kKB},     // Ada
    {"sm_90", 90, 227 * kKB},    // H100
    {"sm_90a", 90, 227 * kKB, true},  // H100, with wgmma and setmaxnreg
    {"sm_100", 100, 227 * kKB},  // B200
    {"sm_120", 120, 99 * kKB},   // RTX 50xx
};

std::string known_archs() {
  std::string s;
  for (const CudaArch &a : kArchs) s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

}  // namespace

const CudaArch &cuda_arch(std::string_view arch) {
  // "sm_" digits, optionally "a" (the architecture-specific variant, same limits).
  std::string_view digits = arch.substr(0, arch.size() - (arch.ends_with('a') ? 1 : 0));
  bool well_formed = digits.starts_with("sm_") && digits.size() > 3;
  for (size_t i = 3; well_formed && i < digits.size(); ++i)
    well_formed = std::isdigit(static_cast<unsigned char>(digits[i]));
  if (!well_formed)
    throw CodegenError("malformed CUDA architecture '" + std::string(arch) +
                       "': expected sm_XX, e.g. sm_80 or sm_90");
  for (const CudaArch &a : kArchs)
    if (a.name == arch) return a;
  for (const CudaArch &a : kArchs)
    if (a.name == digits) return a;
  throw CodegenError("unknown CUDA architecture '" + std::string(arch) + "': tessera knows " + known_archs());
}

std::string cuda_target_for(const std::string &arch, const ir::Stmt &body) {
  if (arch != "sm_90") return arch;
  bool hopper = false;
  ir::pre_order_visit(
      body,
      [&](const ir::Expr &e) {
        const auto *c = e.as<ir::Call>();
        hopper |= c && ir::needs_arch_specific_target(c->op);
      },
      nullptr);
  return hopper ? "sm_90a" : arch;
}

}  // namespace tessera::codegen
