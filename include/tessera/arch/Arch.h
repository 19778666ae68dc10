//===- tessera/arch/Arch.h - A GPU described as data -----------------------===//
//
// `Arch` holds the facts about one GPU that rules and policies need: SM count,
// limits per block and per SM, the memory hierarchy with its bandwidths, peak
// throughputs and the tensor-core instructions per dtype. Every difference
// between GPUs reaches a rule or policy through these fields, never through a
// GPU's name (DESIGN.md decisions 4 and 5).
//
// Descriptions live in arch/*.json, one file per GPU, documented field by
// field in arch/SCHEMA.md. Nothing here needs a device or links anything of
// CUDA; a live device's Arch is runtime::detect_arch (runtime/DetectArch.h):
//
//   Arch h100 = Arch::by_name("h100");            // alias of h100_sxm
//   int64_t smem = h100.max_smem_per_block();     // 232448: the opt-in maximum
//   double bw = h100.memory.dram_bandwidth_gbps;  // 3350
//   if (const MmaSupport *m = h100.find_mma("float16", "float32")) ... m->shapes ...
//   Arch here = runtime::detect_arch();           // a live device, else UserError
//
// Loading validates everything and reports every problem at once, each with
// the file and the JSON path:
//   arch/h100_sxm.json: /memory/l2_bytes: expected a positive integer, got "50MB"
//
//===----------------------------------------------------------------------===//
#pragma once

#include <compare>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/support/Error.h"

namespace tessera::runtime {
struct DeviceProperties;
}

namespace tessera {

/// JSON as tessera writes it: objects keep their field order (SCHEMA.md order).
using ArchJson = nlohmann::ordered_json;

/// One problem found while validating an arch description: the JSON path of
/// the offending field ("/memory/l2_bytes", "" for the whole document) and what
/// is wrong with it ("expected a positive integer, got \"50MB\"").
struct ArchProblem {
  std::string path;
  std::string message;
  bool operator==(const ArchProblem &) const = default;
};

/// A bad arch description (or an unusable device description). what() has one
/// line per problem, "SOURCE: PATH: MESSAGE", in the order found.
class ArchError : public UserError {
 public:
  ArchError(std::string source, std::vector<ArchProblem> problems);
  const std::string &source() const { return source_; }
  const std::vector<ArchProblem> &problems() const { return problems_; }

 private:
  std::string source_;
  std::vector<ArchProblem> problems_;
};

/// CUDA compute capability, e.g. {9, 0}. Ordered: {8, 6} < {8, 9} < {9, 0}.
struct ComputeCapability {
  int major = 0;
  int minor = 0;
  /// 90 for 9.0 (NVRTC's and PTX's numbering).
  int sm_version() const { return major * 10 + minor; }
  auto operator<=>(const ComputeCapability &) const = default;
};

/// One warp-level mma instruction shape, written "m16n8k16" in JSON.
struct MmaShape {
  int m = 0, n = 0, k = 0;
  /// "m16n8k16"
  std::string str() const;
  /// Parses "m16n8k16" (positive decimal numbers, canonical spelling only);
  /// nullopt for anything else.
  static std::optional<MmaShape> parse(std::string_view text);
  bool operator==(const MmaShape &) const = default;
};

/// Tensor-core support for one (input dtype, accumulator dtype) pair through
/// mma.sync: the shapes the PTX ISA allows on this architecture and the dense
/// (no sparsity) peak rate.
struct MmaSupport {
  std::string dtype;        ///< operand type: float16 bfloat16 tfloat32 int8 float8_e4m3fn float8_e5m2
  std::string accumulator;  ///< float16 float32 int32
  std::vector<MmaShape> shapes;  ///< preferred first
  double peak_tops = 0;     ///< dense peak, 10^12 ops/s (a multiply-add counts 2)
  bool operator==(const MmaSupport &) const = default;
};

/// Execution resources (SCHEMA.md "compute").
struct ArchCompute {
  int sm_count = 0;
  int warp_size = 0;
  int boost_clock_mhz = 0;          ///< the clock the vendor's peak figures assume
  int warp_schedulers_per_sm = 0;   ///< SM sub-partitions (Roller's sm_partition)
  double peak_fp32_tflops = 0;      ///< FMA on CUDA cores
  double peak_fp16_tflops = 0;      ///< half2 FMA on CUDA cores (no tensor cores)
  bool operator==(const ArchCompute &) const = default;
};

/// The memory hierarchy (SCHEMA.md "memory"). GB/s means 10^9 bytes per second.
struct ArchMemory {
  int64_t dram_bytes = 0;
  double dram_bandwidth_gbps = 0;
  int64_t l2_bytes = 0;
  int cache_line_bytes = 0;     ///< L1/L2 line (128)
  int sector_bytes = 0;         ///< smallest DRAM/L2 transaction (32)
  int max_vector_bytes = 0;     ///< widest load/store per thread (16)
  int smem_banks = 0;
  int smem_bank_bytes = 0;
  /// Derived, not a vendor figure: banks x bank bytes x boost clock x SMs.
  double smem_bandwidth_gbps = 0;
  /// What all SMs together read from L2 (optional; 0: not known, and
  /// l2_bandwidth() estimates it). Measured, not a vendor figure.
  double l2_bandwidth_gbps = 0;
  /// l2_bandwidth_gbps, or where it is not known kL2OverDram x the DRAM's.
  double l2_bandwidth() const { return l2_bandwidth_gbps > 0 ? l2_bandwidth_gbps : kL2OverDram * dram_bandwidth_gbps; }
  /// The L2 / DRAM bandwidth ratio the H100 measured (2.5: 8500 of 3350 GB/s).
  static constexpr double kL2OverDram = 2.5;
  bool cp_async = false;        ///< cp.async global->shared copies
  bool tma = false;             ///< the Tensor Memory Accelerator (cp.async.bulk.tensor)
  bool operator==(const ArchMemory &) const = default;
};

/// Hard limits a launch must respect (SCHEMA.md "limits").
struct ArchLimits {
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int regs_per_sm = 0;
  int regs_per_block = 0;
  int max_regs_per_thread = 0;
  int64_t smem_per_sm_bytes = 0;
  int64_t smem_per_block_bytes = 0;        ///< without opt-in (static, 48 KB)
  int64_t smem_per_block_optin_bytes = 0;  ///< the most one block may opt in to
  int64_t smem_reserved_per_block_bytes = 0;  ///< taken from the SM by every resident block
  bool operator==(const ArchLimits &) const = default;
};

/// Tensor-core instructions (SCHEMA.md "tensor_cores").
struct ArchTensorCores {
  std::vector<MmaSupport> mma;
  bool wgmma = false;  ///< warpgroup mma (compile for the "a" target, sm_90a)
  /// The share of an `mma` pair's peak_tops that mma.sync kernels can reach
  /// here (SCHEMA.md): 1 where mma.sync is the native path; below 1 on sm_90,
  /// whose peaks only wgmma reaches. An estimate from published kernels until
  /// measured.
  double mma_sync_fraction = 1;
  bool operator==(const ArchTensorCores &) const = default;
};

/// Where the values came from: one document per group of fields.
struct ArchSources {
  std::string compute, memory, limits, tensor_cores;
  std::string derived;  ///< how the derived fields were computed
  std::string notes;    ///< optional caveats ("" when none)
  bool operator==(const ArchSources &) const = default;
};

/// Present only on an Arch built by from_device() (runtime::detect_arch): which fields the
/// device reported and which were rescaled from the base preset.
struct ArchDetection {
  std::string device_name;  ///< as the driver names it
  int ordinal = 0;
  std::string base_preset;  ///< the preset that supplied the other fields
  std::vector<std::string> from_device;  ///< JSON paths, e.g. "/compute/sm_count"
  std::vector<std::string> rescaled;     ///< peaks scaled by (SMs x clock) ratio, derived fields
  bool operator==(const ArchDetection &) const = default;
};

/// A GPU. Plain data: copy it, compare it, round-trip it through JSON exactly.
struct Arch {
  std::string name;         ///< lower-case id, e.g. "h100_sxm" (the file's stem)
  std::string description;  ///< product name, e.g. "NVIDIA H100 SXM5 80GB HBM3"
  std::vector<std::string> aliases;  ///< other names by_name() accepts
  ComputeCapability compute_capability;
  ArchCompute compute;
  ArchMemory memory;
  ArchLimits limits;
  ArchTensorCores tensor_cores;
  ArchSources sources;
  std::optional<ArchDetection> detected;

  /// Builds and validates an Arch. `source_name` (a file name) prefixes every
  /// message. Requires (all reported together in one ArchError):
  ///   1. every documented field present with its type and range;
  ///   2. no undocumented field (a typo is an error, with a suggestion);
  ///   3. cross-field consistency (smem per SM >= opt-in >= static, ...).
  static Arch from_json(const ArchJson &j, std::string_view source_name);
  /// Parses JSON text, then from_json. Malformed JSON is an ArchError too.
  static Arch parse(std::string_view text, std::string_view source_name);
  /// Reads and parses a file; the path as given names it in messages.
  static Arch load(const std::string &path);

  /// The directories searched for presets, in order: each entry of the
  /// colon-separated TESSERA_ARCH_PATH, then <data root>/arch
  /// (support/DataPaths.h: the source tree's, a bundle's or an install's).
  static std::vector<std::string> search_path();
  /// Every *.json in the search path, then every built-in preset whose name
  /// none of them has, sorted by name; a name found earlier hides the same
  /// name later. Any invalid file is an ArchError (a broken description is
  /// never skipped silently).
  static std::vector<Arch> presets();
  /// arch/*.json as they were when tessera was built, compiled into the
  /// library: what presets() falls back on where no directory has them.
  static std::vector<Arch> builtin_presets();
  /// The preset whose name or alias matches, ignoring case and treating '-',
  /// ' ' and '.' as '_' ("H100" and "GeForce RTX 4090" work). A string that
  /// ends in ".json" is loaded as a file. Unknown names are a UserError
  /// listing the known ones.
  static Arch by_name(std::string_view name);
  /// Among `presets`, the base for a device: same compute capability (else the
  /// same major version with the nearest lower minor), then nearest SM count,
  /// then nearest DRAM size, then name. nullptr when none qualifies.
  static const Arch *closest_preset(ComputeCapability cc, int sm_count, int64_t dram_bytes,
                                    const std::vector<Arch> &presets);
  /// The pure half of runtime::detect_arch: what the driver reports (every field > 0) comes
  /// from `props`; the rest from closest_preset, with peak throughputs scaled by
  /// the (SMs x clock) ratio and derived fields recomputed; `detected` records
  /// which is which. UserError when no preset qualifies; ArchError when the
  /// result is inconsistent.
  static Arch from_device(const runtime::DeviceProperties &props, const std::vector<Arch> &presets);

  /// The canonical JSON (SCHEMA.md field order); from_json(to_json()) == *this.
  ArchJson to_json() const;

  /// "h100_sxm/sm_90/132sm": the key of tuning results (name, compute
  /// capability, SM count).
  std::string fingerprint() const;
  /// 90 for compute capability 9.0.
  int sm_version() const { return compute_capability.sm_version(); }
  /// "sm_90": the NVRTC/PTX target.
  std::string arch_flag() const;
  /// The largest shared memory one block may use: the opt-in maximum, never
  /// the 48 KB static limit.
  int64_t max_smem_per_block() const { return limits.smem_per_block_optin_bytes; }
  /// Resident warps per SM (threads per SM / warp size).
  int max_warps_per_sm() const;
  /// The mma support for (dtype, accumulator), or nullptr.
  const MmaSupport *find_mma(std::string_view dtype, std::string_view accumulator) const;
  /// The ceiling of an mma.sync kernel for `m` (one of tensor_cores.mma):
  /// m.peak_tops x tensor_cores.mma_sync_fraction.
  double mma_sync_peak_tops(const MmaSupport &m) const { return m.peak_tops * tensor_cores.mma_sync_fraction; }
  /// banks x bank bytes x boost clock x SMs, in GB/s (what
  /// memory.smem_bandwidth_gbps must agree with).
  double derived_smem_bandwidth_gbps() const;
  /// True when `query` names this Arch (see by_name for the matching rule).
  bool matches_name(std::string_view query) const;

  bool operator==(const Arch &) const = default;
};

/// Every problem with `a` that the type system cannot catch (ranges and
/// cross-field relations), each with its JSON path; empty when valid. Used by
/// from_json and from_device.
std::vector<ArchProblem> check_arch(const Arch &a);

}  // namespace tessera
