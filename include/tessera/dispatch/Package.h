//===- tessera/dispatch/Package.h - A tuned kernel as one file -------------===//
//
// A kernel package is what `Kernel::save` writes and `tessera::load` (or,
// without the compiler, dispatch::load_package) reads back: everything a
// tuned function needs to run again with no compiling.
//
//   tessera-package 1 <N>\n      the header: format, version, JSON bytes
//   <N bytes of JSON>            {"kind": "cuda" | "cpu", "plan": ..., "meta": ...}
//   <blobs>                      the cubins, back to back
//
// "cuda": "plan" is the KernelPlan (dispatch/KernelPlan.h) whose steps
// name their cubin by offset, size and FNV-1a hash in the blob area.
// "cpu": no plan; the scheduled function as TVMScript is in "meta" (the LLVM
// JIT compiles it at load: tessera::load). "meta" holds what the tuner
// reported (ranked candidates, the winner's config and trace, the
// function's text, versions); the dispatch side does not read it.
//
// A package is written to a temporary file and renamed into place, so a
// reader sees the old file or the new one, never half of one. Reading checks
// the header, the JSON, every blob's bounds and hash and the plan
// (KernelPlan::validate): a damaged or truncated package is a UserError
// saying what is wrong, never a kernel run.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>

#include "tessera/dispatch/KernelPlan.h"

namespace tessera::dispatch {

struct Package {
  /// "cuda" or "cpu".
  std::string kind;
  /// The kernels and their cells ("cuda"); null for "cpu".
  std::shared_ptr<KernelPlan> plan;
  /// The tuner's report and the function's text (see the file comment).
  Json meta;
};

/// Writes `package` to `path` (atomically; its directory must exist).
/// UserError when the file cannot be written.
void save_package(const std::string &path, const Package &package);

/// Reads a package written by save_package. UserError naming `path` for a
/// file that is missing, not a package, of a newer format, or damaged.
Package load_package(const std::string &path);

/// The 64-bit FNV-1a hash of `n` bytes, as 16 hex digits (a package's check
/// that a cubin reads back as it was written).
std::string fnv1a_hex(const void *data, size_t n);

}  // namespace tessera::dispatch
