//===- policies/Policies.h - The policies all_policies() lists -------------===//
#pragma once

#include "tessera/policies/Policy.h"

namespace tessera::policies {

// Each defined in its own file.
const Policy &tensor_core_policy();  ///< matmul_tensor_core (TensorCorePolicy.cpp)
const Policy &gemm_policy();         ///< matmul, conv2d (GemmPolicy.cpp)
const Policy &elementwise_policy();  ///< elementwise, fallback (ElementwisePolicy.cpp)
const Policy &reduction_policy();    ///< reduction, general_reduction (ReductionPolicy.cpp)
const Policy &gemv_policy();         ///< gemv (GemvPolicy.cpp)

}  // namespace tessera::policies
