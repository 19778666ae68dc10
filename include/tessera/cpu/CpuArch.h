//===- tessera/cpu/CpuArch.h - The host CPU, as a CPU schedule needs it -----===//
//
// What the CPU target (`--target cpu`) sizes its tiles from: cores, the
// vector width, the data caches. detect() reads this machine (sysconf, the
// cache sizes under /sys/devices/system/cpu/cpu0/cache, the vector ISA the
// compiler's CPU checks report); a preset describes a machine we measure on,
// so a schedule can be planned for it elsewhere.
//
//   CpuArch a = CpuArch::detect();   // "host: 2 cores, 512-bit vectors, L1d 32 KiB, L2 1 MiB, L3 32 MiB"
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::cpu {

struct CpuArch {
  std::string name = "host";
  int cores = 1;
  /// The widest vector registers the code may use (128, 256, 512).
  int vector_bits = 128;
  int64_t l1d_bytes = 32 << 10, l2_bytes = 1 << 20, l3_bytes = 8 << 20;

  /// Lanes of a vector of `element_bytes`-wide elements.
  int lanes(int element_bytes) const { return vector_bits / 8 / element_bytes; }
  std::string str() const;

  /// This machine.
  static CpuArch detect();
  /// A preset by name ("ci": the 2-core CI machine), or "host" (detect());
  /// UserError naming the presets.
  static CpuArch by_name(const std::string &name);
  static const std::vector<std::string> &preset_names();
};

}  // namespace tessera::cpu
