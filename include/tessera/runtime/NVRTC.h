//===- tessera/runtime/NVRTC.h - CUDA C to cubin with NVRTC ----------------===//
//
// Compiles CUDA C source to a cubin (and optionally PTX) for one `sm_XX`, in
// process, with NVRTC. Needs the CUDA toolkit at build time (CMake option
// TESSERA_ENABLE_CUDA) but no driver and no device: every generated kernel is
// compiled and checked by ptxas on a machine without a GPU.
//
//   CompileResult r = compile_cuda(src, {.arch = "sm_90", .name = "vadd"});
//   r.cubin            // ELF bytes, load with runtime::Module::load
//   r.kernels[0].registers, r.kernels[0].shared_bytes   // from ptxas -v
//
// A failed compile throws CompileError with the NVRTC log and the path where
// the source was saved ($TESSERA_DUMP_DIR, else a temporary directory). So
// does a compile in which ptxas serialised wgmma or injected warpgroup
// fences around them (C7510, C7511, C7512, C7517, C7519): the kernel would run far
// slower than its code says.
// When tessera was built without the toolkit every entry point throws a
// UserError saying "NVRTC not available".
//
// Thread safety: compile_cuda may be called from any number of threads at
// once (each call owns its nvrtcProgram); compile_many does exactly that.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/support/Error.h"

namespace tessera::runtime {

class KernelCache;

/// A compile failure: NVRTC rejected the source, ptxas rejected the PTX, or
/// the options were invalid (e.g. an arch NVRTC does not support). what() is
/// one summary line plus the log; the parts are available separately.
class CompileError : public UserError {
 public:
  CompileError(const std::string &summary, std::string log, std::string source_path);
  /// The full NVRTC program log (compiler and ptxas messages); may be empty
  /// when the failure happened before compilation (bad options).
  const std::string &log() const { return log_; }
  /// Where the failing source was written; empty when nothing was compiled.
  const std::string &source_path() const { return source_path_; }

 private:
  std::string log_;
  std::string source_path_;
};

struct CompileOptions {
  /// Target, "sm_XX" (also "sm_90a"): a cubin for exactly that architecture.
  std::string arch = "sm_90";
  /// Program name: used in messages and for the dumped file's name.
  std::string name = "kernel";
  /// Passed to NVRTC after tessera's own (-std=c++17, -arch, -I<cuda>/include,
  /// --ptxas-options=-v), e.g. "--use_fast_math", "-lineinfo".
  std::vector<std::string> extra_options;
  /// Also return the PTX.
  bool want_ptx = false;
  /// Where compiled cubins are kept (runtime/KernelCache.h): a compile found
  /// there is read, not compiled; a new one is stored. May be null.
  KernelCache *cache = nullptr;
};

/// Resource usage of one kernel, as ptxas reports it with -v.
struct KernelResources {
  std::string name;            ///< the entry's symbol (mangled unless extern "C")
  int registers = 0;           ///< per thread
  int64_t shared_bytes = 0;    ///< static shared memory per block
  int64_t stack_bytes = 0;     ///< stack frame per thread
  int64_t spill_stores = 0;    ///< bytes
  int64_t spill_loads = 0;     ///< bytes
  int barriers = 0;
};

struct CompileResult {
  std::string name;
  std::string arch;
  std::vector<uint8_t> cubin;  ///< an ELF image ("\x7fELF...")
  std::string ptx;             ///< empty unless CompileOptions::want_ptx
  std::string log;             ///< the NVRTC log (warnings, ptxas -v info)
  double compile_ms = 0;       ///< wall time of this compile (0 when read from a KernelCache)
  bool from_cache = false;     ///< read from CompileOptions::cache, not compiled
  std::vector<KernelResources> kernels;  ///< one per entry, in the log's order
  /// The entry named `name` (mangled or not), or nullptr.
  const KernelResources *find_kernel(const std::string &name) const;
};

/// The KernelCache key of compiling `source` with `options`: a digest of the
/// source, every NVRTC option, the NVRTC and tessera versions. UserError
/// without NVRTC.
std::string kernel_cache_key(const std::string &source, const CompileOptions &options);

/// Compiles `source`. Throws CompileError (see the class); UserError when
/// tessera was built without NVRTC.
CompileResult compile_cuda(const std::string &source, const CompileOptions &options);

/// One slot of compile_many: exactly one of `result` and `error` is set.
struct CompileOutcome {
  std::optional<CompileResult> result;
  std::optional<CompileError> error;
  bool ok() const { return result.has_value(); }
};

struct CompileJob {
  std::string source;
  CompileOptions options;
};

/// Compiles every job on a pool of `threads` workers (0: the number of cores),
/// each compile in its own NVRTC program. Slot i holds job i's result or its
/// CompileError; one failure never affects the others. Any other exception (a
/// bug, out of memory) is rethrown after all workers have stopped.
std::vector<CompileOutcome> compile_many(std::span<const CompileJob> jobs, unsigned threads = 0);
/// The same source list with shared options; job i is named "<options.name>_<i>".
std::vector<CompileOutcome> compile_many(const std::vector<std::string> &sources,
                                         const CompileOptions &options, unsigned threads = 0);

/// True when tessera was built with NVRTC.
bool nvrtc_available();
/// "13.0", or "" without NVRTC.
std::string nvrtc_version();
/// The `sm_XX` numbers NVRTC can target (75, 80, 86, ...); empty without NVRTC.
const std::vector<int> &nvrtc_supported_archs();

/// Extracts per-kernel resource usage from a ptxas -v log (the NVRTC program
/// log of a compile with --ptxas-options=-v). Lines it does not know are ignored.
std::vector<KernelResources> parse_ptxas_log(const std::string &log);

}  // namespace tessera::runtime
