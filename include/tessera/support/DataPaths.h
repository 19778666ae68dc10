//===- tessera/support/DataPaths.h - Where tessera finds its data files -----===//
//
// The programs read data that is not compiled in: GPU descriptions (arch/),
// the workload corpus (workloads/, with the long-tail programs in
// workloads/longtail/), benchmark suites (bench/suites/), examples, and test
// kernels and goldens (tests/). In a source checkout they sit in the tree the
// program was built from; in a relocated bundle (`./dev.sh bundle`) they
// travel beside the binaries; an installed tessera (`cmake --install`) has
// them in <prefix>/share/tessera. One rule decides, the same for every program:
//
//   1. $TESSERA_HOME, when set: the data root (it must hold arch/);
//   2. else <directory of the running program>/../data, when it holds arch/
//      (a bundle: bin/<program> and data/ side by side);
//   3. else <directory of the running program>/../share/tessera, when it
//      holds arch/ (an installed program, or one installed beside it);
//   4. else the source tree the program was built from.
//
// Everything the build, the tests and the programs read is in the repository
// itself. The GPU presets are also compiled into the library
// (Arch::presets()), so a program linked against an installed tessera finds
// them with no data folder at all.
//
//   std::ifstream in(support::data_root() / "bench" / "suites" / "smoke.json");
//
//===----------------------------------------------------------------------===//
#pragma once

#include <filesystem>
#include <string>

namespace tessera::support {

/// The directory that holds arch/, workloads/, bench/suites/ and tests/.
/// Computed once per process; throws UserError when $TESSERA_HOME is set but
/// has no arch/ folder (a typo must not silently fall back to the source tree).
const std::filesystem::path &data_root();

/// Where data_root() came from: "TESSERA_HOME", "bundle", "install" or
/// "source tree".
std::string data_root_origin();

/// A per-user file or directory of tessera's (the tuning database, the
/// kernel cache): $OVERRIDE_ENV when set, else $XDG_CACHE_HOME/tessera/LEAF,
/// else ~/.cache/tessera/LEAF, else `fallback`.
std::filesystem::path user_cache_path(const char *override_env, const std::string &leaf,
                                      const std::filesystem::path &fallback);

}  // namespace tessera::support
