//===- tests/workloads/Workloads.h - The workload corpus, as tests use it ---===//
//
// The corpus reader (tessera/workloads/Corpus.h) in the tests' namespace, a
// workload at its test sizes, and a program beyond the corpus for the rule and policy tests (library
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

/// The corpus workload `name` with its symbolic sizes bound to its "small"
/// sizes (or, with `full`, its "full" ones); std::runtime_error for a name
/// the manifest does not have.
ir::PrimFunc workload_at_size(const std::string &name, bool full = false);

/// C[i, j] += A * B in float32 with A stored [k, m] ("t") or [m, k] ("n") and
/// B stored [n, k] ("t") or [k, n] ("n"); `layout` is "nn", "nt", "tn" or "tt".
ir::PrimFunc matmul_layout_program(const std::string &layout, int m, int n, int k);

}  // namespace tessera::test
