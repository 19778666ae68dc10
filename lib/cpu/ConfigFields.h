//===- lib/cpu/ConfigFields.h - What the CPU configs' JSON may hold --------===//
//
// Private to lib/cpu: CpuLoopConfig::parse and CpuMatmulConfig::parse refuse
// a field they do not know in the same words.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/support/Error.h"

namespace tessera::cpu::detail {

/// UserError "<what>: unknown field 'x' (fields: a, b)" for the first key of
/// the object `j` that is not in `fields`.
inline void check_known_fields(const nlohmann::json &j, const std::vector<std::string> &fields,
                               const std::string &what) {
  for (const auto &[key, value] : j.items()) {
    if (std::find(fields.begin(), fields.end(), key) != fields.end()) continue;
    std::string list;
    for (const std::string &f : fields) list += (list.empty() ? "" : ", ") + f;
    throw UserError(what + ": unknown field '" + key + "' (fields: " + list + ")");
  }
}

}  // namespace tessera::cpu::detail
