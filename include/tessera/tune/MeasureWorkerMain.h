//===- tessera/tune/MeasureWorkerMain.h - The measuring worker's program ---===//
//
// `tessera-measure-worker PARENT_PID` (tools/MeasureWorkerMain.cpp): the
// process fast_tune verifies and times its candidates in, so that a kernel
// that faults or hangs takes down this process and not the tuner
// (lib/tune/MeasureWorker.h has the protocol). It reads JSON requests from
// standard input and answers on standard output, one line each; anything
// else the libraries print goes to standard error. It ends at the end of its
// input, when its parent dies, or after a sticky device fault.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace tessera::tuning {

/// The worker's main(): 0 at the end of its input, 3 after a fatal fault.
int measure_worker_main(int argc, char **argv);

}  // namespace tessera::tuning
