//===- tests/support/TuringArch.h - An sm_75 GPU for the code generator's tests ===//
//
// tessera's GPU presets (arch/*.json) are sm_80 and later; the code generator
// also runs for sm_75 (bfloat16 computed in float, no tensor-core
// instructions) when a description of such a GPU is given. These tests give
// the T4's (tests/codegen/data/t4.json) through TESSERA_ARCH_PATH, for the
// rest of the process.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdlib>

namespace tessera::test {

inline void use_turing_description() { ::setenv("TESSERA_ARCH_PATH", TESSERA_TEST_DATA_DIR "/codegen/data", 1); }

}  // namespace tessera::test
