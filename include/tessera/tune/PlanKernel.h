//===- tessera/tune/PlanKernel.h - A scheduled function as a plan's kernel --===//
//
// The compiler side of dispatch/KernelPlan.h: what a scheduled function
// becomes so that tessera::dispatch can launch it without the IR. The
// function is split into its kernels (lower::split_kernels), each lowered
// and printed as CUDA C; its parameters, grid and block (as SizePrograms of
// the plan's symbols), workspace and tensor maps are recorded, and one
// NVRTC job per kernel is appended for the caller to compile (in one
// parallel wave with other kernels' jobs); the cubins are the caller's to
// fill in, in job order.
//
//   std::vector<runtime::CompileJob> jobs;
//   dispatch::PlanKernel k = tuning::plan_kernel(scheduled, {"m"}, "sm_90", nullptr, jobs);
//   auto built = runtime::compile_many(jobs);   // k.steps[i].cubin = built[i].result->cubin
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "tessera/dispatch/KernelPlan.h"
#include "tessera/ir/Func.h"
#include "tessera/runtime/KernelCache.h"
#include "tessera/runtime/NVRTC.h"

namespace tessera::tuning {

/// `e` over the variables named in `symbols` (slot i is symbols[i]):
/// integer constants, the symbols, + - * // % min max and integer casts.
/// UserError naming anything else (a load, a float, another variable).
dispatch::SizeProgram compile_size_program(const ir::Expr &e, const std::vector<std::string> &symbols);

/// `buffer`'s name, element width and shape over `symbols`.
dispatch::BufferShape buffer_shape(const ir::Buffer &buffer, const std::vector<std::string> &symbols);

/// `f`'s buffer parameters, in order, as a plan's arguments (with whether
/// `f` stores into each).
std::vector<dispatch::Argument> plan_arguments(const ir::PrimFunc &f, const std::vector<std::string> &symbols);

/// The plan kernel of `scheduled` for GPU target `sm` ("sm_90"; a kernel
/// that needs the architecture-specific target gets "sm_90a"), its compile
/// jobs appended to `jobs` (cached in `cache` when given: each step's
/// cache_key is set). UserError when the function runs as more kernels than
/// a plan launches, takes a scalar that is not a symbol, or copies by TMA
/// from something that is not one of its buffers.
dispatch::PlanKernel plan_kernel(const ir::PrimFunc &scheduled, const std::vector<std::string> &symbols,
                                 const std::string &sm, runtime::KernelCache *cache,
                                 std::vector<runtime::CompileJob> &jobs);

}  // namespace tessera::tuning
