//===- lib/support/HostMemory.cpp - What memory this machine has -----------===//
#include "tessera/support/HostMemory.h"

#include <cstdio>
#include <fstream>

namespace tessera {

HostMemory host_memory() {
  HostMemory m;
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  double kib = 0;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemTotal:") m.total = kib * 1024.0;
    if (key == "MemAvailable:") m.available = kib * 1024.0;
  }
  return m;
}

std::string format_bytes(double bytes) {
  const char *units[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
  int u = 0;
  double v = bytes;
  while (v >= 1000 && u < 8) v /= 1000, ++u;
  char buf[96];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%.0f bytes", bytes);
  else if (bytes < 9.0e15)  // exact in a double
    std::snprintf(buf, sizeof buf, "%.1f %s (%.0f bytes)", v, units[u], bytes);
  else
    std::snprintf(buf, sizeof buf, "%.1f %s (%.3g bytes)", v, units[u], bytes);
  return buf;
}

std::string needs_memory_message(const std::string &what, double bytes, const HostMemory &m) {
  return what + ": " + format_bytes(bytes) + " of memory needed; this machine has " +
         (m.available > 0 ? format_bytes(m.available) : std::string("an unknown amount")) + " available (of " +
         (m.total > 0 ? format_bytes(m.total) : std::string("an unknown total")) + ")";
}

}  // namespace tessera
