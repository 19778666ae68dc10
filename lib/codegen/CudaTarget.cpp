//===- lib/codegen/CudaTarget.cpp - What the CUDA output depends on per arch ===//
//
// The limits are the GPU descriptions' (arch/*.json, documented in
// arch/SCHEMA.md with their sources): the opt-in maximum of shared memory per
// block, which includes the 48 KB available without opt-in. bfloat16
// arithmetic instructions exist from compute capability 8.0 on.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <set>

#include "tessera/arch/Arch.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/ir/Functor.h"

namespace tessera::codegen {

namespace {

CudaTarget resolve(std::string_view arch) {
  // "sm_" digits, optionally "a" (the architecture-specific variant, same limits).
  const bool specific = arch.ends_with('a');
  std::string_view digits = arch.substr(0, arch.size() - (specific ? 1 : 0));
  bool well_formed = digits.starts_with("sm_") && digits.size() > 3;
  for (size_t i = 3; well_formed && i < digits.size(); ++i)
    well_formed = std::isdigit(static_cast<unsigned char>(digits[i]));
  if (!well_formed)
    throw CodegenError("malformed CUDA architecture '" + std::string(arch) +
                       "': expected sm_XX, e.g. sm_80 or sm_90");
  const int cc = std::stoi(std::string(digits.substr(3)));
  std::set<int> known;
  for (const Arch &a : Arch::presets()) {
    const int v = a.compute_capability.sm_version();
    if (v == cc)
      return {std::string(arch), cc, a.limits.smem_per_block_optin_bytes, specific};
    known.insert(v);
  }
  std::string list;
  for (int v : known) list += (list.empty() ? "" : ", ") + ("sm_" + std::to_string(v));
  throw CodegenError("unknown CUDA architecture '" + std::string(arch) + "': tessera knows " +
                     (list.empty() ? std::string("none") : list) +
                     " (those of its GPU descriptions, arch/*.json; add one for another)");
}

}  // namespace

CudaTarget cuda_target(std::string_view arch) {
  // The presets are read once per target and process: the code generator
  // runs for every candidate of every tune.
  static std::mutex mutex;
  static std::map<std::string, CudaTarget, std::less<>> resolved;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = resolved.find(arch); it != resolved.end()) return it->second;
  CudaTarget t = resolve(arch);
  resolved.emplace(std::string(arch), t);
  return t;
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
