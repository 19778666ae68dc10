//===- tessera/workloads/Corpus.h - The workload corpus and its manifest --===//
//
// workloads/workloads.json: the programs tessera's rules are tested and
// benchmarked on (workloads/README.md), each with the rule expected to take
// it, its benchmark ("full") and test ("small") sizes, and the variables kept
// symbolic when compiling. Read by `tessera bench`, the benchmarks and the
// tests; found under support::data_root() (a source tree, a bundle or an
// installed prefix).
//
//   for (const workloads::Entry &e : workloads::load_manifest())
//     ir::PrimFunc f = workloads::load_func(e);   // e.path(): workloads/<file>
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

namespace tessera::workloads {

using Sizes = std::map<std::string, int64_t>;

/// The corpus directory: support::data_root() / "workloads".
const std::string &workload_dir();

struct Entry {
  std::string name, file, rule;
  Sizes full, small;
  std::vector<std::string> symbolic;

  /// The entry's file: `file` is relative to workloads/ (the long-tail
  /// programs are under workloads/longtail/).
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
/// when there is none.
const Entry &find_entry(const std::string &name);

/// Parses the entry's file.
ir::PrimFunc load_func(const Entry &e);

/// Inputs that random [0, 16) integers would test poorly: int4 weights get
/// every nibble of their packed words random.
void prepare_inputs(const Entry &e, std::vector<runtime::NDArray> &args, std::mt19937_64 &rng);

}  // namespace tessera::workloads
