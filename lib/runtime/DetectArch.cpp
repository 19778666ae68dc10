//===- lib/runtime/DetectArch.cpp - The Arch of a live device --------------===//
#include "tessera/runtime/DetectArch.h"

#include <fmt/format.h>

#include "tessera/runtime/CudaDriver.h"

namespace tessera::runtime {

Arch detect_arch(int device) {
  if (driver_status() != DriverStatus::Ok)
    throw UserError("cannot detect the GPU: no CUDA device (" + driver_message() + ")");
  if (device < 0 || device >= device_count())
    throw UserError(fmt::format("cannot detect the GPU: device {} does not exist ({} device(s))", device,
                                device_count()));
  return Arch::from_device(query_device(device), Arch::presets());
}

}  // namespace tessera::runtime
