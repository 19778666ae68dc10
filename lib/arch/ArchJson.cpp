//===- lib/arch/ArchJson.cpp - Arch <-> JSON, and validation ---------------===//
//
// from_json reads every field through a FieldReader (types, positivity,
// unknown fields), then check_arch adds the relations between fields; all the
// problems found end up in one ArchError. to_json writes the fields in the
// order SCHEMA.md documents them, which is also the order of arch/*.json.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "FieldReader.h"
#include "tessera/arch/Arch.h"

namespace tessera {

using detail::FieldReader;
using detail::json_path;

namespace {

/// The schema version this code reads and writes (SCHEMA.md, `schema_version`).
constexpr int64_t kSchemaVersion = 1;
/// How far memory.smem_bandwidth_gbps may stray from its derivation.
constexpr double kDerivedTolerance = 0.01;

/// Operand types with tensor-core support, and the accumulators each allows
/// (the PTX ISA's mma type table). A pair outside it is a typo or a wish, never
/// something a rule could emit.
struct MmaTypeRule {
  std::string_view dtype;
  std::vector<std::string_view> accumulators;
};
const std::vector<MmaTypeRule> &mma_type_rules() {
  static const std::vector<MmaTypeRule> rules = {
      {"float16", {"float16", "float32"}}, {"bfloat16", {"float32"}},
      {"tfloat32", {"float32"}},           {"int8", {"int32"}},
      {"float8_e4m3fn", {"float16", "float32"}}, {"float8_e5m2", {"float16", "float32"}},
  };
  return rules;
}

std::string join(const std::vector<std::string_view> &items) {
  std::string out;
  for (std::string_view s : items) out += (out.empty() ? "" : ", ") + std::string(s);
  return out;
}

bool is_identifier(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool is_power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

std::string json_quoted(std::string_view s) { return ArchJson(std::string(s)).dump(); }

// --- reading, one function per group --------------------------------------

void read_identity(FieldReader &root, Arch &a) {
  // Any positive integer reads, so that a newer file gets "unsupported version"
  // rather than a range error.
  int64_t version = root.integer_in("schema_version", 1, 1'000'000);
  if (version != 0 && version != kSchemaVersion)
    root.problem("schema_version", fmt::format("unsupported schema version {} (this tessera reads {})", version,
                                               kSchemaVersion));
  a.name = root.string("name");
  if (!a.name.empty() && !is_identifier(a.name))
    root.problem("name", "expected lower-case letters, digits and '_', got " + json_quoted(a.name));
  a.description = root.string("description");
  a.aliases = root.string_list("aliases");
  // Aliases are stored normalised (lower case, '_'): lookup normalises the query the same way.
  for (size_t i = 0; i < a.aliases.size(); ++i)
    if (!is_identifier(a.aliases[i]))
      root.element_problem("aliases", i,
                           fmt::format("expected lower-case letters, digits and '_', got {}", json_quoted(a.aliases[i])));
  FieldReader cc = root.object("compute_capability");
  a.compute_capability.major = static_cast<int>(cc.integer_in("major", 1, 99));
  a.compute_capability.minor = static_cast<int>(cc.integer_in("minor", 0, 9));
  cc.reject_unknown_fields();
}

void read_compute(FieldReader g, ArchCompute &c) {
  c.sm_count = static_cast<int>(g.integer_in("sm_count", 1, 100'000));
  c.warp_size = static_cast<int>(g.integer_in("warp_size", 1, 1024));
  c.boost_clock_mhz = static_cast<int>(g.integer_in("boost_clock_mhz", 1, 100'000));
  c.warp_schedulers_per_sm = static_cast<int>(g.integer_in("warp_schedulers_per_sm", 1, 64));
  c.peak_fp32_tflops = g.positive_number("peak_fp32_tflops");
  c.peak_fp16_tflops = g.positive_number("peak_fp16_tflops");
  g.reject_unknown_fields();
}

void read_memory(FieldReader g, ArchMemory &m) {
  m.dram_bytes = g.positive_integer("dram_bytes");
  m.dram_bandwidth_gbps = g.positive_number("dram_bandwidth_gbps");
  m.l2_bytes = g.positive_integer("l2_bytes");
  m.cache_line_bytes = static_cast<int>(g.integer_in("cache_line_bytes", 1, 4096));
  m.sector_bytes = static_cast<int>(g.integer_in("sector_bytes", 1, 4096));
  m.max_vector_bytes = static_cast<int>(g.integer_in("max_vector_bytes", 1, 256));
  m.smem_banks = static_cast<int>(g.integer_in("smem_banks", 1, 1024));
  m.smem_bank_bytes = static_cast<int>(g.integer_in("smem_bank_bytes", 1, 64));
  m.smem_bandwidth_gbps = g.positive_number("smem_bandwidth_gbps");
  if (g.has("l2_bandwidth_gbps")) m.l2_bandwidth_gbps = g.positive_number("l2_bandwidth_gbps");
  m.cp_async = g.boolean("cp_async");
  m.tma = g.boolean("tma");
  g.reject_unknown_fields();
}

void read_limits(FieldReader g, ArchLimits &l) {
  l.max_threads_per_block = static_cast<int>(g.integer_in("max_threads_per_block", 1, 1 << 20));
  l.max_threads_per_sm = static_cast<int>(g.integer_in("max_threads_per_sm", 1, 1 << 20));
  l.max_blocks_per_sm = static_cast<int>(g.integer_in("max_blocks_per_sm", 1, 1 << 16));
  l.regs_per_sm = static_cast<int>(g.integer_in("regs_per_sm", 1, 1 << 24));
  l.regs_per_block = static_cast<int>(g.integer_in("regs_per_block", 1, 1 << 24));
  // 255: the most registers PTX lets one thread address.
  l.max_regs_per_thread = static_cast<int>(g.integer_in("max_regs_per_thread", 1, 255));
  l.smem_per_sm_bytes = g.positive_integer("smem_per_sm_bytes");
  l.smem_per_block_bytes = g.positive_integer("smem_per_block_bytes");
  l.smem_per_block_optin_bytes = g.positive_integer("smem_per_block_optin_bytes");
  l.smem_reserved_per_block_bytes = g.integer_in("smem_reserved_per_block_bytes", 0, 1 << 20);
  g.reject_unknown_fields();
}

void read_tensor_cores(FieldReader g, ArchTensorCores &t, std::vector<ArchProblem> &problems) {
  if (const ArchJson *mma = g.array("mma")) {
    for (size_t i = 0; i < mma->size(); ++i) {
      const ArchJson &entry = (*mma)[i];
      std::string path = json_path(json_path(g.path(), "mma"), i);
      if (!entry.is_object()) {
        problems.push_back({path, "expected an object, got " + detail::describe_json_value(entry)});
        t.mma.emplace_back();  // a placeholder keeps later indices equal to the JSON's
        continue;
      }
      FieldReader e(&entry, path, problems);
      MmaSupport m;
      m.dtype = e.string("dtype");
      m.accumulator = e.string("accumulator");
      if (const ArchJson *shapes = e.array("shapes")) {
        if (shapes->empty()) e.problem("shapes", "expected at least one shape such as \"m16n8k16\", got []");
        for (size_t k = 0; k < shapes->size(); ++k) {
          const ArchJson &s = (*shapes)[k];
          std::optional<MmaShape> shape = s.is_string() ? MmaShape::parse(s.get<std::string>()) : std::nullopt;
          if (shape) m.shapes.push_back(*shape);
          else
            problems.push_back({json_path(json_path(path, "shapes"), k),
                                "expected a shape such as \"m16n8k16\", got " + detail::describe_json_value(s)});
        }
      }
      m.peak_tops = e.positive_number("peak_tops");
      e.reject_unknown_fields();
      t.mma.push_back(std::move(m));
    }
  }
  t.wgmma = g.boolean("wgmma");
  if (g.has("mma_sync_fraction")) {
    t.mma_sync_fraction = g.positive_number("mma_sync_fraction");
    if (t.mma_sync_fraction > 1)
      g.problem("mma_sync_fraction", "expected a share of the peak in (0, 1], got " +
                                         std::to_string(t.mma_sync_fraction));
  }
  g.reject_unknown_fields();
}

void read_sources(FieldReader g, ArchSources &s) {
  s.compute = g.string("compute");
  s.memory = g.string("memory");
  s.limits = g.string("limits");
  s.tensor_cores = g.string("tensor_cores");
  s.derived = g.string("derived");
  if (g.has("notes")) s.notes = g.string("notes");
  g.reject_unknown_fields();
}

ArchDetection read_detection(FieldReader g) {
  ArchDetection d;
  d.device_name = g.string("device_name");
  d.ordinal = static_cast<int>(g.integer_in("ordinal", 0, 1 << 16));
  d.base_preset = g.string("base_preset");
  d.from_device = g.string_list("from_device");
  d.rescaled = g.string_list("rescaled");
  g.reject_unknown_fields();
  return d;
}

// --- writing ---------------------------------------------------------------

ArchJson strings_to_json(const std::vector<std::string> &v) {
  ArchJson out = ArchJson::array();
  for (const std::string &s : v) out.push_back(s);
  return out;
}

}  // namespace

// --- check_arch: relations between fields ----------------------------------
//
// A field that failed to read is 0 here and was reported already, so every
// relation is checked only when its fields are positive.

namespace {

struct Checker {
  std::vector<ArchProblem> problems;
  void add(std::string path, std::string message) { problems.push_back({std::move(path), std::move(message)}); }
  /// `path` (value `small`) must not exceed `other_path` (value `large`).
  void at_most(const char *path, int64_t small, const char *other_path, int64_t large) {
    if (small > 0 && large > 0 && small > large)
      add(path, fmt::format("{} is more than {} ({})", small, other_path, large));
  }
};

void check_limits(const Arch &a, Checker &c) {
  const ArchLimits &l = a.limits;
  int warp = a.compute.warp_size;
  if (warp > 0 && !is_power_of_two(warp))
    c.add("/compute/warp_size", fmt::format("expected a power of two, got {}", warp));
  c.at_most("/limits/max_threads_per_block", l.max_threads_per_block, "/limits/max_threads_per_sm",
            l.max_threads_per_sm);
  for (auto [path, threads] : {std::pair{"/limits/max_threads_per_block", l.max_threads_per_block},
                               std::pair{"/limits/max_threads_per_sm", l.max_threads_per_sm}})
    if (warp > 0 && threads > 0 && threads % warp != 0)
      c.add(path, fmt::format("{} is not a multiple of the warp size ({})", threads, warp));
  c.at_most("/limits/regs_per_block", l.regs_per_block, "/limits/regs_per_sm", l.regs_per_sm);
  c.at_most("/limits/smem_per_block_bytes", l.smem_per_block_bytes, "/limits/smem_per_block_optin_bytes",
            l.smem_per_block_optin_bytes);
  if (l.smem_per_block_optin_bytes > 0 && l.smem_per_sm_bytes > 0 &&
      l.smem_per_block_optin_bytes + l.smem_reserved_per_block_bytes > l.smem_per_sm_bytes)
    c.add("/limits/smem_per_block_optin_bytes",
          fmt::format("{} plus the {} bytes reserved per block is more than /limits/smem_per_sm_bytes ({})",
                      l.smem_per_block_optin_bytes, l.smem_reserved_per_block_bytes, l.smem_per_sm_bytes));
}

void check_memory(const Arch &a, Checker &c) {
  const ArchMemory &m = a.memory;
  c.at_most("/memory/l2_bytes", m.l2_bytes, "/memory/dram_bytes", m.dram_bytes);
  c.at_most("/memory/sector_bytes", m.sector_bytes, "/memory/cache_line_bytes", m.cache_line_bytes);
  if (m.sector_bytes > 0 && m.cache_line_bytes > 0 && m.cache_line_bytes % m.sector_bytes != 0)
    c.add("/memory/cache_line_bytes",
          fmt::format("{} is not a multiple of /memory/sector_bytes ({})", m.cache_line_bytes, m.sector_bytes));
  if (m.max_vector_bytes > 0 && !is_power_of_two(m.max_vector_bytes))
    c.add("/memory/max_vector_bytes", fmt::format("expected a power of two, got {}", m.max_vector_bytes));
  double derived = a.derived_smem_bandwidth_gbps();
  if (derived > 0 && m.smem_bandwidth_gbps > 0 &&
      std::abs(m.smem_bandwidth_gbps - derived) > kDerivedTolerance * derived)
    c.add("/memory/smem_bandwidth_gbps",
          fmt::format("{} disagrees with smem_banks x smem_bank_bytes x boost clock x SMs = {:.1f} "
                      "(it is derived, see SCHEMA.md)",
                      m.smem_bandwidth_gbps, derived));
}

void check_tensor_cores(const Arch &a, Checker &c) {
  const std::vector<MmaSupport> &mma = a.tensor_cores.mma;
  for (size_t i = 0; i < mma.size(); ++i) {
    std::string path = json_path("/tensor_cores/mma", i);
    const MmaSupport &m = mma[i];
    auto rule = std::find_if(mma_type_rules().begin(), mma_type_rules().end(),
                             [&](const MmaTypeRule &r) { return r.dtype == m.dtype; });
    if (rule == mma_type_rules().end()) {
      if (m.dtype.empty()) continue;
      std::vector<std::string_view> known;
      for (const MmaTypeRule &r : mma_type_rules()) known.push_back(r.dtype);
      c.add(path + "/dtype", fmt::format("unknown tensor-core dtype {} (known: {})", json_quoted(m.dtype), join(known)));
      continue;
    }
    if (!m.accumulator.empty() &&
        std::find(rule->accumulators.begin(), rule->accumulators.end(), m.accumulator) == rule->accumulators.end())
      c.add(path + "/accumulator", fmt::format("{} cannot accumulate in {} (allowed: {})", m.dtype,
                                               json_quoted(m.accumulator), join(rule->accumulators)));
    for (size_t j = 0; j < i; ++j)
      if (mma[j].dtype == m.dtype && mma[j].accumulator == m.accumulator)
        c.add(path, fmt::format("duplicate entry for {} -> {} (also /tensor_cores/mma/{})", m.dtype, m.accumulator,
                                j));
  }
}

}  // namespace

std::vector<ArchProblem> check_arch(const Arch &a) {
  Checker c;
  check_limits(a, c);
  check_memory(a, c);
  check_tensor_cores(a, c);
  return std::move(c.problems);
}

Arch Arch::from_json(const ArchJson &j, std::string_view source_name) {
  std::string source(source_name);
  if (!j.is_object()) throw ArchError(source, {{"", "expected a JSON object, got " + detail::describe_json_value(j)}});
  std::vector<ArchProblem> problems;
  FieldReader root(&j, "", problems);
  Arch a;
  read_identity(root, a);
  read_compute(root.object("compute"), a.compute);
  read_memory(root.object("memory"), a.memory);
  read_limits(root.object("limits"), a.limits);
  read_tensor_cores(root.object("tensor_cores"), a.tensor_cores, problems);
  read_sources(root.object("sources"), a.sources);
  if (root.has("detected")) {
    FieldReader d = root.object("detected");
    if (d.valid()) a.detected = read_detection(d);
  }
  root.reject_unknown_fields();
  std::vector<ArchProblem> relations = check_arch(a);
  problems.insert(problems.end(), relations.begin(), relations.end());
  if (!problems.empty()) throw ArchError(source, std::move(problems));
  return a;
}

Arch Arch::parse(std::string_view text, std::string_view source_name) {
  ArchJson j;
  try {
    j = ArchJson::parse(text);
  } catch (const nlohmann::json::exception &e) {
    // nlohmann's what() starts "[json.exception.parse_error.101] parse error at line 3, column 5: ...".
    std::string message = e.what();
    if (auto pos = message.find("] "); pos != std::string::npos) message = message.substr(pos + 2);
    throw ArchError(std::string(source_name), {{"", "invalid JSON: " + message}});
  }
  return from_json(j, source_name);
}

ArchJson Arch::to_json() const {
  ArchJson j;
  j["schema_version"] = kSchemaVersion;
  j["name"] = name;
  j["description"] = description;
  j["aliases"] = strings_to_json(aliases);
  j["compute_capability"] = {{"major", compute_capability.major}, {"minor", compute_capability.minor}};
  j["compute"] = {{"sm_count", compute.sm_count},
                  {"warp_size", compute.warp_size},
                  {"boost_clock_mhz", compute.boost_clock_mhz},
                  {"warp_schedulers_per_sm", compute.warp_schedulers_per_sm},
                  {"peak_fp32_tflops", compute.peak_fp32_tflops},
                  {"peak_fp16_tflops", compute.peak_fp16_tflops}};
  j["memory"] = {{"dram_bytes", memory.dram_bytes},
                 {"dram_bandwidth_gbps", memory.dram_bandwidth_gbps},
                 {"l2_bytes", memory.l2_bytes},
                 {"cache_line_bytes", memory.cache_line_bytes},
                 {"sector_bytes", memory.sector_bytes},
                 {"max_vector_bytes", memory.max_vector_bytes},
                 {"smem_banks", memory.smem_banks},
                 {"smem_bank_bytes", memory.smem_bank_bytes},
                 {"smem_bandwidth_gbps", memory.smem_bandwidth_gbps},
                 {"cp_async", memory.cp_async},
                 {"tma", memory.tma}};
  if (memory.l2_bandwidth_gbps > 0) j["memory"]["l2_bandwidth_gbps"] = memory.l2_bandwidth_gbps;
  j["limits"] = {{"max_threads_per_block", limits.max_threads_per_block},
                 {"max_threads_per_sm", limits.max_threads_per_sm},
                 {"max_blocks_per_sm", limits.max_blocks_per_sm},
                 {"regs_per_sm", limits.regs_per_sm},
                 {"regs_per_block", limits.regs_per_block},
                 {"max_regs_per_thread", limits.max_regs_per_thread},
                 {"smem_per_sm_bytes", limits.smem_per_sm_bytes},
                 {"smem_per_block_bytes", limits.smem_per_block_bytes},
                 {"smem_per_block_optin_bytes", limits.smem_per_block_optin_bytes},
                 {"smem_reserved_per_block_bytes", limits.smem_reserved_per_block_bytes}};
  ArchJson mma = ArchJson::array();
  for (const MmaSupport &m : tensor_cores.mma) {
    ArchJson shapes = ArchJson::array();
    for (const MmaShape &s : m.shapes) shapes.push_back(s.str());
    mma.push_back({{"dtype", m.dtype}, {"accumulator", m.accumulator}, {"shapes", shapes}, {"peak_tops", m.peak_tops}});
  }
  j["tensor_cores"] = {{"mma", mma}, {"wgmma", tensor_cores.wgmma}};
  if (tensor_cores.mma_sync_fraction != 1) j["tensor_cores"]["mma_sync_fraction"] = tensor_cores.mma_sync_fraction;
  ArchJson src = {{"compute", sources.compute},
                  {"memory", sources.memory},
                  {"limits", sources.limits},
                  {"tensor_cores", sources.tensor_cores},
                  {"derived", sources.derived}};
  if (!sources.notes.empty()) src["notes"] = sources.notes;
  j["sources"] = src;
  if (detected)
    j["detected"] = {{"device_name", detected->device_name},
                     {"ordinal", detected->ordinal},
                     {"base_preset", detected->base_preset},
                     {"from_device", strings_to_json(detected->from_device)},
                     {"rescaled", strings_to_json(detected->rescaled)}};
  return j;
}

}  // namespace tessera
