//===- Sass.cpp - Summaries of cuobjdump -sass listings --------------------===//
//
// A listing is read line by line. Only three kinds of line matter:
//   code for sm_90                       the architecture of what follows
//   Function : main_kernel               a new function
//   /*0090*/  @P0 LDG.E.128 R8, [...] ;  an instruction: address, predicate, opcode
// Everything else (headers, the encoding lines `/* 0x... */`, blank lines) is
// skipped, so a truncated or foreign text yields fewer summaries, never an
// exception. Opcodes are classified by their base (the part before the first
// dot) and, for memory instructions, the width modifier.
//
//===----------------------------------------------------------------------===//
#include "tessera/runtime/Sass.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "SassLine.h"

namespace tessera::runtime {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

/// The next whitespace-separated token of `s`, consumed from it.
std::string_view next_token(std::string_view &s) {
  s = trim(s);
  size_t end = 0;
  while (end < s.size() && !std::isspace(static_cast<unsigned char>(s[end]))) ++end;
  std::string_view token = s.substr(0, end);
  s.remove_prefix(end);
  return token;
}

/// `/*0090*/` (hex digits between the markers, no spaces) starts an
/// instruction line; `/* 0x000f... */` starts an encoding line.
bool strip_address(std::string_view &line, uint64_t &address) {
  if (!line.starts_with("/*")) return false;
  size_t end = line.find("*/");
  if (end == std::string_view::npos || end == 2 || end > 18) return false;
  auto [ptr, ec] = std::from_chars(line.data() + 2, line.data() + end, address, 16);
  if (ec != std::errc() || ptr != line.data() + end) return false;
  line.remove_prefix(end + 2);
  return true;
}

std::string_view base_of(std::string_view opcode) {
  return opcode.substr(0, opcode.find('.'));
}

/// The i-th comma-separated operand (0 is the destination), trimmed; "" past the end.
std::string_view operand(std::string_view operands, int i) {
  for (; i > 0; --i) {
    size_t comma = operands.find(',');
    if (comma == std::string_view::npos) return "";
    operands.remove_prefix(comma + 1);
  }
  return trim(operands.substr(0, operands.find(',')));
}

bool is_zero_register(std::string_view op) {
  while (!op.empty() && (op.front() == '-' || op.front() == '|')) op.remove_prefix(1);
  while (!op.empty() && op.back() == '|') op.remove_suffix(1);
  return op == "RZ";
}

/// Adds one instruction (`opcode` with its modifiers, `operands` up to the ';') to its family in `s`.
void count(SassSummary &s, std::string_view opcode, std::string_view operands) {
  std::string_view base = base_of(opcode);
  auto width = [&] { return access_width(opcode); };
  if (base == "LDG")
    ++s.global_loads[width()];
  else if (base == "STG")
    ++s.global_stores[width()];
  else if (base == "LD")
    ++s.generic_loads[width()];
  else if (base == "ST")
    ++s.generic_stores[width()];
  else if (base == "LDS")
    ++s.shared_loads[width()];
  else if (base == "STS")
    ++s.shared_stores[width()];
  else if (base == "LDGSTS")
    ++s.async_copies[width()];
  else if (base == "LDSM")
    ++s.ldmatrix;
  else if (base == "UTMALDG")
    ++s.tma_loads;
  else if (base == "UTMASTG")
    ++s.tma_stores;
  else if (base.starts_with("SYNCS"))
    ++s.mbarrier_ops;
  else if (base == "LDL")
    ++s.local_loads;
  else if (base == "STL")
    ++s.local_stores;
  else if (base == "ATOM" || base == "ATOMG" || base == "RED" || base == "REDG")
    ++s.atomics;
  else if (base == "ATOMS")
    ++s.shared_atomics;
  else if (base.size() > 3 && base.ends_with("MMA"))
    ++s.tensor_ops[std::string(base)];
  else if (base == "FFMA" || base == "FFMA2" || base == "HFMA2" || base == "DFMA") {
    // `HFMA2.MMA R5, -RZ, RZ, 1.875, 0` writes a constant: 0 * 0 + c.
    if (is_zero_register(operand(operands, 1)) && is_zero_register(operand(operands, 2))) return;
    ++s.fma_ops[std::string(base)];
  }
}

/// "16B x8, 2B x40": widest first.
std::string format_widths(const WidthCounts &w) {
  std::string out;
  for (auto it = w.rbegin(); it != w.rend(); ++it)
    out += fmt::format("{}{}B x{}", out.empty() ? "" : ", ", it->first, it->second);
  return out.empty() ? "0" : out;
}

std::string format_ops(const std::map<std::string, int64_t> &ops, std::string_view none) {
  std::string out;
  for (const auto &[op, n] : ops) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", op, n);
  return out.empty() ? std::string(none) : out;
}

int widest(const WidthCounts &a, const WidthCounts &b) {
  int w = a.empty() ? 0 : a.rbegin()->first;
  return std::max(w, b.empty() ? 0 : b.rbegin()->first);
}

template <class Map>
void add_counts(Map &into, const Map &from) {
  for (const auto &[key, n] : from) into[key] += n;
}

}  // namespace

int access_width(std::string_view opcode) {
  int bytes = 4;
  size_t dot = opcode.find('.');
  while (dot != std::string_view::npos) {
    opcode.remove_prefix(dot + 1);
    dot = opcode.find('.');
    std::string_view mod = opcode.substr(0, dot);
    if (mod == "U8" || mod == "S8")
      bytes = 1;
    else if (mod == "U16" || mod == "S16")
      bytes = 2;
    else if (mod == "64")
      bytes = 8;
    else if (mod == "128")
      bytes = 16;
    else if (mod == "256")
      bytes = 32;
  }
  return bytes;
}

int SassSummary::widest_global_load() const {
  return widest(global_loads, generic_loads);
}
int SassSummary::widest_global_store() const {
  return widest(global_stores, generic_stores);
}

std::string SassSummary::str() const {
  std::string out =
      fmt::format("global ld {} | st {}", format_widths(global_loads), format_widths(global_stores));
  if (!generic_loads.empty() || !generic_stores.empty())
    out += fmt::format(" | generic ld {} st {}", format_widths(generic_loads), format_widths(generic_stores));
  if (shared_loads.empty() && shared_stores.empty())
    out += " | shared 0";
  else
    out += fmt::format(" | shared ld {} st {}", format_widths(shared_loads), format_widths(shared_stores));
  if (ldmatrix) out += fmt::format(" | ldmatrix {}", ldmatrix);
  if (tma_loads) out += fmt::format(" | tma {}", tma_loads);
  if (tma_stores) out += fmt::format(" | tma store {}", tma_stores);
  if (mbarrier_ops) out += fmt::format(" | mbarrier {}", mbarrier_ops);
  if (!async_copies.empty()) out += " | cp.async " + format_widths(async_copies);
  if (local_loads || local_stores)
    out += fmt::format(" | local ld {} st {}", local_loads, local_stores);
  else
    out += " | local 0";
  if (atomics || shared_atomics)
    out += shared_atomics ? fmt::format(" | atomics {} (shared {})", atomics + shared_atomics, shared_atomics)
                          : fmt::format(" | atomics {}", atomics);
  out += " | " + format_ops(tensor_ops, "mma 0");
  out += " | " + format_ops(fma_ops, "FMA 0");
  return out;
}

SassSummary &SassSummary::operator+=(const SassSummary &o) {
  instructions += o.instructions;
  add_counts(global_loads, o.global_loads);
  add_counts(global_stores, o.global_stores);
  add_counts(generic_loads, o.generic_loads);
  add_counts(generic_stores, o.generic_stores);
  add_counts(shared_loads, o.shared_loads);
  add_counts(shared_stores, o.shared_stores);
  add_counts(async_copies, o.async_copies);
  ldmatrix += o.ldmatrix;
  tma_loads += o.tma_loads;
  tma_stores += o.tma_stores;
  mbarrier_ops += o.mbarrier_ops;
  local_loads += o.local_loads;
  local_stores += o.local_stores;
  atomics += o.atomics;
  shared_atomics += o.shared_atomics;
  add_counts(tensor_ops, o.tensor_ops);
  add_counts(fma_ops, o.fma_ops);
  return *this;
}

namespace detail {

bool read_instruction(std::string_view line, SassInstruction &out) {
  line = trim(line);
  if (!strip_address(line, out.address)) return false;
  std::string_view rest = line.substr(0, line.find(';'));
  std::string_view opcode = next_token(rest);
  if (opcode == "{") opcode = next_token(rest);  // dual-issue braces of old architectures
  out.predicate = {};
  if (opcode.starts_with("@")) out.predicate = opcode, opcode = next_token(rest);
  if (opcode.empty() || !std::isupper(static_cast<unsigned char>(opcode.front()))) return false;
  out.opcode = opcode;
  out.operands = trim(rest);
  return true;
}

void count_instruction(SassSummary &s, const SassInstruction &i) {
  ++s.instructions;
  if (i.predicate == "@!PT") return;  // never executes: scheduling padding
  count(s, i.opcode, i.operands);
}

}  // namespace detail

std::vector<SassSummary> parse_sass(std::string_view text) {
  std::vector<SassSummary> out;
  std::string arch;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = trim(text.substr(0, eol));
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);

    if (line.starts_with("code for ")) {
      arch = std::string(trim(line.substr(9)));
      continue;
    }
    if (line.starts_with("Function :") || line.starts_with("Function:")) {
      out.push_back(SassSummary{.name = std::string(trim(line.substr(line.find(':') + 1))), .arch = arch});
      continue;
    }
    // Instructions outside a function (a listing cut at the top) are dropped.
    detail::SassInstruction instruction;
    if (!out.empty() && detail::read_instruction(line, instruction))
      detail::count_instruction(out.back(), instruction);
  }
  return out;
}

std::optional<std::string> width_contradiction(const SassSummary &s, int expected_bytes) {
  if (expected_bytes <= 0 || s.empty()) return std::nullopt;
  int load = s.widest_global_load(), store = s.widest_global_store();
  if (std::max(load, store) >= expected_bytes) return std::nullopt;
  if (load == 0 && store == 0)
    return fmt::format("no global load or store is {} bytes wide: there is no global access at all",
                       expected_bytes);
  auto bytes = [](int w) { return w ? fmt::format("{} bytes", w) : std::string("none"); };
  return fmt::format("no global load or store is {} bytes wide: the widest load is {}, the widest store {}",
                     expected_bytes, bytes(load), bytes(store));
}

}  // namespace tessera::runtime
