//===- PtxasLog.cpp - Resource usage from a ptxas -v log -------------------===//
//
// ptxas -v prints, per entry function (CUDA 12/13):
//   ptxas info    : Compiling entry function 'vadd' for 'sm_90'
//   ptxas info    : Function properties for vadd
//       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 8 registers, used 1 barriers, 4096 bytes smem, 368 bytes cmem[0]
// Non-inlined device functions get "Function properties" blocks too; only the
// entry's own block is read. Needs no NVRTC, so it is always built and tested.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include "tessera/runtime/NVRTC.h"

namespace tessera::runtime {

namespace {

/// The text between the first pair of single quotes after `from`, or "".
std::string quoted(const std::string &line, size_t from) {
  size_t a = line.find('\'', from);
  if (a == std::string::npos) return "";
  size_t b = line.find('\'', a + 1);
  return b == std::string::npos ? "" : line.substr(a + 1, b - a - 1);
}

/// The integer just before `unit` in a comma-separated list such as
/// "8 registers, used 1 barriers, 4096 bytes smem", or -1.
int64_t number_before(const std::string &line, const std::string &unit) {
  size_t at = line.find(unit);
  if (at == std::string::npos) return -1;
  size_t end = at;
  while (end > 0 && line[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
  if (begin == end) return -1;
  return std::strtoll(line.c_str() + begin, nullptr, 10);
}

}  // namespace

std::vector<KernelResources> parse_ptxas_log(const std::string &log) {
  std::vector<KernelResources> out;
  std::istringstream in(log);
  std::string line;
  bool in_entry_properties = false;  // the last "Function properties" named the current entry
  while (std::getline(in, line)) {
    if (size_t p = line.find("Compiling entry function"); p != std::string::npos) {
      out.push_back({});
      out.back().name = quoted(line, p);
      in_entry_properties = false;
      continue;
    }
    if (out.empty()) continue;
    KernelResources &k = out.back();
    if (size_t p = line.find("Function properties for"); p != std::string::npos) {
      std::string fn = line.substr(p + sizeof("Function properties for"));
      while (!fn.empty() && (fn.back() == ' ' || fn.back() == '\r')) fn.pop_back();
      in_entry_properties = fn == k.name;
      continue;
    }
    if (line.find("bytes stack frame") != std::string::npos) {
      if (!in_entry_properties) continue;
      k.stack_bytes = std::max<int64_t>(0, number_before(line, "bytes stack frame"));
      k.spill_stores = std::max<int64_t>(0, number_before(line, "bytes spill stores"));
      k.spill_loads = std::max<int64_t>(0, number_before(line, "bytes spill loads"));
      continue;
    }
    if (line.find("Used ") != std::string::npos && line.find("registers") != std::string::npos) {
      k.registers = static_cast<int>(std::max<int64_t>(0, number_before(line, "registers")));
      k.barriers = static_cast<int>(std::max<int64_t>(0, number_before(line, "barriers")));
      k.shared_bytes = std::max<int64_t>(0, number_before(line, "bytes smem"));
    }
  }
  return out;
}

}  // namespace tessera::runtime
