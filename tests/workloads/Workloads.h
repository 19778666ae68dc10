//===- tests/workloads/Workloads.h - The workload corpus, as tests use it ---===//
//
// The corpus reader (tessera/workloads/Corpus.h) in the tests' namespace,
// and a program beyond the corpus for the rule and policy tests (library
// tessera_workloads_support).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "tessera/workloads/Corpus.h"

namespace tessera::test {

using workloads::Entry;
using workloads::find_entry;
using workloads::load_func;
using workloads::load_manifest;
using workloads::prepare_inputs;
using workloads::Sizes;
using workloads::workload_dir;

/// C[i, j] += A * B in float32 with A stored [k, m] ("t") or [m, k] ("n") and
/// B stored [n, k] ("t") or [k, n] ("n"); `layout` is "nn", "nt", "tn" or "tt".
ir::PrimFunc matmul_layout_program(const std::string &layout, int m, int n, int k);

}  // namespace tessera::test
