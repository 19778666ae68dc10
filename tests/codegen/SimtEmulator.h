//===- tests/codegen/SimtEmulator.h - Lowered kernels run on CPU threads ----===//
//
// A test-only executor for lowered kernels (lower::LoweredFunc), so that what
// lowering makes of a program can be checked against the interpreter without
// a GPU. It runs a kernel the way a GPU does: each thread of a thread block is
// a std::thread running the body with its own threadIdx; `__syncthreads()` is
// a barrier over the block and `T.shfl_xor` an exchange between the lanes of
// a warp (32 consecutive threads, x fastest), each lane waiting for the
// others. Thread blocks run one after another. ldmatrix and mma.sync are
// warp exchanges too (each lane publishes its row address or fragments, then
// computes its own registers from the others', as the PTX ISA's fragment
// maps say: ir/MmaFragments.h); cp.async copies land when the thread's wait
// retires their group (a write then, for the race check) and read as poison
// before; copies never waited for are an error. wgmma (ir/Wgmma.h) is per
// thread of the warpgroup: its shared tiles are read (race-checked) when
// issued, its accumulators land when a wgmma wait (a warp-wide rendezvous,
// as the instruction's .sync.aligned says) retires the group.
// mbarrier waits block until the phase completes and TMA copies land as
// late as a wait on their barrier allows (SimtMbarriers.h). A TMA store
// lands when the issuing thread's T.tma_store_wait retires it; its shared
// box must not change between the store and that wait (checked). T.syncwarp
// is a rendezvous of the warp's lanes.
//
// It also checks what a GPU would leave undefined, and fails with a message:
//   - a data race on shared or global memory: two threads of a block touch
//     one element between the same two barriers, at least one writing (best
//     effort: the last writer and the last reader of each element are kept);
//   - threads of a block (lanes of a warp) meeting at different barriers
//     (shuffles), or one never arriving (a 20 s timeout);
//   - a shuffle whose mask omits lanes that take part;
//   - out-of-bounds accesses, reads of local or shared memory never written
//     (poisoned with NaN / 0xA5 bytes, like the interpreter).
// Values follow the interpreter's rules per dtype (floats rounded to their
// type after every operation; integers wrap). Math: exp, sqrt, rsqrt, abs,
// min/max_value, if_then_else; other intrinsics are an error.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/lower/Lower.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/NDArray.h"
#include "tessera/runtime/Verify.h"

namespace tessera::simt {

/// What the emulated kernel did wrong (see the file comment).
class EmulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Per parameter (in order), per element: whether some thread stored to it.
using WrittenMask = std::vector<std::vector<uint8_t>>;

/// Runs `f` on `args` (one per parameter, as for runtime::Interpreter::run,
/// buffers by their row-major elements). `blocks` lists the thread blocks to
/// run as (blockIdx.x, y, z); empty runs the whole grid. Throws EmulationError.
WrittenMask emulate(const lower::LoweredFunc &f, const std::vector<runtime::NDArray *> &args,
                    const std::vector<std::array<int64_t, 3>> &blocks = {});

/// Emulates `kernel` (lowered from `f` or from a schedule of it) on random
/// inputs of `f` at `dims` (seeded by `seed`), the values of the kernel's
/// scalar parameters (symbolic sizes) taken from `dims`; returns the checks
/// against f's float64 reference, or, when the emulator fails, none with
/// its message in `*error`.
inline std::vector<runtime::OutputCheck> emulate_and_check(const ir::PrimFunc &f, const lower::LoweredFunc &kernel,
                                                           const runtime::DimBindings &dims, uint64_t seed,
                                                           std::string *error) {
  std::vector<runtime::NDArray> actual = runtime::make_random_args(f, dims, seed);
  runtime::Reference reference = runtime::compute_reference(f, actual);
  std::vector<runtime::NDArray *> args;
  for (runtime::NDArray &a : actual) args.push_back(&a);
  // Scalar parameters (symbolic sizes) follow the buffers in the kernel's signature.
  std::vector<runtime::NDArray> scalars;
  scalars.reserve(kernel.params.size());
  for (size_t p = args.size(); p < kernel.params.size(); ++p) {
    const ir::Var &v = kernel.params[p].var;
    runtime::NDArray s(v.dtype(), {});
    s.set_int(0, dims.at(v.name()));
    scalars.push_back(std::move(s));
  }
  for (runtime::NDArray &s : scalars) args.push_back(&s);
  try {
    emulate(kernel, args);
  } catch (const EmulationError &e) {
    *error = e.what();
    return {};
  }
  return runtime::check_outputs(f, actual, reference);
}

}  // namespace tessera::simt
