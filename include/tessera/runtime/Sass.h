//===- tessera/runtime/Sass.h - What the GPU will run: SASS summaries -------===//
//
// The cubin NVRTC returns is machine code (SASS). Its instructions say what a
// schedule became: whether a `vector: 8` float16 config really loads 16 bytes
// per instruction (LDG.E.128) or was split into 2-byte loads, whether the
// kernel spills to local memory (LDL/STL), uses tensor cores (HMMA) or
// cp.async (LDGSTS). NVIDIA's `cuobjdump -sass` prints it; this file finds
// that tool, runs it, and reduces its listing to counts:
//
//   if (auto tool = find_disassembler()) {
//     std::string text = disassemble(result.cubin, *tool);   // cuobjdump -sass
//     for (const SassSummary &s : parse_sass(text))
//       std::cout << s.name << ": " << s.str() << "\n";
//   }
//   // main_kernel: global ld 16B x8 | st 16B x8 | shared 0 | local 0 | mma 0 | FFMA 12
//
// The listing looks like this (one instruction per `/*addr*/` line; the
// encoding lines in between are ignored):
//
//           Function : main_kernel
//   .headerflags @"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
//           /*0090*/   LDG.E.128.CONSTANT R8, desc[UR4][R4.64] ;   /* 0x... */
//           /*00b0*/   STG.E.128 desc[UR4][R2.64], R8 ;            /* 0x... */
//
// The tool is optional: tessera works without it (the summaries are simply
// absent). `./dev.sh` installs the nvidia-cuda-cuobjdump and
// nvidia-cuda-nvdisasm wheels (cuobjdump runs nvdisasm from its own folder)
// into .deps/cuda-tools/ of the source tree. Every run of either costs about
// 0.25 s of CPU before it reads its input, more than NVRTC takes to compile a
// tuning candidate, so the tuner reads all its candidates' cubins in one
// nvdisasm run (summarise_cubins). Counts are static: an instruction in a
// loop counts once, and instructions predicated off for good (`@!PT`,
// padding the scheduler inserts) are not counted.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/support/Error.h"

namespace tessera::runtime {

/// The disassembler could not be run or rejected the cubin; what() has the
/// command's exit status and its stderr.
class DisassembleError : public UserError {
 public:
  using UserError::UserError;
};

/// Instruction counts by access width in bytes (1, 2, 4, 8, 16, 32).
using WidthCounts = std::map<int, int64_t>;

/// The static instruction mix of one function of a SASS listing.
struct SassSummary {
  std::string name;            ///< the function ("Function : NAME")
  std::string arch;            ///< "sm_90", from the listing's `code for` line; "" when absent
  int64_t instructions = 0;    ///< every instruction line (NOPs and padding included)
  WidthCounts global_loads;    ///< LDG
  WidthCounts global_stores;   ///< STG
  WidthCounts generic_loads;   ///< LD: the compiler could not prove the address space
  WidthCounts generic_stores;  ///< ST
  WidthCounts shared_loads;    ///< LDS
  WidthCounts shared_stores;   ///< STS
  WidthCounts async_copies;    ///< LDGSTS (cp.async: global -> shared), by width
  int64_t ldmatrix = 0;        ///< LDSM (ldmatrix: shared -> registers, in fragments)
  int64_t tma_loads = 0;       ///< UTMALDG (cp.async.bulk.tensor: a TMA copy global -> shared)
  int64_t tma_stores = 0;      ///< UTMASTG (cp.async.bulk.tensor: a TMA copy shared -> global)
  int64_t mbarrier_ops = 0;    ///< SYNCS.* (mbarrier arrive, expect-tx, try-wait)
  int64_t local_loads = 0;     ///< LDL: spills or local arrays
  int64_t local_stores = 0;    ///< STL
  int64_t atomics = 0;         ///< ATOM, ATOMG, RED, REDG (global or generic)
  int64_t shared_atomics = 0;  ///< ATOMS
  /// Tensor-core instructions by opcode: HMMA, IMMA, DMMA, BMMA, HGMMA, IGMMA, QGMMA, ...
  std::map<std::string, int64_t> tensor_ops;
  /// Fused multiply-adds by opcode: FFMA, HFMA2, DFMA. HFMA2.MMA with two zero
  /// multiplicands is how ptxas materialises a constant, not arithmetic, and
  /// is not counted.
  std::map<std::string, int64_t> fma_ops;

  /// The widest LDG (or generic LD), in bytes; 0 when there is none.
  int widest_global_load() const;
  /// The widest STG (or generic ST), in bytes; 0 when there is none.
  int widest_global_store() const;
  /// True when no instruction was counted (an empty or unrecognised listing).
  bool empty() const { return instructions == 0; }
  /// One line for people:
  ///   global ld 16B x8, 2B x40 | st 16B x8 | shared ld 4B x1 st 4B x1 | local 0 | mma 0 | FFMA 12
  /// (cp.async, ldmatrix, atomics and generic accesses appear only when present).
  std::string str() const;
  /// Adds `other`'s counts (for a function compiled into several kernels);
  /// the name and arch stay.
  SassSummary &operator+=(const SassSummary &other);
};

/// The access width in bytes of a load or store opcode with its modifiers:
/// .U8/.S8 = 1, .U16/.S16 = 2, none = 4, .64 = 8, .128 = 16, .256 = 32; every
/// other modifier (.E, .CONSTANT, .EL, .LU, .STRONG.GPU, .BYPASS, ...) is
/// ignored. "LDG.E.U16.CONSTANT" -> 2, "STG.E.128" -> 16, "LDGSTS.E.BYPASS.128" -> 16.
int access_width(std::string_view opcode);

/// Summarises a `cuobjdump -sass` listing: one SassSummary per `Function :`
/// header, in listing order. Text that is empty or not a listing gives an
/// empty vector; it never throws.
std::vector<SassSummary> parse_sass(std::string_view text);

/// When `expected_bytes` > 0 and neither a global load nor a global store of
/// `s` is that wide, why that contradicts the request, e.g.
///   "no global load or store is 16 bytes wide: the widest load is 2 bytes, the widest store 2 bytes";
/// std::nullopt when the machine code is consistent with it (or nothing was expected).
std::optional<std::string> width_contradiction(const SassSummary &s, int expected_bytes);

/// The cuobjdump to use, the first that exists of:
///   1. $TESSERA_CUOBJDUMP (when set, and only it: a wrong path gives nullopt);
///   2. <data root>/.deps/cuda-tools/nvidia/cu*/bin/cuobjdump (what ./dev.sh
///      installs; support/DataPaths.h: the source tree in a checkout);
///   3. cuobjdump on $PATH;
///   4. $CUDA_HOME/bin/cuobjdump, then /usr/local/cuda/bin/cuobjdump.
/// Looked up once per process; std::nullopt when there is none.
std::optional<std::filesystem::path> find_disassembler();

/// `tool -sass FILE` on `cubin` (written to a temporary file, removed
/// afterwards) and its standard output. Thread-safe: each call is its own
/// process. Throws DisassembleError, with the tool's stderr, when it cannot be
/// started, exits non-zero or runs longer than `timeout_s` (it is killed).
std::string disassemble(const std::vector<uint8_t> &cubin, const std::filesystem::path &tool,
                        double timeout_s = 60);
/// The same with find_disassembler(); DisassembleError when there is none.
std::string disassemble(const std::vector<uint8_t> &cubin);

/// The functions of one cubin of summarise_cubins, or why there are none.
struct CubinSass {
  std::vector<SassSummary> functions;  ///< one per code section (kernel or device function)
  std::string error;                   ///< "" when `functions` is set
};

/// The summaries of many cubins of one architecture (`arch`: "sm_90") with
/// few disassembler runs: a run costs ~0.25 s of CPU whatever its size (more
/// than NVRTC's compile of a tuning candidate), so the code sections of the
/// cubins go to one `nvdisasm -b SM90` run (nvdisasm beside `tool`) per
/// ~20k instructions, at most `threads` runs in parallel (0: one per core). Cubins that cannot be read that
/// way (no nvdisasm, not an ELF64 cubin, a run whose instruction count does
/// not match its input) go through disassemble() one at a time. Slot i holds
/// cubin i's functions or its error; never throws for a bad cubin.
std::vector<CubinSass> summarise_cubins(const std::vector<const std::vector<uint8_t> *> &cubins,
                                        const std::string &arch, const std::filesystem::path &tool,
                                        unsigned threads = 0);

/// The hint to print when find_disassembler() finds nothing.
inline constexpr std::string_view kNoDisassemblerHint =
    "no cuobjdump found: install the nvidia-cuda-cuobjdump wheel (./dev.sh does) for the SASS summary";

}  // namespace tessera::runtime
