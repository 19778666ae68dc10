//===- tests/workloads/Workloads.h - The workload corpus manifest -----------===//
//
// workloads/workloads.json read for tests and benchmarks: the entries (name,
// file, expected rule, full and small sizes, variables kept symbolic) and
// their functions. Shared by the corpus test, the rule tests and
// bench/WorkloadSuite (library tessera_workloads_support).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/runtime/NDArray.h"

namespace tessera::test {

using Sizes = std::map<std::string, int64_t>;

/// The repository's workloads/ directory.
const std::string &workload_dir();

struct Entry {
  std::string name, file, rule;
  Sizes full, small;
  std::vector<std::string> symbolic;

  /// "shared:<path>" is relative to the shared directory, anything else to workloads/.
  std::string path() const;
  /// `sizes` without the variables that stay symbolic when compiling.
  Sizes specialized(const Sizes &sizes) const;
  /// A 2-d convolution (its file is conv2d_*): whichever rule is its default
  /// (`rule`: the tensor cores' for constant extents), the conv2d rule takes it too.
  bool is_conv2d() const { return file.rfind("conv2d", 0) == 0; }
};

std::ostream &operator<<(std::ostream &os, const Entry &e);

/// Reads workloads/workloads.json; a missing or malformed field throws
/// std::runtime_error naming the entry and the field.
std::vector<Entry> load_manifest();

/// The manifest entry named `name`; std::runtime_error("no workload NAME")
/// when there is none (a test reports it as its failure).
const Entry &find_entry(const std::string &name);

/// Parses the entry's file.
ir::PrimFunc load_func(const Entry &e);

/// Inputs that random [0, 16) integers would test poorly: int4 weights get
/// every nibble of their packed words random.
void prepare_inputs(const Entry &e, std::vector<runtime::NDArray> &args, std::mt19937_64 &rng);

/// A program beyond the corpus, for the rule and policy tests:
/// C[i, j] += A * B in float32 with A stored [k, m] ("t") or [m, k] ("n") and
/// B stored [n, k] ("t") or [k, n] ("n"); `layout` is "nn", "nt", "tn" or "tt".
ir::PrimFunc matmul_layout_program(const std::string &layout, int m, int n, int k);

}  // namespace tessera::test
