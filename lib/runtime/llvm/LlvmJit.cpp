//===- LlvmJit.cpp - The ORC JIT, the O2 pipeline, the cache, the run ------===//
//
// One LLJIT per process (created on first use) holds every compiled function,
// each in a module of its own. A function is compiled once per structure: the
// cache is keyed by structural hash and checked with structural_equal plus
// the names that error messages quote (the interpreter's error contexts), so
// a cached function reports errors with the right names.
//
//===----------------------------------------------------------------------===//
#include "tessera/runtime/LlvmJit.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <map>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "Codegen.h"
#include "JitRuntime.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Opaque.h"
#include "tessera/ir/StructuralEqual.h"

namespace tessera::runtime {

using detail::BufState;
using detail::Frame;
using detail::Program;

namespace {

/// LLVM's diagnostics of a JIT compile: its errors to stderr; its remarks and
/// warnings (a loop the vectorizer was asked to vectorize and could not) are
/// notes on the generated code, not on the user's program, and stay quiet.
void report_errors_only(const llvm::DiagnosticInfo *info, void *) {
  if (info->getSeverity() != llvm::DS_Error) return;
  llvm::DiagnosticPrinterRawOStream printer(llvm::errs());
  llvm::errs() << "LLVM JIT: ";
  info->print(printer);
  llvm::errs() << "\n";
}

using Kernel = int32_t (*)(int64_t *, double *, BufState *, detail::JitRunState *);

/// Compiled code for one structure.
struct Compiled {
  ir::PrimFunc func;
  std::string names;  // the error contexts' names, in order
  Kernel kernel = nullptr;
  std::vector<detail::JitSite> sites;
  int num_allocs = 0;
  std::vector<std::unique_ptr<detail::WarpStatement>> warp;
  /// Runs loops in parallel that issue asynchronous copies: a run whose
  /// copies cross an iteration it gave another thread is run again serially.
  bool parallel_async = false;
  double compile_ms = 0;
};

std::string error_names(const Program &p) {
  std::string s;
  for (const detail::ErrCtx &c : p.contexts) s += c.block + '\x1f' + c.what + '\x1e';
  for (const detail::ParamBuffer &pb : p.buffers) s += pb.buffer.name() + '\x1e';
  for (const detail::ScalarParam &sp : p.scalars) s += sp.var.name() + '\x1e';
  for (const auto &[slot, name] : p.shape_var_names) s += std::to_string(slot) + name + '\x1e';
  return s;
}

std::string take(llvm::Error e) { return llvm::toString(std::move(e)); }

/// The process's JIT: the host target machine, the O2 pipeline, the cache.
class Engine {
 public:
  static Engine &get() {
    static Engine engine;
    return engine;
  }

  /// Throws what compile would for a construct the JIT has no code for,
  /// without optimising or compiling anything (a few milliseconds).
  void check(const Program &p) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_.empty()) throw JitUnsupportedError("the LLVM JIT is not available: " + error_);
    }
    llvm::LLVMContext ctx;
    detail::generate_module(p, ctx, "tessera_check", {});
  }

  double compile_ms_total() {
    std::lock_guard<std::mutex> lock(mu_);
    return compile_ms_total_;
  }

  /// `serial`: one function whatever the threads (the fallback of a
  /// parallel run whose asynchronous copies crossed its iterations).
  std::shared_ptr<const Compiled> compile(const Program &p, const LlvmJitOptions &options, bool &from_cache,
                                          bool serial = false) {
    size_t h = ir::structural_hash(p.func);
    // On one thread the loops stay in one function: outlined, a loop loses
    // what LLVM knew of its range (a 256^3 matmul ran 1.9x slower alone).
    // The two codes differ; both are cached.
    const bool parallel = !serial && llvm_jit_threads() > 1;
    std::string names =
        error_names(p) + (parallel ? "\n(parallel)" : "") + (options.fuse_multiply_add ? "\n(fused multiply-add)" : "");
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_.empty()) throw JitUnsupportedError("the LLVM JIT is not available: " + error_);
    for (const auto &c : cache_[h])
      if (options.use_cache && c->names == names && ir::structural_equal(c->func, p.func)) {
        from_cache = true;
        return c;
      }
    from_cache = false;
    auto start = std::chrono::steady_clock::now();
    auto ctx = std::make_unique<llvm::LLVMContext>();
    ctx->setDiagnosticHandlerCallBack(report_errors_only);
    std::string name = "tessera_fn_" + std::to_string(counter_++);
    detail::GeneratedModule g =
        detail::generate_module(p, *ctx, name, {.parallel = parallel, .fuse_multiply_add = options.fuse_multiply_add});
    g.module->setDataLayout(tm_->createDataLayout());
    g.module->setTargetTriple(tm_->getTargetTriple().str());
    for (llvm::Function &f : *g.module) {
      if (f.isDeclaration()) continue;
      f.addFnAttr("target-cpu", tm_->getTargetCPU());
      f.addFnAttr("target-features", tm_->getTargetFeatureString());
      // The CPU's whole vector width (LLVM keeps 256 bits on some AVX-512
      // CPUs by default; the tiled matmul runs 1.6x faster with 512).
      f.addFnAttr("prefer-vector-width", vector_width_);
    }
    optimize(*g.module);
    if (const char *dir = std::getenv("TESSERA_DUMP_LLVM")) {
      // TESSERA_DUMP_LLVM=DIR: the optimised IR of every compiled function, DIR/<function>.<n>.ll.
      std::error_code ec;
      llvm::raw_fd_ostream os(std::string(dir) + "/" + p.func.name() + "." + name + ".ll", ec);
      if (!ec) g.module->print(os, nullptr);
      // And the run-time checks it could not prove away, one a line.
      llvm::raw_fd_ostream checks(std::string(dir) + "/" + p.func.name() + "." + name + ".checks", ec);
      static const char *const kinds[] = {"out of bounds", "division by zero", "shift",
                                          "iter var domain", "assume", "negative dimension"};
      if (!ec)
        for (const detail::JitSite &site : g.sites)
          checks << "block '" << site.block << "': " << kinds[int(site.kind)] << " '" << site.what << "'"
                 << (site.kind == detail::JitSite::Kind::OutOfBounds ? (site.store ? " (store)" : " (load)") : "") << "\n";
    }
    if (auto e = jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(g.module), std::move(ctx))))
      throw InternalError("LLVM JIT: adding the module failed: " + take(std::move(e)));
    auto sym = jit_->lookup(name);
    if (!sym) throw InternalError("LLVM JIT: " + take(sym.takeError()));
    auto c = std::make_shared<Compiled>();
    c->func = p.func;
    c->names = std::move(names);
    c->kernel = sym->toPtr<Kernel>();
    c->sites = std::move(g.sites);
    c->num_allocs = g.num_allocs;
    c->warp = std::move(g.warp);
    c->parallel_async = parallel && detail::has_async_queue(p.func);
    c->compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    compile_ms_total_ += c->compile_ms;
    if (options.use_cache) cache_[h].push_back(c);
    return c;
  }

 private:
  Engine() {
    // Unroll-and-jam (off in LLVM's O2 by default) interleaves the iterations of
    // a spatial loop around a serial reduction, C[i, j] += A[i, k] * B[k, j]:
    // several independent accumulation chains instead of one, each summed in
    // the program's order (the same bits), 3.5x faster on the 256^3 matmul.
    // TESSERA_LLVM_ARGS="-opt1 -opt2" adds LLVM options (for experiments).
    // -force-ordered-reductions: a loop summing in the program's order
    // (softmax's sum of exps) still vectorizes what it sums, the adds kept
    // in order (x86 does not enable it by default).
    std::vector<std::string> words{"tessera", "-enable-unroll-and-jam", "-allow-unroll-and-jam",
                                   "-force-ordered-reductions"};
    if (const char *args = std::getenv("TESSERA_LLVM_ARGS")) {
      std::istringstream in(args);
      for (std::string w; in >> w;) words.push_back(w);
    }
    std::vector<const char *> argv;
    for (const std::string &w : words) argv.push_back(w.c_str());
    llvm::cl::ParseCommandLineOptions(int(argv.size()), argv.data());
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) {
      error_ = take(jtmb.takeError());
      return;
    }
    jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
    auto tm = jtmb->createTargetMachine();
    if (!tm) {
      error_ = take(tm.takeError());
      return;
    }
    tm_ = std::move(*tm);
    const std::string features = tm_->getTargetFeatureString().str();
    vector_width_ = features.find("+avx512f") != std::string::npos ? "512"
                    : features.find("+avx") != std::string::npos   ? "256"
                                                                   : "128";
    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
    if (!jit) {
      error_ = take(jit.takeError());
      return;
    }
    jit_ = std::move(*jit);
    // The helpers by address; the C library (memset, memcpy that LLVM may emit) from the process.
    llvm::orc::JITDylib &lib = jit_->getMainJITDylib();
    llvm::orc::SymbolMap symbols;
    for (const detail::JitSymbol &s : detail::jit_runtime_symbols())
      symbols[jit_->mangleAndIntern(s.name)] = {llvm::orc::ExecutorAddr::fromPtr(s.address),
                                                llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    if (auto e = lib.define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
      error_ = take(std::move(e));
      return;
    }
    auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit_->getDataLayout().getGlobalPrefix());
    if (!gen) {
      error_ = take(gen.takeError());
      return;
    }
    lib.addGenerator(std::move(*gen));
  }

  void optimize(llvm::Module &m) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm_.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
    mpm.run(m, mam);
  }

  std::mutex mu_;
  std::string error_;
  std::unique_ptr<llvm::TargetMachine> tm_;
  /// "prefer-vector-width" of every function: the CPU's widest vectors.
  std::string vector_width_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  uint64_t counter_ = 0;
  double compile_ms_total_ = 0;
  std::unordered_map<size_t, std::vector<std::shared_ptr<const Compiled>>> cache_;
};

/// True when two parameter arrays share memory (the code assumes they do not).
bool arrays_overlap(const Program &p, const Frame &f) {
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  for (const detail::ParamBuffer &pb : p.buffers) {
    const BufState &b = f.bufs[pb.slot];
    if (b.storage <= 0) continue;
    auto lo = reinterpret_cast<uintptr_t>(b.data);
    ranges.emplace_back(lo, lo + uintptr_t(b.storage) * uintptr_t(pb.buffer.dtype().bytes()));
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second) return true;
  return false;
}

}  // namespace

bool llvm_jit_available() { return true; }
double llvm_jit_compile_ms_total() { return Engine::get().compile_ms_total(); }

struct LlvmJit::Impl {
  std::unique_ptr<Program> prog;
  /// The code of `prog`; null while it is compiled per shape (variants).
  std::shared_ptr<const Compiled> code;
  bool from_cache = false;
  LlvmJitOptions options;
  /// specialize_shapes: one compiled function per set of shape values.
  mutable std::mutex mu;
  mutable std::map<std::vector<int64_t>, std::shared_ptr<const LlvmJit>> variants;
  mutable double variants_ms = 0;
  /// The memory of earlier runs' allocations (the intermediates), kept so
  /// that a run does not fault in and zero fresh pages: each run poisons
  /// what it allocates all the same. One set per run in progress, at most
  /// kKeptRuns kept.
  using Allocations = std::vector<std::vector<uint8_t>>;
  static constexpr size_t kKeptRuns = 2;
  mutable std::mutex pool_mu;
  mutable std::vector<Allocations> pool;

  /// The code for the shape values `frame` bound (compiled on first use).
  const LlvmJit &variant(const Frame &frame) const;
  Allocations take_allocations(size_t count) const {
    Allocations a;
    {
      std::lock_guard<std::mutex> lock(pool_mu);
      if (!pool.empty()) a = std::move(pool.back()), pool.pop_back();
    }
    a.resize(count);
    return a;
  }
  void keep_allocations(Allocations &&a) const {
    std::lock_guard<std::mutex> lock(pool_mu);
    if (pool.size() < kKeptRuns) pool.push_back(std::move(a));
  }
};

const LlvmJit &LlvmJit::Impl::variant(const Frame &frame) const {
  std::vector<int64_t> key;
  std::map<std::string, int64_t> values;
  for (const auto &[var, slot] : prog->shape_var_slots) {
    key.push_back(frame.iv[slot]);
    values[var.name()] = frame.iv[slot];
  }
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<const LlvmJit> &v = variants[key];
  if (!v) {
    LlvmJitOptions plain = options;
    plain.specialize_shapes = false;
    ir::PrimFunc f = prog->func;
    // Two shape variables of one name (specialize names them), or a value
    // specialize refuses: the general code (its checks report what the
    // interpreter would).
    if (values.size() == prog->shape_var_slots.size()) {
      try {
        f = analysis::specialize(f, values);
      } catch (const UserError &) {
        f = prog->func;
      }
    }
    v = std::make_shared<const LlvmJit>(f, plain);
    variants_ms += v->compile_ms();
  }
  return *v;
}

LlvmJit::LlvmJit(const ir::PrimFunc &f, const LlvmJitOptions &options) : impl_(std::make_unique<Impl>()) {
  TESSERA_ICHECK(f.defined()) << "LlvmJit of an undefined function";
  // What the interpreter cannot run, the JIT cannot either: the same errors.
  if (auto what = ir::find_opaque(f))
    throw InterpretError("cannot interpret function '" + f.name() + "': it calls " + *what +
                         ", which tessera has no semantics for (an opaque call)");
  impl_->prog = detail::compile_program(f);
  impl_->options = options;
  if (options.specialize_shapes && !impl_->prog->shape_var_slots.empty())
    Engine::get().check(*impl_->prog);
  else
    impl_->code = Engine::get().compile(*impl_->prog, options, impl_->from_cache);
}
LlvmJit::~LlvmJit() = default;
LlvmJit::LlvmJit(LlvmJit &&) noexcept = default;
LlvmJit &LlvmJit::operator=(LlvmJit &&) noexcept = default;

double LlvmJit::compile_ms() const {
  if (!impl_->code) {
    std::lock_guard<std::mutex> lock(impl_->mu);
    return impl_->variants_ms;
  }
  return impl_->from_cache ? 0.0 : impl_->code->compile_ms;
}
bool LlvmJit::from_cache() const { return impl_->from_cache; }

void LlvmJit::run(std::vector<NDArray *> args) const {
  const Program &p = *impl_->prog;
  detail::RunFrame run(p, args);
  Frame &f = run.frame;
  if (!impl_->code) return impl_->variant(f).run(std::move(args));
  if (arrays_overlap(p, f)) {
    // The generated code assumes distinct arrays; the interpreter does not.
    p.body->exec(f);
    return;
  }
  auto execute = [&](const Compiled &code) {
    detail::JitRunState st;
    st.sites = &code.sites;
    st.allocs = impl_->take_allocations(size_t(code.num_allocs));
    const bool failed = code.kernel(f.iv, f.fv, f.bufs, &st) != 0;
    detail::order_streaming_stores();
    impl_->keep_allocations(std::move(st.allocs));
    if (failed && st.error == detail::kAsyncCrossedIterations) return false;
    if (failed) throw InterpretError(st.error);
    detail::check_async_drained(st.async, p.func.name());
    return true;
  };
  if (!impl_->code->parallel_async) {
    execute(*impl_->code);
    return;
  }
  // Copies that one iteration of a parallel loop issues and a later one waits
  // for: the serial order matters. The arrays the function writes are kept,
  // and restored for a serial run, should a run show such copies.
  std::vector<std::vector<uint8_t>> saved;
  const std::vector<bool> written = ir::written_params(p.func);
  for (size_t i = 0; i < args.size(); ++i)
    saved.emplace_back(written[i] ? std::vector<uint8_t>(args[i]->data(), args[i]->data() + args[i]->nbytes())
                                  : std::vector<uint8_t>());
  if (execute(*impl_->code)) return;
  for (size_t i = 0; i < args.size(); ++i)
    if (written[i]) std::memcpy(args[i]->data(), saved[i].data(), saved[i].size());
  bool from_cache = false;
  execute(*Engine::get().compile(p, impl_->options, from_cache, /*serial=*/true));
}

}  // namespace tessera::runtime
