//===- tests/tune/HopperPlan.h - A dynamic plan of one TMA kernel -----------===//
//
// A DynamicPlan whose every cell runs one Hopper kernel fed and stored by
// TMA (warp specialised, 128 x 128 tiles, the epilogue by TMA store): the
// policy decides on its own whether such a kernel serves a cell, so the
// tests of tensor maps in dynamic kernels choose it themselves.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include "tessera/rules/MatmulTensorCore.h"
#include "tessera/tune/DynamicPlan.h"

namespace tessera::test {

inline tuning::DynamicPlan tma_plan(const ir::PrimFunc &f, const tuning::DynamicSpec &spec, const Arch &arch) {
  tuning::DynamicPlan plan = tuning::plan_dynamic(f, spec, arch);
  auto c = std::make_unique<rules::TensorCoreConfig>();
  c->wgmma = c->tma = c->warp_specialized = c->tma_store = true;
  c->block_m = 128, c->block_n = 128, c->block_k = 64, c->warps_m = 8, c->warps_n = 1;
  c->stages = 3, c->pad = 0, c->swizzle = true, c->in_bytes = 2;
  c->validate(arch);
  plan.configs.clear();
  plan.configs.push_back(std::move(c));
  for (tuning::Cell &cell : plan.cells) cell.config = 0, cell.kernel_us.assign(1, cell.predicted_us);
  return plan;
}

}  // namespace tessera::test
