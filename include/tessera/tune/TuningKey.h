//===- tessera/tune/TuningKey.h - What a tuning result is valid for --------===//
//
// A measured time means something only for one workload on one GPU with one
// compiler, driver and tessera. TuningKey names exactly that:
//
//   workload  "9f3c0a12b4e5d6c7"   structural hash of the normalised function:
//                                  shapes, dtypes and the computation, not names
//   arch      "h100_sxm/sm_90/132sm"   Arch::fingerprint()
//   nvrtc     "13.0"                   NVRTC's version ("none" without NVRTC)
//   driver    "13.0"                   the CUDA driver's ("none" without one)
//   tessera   "0.1.0"                  tessera::version()
//
// Two keys are equal only when all five fields are, so a database lookup never
// returns a result measured on another GPU, for another shape or dtype, or
// with another toolchain:
//
//   TuningKey k = TuningKey::of(func, Arch::by_name("h100"));  // this machine's toolchain
//   TuningKey k2 = TuningKey::of(func, arch, Toolchain{.nvrtc = "12.8", ...});
//
// Normalising (normalize_workload) makes the hash independent of what does not
// change the program: the function's name and its "global_symbol" attribute,
// the spelling of attribute namespaces ("tirx.noalias" is "tir.noalias"), and
// the names of variables and buffers (structural_hash ignores them; see
// ir/StructuralEqual.h). Block names stay in: schedules address blocks by name.
//
// Symbolic shapes are refused: a time is measured at concrete sizes, so bind
// them first (analysis::specialize) and the key carries the sizes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tessera/arch/Arch.h"
#include "tessera/ir/Func.h"
#include "tessera/support/Error.h"

namespace tessera::tuning {

/// JSON as the tuning database writes it: objects keep their field order.
using Json = nlohmann::ordered_json;

/// The versions of what compiled and ran a kernel.
struct Toolchain {
  std::string nvrtc;    ///< "13.0", or "none"
  std::string driver;   ///< "13.0", or "none"
  std::string tessera;  ///< "0.1.0"

  /// This process's: runtime::nvrtc_version(), runtime::driver_version()
  /// (loads the driver on first use; "none" when there is none) and
  /// tessera::version().
  static Toolchain current();
  bool operator==(const Toolchain &) const = default;
};

/// See the file comment.
struct TuningKey {
  std::string workload;  ///< 16 lower-case hex digits
  std::string arch;      ///< Arch::fingerprint()
  std::string nvrtc;
  std::string driver;
  std::string tessera;

  /// The key of `func` on `arch` with `toolchain`. UserError when `func` has
  /// symbolic shape variables (the message names them).
  static TuningKey of(const ir::PrimFunc &func, const Arch &arch,
                      const Toolchain &toolchain = Toolchain::current());

  /// {"workload": ..., "arch": ..., "nvrtc": ..., "driver": ..., "tessera": ...}
  Json to_json() const;
  /// "9f3c0a12b4e5d6c7 h100_sxm/sm_90/132sm nvrtc 13.0 driver 13.0 tessera 0.1.0"
  std::string str() const;
  bool operator==(const TuningKey &) const = default;
};

/// `func` named "main", without "global_symbol", with "tirx." attribute keys
/// spelled "tir.": the function whose structural hash is the workload hash.
ir::PrimFunc normalize_workload(const ir::PrimFunc &func);

/// The workload field of a key: structural_hash(normalize_workload(func)) as
/// 16 hex digits. UserError for a function with symbolic shapes.
std::string workload_hash(const ir::PrimFunc &func);

/// What a person reading the database needs to recognise the workload (not
/// part of the key):
///   {"name": "main", "buffers": [{"name": "A", "dtype": "float16", "shape": [64, 128]}, ...]}
/// Parameter buffers in parameter order; a symbolic dimension is its name.
Json workload_summary(const ir::PrimFunc &func);

}  // namespace tessera::tuning
