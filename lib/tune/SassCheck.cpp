//===- lib/tune/SassCheck.cpp - Configs held to their machine code ----------===//
#include "tessera/tune/SassCheck.h"

#include <fmt/format.h>

#include <algorithm>

namespace tessera::tuning {

int expected_access_bytes(const ir::PrimFunc &func, const nlohmann::ordered_json &config) {
  auto it = config.find("vector");
  if (it == config.end() || !it->is_number_integer()) return 0;
  int64_t vector = it->get<int64_t>();
  if (vector <= 1) return 0;
  // The narrowest element decides: with float16 inputs and a float32 output,
  // a vector of 8 is 16 bytes of input, and at least that wide an access
  // should exist.
  int bytes = 0;
  for (const ir::Var &param : func.params()) {
    ir::Buffer b = func.buffer_of(param);
    if (!b.defined()) continue;
    ir::DataType t = b.dtype();
    if (!(t.is_float() || t.is_integer()) || t.bits() < 8) continue;
    bytes = bytes ? std::min(bytes, t.bytes()) : t.bytes();
  }
  if (bytes == 0) return 0;
  return int(std::min<int64_t>(16, vector * bytes));
}

std::string sass_warning(const ir::PrimFunc &func, const nlohmann::ordered_json &config,
                         const runtime::SassSummary &sass) {
  // A Hopper config asks for warpgroup mma (HGMMA, IGMMA for int8).
  if (config.value("wgmma", false)) {
    auto count = [&](const char *op) {
      auto it = sass.tensor_ops.find(op);
      return it == sass.tensor_ops.end() ? int64_t(0) : int64_t(it->second);
    };
    if (count("HGMMA") + count("IGMMA") == 0) return "sass: asks for wgmma but holds no HGMMA or IGMMA";
  }
  // And TMA: copies in (UTMALDG), the epilogue's stores out (UTMASTG).
  if (config.value("tma", false) && sass.tma_loads == 0) return "sass: asks for tma but holds no UTMALDG";
  if (config.value("tma_store", false) && sass.tma_stores == 0)
    return "sass: asks for tma_store but holds no UTMASTG";
  int expected = expected_access_bytes(func, config);
  if (!runtime::width_contradiction(sass, expected)) return "";
  int widest = std::max(sass.widest_global_load(), sass.widest_global_store());
  return fmt::format("sass: asks for vector {} ({} bytes) but its widest global access is {} bytes",
                     config["vector"].get<int64_t>(), expected, widest);
}

}  // namespace tessera::tuning
