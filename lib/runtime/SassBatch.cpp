//===- SassBatch.cpp - Many cubins' SASS in a few disassembler runs --------===//
//
// A run of cuobjdump or nvdisasm costs about 0.3 s of CPU before it reads a
// byte (CUDA 13.5: the same for a 24-instruction kernel as for 800), while
// NVRTC compiles a tuning candidate in about 0.15 s; one cuobjdump per
// candidate would make the compile phase of `tessera tune` several times
// slower on a small machine. nvdisasm also reads raw instruction words
// (`nvdisasm -b SM90 FILE`), so the code sections (.text.<function>) of many
// cubins are concatenated and disassembled in one run, and every instruction
// is given back to its function by its offset. Since sm_70 every instruction
// is 16 bytes, so a run that printed a different number of instructions than
// the words it was given is not trusted: its cubins, and any cubin that cannot
// be read this way (not an ELF64 cubin, no nvdisasm beside cuobjdump), go
// through disassemble() one at a time.
//
//===----------------------------------------------------------------------===//
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cstring>
#include <functional>
#include <optional>
#include <thread>

#include "Process.h"
#include "SassLine.h"

#include "tessera/runtime/Sass.h"

namespace tessera::runtime {

namespace fs = std::filesystem;

namespace {

static_assert(std::endian::native == std::endian::little, "cubins are little-endian ELF");

constexpr uint64_t kInstructionBytes = 16;
/// Code per nvdisasm run: a run costs ~0.23 s of start-up plus ~12 us an
/// instruction, so another run in parallel pays for itself once each has
/// about as much code to read as its start-up costs (~20k instructions).
constexpr uint64_t kBytesPerRun = 20000 * kInstructionBytes;

struct TextSection {
  std::string function;
  uint64_t offset = 0, size = 0;
};

template <class T>
bool read_at(const std::vector<uint8_t> &b, uint64_t at, T &v) {
  if (at > b.size() || b.size() - at < sizeof(T)) return false;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return true;
}

/// The code sections of an ELF64 little-endian cubin, in section order;
/// nullopt when it is not one or a section lies outside the file.
std::optional<std::vector<TextSection>> text_sections(const std::vector<uint8_t> &elf) {
  if (elf.size() < 64 ||
      std::memcmp(elf.data(),
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      elf[4] != 2 || elf[5] != 1)
    return std::nullopt;
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  if (!read_at(elf, 0x28, shoff) || !read_at(elf, 0x3a, shentsize) || !read_at(elf, 0x3c, shnum) ||
      !read_at(elf, 0x3e, shstrndx) || shentsize < 64 || shstrndx >= shnum)
    return std::nullopt;
  auto header = [&](uint16_t i, uint32_t &name, uint32_t &type, uint64_t &offset, uint64_t &size) {
    uint64_t at = shoff + uint64_t(i) * shentsize;
    return read_at(elf, at, name) && read_at(elf, at + 4, type) && read_at(elf, at + 0x18, offset) &&
           read_at(elf, at + 0x20, size);
  };
  // Only the sections read here must lie inside the file: a NOBITS section
  // (.nv.shared.*) has a size and no bytes.
  auto inside = [&](uint64_t offset, uint64_t size) {
    return offset <= elf.size() && size <= elf.size() - offset;
  };
  uint32_t name, type;
  uint64_t strtab, strtab_size;
  if (!header(shstrndx, name, type, strtab, strtab_size) || !inside(strtab, strtab_size)) return std::nullopt;
  std::vector<TextSection> out;
  for (uint16_t i = 0; i < shnum; ++i) {
    uint64_t offset, size;
    if (!header(i, name, type, offset, size) || name >= strtab_size) return std::nullopt;
    const char *begin = reinterpret_cast<const char *>(elf.data() + strtab + name);
    std::string_view section(begin, strnlen(begin, strtab_size - name));
    constexpr uint32_t kProgbits = 1;
    if (type != kProgbits || !section.starts_with(".text.") || size == 0) continue;
    if (!inside(offset, size) || size % kInstructionBytes != 0) return std::nullopt;
    out.push_back({std::string(section.substr(6)), offset, size});
  }
  return out;
}

/// "sm_90" -> "SM90", "sm_90a" -> "SM90a": nvdisasm's --binary names.
std::string raw_arch(const std::string &arch) {
  if (!arch.starts_with("sm_") || arch.size() < 5 || !std::isdigit(static_cast<unsigned char>(arch[3])))
    return "";
  return "SM" + arch.substr(3);
}

/// fn(0..n-1) on up to `threads` threads.
void for_each_parallel(size_t n, unsigned threads, const std::function<void(size_t)> &fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<size_t>(threads, n); ++t) pool.emplace_back(work);
  work();
  for (std::thread &t : pool) t.join();
}

/// One function's code inside a run's input: [begin, end) of the blob.
struct Piece {
  uint64_t begin, end;
  size_t cubin, function;
};

/// Disassembles `cubins` (indices into `all`, with their sections) in one
/// nvdisasm run; false, with nothing written, when the run cannot be trusted.
bool run_batch(const std::vector<size_t> &cubins, const std::vector<std::vector<TextSection>> &sections,
               const std::vector<const std::vector<uint8_t> *> &all, const std::string &arch,
               const fs::path &nvdisasm, std::vector<CubinSass> &out) {
  std::vector<uint8_t> blob;
  std::vector<Piece> pieces;
  for (size_t c : cubins)
    for (size_t f = 0; f < sections[c].size(); ++f) {
      const TextSection &t = sections[c][f];
      pieces.push_back({blob.size(), blob.size() + t.size, c, f});
      blob.insert(blob.end(), all[c]->begin() + t.offset, all[c]->begin() + t.offset + t.size);
    }
  if (blob.empty()) return false;
  // About 12 us an instruction after the start-up: a generous deadline.
  double timeout_s = 60 + double(blob.size() / kInstructionBytes) * 1e-4;
  detail::ProcessResult r;
  try {
    detail::TempFile file(blob, ".bin");
    r = detail::run_process({nvdisasm.string(), "-b", raw_arch(arch), "-ndf", file.path()}, timeout_s);
  } catch (const std::exception &) {
    return false;
  }
  if (!detail::process_failure("nvdisasm", r, timeout_s).empty()) return false;

  std::vector<std::vector<SassSummary>> got(all.size());
  for (size_t c : cubins) {
    for (const TextSection &t : sections[c]) got[c].push_back(SassSummary{.name = t.function, .arch = arch});
  }
  std::string_view text = r.out;
  int64_t counted = 0;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    detail::SassInstruction i;
    if (!detail::read_instruction(line, i)) continue;
    auto it = std::upper_bound(pieces.begin(), pieces.end(), i.address,
                               [](uint64_t a, const Piece &p) { return a < p.begin; });
    if (it == pieces.begin() || i.address >= std::prev(it)->end) return false;
    const Piece &p = *std::prev(it);
    detail::count_instruction(got[p.cubin][p.function], i);
    ++counted;
  }
  if (uint64_t(counted) * kInstructionBytes != blob.size()) return false;
  for (size_t c : cubins) out[c].functions = std::move(got[c]);
  return true;
}

}  // namespace

std::vector<CubinSass> summarise_cubins(const std::vector<const std::vector<uint8_t> *> &cubins,
                                        const std::string &arch, const fs::path &tool, unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<CubinSass> out(cubins.size());
  std::vector<std::vector<TextSection>> sections(cubins.size());
  std::vector<size_t> batchable, alone;
  fs::path nvdisasm = tool.parent_path() / "nvdisasm";
  bool raw = !raw_arch(arch).empty() && ::access(nvdisasm.c_str(), X_OK) == 0;
  for (size_t c = 0; c < cubins.size(); ++c) {
    if (!cubins[c]) {
      out[c].error = "no cubin";
      continue;
    }
    std::optional<std::vector<TextSection>> s = raw ? text_sections(*cubins[c]) : std::nullopt;
    if (s && !s->empty())
      sections[c] = std::move(*s), batchable.push_back(c);
    else
      alone.push_back(c);
  }

  // Runs of about equal code size (the largest cubins first, each to the
  // run with the least so far), one per kBytesPerRun, one per thread at most.
  auto code_bytes = [&](size_t c) {
    uint64_t n = 0;
    for (const TextSection &t : sections[c]) n += t.size;
    return n;
  };
  uint64_t total = 0;
  for (size_t c : batchable) total += code_bytes(c);
  size_t runs =
      batchable.empty() ? 0 : std::clamp<size_t>((total + kBytesPerRun - 1) / kBytesPerRun, 1, threads);
  std::stable_sort(batchable.begin(), batchable.end(),
                   [&](size_t a, size_t b) { return code_bytes(a) > code_bytes(b); });
  std::vector<std::vector<size_t>> batches(runs);
  std::vector<uint64_t> load(runs, 0);
  for (size_t c : batchable) {
    size_t r = size_t(std::min_element(load.begin(), load.end()) - load.begin());
    batches[r].push_back(c);
    load[r] += code_bytes(c);
  }
  std::vector<char> failed(runs, 0);
  for_each_parallel(runs, threads, [&](size_t b) {
    failed[b] = !run_batch(batches[b], sections, cubins, arch, nvdisasm, out);
  });
  for (size_t b = 0; b < runs; ++b)
    if (failed[b]) alone.insert(alone.end(), batches[b].begin(), batches[b].end());

  // The rest one cuobjdump each: its listing names the functions itself.
  for_each_parallel(alone.size(), threads, [&](size_t i) {
    CubinSass &s = out[alone[i]];
    try {
      s.functions = parse_sass(disassemble(*cubins[alone[i]], tool));
      if (s.functions.empty()) s.error = "the listing has no function in it";
    } catch (const std::exception &e) {
      s.error = e.what();
    }
  });
  return out;
}

}  // namespace tessera::runtime
