//===- JitRuntime.cpp - Helpers called by JIT-compiled code ----------------===//
//
// Each helper computes exactly what the interpreter computes for the same
// operation (CompileCall.cpp): the same std:: functions on the same types.
//
//===----------------------------------------------------------------------===//
#include "JitRuntime.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <sstream>
#include <thread>

#include "../Exp.h"
#include "../Closures.h"  // the interpreter's messages and poison
#include "../MmaLane.h"
#include "tessera/ir/Functor.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/support/Half.h"  // round_to_tf32

using tessera::runtime::detail::JitRunState;
using tessera::runtime::detail::JitSite;

extern "C" {

void tessera_jit_fail(JitRunState *st, int32_t site, const int64_t *v) {
  const JitSite &s = (*st->sites)[size_t(site)];
  std::ostringstream os;
  using K = JitSite::Kind;
  switch (s.kind) {
    case K::OutOfBounds:
      os << tessera::runtime::detail::out_of_bounds_message(s.what, s.block, s.store, v, v + s.ndim, s.ndim);
      break;
    case K::DivZero: os << "integer division by zero in block '" << s.block << "': " << s.what << "(" << v[0] << ", 0)"; break;
    case K::BadShift:
      os << "shift amount " << v[0] << " out of range [0, " << s.type.bits() << ") for " << s.type.str() << " "
         << s.what << " in block '" << s.block << "'";
      break;
    case K::Domain:
      os << "iter var '" << s.what << "' = " << v[0] << " is outside its domain [" << v[1] << ", " << v[1] + v[2]
         << ") in block '" << s.block << "'";
      break;
    case K::Assume: os << tessera::runtime::detail::assume_failed_message(s.block); break;
    case K::NegativeDim:
      os << "alloc_buffer '" << s.what << "' has negative dimension " << v[0] << " = " << v[1] << " in block '"
         << s.block << "'";
      break;
  }
  st->error = os.str();
}

int32_t tessera_jit_warp(const tessera::runtime::detail::WarpStatement *w, int64_t *iv,
                         tessera::runtime::detail::BufState *bufs, JitRunState *st) {
  double unused = 0;
  tessera::runtime::detail::Frame f{iv, &unused, bufs, &st->allocs, &st->async};
  try {
    w->node->exec(f);
  } catch (const tessera::runtime::InterpretError &e) {
    st->error = e.what();
    return 1;
  }
  return 0;
}

void tessera_jit_mma(const tessera::runtime::detail::WarpStatement *w, int64_t lane, uint8_t *d, int64_t d_off,
                     const uint8_t *a, const int64_t *a_off, const uint8_t *b, const int64_t *b_off) {
  tessera::runtime::detail::mma_lane(w->mma, int(lane), d, d_off, a, a_off, b, b_off);
}

uint8_t *tessera_jit_alloc(JitRunState *st, int32_t id, int64_t bytes, int32_t poison) {
  std::vector<uint8_t> &mem = st->allocs[size_t(id)];
  mem.resize(size_t(bytes));
  using P = tessera::runtime::detail::PoisonKind;
  using tessera::ir::DataType;
  switch (P(poison)) {
    case P::Int: tessera::runtime::detail::poison(mem, DataType::int32()); break;
    case P::F16: tessera::runtime::detail::poison(mem, DataType::float16()); break;
    case P::BF16: tessera::runtime::detail::poison(mem, DataType::bfloat16()); break;
    case P::F32: tessera::runtime::detail::poison(mem, DataType::float32()); break;
    case P::F64: tessera::runtime::detail::poison(mem, DataType::float64()); break;
  }
  // A zero-byte allocation still needs a distinct, valid address.
  return mem.empty() ? reinterpret_cast<uint8_t *>(st) : mem.data();
}

int32_t tessera_jit_parallel_for(int32_t (*body)(void *, int64_t, int64_t, JitRunState *), void *ctx, int64_t n,
                                 JitRunState *st) {
  if (n <= 0) return 0;
  const int64_t workers = std::min<int64_t>(tessera::runtime::llvm_jit_threads(), n);
  // Copies in flight when the loop starts belong to the serial order: all on this thread.
  auto in_flight = [](const JitRunState &s) { return s.async.pending() > 0; };
  if (workers <= 1 || in_flight(*st)) return body(ctx, 0, n, st);
  // Chunks of about an eighth of a worker's share, taken in order; after an
  // error only chunks before it still run, so the error kept is the first
  // iteration's that fails (each chunk runs its iterations in order).
  const int64_t chunk = std::max<int64_t>(1, n / (workers * 8));
  std::atomic<int64_t> next{0}, failed_at{std::numeric_limits<int64_t>::max()};
  std::mutex mu;
  std::string error;
  std::vector<JitRunState> states(size_t(workers - 1));
  for (JitRunState &s : states) {
    s.sites = st->sites;
    s.allocs.resize(st->allocs.size());
  }
  auto work = [&](JitRunState *state) {
    for (;;) {
      const int64_t begin = next.fetch_add(chunk);
      if (begin >= n || begin > failed_at.load()) return;
      int32_t rc = body(ctx, begin, std::min(n, begin + chunk), state);
      if (rc == 0 && in_flight(*state)) {
        // A chunk left copies for a later iteration, which another thread may run.
        state->error = tessera::runtime::detail::kAsyncCrossedIterations;
        rc = 1;
      }
      if (rc != 0) {
        std::lock_guard<std::mutex> lock(mu);
        if (begin < failed_at.load()) {
          failed_at.store(begin);
          error = state->error;
        }
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  for (JitRunState &s : states)
    threads.emplace_back([&work](JitRunState *s) {
      work(s);
      tessera::runtime::detail::order_streaming_stores();
    }, &s);
  work(st);
  for (std::thread &t : threads) t.join();
  if (failed_at.load() == std::numeric_limits<int64_t>::max()) return 0;
  st->error = error;
  return 1;
}

}  // extern "C"

// ---- libm, as the interpreter calls it (CompileCall.cpp) ----------------------
namespace {

#define TESSERA_UNARY_MATH(Name, name, expr)                              \
  float tessera_jit_##name##_f32(float x) { return expr; }               \
  double tessera_jit_##name##_f64(double x) { return expr; }
#include "../UnaryMath.def"
float tessera_jit_pow_f32(float x, float y) { return std::pow(x, y); }
double tessera_jit_pow_f64(double x, double y) { return std::pow(x, y); }
float tessera_jit_atan2_f32(float y, float x) { return std::atan2(y, x); }
double tessera_jit_atan2_f64(double y, double x) { return std::atan2(y, x); }
float tessera_jit_hypot_f32(float x, float y) { return std::hypot(x, y); }
double tessera_jit_hypot_f64(double x, double y) { return std::hypot(x, y); }
float tessera_jit_fmod_f32(float x, float y) { return std::fmod(x, y); }
double tessera_jit_fmod_f64(double x, double y) { return std::fmod(x, y); }

}  // namespace

namespace tessera::runtime {

namespace {
/// 0: not set yet (TESSERA_JIT_THREADS, else every core).
std::atomic<unsigned> g_jit_threads{0};
}  // namespace

unsigned llvm_jit_threads() {
  unsigned n = g_jit_threads.load(std::memory_order_relaxed);
  if (n) return n;
  const char *env = std::getenv("TESSERA_JIT_THREADS");
  long v = env ? std::strtol(env, nullptr, 10) : 0;
  n = v > 0 ? unsigned(std::min<long>(v, 1024)) : std::max(1u, std::thread::hardware_concurrency());
  g_jit_threads.store(n, std::memory_order_relaxed);
  return n;
}

void set_llvm_jit_threads(unsigned n) { g_jit_threads.store(n, std::memory_order_relaxed); }

}  // namespace tessera::runtime

namespace tessera::runtime::detail {

const std::vector<JitSymbol> &jit_runtime_symbols() {
  static const std::vector<JitSymbol> symbols = [] {
    std::vector<JitSymbol> s;
#define TESSERA_SYM(fn) s.push_back({#fn, reinterpret_cast<void *>(&fn)});
#define TESSERA_SYM_MATH(Name) TESSERA_SYM(tessera_jit_##Name##_f32) TESSERA_SYM(tessera_jit_##Name##_f64)
    TESSERA_SYM(tessera_jit_fail)
    TESSERA_SYM(tessera_jit_alloc)
    TESSERA_SYM(tessera_jit_warp)
    TESSERA_SYM(tessera_jit_mma)
    TESSERA_SYM(tessera_jit_parallel_for)
#define TESSERA_UNARY_MATH(Name, name, expr) TESSERA_SYM_MATH(name)
#include "../UnaryMath.def"
    TESSERA_SYM_MATH(pow) TESSERA_SYM_MATH(fmod) TESSERA_SYM_MATH(atan2) TESSERA_SYM_MATH(hypot)
#undef TESSERA_SYM_MATH
#undef TESSERA_SYM
    return s;
  }();
  return symbols;
}

bool has_async_queue(const ir::PrimFunc &f) {
  bool found = false;
  ir::pre_order_visit(f.body(), [&](const ir::Expr &e) {
    if (const auto *c = e.as<ir::Call>()) found = found || c->op == ir::Intrinsic::CpAsync || c->op == ir::Intrinsic::Wgmma ||
                                               c->op == ir::Intrinsic::TmaLoad || c->op == ir::Intrinsic::TmaStore;
  }, nullptr);
  return found;
}

}  // namespace tessera::runtime::detail
