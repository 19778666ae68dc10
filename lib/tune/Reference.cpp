//===- lib/tune/Reference.cpp - The reference result of a workload ---------===//
#include "tessera/tune/Reference.h"

#include "Measure.h"
#include "tessera/rules/Rule.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/LlvmJit.h"

namespace tessera::tune {

ComputedReference reference_for(const ir::PrimFunc &f, const std::vector<runtime::NDArray> &inputs,
                                const runtime::DimBindings &dims, const Arch &arch, const ReferenceOptions &options) {
  runtime::ReferenceProgram program = runtime::make_reference_program(f);
  runtime::Oracle oracle = runtime::resolve_oracle(options.oracle);
  if (oracle == runtime::Oracle::Llvm ||
      (oracle == runtime::Oracle::Auto && runtime::llvm_jit_available() &&
       loop_iterations(f, dims) <= options.llvm_limit * int64_t(runtime::llvm_jit_threads()))) {
    std::optional<runtime::LlvmJit> jit;
    try {
      jit.emplace(program.func);
    } catch (const runtime::JitUnsupportedError &) {
      if (oracle == runtime::Oracle::Llvm) throw;
    }
    if (jit) {
      std::vector<runtime::NDArray> args = runtime::reference_args(program, f, inputs);
      jit->run(runtime::pointers_to(args));
      return {runtime::collect_reference(program, f, std::move(args)), "llvm"};
    }
  }
  bool device = !options.interpreter_only && runtime::driver_status() == runtime::DriverStatus::Ok &&
                loop_iterations(f, dims) > options.interpreter_limit;
  if (device) {
    try {
      const rules::Rule &fallback = *rules::find_rule("fallback");
      auto m = fallback.match(program.func, arch);
      if (m) {
        ir::PrimFunc naive = fallback.apply(program.func, **m, *fallback.default_config(**m, arch)).func();
        runtime::CudaFunction fn = runtime::CudaFunction::build(
            naive, {.arch = arch.arch_flag()});
        std::vector<runtime::NDArray> args = runtime::reference_args(program, f, inputs);
        fn.run(args);
        return {runtime::collect_reference(program, f, std::move(args)), "device (fallback rule, float64)"};
      }
    } catch (const Error &) {
      // The interpreter below is slow but always right.
    }
  }
  std::vector<runtime::NDArray> args = runtime::reference_args(program, f, inputs);
  runtime::interpret(program.func, args);
  return {runtime::collect_reference(program, f, std::move(args)), "interpreter"};
}

}  // namespace tessera::tune
