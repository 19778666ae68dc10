//===- policies/Policies.h - The policies all_policies() lists -------------===//
#pragma once

#include <limits>
#include <vector>

#include "tessera/policies/Policy.h"

namespace tessera::policies {

// Each defined in its own file.
const Policy &tensor_core_policy();  ///< matmul_tensor_core (TensorCorePolicy.cpp)
const Policy &gemm_policy();         ///< matmul, conv2d (GemmPolicy.cpp)
const Policy &elementwise_policy();  ///< elementwise, fallback (ElementwisePolicy.cpp)
const Policy &reduction_policy();    ///< reduction, general_reduction (ReductionPolicy.cpp)
const Policy &gemv_policy();         ///< gemv (GemvPolicy.cpp)

/// The answer to ProposeOptions::score_only: per config, a candidate with a
/// null config and `us(config)` when it is a C, NaN otherwise.
template <class C, class Us>
std::vector<Candidate> score_only(const std::vector<const rules::Config *> &configs, Us &&us) {
  std::vector<Candidate> out;
  out.reserve(configs.size());
  for (const rules::Config *c : configs) {
    const C *typed = dynamic_cast<const C *>(c);
    out.push_back({nullptr, typed ? double(us(*typed)) : std::numeric_limits<double>::quiet_NaN(), ""});
  }
  return out;
}

}  // namespace tessera::policies
