//===- lib/cpu/CpuArch.cpp - The host CPU ---------------------------------===//
#include "tessera/cpu/CpuArch.h"

#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "tessera/support/Error.h"

namespace tessera::cpu {

namespace {

/// "32K", "1024K", "32M" as bytes; 0 when unreadable.
int64_t parse_size(std::string s) {
  if (s.empty()) return 0;
  int64_t scale = 1;
  if (s.back() == 'K') scale = 1 << 10, s.pop_back();
  else if (s.back() == 'M') scale = 1 << 20, s.pop_back();
  try {
    return std::stoll(s) * scale;
  } catch (...) {
    return 0;
  }
}

std::string read_line(const std::string &path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

std::string kib(int64_t bytes) {
  return bytes >= (1 << 20) ? fmt::format("{} MiB", bytes >> 20) : fmt::format("{} KiB", bytes >> 10);
}

}  // namespace

std::string CpuArch::str() const {
  return fmt::format("{}: {} cores, {}-bit vectors, L1d {}, L2 {}, L3 {}", name, cores, vector_bits, kib(l1d_bytes),
                     kib(l2_bytes), kib(l3_bytes));
}

CpuArch CpuArch::detect() {
  CpuArch a;
  a.cores = int(std::max(1u, std::thread::hardware_concurrency()));
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) a.vector_bits = 512;
  else if (__builtin_cpu_supports("avx2")) a.vector_bits = 256;
#endif
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string level = read_line(dir + "level"), type = read_line(dir + "type");
    const int64_t size = parse_size(read_line(dir + "size"));
    if (level.empty() || size <= 0) continue;
    if (level == "1" && type == "Data") a.l1d_bytes = size;
    if (level == "2") a.l2_bytes = size;
    if (level == "3") a.l3_bytes = size;
  }
  return a;
}

const std::vector<std::string> &CpuArch::preset_names() {
  static const std::vector<std::string> names{"host", "ci"};
  return names;
}

CpuArch CpuArch::by_name(const std::string &name) {
  if (name == "host") return detect();
  // The CI machine (and this project's build machine), as detect() reads it:
  // 2 vCPUs of an AMD EPYC with AVX-512.
  if (name == "ci") return CpuArch{"ci", 2, 512, 32 << 10, 1 << 20, 32 << 20};
  std::string names;
  for (const std::string &n : preset_names()) names += (names.empty() ? "" : ", ") + n;
  throw UserError("unknown CPU '" + name + "' (CPUs: " + names + ")");
}

}  // namespace tessera::cpu
