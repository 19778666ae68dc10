//===- lib/tune/Reference.cpp - The reference result of a workload ---------===//
#include "tessera/tune/Reference.h"

#include "Measure.h"
#include "tessera/rules/Rule.h"
#include "tessera/runtime/Backend.h"
#include "tessera/runtime/LlvmJit.h"

namespace tessera::tuning {

namespace {

/// The reference program run by `backend` on a copy of the inputs.
runtime::Reference run_reference(const runtime::Backend &backend, const ir::PrimFunc &built,
                                 const runtime::ReferenceProgram &program, const ir::PrimFunc &f,
                                 const std::vector<runtime::NDArray> &inputs) {
  std::unique_ptr<runtime::Executable> exe = backend.build(built);
  std::vector<runtime::NDArray> args = runtime::reference_args(program, f, inputs);
  exe->run(args);
  return runtime::collect_reference(program, f, std::move(args));
}

}  // namespace

ComputedReference reference_for(const ir::PrimFunc &f, const std::vector<runtime::NDArray> &inputs,
                                const runtime::DimBindings &dims, const Arch &arch, const ReferenceOptions &options) {
  runtime::ReferenceProgram program = runtime::make_reference_program(f);
  runtime::Oracle oracle = runtime::resolve_oracle(options.oracle);
  // The oracles in order (runtime/Backend.h): the LLVM JIT on this machine's
  // cores, the device (the fallback rule's naive float64 kernel) for what is
  // too large for the CPU, the interpreter last.
  const int64_t iterations = loop_iterations(f, dims);
  std::unique_ptr<runtime::Backend> llvm = runtime::make_backend("llvm");
  if (oracle == runtime::Oracle::Llvm ||
      (oracle == runtime::Oracle::Auto && llvm->unavailable().empty() &&
       iterations <= options.llvm_limit * int64_t(runtime::llvm_jit_threads()))) {
    try {
      return {run_reference(*llvm, program.func, program, f, inputs), "llvm"};
    } catch (const runtime::JitUnsupportedError &) {
      if (oracle == runtime::Oracle::Llvm) throw;
    }
  }
  std::unique_ptr<runtime::Backend> cuda = runtime::make_backend("cuda", {.arch = arch.arch_flag()});
  if (!options.interpreter_only && cuda->unavailable().empty() && iterations > options.interpreter_limit) {
    try {
      const rules::Rule &fallback = *rules::find_rule("fallback");
      if (auto m = fallback.match(program.func, arch)) {
        ir::PrimFunc naive = fallback.apply(program.func, **m, *fallback.default_config(**m, arch)).func();
        return {run_reference(*cuda, naive, program, f, inputs), "device (fallback rule, float64)"};
      }
    } catch (const Error &) {
      // The interpreter below is slow but always right.
    }
  }
  return {run_reference(*runtime::make_backend("interpreter"), program.func, program, f, inputs), "interpreter"};
}

}  // namespace tessera::tuning
