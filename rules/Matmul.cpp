//===- rules/Matmul.cpp - Shared-memory tiled GEMM on CUDA cores -----------===//
#include "tessera/rules/Matmul.h"

#include "ConfigJson.h"
#include "GemmSchedule.h"

#include "tessera/analysis/BlockInfo.h"
#include "tessera/analysis/MatmulView.h"

namespace tessera::rules {

using analysis::BlockInfo;
using analysis::FuncInfo;
using analysis::MatmulRole;

//===----------------------------------------------------------------------===//
// Config
//===----------------------------------------------------------------------===//

Json MatmulConfig::to_json() const {
  return Json{
      {"rule", rule()},       {"block_m", block_m},   {"block_n", block_n},   {"block_k", block_k},
      {"thread_m", thread_m}, {"thread_n", thread_n}, {"vector_a", vector_a}, {"vector_b", vector_b},
      {"vector_c", vector_c}, {"pad_a", pad_a},       {"pad_b", pad_b},       {"unroll", unroll},
      {"stages", stages},     {"a_bytes", a_bytes},   {"b_bytes", b_bytes},   {"acc_bytes", acc_bytes}};
}

MatmulConfig MatmulConfig::from_json(const Json &j) {
  ConfigReader r(j, "matmul");
  MatmulConfig c;
  c.block_m = r.integer("block_m");
  c.block_n = r.integer("block_n");
  c.block_k = r.integer("block_k");
  c.thread_m = r.integer("thread_m");
  c.thread_n = r.integer("thread_n");
  c.vector_a = r.integer("vector_a");
  c.vector_b = r.integer("vector_b");
  c.vector_c = r.integer("vector_c");
  c.pad_a = r.integer("pad_a");
  c.pad_b = r.integer("pad_b");
  c.unroll = r.boolean("unroll");
  c.stages = r.integer("stages");
  c.a_bytes = r.integer("a_bytes");
  c.b_bytes = r.integer("b_bytes");
  c.acc_bytes = r.integer("acc_bytes");
  r.finish();
  return c;
}

namespace {

bool is_pow2(int64_t v) {
  return v >= 1 && (v & (v - 1)) == 0;
}
int64_t words(int64_t bytes) {
  return (bytes + 3) / 4;
}

}  // namespace

int64_t MatmulConfig::shared_bytes() const {
  return stages * ((block_m * block_k + pad_a * std::max(block_m, block_k)) * a_bytes +
                   (block_n * block_k + pad_b * std::max(block_n, block_k)) * b_bytes);
}

int64_t MatmulConfig::registers() const {
  int64_t r = thread_m * thread_n * words(acc_bytes) + words(thread_m * a_bytes) + words(thread_n * b_bytes) +
              words(vector_a * a_bytes) + words(vector_b * b_bytes) + 40;
  if (stages > 1) {
    // A pipeline's fetch of moves under 4 bytes (no cp.async for them) goes
    // through registers, which ptxas keeps across the step it overlaps:
    // one per move.
    auto held = [&](int64_t rows, int64_t vector, int64_t bytes) -> int64_t {
      if (vector * bytes >= 4) return 0;
      return (rows * block_k + threads() * vector - 1) / (threads() * vector);
    };
    r += held(block_m, vector_a, a_bytes) + held(block_n, vector_b, b_bytes);
  }
  return r;
}

void MatmulConfig::check_common(const char *rule, const Arch &arch) const {
  for (auto [name, v] : {std::pair{"block_m", block_m},
                         {"block_n", block_n},
                         {"block_k", block_k},
                         {"thread_m", thread_m},
                         {"thread_n", thread_n}})
    require(v >= 1, rule, name, v, "must be at least 1");
  require(block_m % thread_m == 0, rule, "block_m", block_m,
          "is not a multiple of thread_m = " + std::to_string(thread_m));
  require(block_n % thread_n == 0, rule, "block_n", block_n,
          "is not a multiple of thread_n = " + std::to_string(thread_n));
  for (auto [name, v] : {std::pair{"a_bytes", a_bytes}, {"b_bytes", b_bytes}, {"acc_bytes", acc_bytes}})
    require(v == 1 || v == 2 || v == 4 || v == 8, rule, name, v, "is not an element size (1, 2, 4 or 8)");
  require(threads() <= arch.limits.max_threads_per_block, rule, "threads", threads(),
          "(row threads x column threads) exceeds the " + std::to_string(arch.limits.max_threads_per_block) +
              " threads per block of " + arch.name);
  const int64_t max_vec = arch.memory.max_vector_bytes;
  for (auto [name, v, bytes] : {std::tuple{"vector_a", vector_a, a_bytes}, {"vector_b", vector_b, b_bytes}}) {
    require(is_pow2(v), rule, name, v, "is not a power of two");
    require(v * bytes <= max_vec, rule, name, v,
            "moves " + std::to_string(v * bytes) + " bytes; " + arch.name + " moves at most " +
                std::to_string(max_vec) + " per access");
  }
  require(is_pow2(vector_c) && thread_n % vector_c == 0, rule, "vector_c", vector_c,
          "is not a power of two dividing thread_n = " + std::to_string(thread_n));
  require(pad_a >= 0 && pad_a % vector_a == 0, rule, "pad_a", pad_a,
          "is not a non-negative multiple of vector_a (the padded rows must keep vector stores aligned)");
  require(pad_b >= 0 && pad_b % vector_b == 0, rule, "pad_b", pad_b,
          "is not a non-negative multiple of vector_b (the padded rows must keep vector stores aligned)");
  require(stages >= 1 && stages <= kMaxStages, rule, "stages", stages,
          "is not between 1 and " + std::to_string(kMaxStages));
  require(stages == 1 || arch.memory.cp_async, rule, "stages", stages,
          "needs cp.async, which " + arch.name + " lacks (use 1)");
  require(registers() <= arch.limits.max_regs_per_thread, rule, "registers", registers(),
          "(estimated per thread from thread_m x thread_n) exceeds the " +
              std::to_string(arch.limits.max_regs_per_thread) + " registers per thread of " + arch.name);
  require(registers() * threads() <= arch.limits.regs_per_block, rule, "registers", registers() * threads(),
          "(estimated per block) exceeds the " + std::to_string(arch.limits.regs_per_block) +
              " registers per block of " + arch.name);
}

void MatmulConfig::validate(const Arch &arch) const {
  check_common(rule(), arch);
  require(shared_bytes() <= arch.max_smem_per_block(), rule(), "shared memory", shared_bytes(),
          "bytes (the A and B tiles of block_m, block_n, block_k with padding) exceed the " +
              std::to_string(arch.max_smem_per_block()) + " bytes one block of " + arch.name + " may use");
}

//===----------------------------------------------------------------------===//
// Match
//===----------------------------------------------------------------------===//

namespace {

using detail::extent_of;

struct MatmulMatch final : Match {
  std::string block;
  std::vector<int> batch;
  int m = -1, n = -1, k = -1;  ///< iters
  std::string a_buffer, b_buffer;
  MatmulRole a_inner = MatmulRole::K, b_inner = MatmulRole::N;
  bool out_inner_is_n = true;  ///< the stored output's contiguous dimension is N
  std::string layout;
  int64_t a_bytes = 4, b_bytes = 4, acc_bytes = 4, out_bytes = 4;
  int64_t batch_extent = 1, m_extent = -1, n_extent = -1, k_extent = -1;  ///< -1: symbolic
  int64_t a_contig = -1, b_contig = -1, out_contig = -1;  ///< innermost extents of A, B, the output
  std::vector<std::string> prologue, epilogue;
  std::string dtypes;

  std::string describe() const override {
    auto e = [](int64_t v) { return v < 0 ? std::string("symbolic") : std::to_string(v); };
    std::string s = "block '" + block + "': " + layout + " matmul, M=" + e(m_extent) + " N=" + e(n_extent) +
                    " K=" + e(k_extent);
    if (!batch.empty()) s += ", batch " + e(batch_extent);
    s += ", " + dtypes;
    if (!prologue.empty()) s += ", " + std::to_string(prologue.size()) + " prologue block(s)";
    if (!epilogue.empty()) s += ", epilogue";
    for (const std::string &b : epilogue) s += " '" + b + "'";
    return s;
  }
};

/// The vectors and pads of the tiling in `c` (see fit_matmul_layout).
void fit_layout(const MatmulMatch &m, const Arch &arch, MatmulConfig &c) {
  const int64_t warp = arch.compute.warp_size, max_vec = arch.memory.max_vector_bytes;
  // Vector fetches where the rows and tiles stay aligned.
  const int64_t a_tile_contig = m.a_inner == MatmulRole::K ? c.block_k : c.block_m;
  const int64_t b_tile_contig = m.b_inner == MatmulRole::K ? c.block_k : c.block_n;
  // The config's widths cap them (a policy narrows one to free its pad).
  auto cap = [](int64_t lanes, int64_t wanted) { return wanted >= 1 ? std::min(lanes, wanted) : lanes; };
  c.vector_a = detail::widest_vector(cap(max_vec / m.a_bytes, c.vector_a), {m.a_contig, a_tile_contig});
  c.vector_b = m.b_inner == MatmulRole::K
                   ? 1
                   : detail::widest_vector(cap(max_vec / m.b_bytes, c.vector_b), {m.b_contig, b_tile_contig});
  // 16-bit accumulators stored straight from their registers: at most 8
  // bytes a store (ptxas 13.0 spills 20 bytes of an 8 x 8 float16 tile read
  // as 16-byte vectors on sm_90; 8-byte stores keep it in 76 registers).
  const int64_t max_vec_c = m.acc_bytes == 2 && m.out_bytes == 2 ? std::min<int64_t>(max_vec, 8) : max_vec;
  c.vector_c = m.out_inner_is_n
                   ? detail::widest_vector(cap(std::min(c.thread_n, max_vec_c / m.out_bytes), c.vector_c),
                                           {m.out_contig, c.thread_n})
                   : 1;
  // Padding: the fewest bank conflicts for a warp's compute reads, then its
  // fetch stores (lanes: threadIdx.x fastest).
  const int64_t banks = arch.memory.smem_banks, bank_bytes = arch.memory.smem_bank_bytes;
  const int64_t tx_n = c.block_n / c.thread_n, ty_n = c.block_m / c.thread_m;
  const int64_t lanes = std::min(warp, c.threads());
  auto degree = [&](auto &&addr, int64_t access) {
    std::vector<int64_t> a;
    for (int64_t l = 0; l < lanes; ++l) a.push_back(addr(l));
    return detail::bank_conflict_degree(a, access, banks, bank_bytes);
  };
  // Lane l of the fetch stores `vec` elements at position l * vec of the
  // copy's iteration (rows of `inner` elements), at row pitch `row_pitch`
  // (transposed: the copy's rows are the tile's columns).
  auto stores = [&](int64_t row_pitch, int64_t vec, int64_t bytes, bool transposed, int64_t inner) {
    return degree(
        [&](int64_t l) {
          int64_t f = l * vec, row = f / inner, col = f % inner;
          return (transposed ? col * row_pitch + row : row * row_pitch + col) * bytes;
        },
        vec * bytes);
  };
  {
    const int64_t ab = m.a_bytes, window = banks * bank_bytes / ab;
    if (m.a_inner == MatmulRole::K) {
      const int64_t pitch = detail::tile_pitch(c.block_k, m.k_extent);
      c.pad_a = detail::choose_pad(c.vector_a, window, [&](int64_t pad) {
        int64_t s = pitch + pad;
        int64_t rd =
            degree([&](int64_t l) { return std::min(l / tx_n, ty_n - 1) * c.thread_m * s * ab; }, ab);
        return std::pair{rd, stores(s, c.vector_a, ab, false, pitch)};
      });
    } else {
      const int64_t pitch = detail::tile_pitch(c.block_m, m.m_extent);
      const int64_t frag = std::min(c.thread_m, max_vec / ab);
      c.pad_a = detail::choose_pad(std::max(c.vector_a, frag), window, [&](int64_t pad) {
        int64_t s = pitch + pad;
        int64_t rd =
            degree([&](int64_t l) { return std::min(l / tx_n, ty_n - 1) * c.thread_m * ab; }, frag * ab);
        return std::pair{rd, stores(s, c.vector_a, ab, false, pitch)};
      });
    }
  }
  {
    const int64_t bb = m.b_bytes, window = banks * bank_bytes / bb;
    const int64_t pitch = detail::tile_pitch(c.block_n, m.n_extent);
    const int64_t frag = std::min(c.thread_n, max_vec / bb);
    const bool transposed = m.b_inner == MatmulRole::K;
    const int64_t inner = transposed ? detail::tile_pitch(c.block_k, m.k_extent) : pitch;
    c.pad_b = detail::choose_pad(std::max(c.vector_b, frag), window, [&](int64_t pad) {
      int64_t s = pitch + pad;
      int64_t rd = degree([&](int64_t l) { return (l % tx_n) * c.thread_n * bb; }, frag * bb);
      return std::pair{rd, stores(s, c.vector_b, bb, transposed, inner)};
    });
  }
}

class MatmulRule final : public Rule {
 public:
  const char *name() const override { return "matmul"; }

  analysis::MatchResult<MatchPtr> match(const ir::PrimFunc &f, const Arch &) const override {
    using R = analysis::MatchResult<MatchPtr>;
    FuncInfo info = analysis::analyze(f);
    if (info.is_scheduled) return R::fail("the function is already scheduled");
    if (info.has_opaque_structure) return R::fail("it has statements outside blocks");
    std::vector<int> reds = info.reduction_blocks();
    if (reds.empty()) return R::fail("it has no reduction block");
    if (reds.size() > 1)
      return R::fail("it has " + std::to_string(reds.size()) + " reduction blocks; a matmul has one");
    const int r = reds[0];
    auto v = analysis::match_matmul(info, r);
    if (!v) return R::fail(v.reason());
    const BlockInfo &blk = info.blocks[r];
    const std::string q = "block '" + blk.name + "'";
    if (!blk.trivial_binding) return R::fail(q + " is not bound one-to-one to loops from 0");
    if (blk.is_guarded) return R::fail(q + " is under a condition");
    for (auto [role, iters] : {std::pair{"M", &v->m}, {"N", &v->n}, {"K", &v->k}})
      if (iters->size() != 1)
        return R::fail(q + " has " + std::to_string(iters->size()) + " " + role +
                       " iters; the matmul rule tiles one iter per role");
    if (v->a_dtype.bits() < 8 || v->b_dtype.bits() < 8)
      return R::fail(q + " multiplies sub-byte operands (" + v->a_dtype.str() + ", " + v->b_dtype.str() +
                     "); the SIMT matmul stages whole elements");
    auto m = std::make_shared<MatmulMatch>();
    if (std::string why = detail::find_prologue_epilogue(info, r, m->prologue, m->epilogue); !why.empty())
      return R::fail(why);
    m->block = blk.name;
    m->batch = v->batch;
    m->m = v->m[0], m->n = v->n[0], m->k = v->k[0];
    m->a_buffer = v->a.buffer.name();
    m->b_buffer = v->b.buffer.name();
    m->a_inner = v->a.inner();
    m->b_inner = v->b.inner();
    m->layout = v->layout();
    m->a_bytes = v->a_dtype.bytes();
    m->b_bytes = v->b_dtype.bytes();
    m->acc_bytes = v->acc_dtype.bytes();
    for (int it : v->batch) {
      int64_t e = extent_of(blk.iters[it].dom.extent);
      m->batch_extent = (e < 0 || m->batch_extent < 0) ? -1 : m->batch_extent * e;
    }
    m->m_extent = extent_of(blk.iters[m->m].dom.extent);
    m->n_extent = extent_of(blk.iters[m->n].dom.extent);
    m->k_extent = extent_of(blk.iters[m->k].dom.extent);
    m->a_contig = extent_of(v->a.buffer.shape().back());
    m->b_contig = extent_of(v->b.buffer.shape().back());
    // The stored output: the reduction's, or the last epilogue block's (an
    // elementwise chain keeps C's layout).
    const BlockInfo &last = m->epilogue.empty() ? blk : info.blocks[info.find(m->epilogue.back())];
    const analysis::Access &out = last.writes[0];
    m->out_bytes = out.buffer.dtype().bytes();
    m->out_contig = extent_of(out.buffer.shape().back());
    m->out_inner_is_n = v->c.inner() == MatmulRole::N;
    m->dtypes = v->a_dtype.str() + " x " + v->b_dtype.str() + " -> " + v->acc_dtype.str();
    return R(MatchPtr(m));
  }

  std::unique_ptr<Config> default_config(const Match &mm, const Arch &arch) const override;

  std::unique_ptr<Config> config_from_json(const Json &j) const override {
    return std::make_unique<MatmulConfig>(MatmulConfig::from_json(j));
  }

  schedule::Schedule build_schedule(const ir::PrimFunc &f, const Match &mm, const Config &config) const override;
};

//===----------------------------------------------------------------------===//
// Default config
//===----------------------------------------------------------------------===//

std::unique_ptr<Config> MatmulRule::default_config(const Match &mm, const Arch &arch) const {
  const auto &m = static_cast<const MatmulMatch &>(mm);
  auto c = std::make_unique<MatmulConfig>();
  c->a_bytes = m.a_bytes, c->b_bytes = m.b_bytes, c->acc_bytes = m.acc_bytes;
  const int64_t warp = arch.compute.warp_size, max_vec = arch.memory.max_vector_bytes;
  const int64_t eb = std::max(m.a_bytes, m.b_bytes);
  // A warp along N, 4 columns per thread (its B slice is one vector load),
  // 8 rows per thread and 8 rows of threads: 64 x 128 outputs, 256 threads.
  c->thread_n = std::clamp<int64_t>(max_vec / std::max<int64_t>(eb, 1), 1, 4);
  c->thread_m = 8;
  c->block_n = warp * c->thread_n;
  c->block_m = 8 * c->thread_m;
  c->block_k = std::max<int64_t>(4, arch.memory.sector_bytes * 2 / eb);  // 64-byte rows of A per K step
  while (c->threads() > arch.limits.max_threads_per_block && c->block_m > c->thread_m) c->block_m /= 2;
  // Small problems: no tile much wider than the extent, and enough blocks to
  // occupy the SMs while a block keeps two warps.
  if (m.n_extent > 0)
    while (c->block_n / 2 >= c->thread_n && m.n_extent <= c->block_n / 2) c->block_n /= 2;
  if (m.m_extent > 0)
    while (c->block_m / 2 >= c->thread_m && m.m_extent <= c->block_m / 2) c->block_m /= 2;
  if (m.k_extent > 0)
    while (c->block_k / 2 >= 4 && m.k_extent <= c->block_k / 2) c->block_k /= 2;
  auto blocks = [&] {
    if (m.m_extent < 0 || m.n_extent < 0 || m.batch_extent < 0) return int64_t{1} << 40;
    return m.batch_extent * ((m.m_extent + c->block_m - 1) / c->block_m) *
           ((m.n_extent + c->block_n - 1) / c->block_n);
  };
  while (blocks() < arch.compute.sm_count && c->threads() / 2 >= 2 * warp) {
    if (c->block_m / c->thread_m >= 2 && c->block_m >= c->block_n / 2)
      c->block_m /= 2;
    else if (c->block_n / c->thread_n >= 2)
      c->block_n /= 2;
    else
      break;
  }
  fit_layout(m, arch, *c);
  return c;
}

//===----------------------------------------------------------------------===//
// Apply
//===----------------------------------------------------------------------===//

schedule::Schedule MatmulRule::build_schedule(const ir::PrimFunc &f, const Match &mm, const Config &config) const {
  const auto &m = static_cast<const MatmulMatch &>(mm);
  const auto *c = dynamic_cast<const MatmulConfig *>(&config);
  if (!c) throw ConfigError(std::string("the matmul rule got a config for '") + config.rule() + "'");
  auto fact = [&](const char *field, int64_t got, int64_t want) {
    require(got == want, "matmul", field, got,
            "does not describe this workload (" + std::to_string(want) + ")");
  };
  fact("a_bytes", c->a_bytes, m.a_bytes);
  fact("b_bytes", c->b_bytes, m.b_bytes);
  fact("acc_bytes", c->acc_bytes, m.acc_bytes);
  if (m.b_inner == MatmulRole::K)
    require(c->vector_b == 1, "matmul", "vector_b", c->vector_b,
            "cannot be used: B (" + m.layout + ") is transposed into shared memory element by element");
  if (!m.out_inner_is_n)
    require(c->vector_c == 1, "matmul", "vector_c", c->vector_c,
            "cannot be used: the output's contiguous dimension is not N");
  detail::GemmPlan p;
  p.block = m.block;
  p.batch = m.batch;
  p.m = {{m.m, c->block_m, c->block_m / c->thread_m}};
  p.n = {{m.n, c->block_n, c->block_n / c->thread_n}};
  p.k = {{m.k, c->block_k, 1}};
  p.prologue = m.prologue;
  p.epilogue = m.epilogue;
  p.a.buffer = m.a_buffer;
  p.a.vector = c->vector_a;
  p.a.pad = c->pad_a;
  p.a.fragment = m.a_inner == MatmulRole::M;
  p.a.pitch = m.a_inner == MatmulRole::K ? detail::tile_pitch(c->block_k, m.k_extent)
                                         : detail::tile_pitch(c->block_m, m.m_extent);
  p.b.buffer = m.b_buffer;
  p.b.vector = c->vector_b;
  p.b.pad = c->pad_b;
  p.b.k_major = m.b_inner == MatmulRole::K;
  p.b.fragment = true;
  p.b.pitch = detail::tile_pitch(c->block_n, m.n_extent);
  p.vector_c = c->vector_c;
  p.unroll = c->unroll;
  p.stages = c->stages;
  return detail::schedule_gemm(f, p);
}

}  // namespace

void fit_matmul_layout(const Match &m, const Arch &arch, MatmulConfig &c) {
  const auto *mm = dynamic_cast<const MatmulMatch *>(&m);
  if (!mm) throw ConfigError("fit_matmul_layout: the match is not the matmul rule's");
  fit_layout(*mm, arch, c);
}

const Rule &matmul_rule() {
  static const MatmulRule rule;
  return rule;
}

}  // namespace tessera::rules
