//===- tools/MeasureWorkerMain.cpp - tessera-measure-worker ----------------===//
//
// The measuring worker fast_tune spawns (tune/MeasureWorkerMain.h).
//
//===----------------------------------------------------------------------===//
#include "tessera/tune/MeasureWorkerMain.h"

int main(int argc, char **argv) { return tessera::tuning::measure_worker_main(argc, argv); }
