//===- tessera/support/HostMemory.h - What memory this machine has ---------===//
//
// Work that allocates what a user's sizes say (the interpreter's arrays, a
// verification's reference, a device's staging copies) checks first that it
// fits, and says what it needs and what there is instead of being killed for
// memory or running into swap:
//
//   HostMemory m = host_memory();                 // /proc/meminfo
//   if (need > m.available) throw UserError(needs_memory_message("the arrays of 'add'", need, m));
//
// Byte counts are doubles: a product of user sizes may exceed 2^64, and what
// matters is only whether it fits.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace tessera {

struct HostMemory {
  double total = 0;      ///< MemTotal, bytes; 0 when unknown
  double available = 0;  ///< MemAvailable (what a process can still get without swapping), bytes; 0 when unknown
};

/// This machine's memory, read now.
HostMemory host_memory();

/// "36.0 GB (36000000000 bytes)": decimal units, then the exact count when it is one.
std::string format_bytes(double bytes);

/// "WHAT: 36.0 GB (...) of memory needed; this machine has 23.1 GB (...) available (of 31.0 GB (...))".
std::string needs_memory_message(const std::string &what, double bytes, const HostMemory &m);

}  // namespace tessera
