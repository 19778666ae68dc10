//===- tessera/tune/SassCheck.h - Does the machine code do what the config asks? -===//
//
// fast_tune summarises every compiled candidate's SASS (runtime/Sass.h) when
// cuobjdump is available. A config can then be held to what it asked for: a
// softmax config with "vector": 8 on float16 data asks for 16-byte global
// accesses, and a kernel whose widest LDG/STG is 2 bytes did not get them
// (the vectorised loop was split, or the alignment could not be proved).
// That is a warning on the candidate, never a failure: it ran (or would run)
// correctly, only not the way the policy meant.
//
//   int bytes = expected_access_bytes(func, config);   // 16 for vector 8 x float16
//   std::string w = sass_warning(func, config, summary);
//   // "sass: asks for vector 8 (16 bytes) but its widest global access is 2 bytes"
//
// A config with "wgmma": true (the tensor-core rule's Hopper kernel) asks for
// HGMMA or IGMMA in the machine code.
//
// The width expectation is rule-agnostic today and lives in one function, so
// that a rule-specific version (which operand a vector applies to) can
// replace it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tessera/ir/Func.h"
#include "tessera/runtime/Sass.h"

namespace tessera::tuning {

/// The global access width in bytes that `config` (a rule's config JSON) asks
/// of the machine code, or 0 when it asks for none. "vector": v > 1 asks for
/// min(16, v * b) bytes, b the byte size of the smallest floating-point or
/// integer element among the parameter buffers of `func` (an int4 weight
/// packed in int32 words counts as int32; sub-byte dtypes are skipped).
int expected_access_bytes(const ir::PrimFunc &func, const nlohmann::ordered_json &config);

/// The warning for a candidate whose machine code contradicts its config
/// (neither a global load nor a global store is as wide as
/// expected_access_bytes), "" when there is none or nothing was expected:
///   "sass: asks for vector 8 (16 bytes) but its widest global access is 2 bytes"
/// or a tensor-core config whose instructions are missing (wgmma: no
/// HGMMA/IGMMA; tma: no UTMALDG; tma_store: no UTMASTG).
std::string sass_warning(const ir::PrimFunc &func, const nlohmann::ordered_json &config,
                         const runtime::SassSummary &sass);

}  // namespace tessera::tuning
