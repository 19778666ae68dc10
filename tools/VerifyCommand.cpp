//===- tools/VerifyCommand.cpp - `tessera schedule --verify` ---------------===//
//
// The scheduled function on the original's inputs, judged against the
// original evaluated in float64 (runtime/Verify.h), on the CPU: in the LLVM
// JIT when it compiles both programs (runtime/Oracle.h), else in the
// interpreter. When running every thread block would take minutes, a kernel
// whose blocks are independent is checked on a sample of them, with a
// coverage run over the whole grid (runtime/SampledCheck.h); anything else
// that large is refused up front, saying what to do instead.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <chrono>
#include <functional>
#include <ostream>

#include <fmt/format.h>

#include "CommandSupport.h"
#include "Commands.h"
#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Functor.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/runtime/Oracle.h"
#include "tessera/runtime/SampledCheck.h"
#include "tessera/runtime/Verify.h"
#include "tessera/support/Error.h"
#include "tessera/support/HostMemory.h"
#include "tessera/tune/Reference.h"

namespace tessera::cli {

namespace {

/// How long one oracle run took, split into the JIT's compilation and the run.
struct Timed {
  runtime::Oracle used = runtime::Oracle::Auto;
  double compile_s = 0, total_s = 0;
  std::string str() const {
    std::string s = runtime::oracle_name(used);
    if (compile_s > 0) s += fmt::format(", compiled in {:.2f} s", compile_s);
    return s + fmt::format(", ran in {:.2f} s", total_s - compile_s);
  }
};

Timed timed(const std::function<runtime::Oracle()> &run) {
  const double compiled_before = runtime::llvm_jit_compile_ms_total();
  const auto start = std::chrono::steady_clock::now();
  Timed t{run()};
  t.total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  t.compile_s = (runtime::llvm_jit_compile_ms_total() - compiled_before) / 1e3;
  return t;
}

std::string param_name(const ir::PrimFunc &f, size_t i) {
  ir::Buffer b = f.buffer_of(f.params()[i]);
  return b.defined() ? b.name() : f.params()[i].name();
}

/// What --verify can afford and how it will run, decided before anything runs.
struct VerifyPlan {
  /// The original's float64 reference program, built once.
  runtime::ReferenceProgram reference;
  runtime::Oracle oracle;
  bool jit = false;
  int64_t limit = 0;        ///< loop iterations one run may take
  int64_t iterations = 0;   ///< of the original at these sizes
  std::string refusal;      ///< why the whole grid cannot be run ("" when it can)
  std::string instead;      ///< what the user can do instead
};

VerifyPlan plan_verification(const ScheduleCommandOptions &opts, const ir::PrimFunc &f, const ir::PrimFunc &scheduled,
                             const runtime::DimBindings &dims) {
  VerifyPlan p;
  p.oracle = runtime::resolve_oracle(runtime::parse_oracle(opts.oracle));
  auto jit_compiles = [&](const ir::PrimFunc &g) {
    if (p.oracle == runtime::Oracle::Interpreter || !runtime::llvm_jit_available()) return false;
    try {
      runtime::LlvmJit jit(g, {.specialize_shapes = true});  // compiles nothing yet: the runs do
      return true;
    } catch (const runtime::JitUnsupportedError &) {
      if (p.oracle == runtime::Oracle::Llvm) throw;
      return false;
    }
  };
  p.reference = runtime::make_reference_program(f);
  p.jit = jit_compiles(p.reference.func) && jit_compiles(scheduled);
  const unsigned cores = p.jit ? std::max(1u, runtime::llvm_jit_threads()) : 1u;
  // Warp-level statements run per lane, each reading its neighbours'
  // fragments, and a program with cp.async on one thread: a tensor-core
  // matmul runs about 4x slower per iteration than a SIMT one.
  bool warp = false;
  ir::pre_order_visit(scheduled.body(), [&](const ir::Expr &e) {
    if (const auto *c = e.as<ir::Call>()) warp = warp || ir::is_async_or_warp_statement(c->op);
  }, nullptr);
  const int64_t llvm_limit = opts.llvm_verify_limit * int64_t(cores) / (warp ? 4 : 1);
  p.limit = p.jit ? std::max(opts.verify_limit, llvm_limit) : opts.verify_limit;
  p.instead = f.shape_vars().empty() ? "its sizes are fixed in the program: let `tessera tune` verify it on a GPU"
                                     : "bind smaller sizes with --dim, or let `tessera tune` verify on a GPU";
  p.iterations = tuning::loop_iterations(f, dims);
  if (p.iterations > p.limit)
    p.refusal = fmt::format(
        "--verify would {} {:.3g} loop iterations twice (the original in float64, then the scheduled function), at "
        "around {} a second{}",
        p.jit ? "run (LLVM JIT)" : "interpret", double(p.iterations),
        !p.jit ? "10^6" : warp ? "2.5x10^7 (warp-level statements)" : "10^8",
        p.jit ? fmt::format(" per core ({} here)", cores) : "");
  // And when its arrays would not fit: a process the kernel kills for
  // memory tells the user nothing.
  const double need = tuning::verification_bytes(f, dims), have = host_memory().available;
  if (have > 0 && need > 0.75 * have)
    throw UserError(fmt::format(
        "--verify would hold about {:.1f} GiB (the arguments, and the float64 reference with its error bounds) of "
        "the {:.1f} GiB this machine has available: {}",
        need / double(1 << 30), have / double(1 << 30), p.instead));
  return p;
}

/// Every thread block, as the kernel runs.
int verify_whole_grid(const ScheduleCommandOptions &opts, const VerifyPlan &plan, const ir::PrimFunc &f,
                      const ir::PrimFunc &scheduled, const runtime::DimBindings &dims, const std::string &defaulted,
                      std::ostream &out, std::ostream &err) {
  std::vector<runtime::NDArray> got = runtime::make_random_args(f, dims, opts.seed);
  std::vector<runtime::NDArray> ref_args = runtime::reference_args(plan.reference, f, got);
  const Timed ref = timed([&] { return runtime::execute(plan.reference.func, ref_args, plan.oracle); });
  runtime::Reference want = runtime::collect_reference(plan.reference, f, std::move(ref_args));
  const Timed sched = timed([&] { return runtime::execute(scheduled, got, plan.oracle); });
  out << defaulted << "# oracle: " << ref.str() << " (reference); " << sched.str() << " (scheduled)\n";
  return report_checks(runtime::check_outputs(f, got, want), "# verify: ",
                       "the scheduled function is outside what rounding explains", out, err);
}

/// Runs the coverage program and reports, per output, whether every element
/// was written (status 1 when not).
Timed check_coverage(const ir::PrimFunc &coverage, const ir::PrimFunc &f, const std::vector<runtime::NDArray> &inputs,
                     runtime::Oracle oracle, int64_t blocks, int &status, std::ostream &out, std::ostream &err) {
  std::vector<runtime::Unwritten> missing;
  const Timed cover = timed([&] {
    runtime::Oracle used = oracle;
    missing = runtime::unwritten_elements(coverage, f, inputs, oracle, &used);
    return used;
  });
  const std::vector<bool> written = ir::written_params(f);
  for (size_t i = 0; i < written.size(); ++i) {
    if (!written[i]) continue;
    if (missing[i].count == 0) {
      out << fmt::format("# verify: coverage: the {} thread blocks write every element of {}\n", blocks,
                         param_name(f, i));
      continue;
    }
    std::string line = fmt::format("{}: {} of {} elements no thread block writes, first {}", param_name(f, i),
                                   missing[i].count, inputs[i].numel(),
                                   runtime::element_name(param_name(f, i), missing[i].first, inputs[i].shape()));
    out << "# verify: coverage: " << line << "\n";
    err << "error: the scheduled function leaves outputs unwritten: " << line << "\n";
    status = 1;
  }
  return cover;
}

/// Some thread blocks, every output element's coverage, and the reference at
/// what the sampled blocks wrote (runtime/SampledCheck.h).
int verify_sampled_blocks(const ScheduleCommandOptions &opts, const VerifyPlan &plan, int per_axis,
                          const ir::PrimFunc &f, const ir::PrimFunc &scheduled, const runtime::DimBindings &dims,
                          const std::string &defaulted, std::ostream &out, std::ostream &err) {
  const bool automatic = opts.verify_blocks == "auto";
  auto refuse = [&](const std::string &why) -> UserError {
    if (automatic) return UserError(fmt::format("{}, and it cannot be checked on a sample of its thread blocks: {}: {}",
                                                plan.refusal, why, plan.instead));
    return UserError("--verify-blocks " + opts.verify_blocks + ": " + why);
  };
  std::string why = runtime::block_sample_refusal(scheduled);
  const std::vector<bool> written = ir::written_params(f);
  ir::PrimFunc coverage;
  if (why.empty()) {
    try {
      coverage = runtime::coverage_program(scheduled);
    } catch (const UserError &e) {
      why = e.what();
    }
  }
  if (!why.empty()) throw refuse(why);
  // As many blocks as the limit affords: the scheduled run's work is its
  // share of the grid.
  runtime::BlockSample sample;
  double share = 1;
  for (int k = per_axis; k >= 1; --k) {
    sample = runtime::sample_blocks(scheduled, dims, k, opts.seed);
    share = double(sample.kept_blocks()) / double(std::max<int64_t>(sample.total_blocks(), 1));
    if (!automatic || double(plan.iterations) * share <= double(plan.limit)) break;
  }
  if (automatic && double(plan.iterations) * share > double(plan.limit))
    throw refuse(fmt::format("{} are still {:.3g} loop iterations", sample.str(), double(plan.iterations) * share));
  if (int64_t n = tuning::loop_iterations(coverage, dims); n > plan.limit)
    throw refuse(fmt::format("its stores alone are {:.3g} loop iterations", double(n)));

  const std::vector<runtime::NDArray> inputs = runtime::make_random_args(f, dims, opts.seed);
  out << defaulted << "# verify: sampled " << sample.str() << ", seed " << opts.seed << "\n";

  // 1. Coverage: the whole grid stores 1 into zeroed outputs.
  int status = 0;
  const Timed cover = check_coverage(coverage, f, inputs, plan.oracle, sample.total_blocks(), status, out, err);

  // 2. The sampled blocks, on outputs filled with the sentinel.
  std::vector<runtime::NDArray> got = inputs;
  std::vector<std::vector<uint8_t>> only;
  const Timed sched = timed([&] {
    runtime::Oracle used = plan.oracle;
    only = runtime::run_sampled_blocks(sample, f, got, plan.oracle, &used);
    return used;
  });
  std::vector<runtime::IndexRanges> keep(written.size());

  // 3. The reference where the sampled blocks wrote, as few ranges per
  // dimension as the limit needs.
  const runtime::ReferenceProgram &program = plan.reference;
  runtime::ReferenceProgram narrowed = program;
  // The reference's work as a share of the whole reference's (which stores
  // each value with its error terms), in the original's iterations.
  const double whole = double(std::max<int64_t>(tuning::loop_iterations(program.func, dims), 1));
  auto reference_work = [&] { return double(plan.iterations) * double(tuning::loop_iterations(narrowed.func, dims)) / whole; };
  for (size_t ranges : {size_t(16), size_t(4), size_t(2), size_t(1)}) {
    for (size_t i = 0; i < written.size(); ++i)
      if (written[i]) keep[i] = runtime::marked_ranges(only[i], got[i].shape(), ranges);
    narrowed.func = runtime::restrict_reference(program, f, keep, dims);
    if (reference_work() <= double(plan.limit)) break;
  }
  if (automatic && reference_work() > double(plan.limit))
    throw refuse(fmt::format("the reference at what the sampled blocks wrote is still {:.3g} loop iterations (not "
                             "every loop that enumerates an output could be narrowed)",
                             reference_work()));
  std::vector<runtime::NDArray> ref_args = runtime::reference_args(program, f, inputs);
  const Timed ref = timed([&] { return runtime::execute(narrowed.func, ref_args, plan.oracle); });
  runtime::Reference want = runtime::collect_reference(narrowed, f, std::move(ref_args));
  out << "# oracle: " << ref.str() << " (reference); " << sched.str() << " (sampled blocks); " << cover.str()
      << " (coverage)\n";

  for (size_t i = 0; i < written.size(); ++i) {
    if (!written[i]) continue;
    const int64_t wrote = std::count(only[i].begin(), only[i].end(), uint8_t(1));
    runtime::keep_within(only[i], got[i].shape(), keep[i]);
    const int64_t checked = std::count(only[i].begin(), only[i].end(), uint8_t(1));
    out << fmt::format("# verify: {}: the sampled blocks wrote {} of its {} elements; {} checked\n", param_name(f, i),
                       wrote, got[i].numel(), checked);
    if (checked == 0) {
      err << "error: the sampled thread blocks wrote no element of " << param_name(f, i) << " that could be checked\n";
      status = 1;
    }
  }
  int checks = report_checks(runtime::check_outputs(f, got, want, only), "# verify: ",
                             "the scheduled function is outside what rounding explains", out, err);
  return std::max(status, checks);
}

}  // namespace

int verify_scheduled(const ScheduleCommandOptions &opts, const ir::PrimFunc &f, const ir::PrimFunc &scheduled,
                     const runtime::DimBindings &dims, const std::string &defaulted, std::ostream &out,
                     std::ostream &err) {
  int per_axis = 3;  // the first, the last and one drawn
  if (opts.verify_blocks != "auto" && opts.verify_blocks != "all") {
    try {
      size_t used = 0;
      per_axis = std::stoi(opts.verify_blocks, &used);
      if (used != opts.verify_blocks.size() || per_axis < 1) throw std::invalid_argument("");
    } catch (const std::logic_error &) {
      throw UserError("--verify-blocks must be auto, all or a positive number of blocks per grid axis, got '" +
                      opts.verify_blocks + "'");
    }
  }
  VerifyPlan plan = plan_verification(opts, f, scheduled, dims);
  const bool sample = opts.verify_blocks == "auto" ? !plan.refusal.empty() : opts.verify_blocks != "all";
  if (sample) return verify_sampled_blocks(opts, plan, per_axis, f, scheduled, dims, defaulted, out, err);
  if (!plan.refusal.empty()) throw UserError(plan.refusal + ": " + plan.instead);
  return verify_whole_grid(opts, plan, f, scheduled, dims, defaulted, out, err);
}

}  // namespace tessera::cli
