//===- lib/arch/Arch.cpp - Helpers, loading and lookup of presets ----------===//
#include "tessera/arch/Arch.h"
#include "tessera/support/DataPaths.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <sstream>

namespace tessera {

namespace fs = std::filesystem;

namespace {

std::string render_problems(const std::string &source, const std::vector<ArchProblem> &problems) {
  std::string out;
  for (const ArchProblem &p : problems) {
    if (!out.empty()) out += "\n";
    out += source + ": " + (p.path.empty() ? "" : p.path + ": ") + p.message;
  }
  return out;
}

/// Lower case, with '-', ' ' and '.' read as '_': "GeForce RTX-4090" -> "geforce_rtx_4090".
std::string normalize_name(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '-' || c == ' ' || c == '.') out += '_';
    else if (c >= 'A' && c <= 'Z') out += static_cast<char>(c - 'A' + 'a');
    else out += c;
  }
  return out;
}

/// Reads one positive decimal number from the front of `text`. Leading zeros
/// are refused so that every shape has one spelling and to_json round-trips.
std::optional<int> take_number(std::string_view &text) {
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end == text.data() || v <= 0 || text[0] == '0') return std::nullopt;
  text.remove_prefix(static_cast<size_t>(end - text.data()));
  return v;
}

}  // namespace

ArchError::ArchError(std::string source, std::vector<ArchProblem> problems)
    : UserError(render_problems(source, problems)), source_(std::move(source)), problems_(std::move(problems)) {}

std::string MmaShape::str() const { return fmt::format("m{}n{}k{}", m, n, k); }

std::optional<MmaShape> MmaShape::parse(std::string_view text) {
  MmaShape s;
  for (auto [letter, slot] : {std::pair{'m', &s.m}, std::pair{'n', &s.n}, std::pair{'k', &s.k}}) {
    if (text.empty() || text[0] != letter) return std::nullopt;
    text.remove_prefix(1);
    std::optional<int> v = take_number(text);
    if (!v) return std::nullopt;
    *slot = *v;
  }
  if (!text.empty()) return std::nullopt;
  return s;
}

// --- helpers a policy reads -------------------------------------------------

std::string Arch::fingerprint() const {
  return fmt::format("{}/{}/{}sm", name, arch_flag(), compute.sm_count);
}

std::string Arch::arch_flag() const { return "sm_" + std::to_string(sm_version()); }

int Arch::max_warps_per_sm() const {
  return compute.warp_size > 0 ? limits.max_threads_per_sm / compute.warp_size : 0;
}

const MmaSupport *Arch::find_mma(std::string_view dtype, std::string_view accumulator) const {
  for (const MmaSupport &m : tensor_cores.mma)
    if (m.dtype == dtype && m.accumulator == accumulator) return &m;
  return nullptr;
}

double Arch::derived_smem_bandwidth_gbps() const {
  // bytes per clock per SM x clock (Hz) x SMs, in 10^9 bytes/s.
  return double(memory.smem_banks) * memory.smem_bank_bytes * compute.boost_clock_mhz * 1e6 * compute.sm_count / 1e9;
}

bool Arch::matches_name(std::string_view query) const {
  std::string q = normalize_name(query);
  if (q == name) return true;
  return std::find(aliases.begin(), aliases.end(), q) != aliases.end();
}

// --- files and presets ------------------------------------------------------

Arch Arch::load(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ArchError(path, {{"", "cannot read the file"}});
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

std::vector<std::string> Arch::search_path() {
  // The user's directories first, so a private description can shadow a preset.
  std::vector<std::string> dirs;
  if (const char *env = std::getenv("TESSERA_ARCH_PATH")) {
    std::stringstream list(env);
    for (std::string dir; std::getline(list, dir, ':');)
      if (!dir.empty()) dirs.push_back(dir);
  }
  dirs.push_back((support::data_root() / "arch").string());
  return dirs;
}

namespace {

/// arch/*.json as the build found them (EmbedPresets.cmake): file name, text.
const std::pair<const char *, const char *> kBuiltinPresets[] = {
#include "ArchPresets.inc"
};

/// `a`, checked to be named as its file.
Arch named_as_file(Arch a, const std::string &source, const std::string &stem) {
  // The file name is what people type and what `ls arch/` shows: it must
  // not silently disagree with the name the tuning database records.
  if (a.name != stem)
    throw ArchError(source, {{"/name", fmt::format("\"{}\" differs from the file name; name the file "
                                                   "{}.json or change the name",
                                                   a.name, a.name)}});
  return a;
}

}  // namespace

std::vector<Arch> Arch::builtin_presets() {
  std::vector<Arch> out;
  for (const auto &[file, text] : kBuiltinPresets) {
    const std::string source = std::string("<built-in>/arch/") + file;
    const std::string stem = fs::path(file).stem().string();
    out.push_back(named_as_file(parse(text, source), source, stem));
  }
  return out;
}

std::vector<Arch> Arch::presets() {
  // Files are read on every call (there are a handful, each a few KB): a
  // cache would hide edits and TESSERA_ARCH_PATH changes from a running tuner.
  std::map<std::string, Arch> by_name;  // sorted by name; the first directory wins
  for (const std::string &dir : search_path()) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (const fs::directory_entry &e : fs::directory_iterator(dir, ec))
      if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path &file : files) {
      Arch a = named_as_file(load(file.string()), file.string(), file.stem().string());
      by_name.try_emplace(a.name, std::move(a));
    }
  }
  // What no directory has: the presets compiled in (an installed library
  // used from a program with no data folder).
  for (Arch &a : builtin_presets()) by_name.try_emplace(a.name, std::move(a));
  std::vector<Arch> out;
  for (auto &[name, a] : by_name) out.push_back(std::move(a));
  return out;
}

Arch Arch::by_name(std::string_view name) {
  // A description that is not a preset (a new GPU being written) loads by path.
  if (name.size() > 5 && name.substr(name.size() - 5) == ".json") return load(std::string(name));
  std::vector<Arch> all = presets();
  std::vector<const Arch *> found;
  for (const Arch &a : all)
    if (a.matches_name(name)) found.push_back(&a);
  if (found.size() == 1) return *found.front();
  // Two files claiming one alias is a data bug; choosing either would hide it.
  if (found.size() > 1) {
    std::string which;
    for (const Arch *a : found) which += (which.empty() ? "" : ", ") + a->name;
    throw UserError(fmt::format("GPU name '{}' is ambiguous: it names {}", name, which));
  }
  std::string known;
  for (const Arch &a : all) {
    known += (known.empty() ? "" : ", ") + a.name;
    if (!a.aliases.empty()) {
      known += " (";
      for (size_t i = 0; i < a.aliases.size(); ++i) known += (i ? ", " : "") + a.aliases[i];
      known += ")";
    }
  }
  std::string dirs;
  for (const std::string &d : search_path()) dirs += (dirs.empty() ? "" : ":") + d;
  throw UserError(fmt::format("unknown GPU '{}'; known: {} (searched {})", name, known.empty() ? "none" : known, dirs));
}

}  // namespace tessera
