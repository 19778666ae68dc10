//===- tessera/runtime/DetectArch.h - The Arch of a live device ------------===//
//
// Device detection lives beside the CUDA driver (runtime/CudaDriver.h), not in
// tessera_arch, which is data and links nothing of CUDA:
//
//   Arch here = runtime::detect_arch();   // device 0: its limits, the closest preset's peaks
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tessera/arch/Arch.h"

namespace tessera::runtime {

/// Arch::from_device(query_device(device), Arch::presets()). Without a usable
/// device: UserError carrying the driver's message.
Arch detect_arch(int device = 0);

}  // namespace tessera::runtime
