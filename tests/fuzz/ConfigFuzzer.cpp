//===- tests/fuzz/ConfigFuzzer.cpp - libFuzzer target: config and arch JSON -===//
//
// Any JSON value is read by every rule's config reader (Rule::config_from_json),
// by the CPU target's two config readers and, as text, by the arch reader
// (Arch::parse): each either reads it or refuses it with a UserError naming
// the field; a JSON library exception escaping a reader is a bug.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "FuzzCheck.h"
#include "tessera/arch/Arch.h"
#include "tessera/cpu/CpuLoops.h"
#include "tessera/cpu/CpuSchedule.h"
#include "tessera/rules/Rule.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  tessera::fuzz::only_user_errors("the arch reader", [&] { tessera::Arch::parse(text, "fuzz.json"); });
  tessera::fuzz::only_user_errors("the CPU loop config reader", [&] { tessera::cpu::CpuLoopConfig::parse(text); });
  tessera::fuzz::only_user_errors("the CPU matmul config reader",
                                  [&] { tessera::cpu::CpuMatmulConfig::parse(text); });
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  for (const tessera::rules::Rule *rule : tessera::rules::all_rules())
    tessera::fuzz::only_user_errors(rule->name(), [&] { rule->config_from_json(j); });
  return 0;
}
