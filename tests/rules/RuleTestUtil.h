//===- tests/rules/RuleTestUtil.h - Workloads through the rules -------------===//
#pragma once

#include <gtest/gtest.h>

#include <random>

#include "Workloads.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/arch/Arch.h"
#include "tessera/ir/AccessRegions.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"
#include "tessera/rules/Rule.h"

namespace tessera::test {

/// The arch the CPU tests schedule for.
inline const Arch &test_arch() {
  static const Arch arch = Arch::by_name("h100");
  return arch;
}

/// The manifest entries (empty when it cannot be read: the workloads test reports that).
inline std::vector<Entry> workload_entries() {
  try {
    return load_manifest();
  } catch (const std::exception &) {
    return {};
  }
}

/// The entry's function specialised to its small size (the variables it
/// keeps symbolic stay symbolic) and the values of those for running it.
struct SmallWorkload {
  ir::PrimFunc func;
  runtime::DimBindings dims;
};

inline SmallWorkload small_workload(const Entry &e) {
  SmallWorkload w;
  w.func = analysis::specialize(load_func(e), e.specialized(e.small));
  for (const std::string &v : e.symbolic) w.dims[v] = e.small.at(v);
  return w;
}

inline bool writes(const ir::PrimFunc &f, const ir::Buffer &b) { return ir::stores_to(f.body(), b); }

/// Expects every buffer `f` writes to be within the bounds of f's float64
/// reference `want` (runtime/Verify.h); `what` names the case in failures.
inline void expect_outputs_match(const std::string &what, const ir::PrimFunc &f,
                                 const std::vector<runtime::NDArray> &got, const runtime::Reference &want) {
  for (const runtime::OutputCheck &c : runtime::check_outputs(f, got, want)) EXPECT_TRUE(c.ok) << what << ": " << c.str();
}

/// Runs `scheduled` in the interpreter on random inputs and expects every
/// output within the bounds of `original`'s float64 reference.
inline void expect_same_results(const Entry &e, const ir::PrimFunc &original, const ir::PrimFunc &scheduled,
                                const runtime::DimBindings &dims) {
  std::mt19937_64 rng(11);
  std::vector<runtime::NDArray> want = runtime::make_random_args(original, dims, 5);
  prepare_inputs(e, want, rng);
  std::vector<runtime::NDArray> got = want;
  runtime::Reference ref = runtime::compute_reference(original, want);
  runtime::interpret(scheduled, got);
  expect_outputs_match(e.name, original, got, ref);
}

}  // namespace tessera::test
