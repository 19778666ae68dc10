//===- tessera/support/Version.h - Which tessera this is -------------------===//
//
// The version of the build, for anything that records results and must say
// which tessera produced them (the tuning database's key, benchmark files):
//
//   tessera::version()   // "0.1.0": the CMake project version
//   tessera::git_hash()  // "1d03c6d9e2ab" or "1d03c6d9e2ab-dirty"; "" outside a git checkout
//
// The git hash is read at build time, on every build (lib/support/WriteGitHash.cmake
// rewrites its file only when the hash changes, so nothing else recompiles).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string_view>

namespace tessera {

/// "0.1.0": the version in the top-level CMakeLists.txt `project(...)`.
std::string_view version();

/// The commit the library was built from (12 hex digits), with "-dirty" when
/// tracked files had uncommitted changes; "" when unknown (no git, no checkout).
std::string_view git_hash();

}  // namespace tessera
