//===- rules/MatmulTensorCore.cpp - GEMM on tensor cores (mma.sync) ---------===//
#include "tessera/rules/MatmulTensorCore.h"
#include "tessera/rules/Conv2d.h"

#include <map>

#include "ConfigJson.h"

#include "tessera/analysis/BlockInfo.h"
#include "tessera/analysis/MatmulView.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"

namespace tessera::rules {

using analysis::Access;
using analysis::BlockInfo;
using analysis::FuncInfo;
using analysis::MatmulRole;
using namespace ir;

//===----------------------------------------------------------------------===//
// Config
//===----------------------------------------------------------------------===//

Json TensorCoreConfig::to_json() const {
  return Json{{"rule", rule()},     {"block_m", block_m}, {"block_n", block_n}, {"block_k", block_k},
              {"warps_m", warps_m}, {"warps_n", warps_n}, {"stages", stages},   {"pad", pad},
              {"swizzle", swizzle},  {"raster", raster},   {"in_bytes", in_bytes},
              {"a_elementwise", a_elementwise}, {"b_elementwise", b_elementwise}};
}

TensorCoreConfig TensorCoreConfig::from_json(const Json &j) {
  ConfigReader r(j, "matmul_tensor_core");
  TensorCoreConfig c;
  c.block_m = r.integer("block_m");
  c.block_n = r.integer("block_n");
  c.block_k = r.integer("block_k");
  c.warps_m = r.integer("warps_m");
  c.warps_n = r.integer("warps_n");
  c.stages = r.integer("stages");
  c.pad = r.integer("pad");
  c.swizzle = r.boolean("swizzle");
  c.raster = r.integer("raster");
  c.in_bytes = r.integer("in_bytes");
  c.a_elementwise = r.boolean("a_elementwise");
  c.b_elementwise = r.boolean("b_elementwise");
  r.finish();
  return c;
}

int64_t TensorCoreConfig::shared_bytes() const {
  auto tile = [&](int64_t rows) { return std::max(rows * (block_k + pad), block_k * (rows + pad)); };
  return stages * (tile(block_m) + tile(block_n)) * in_bytes;
}

int64_t TensorCoreConfig::registers() const {
  int64_t acc = warp_m() / 16 * (warp_n() / 8) * 4;
  int64_t frags = warp_m() / 16 * 4 + warp_n() / 8 * 2;
  int64_t copies = ((a_elementwise ? block_m : 0) + (b_elementwise ? block_n : 0)) * block_k / threads();
  return acc + frags + 48 + copies * 5 / 2;
}

void TensorCoreConfig::validate(const Arch &arch) const {
  const char *r = rule();
  for (auto [name, v] : {std::pair{"block_m", block_m}, {"block_n", block_n}, {"block_k", block_k},
                         {"warps_m", warps_m}, {"warps_n", warps_n}})
    require(v >= 1, r, name, v, "must be at least 1");
  require(block_m % (16 * warps_m) == 0, r, "block_m", block_m,
          "is not a multiple of 16 x warps_m = " + std::to_string(16 * warps_m) + " (m16 tiles per warp)");
  require(block_n % (16 * warps_n) == 0, r, "block_n", block_n,
          "is not a multiple of 16 x warps_n = " + std::to_string(16 * warps_n) +
              " (pairs of n8 tiles per warp, one ldmatrix.x4 each)");
  require(in_bytes == 1 || in_bytes == 2, r, "in_bytes", in_bytes,
          "must be 2 (float16 or bfloat16 operands) or 1 (int8)");
  const int64_t mma_k = in_bytes == 1 ? 32 : 16;
  require(block_k % mma_k == 0, r, "block_k", block_k,
          "is not a multiple of " + std::to_string(mma_k) + " (the mma K for " + std::to_string(in_bytes) +
              "-byte operands)");
  require(stages >= 2 && stages <= 6, r, "stages", stages, "must be 2 to 6 (cp.async tiles in flight)");
  require(pad == 0 || pad * in_bytes == 16, r, "pad", pad,
          "must be 0 or " + std::to_string(16 / in_bytes) + " elements (16 bytes keep rows aligned)");
  require(raster >= 0 && raster <= 64, r, "raster", raster,
          "must be 0 (row-major tiles) or a panel of 1 to 64 tile rows");
  if (swizzle) {
    require(pad == 0, r, "pad", pad, "must be 0 with swizzle (the XOR layout replaces the padding)");
    for (auto [name, v] : {std::pair{"block_k", block_k}, {"block_m", block_m}, {"block_n", block_n}})
      require(v * in_bytes % 64 == 0, r, name, v,
              "makes shared rows of " + std::to_string(v * in_bytes) +
                  " bytes; swizzle needs multiples of 64 (four 16-byte chunks or more)");
  }
  require_threads(r, "threads", threads(), arch);
  require(registers() <= arch.limits.max_regs_per_thread, r, "registers", registers(),
          "(estimated: accumulators and fragments of the warp tile) exceed the " +
              std::to_string(arch.limits.max_regs_per_thread) + " registers per thread of " + arch.name);
  require(shared_bytes() <= arch.max_smem_per_block(), r, "shared memory", shared_bytes(),
          "bytes (stages x the padded A and B tiles) exceed the " + std::to_string(arch.max_smem_per_block()) +
              " bytes one block of " + arch.name + " may use");
}

//===----------------------------------------------------------------------===//
// Match
//===----------------------------------------------------------------------===//

namespace {

/// One operand as the kernel reads it.
/// A block whose single store produces an operand element by element (a
/// cast, a dequantisation, zero padding): inlined into the operand's loads.
struct Producer {
  const Store *store = nullptr;
  std::vector<Var> dim_vars;  ///< the iter var indexing each dimension of the store
};

struct OperandInfo {
  Buffer buffer;
  Access access;      ///< the load in the matmul block (indices over its iters)
  bool k_inner = true;  ///< the contiguous dimension is K (else the M or N role)
  int64_t contig = -1;  ///< the contiguous extent (-1: symbolic)
  bool computed = false;  ///< produced by inlined blocks: copied element by element
  bool elementwise = false;  ///< copied element by element (computed, or rows not 4-byte aligned)
};

/// One epilogue block folded into the store.
struct EpilogueStep {
  Buffer reads;       ///< the buffer it reads (the accumulator or the previous step's output)
  const Store *store = nullptr;
  std::vector<Var> iters;  ///< its iter vars, by the matmul iter each stands for (-1: none)
  std::vector<int> matmul_iter;
};

struct TensorCoreMatch final : Match {
  /// The function matched: the one given, or a convolution's GEMM form.
  PrimFunc func;
  FuncInfo info;
  int block = -1;
  std::vector<int> batch;
  int m = -1, n = -1, k = -1;
  OperandInfo a, b;
  Access c;  ///< the accumulator's write
  DataType in_dtype, acc_dtype;
  std::vector<EpilogueStep> epilogue;
  /// Inlined producers of A, B (and of what they read), by the buffer they write.
  std::map<const BufferNode *, Producer> producers;
  std::string layout;

  std::string describe() const override {
    std::string s = "block '" + info.blocks[block].name + "': " + layout + " matmul on tensor cores, " +
                    in_dtype.str() + " -> " + acc_dtype.str();
    if (!batch.empty()) s += ", batched";
    if (!epilogue.empty()) s += ", " + std::to_string(epilogue.size()) + " epilogue block(s)";
    return s;
  }
};

int64_t extent_of(const Expr &e) {
  auto v = as_const_int(e);
  return v ? *v : -1;
}

/// The mma.sync the kernel uses for `in`: m16n8k16 into float32 for 16-bit
/// floats, m16n8k32 into int32 for int8.
bool has_mma(const Arch &arch, DataType in) {
  const bool integer = in.is_int();
  for (const MmaSupport &s : arch.tensor_cores.mma) {
    if (s.dtype != in.str() || s.accumulator != (integer ? "int32" : "float32")) continue;
    for (const MmaShape &sh : s.shapes)
      if (sh.m == 16 && sh.n == 8 && sh.k == (integer ? 32 : 16)) return true;
  }
  return false;
}

/// The load of `buf` in block `b` (the first), or nullptr.
const Access *read_of(const BlockInfo &b, const Buffer &buf) {
  for (const Access &a : b.reads)
    if (a.buffer.same_as(buf)) return &a;
  return nullptr;
}

/// Folds the spatial consumer chain of the accumulator: each block stores
/// one element computed from the previous buffer at the same point.
std::optional<std::string> match_epilogue(const FuncInfo &info, const analysis::MatmulView &v,
                                          TensorCoreMatch &out) {
  Buffer prev = v.c.buffer;
  std::vector<int> prev_iters;  // the matmul iter of each dimension of prev
  for (size_t d = 0; d < out.c.indices.size(); ++d) prev_iters.push_back(out.c.single_iter(static_cast<int>(d)));
  // The chain: the accumulator's consumer, then each intermediate's, until
  // a block writes a parameter.
  std::vector<int> chain;
  if (!v.epilogue.empty()) {
    int e = v.epilogue[0];
    for (;;) {
      chain.push_back(e);
      const BlockInfo &b = info.blocks[e];
      if (b.writes_output) break;
      if (b.consumers.size() != 1 || chain.size() > 8)
        return "epilogue block '" + b.name + "' writes an intermediate that " +
               std::to_string(b.consumers.size()) + " blocks read (a chain ends in one output)";
      e = b.consumers[0];
    }
  }
  if (v.epilogue.size() > 1 && chain.size() < v.epilogue.size())
    return "the accumulator has " + std::to_string(v.epilogue.size()) + " consumer blocks; a chain of one each is folded";
  for (int e : chain) {
    const BlockInfo &b = info.blocks[e];
    const std::string q = "epilogue block '" + b.name + "'";
    const auto *blk = b.block.as<Block>();
    const auto *st = blk ? blk->body.as<Store>() : nullptr;
    if (!st || b.writes.size() != 1 || !b.is_spatial() || b.is_guarded || !b.trivial_binding)
      return q + " is not one spatial store";
    const Access *r = read_of(b, prev);
    if (!r) return q + " does not read '" + prev->name + "'";
    EpilogueStep step;
    step.reads = prev;
    step.store = st;
    for (const analysis::IterInfo &it : b.iters) {
      step.iters.push_back(it.var);
      step.matmul_iter.push_back(-1);
    }
    for (size_t d = 0; d < r->indices.size(); ++d) {
      int it = r->single_iter(static_cast<int>(d));
      if (it < 0 || !r->is_simple) return q + " reads '" + prev->name + "' other than at one iter per dimension";
      step.matmul_iter[it] = prev_iters[d];
    }
    for (size_t i = 0; i < step.matmul_iter.size(); ++i)
      if (step.matmul_iter[i] < 0) return q + " has an iter that does not index '" + prev->name + "'";
    // The written buffer's dimensions, in matmul iters, for the next step
    // (the last may write at any index expression: a convolution's output).
    const Access &w = b.writes[0];
    prev_iters.clear();
    for (size_t d = 0; d < w.indices.size(); ++d) {
      int it = w.single_iter(static_cast<int>(d));
      if (it < 0 && e != chain.back())
        return q + " writes '" + w.buffer->name + "' other than at one iter per dimension";
      prev_iters.push_back(it < 0 ? -1 : step.matmul_iter[it]);
    }
    prev = w.buffer;
    out.epilogue.push_back(std::move(step));
  }
  return std::nullopt;
}

/// Every block writing a buffer the matmul block reads (and, transitively,
/// what those read) must be inlinable into the operand loads: one store at
/// plain iters, read by exactly one block, nothing but loads, arithmetic and
/// selects.
std::optional<std::string> match_producers(const FuncInfo &info, int block, TensorCoreMatch &out) {
  std::vector<int> todo = info.blocks[block].producers;
  for (size_t n = 0; n < todo.size(); ++n) {
    const BlockInfo &b = info.blocks[todo[n]];
    const std::string q = "producer block '" + b.name + "'";
    const auto *blk = b.block.as<Block>();
    const auto *st = blk ? blk->body.as<Store>() : nullptr;
    if (!st || !b.is_inlinable() || b.writes.size() != 1 || b.consumers.size() != 1)
      return q + " cannot be inlined into the operand loads (one store at plain iters, read by one block)";
    if (todo.size() > 8) return "the operands have more than 8 producer blocks";
    Producer p;
    p.store = st;
    for (size_t d = 0; d < b.writes[0].indices.size(); ++d) {
      int it = b.writes[0].single_iter(static_cast<int>(d));
      if (it < 0) return q + " writes other than one iter per dimension";
      p.dim_vars.push_back(b.iters[it].var);
    }
    out.producers[st->buffer.get()] = p;
    for (int q2 : b.producers) todo.push_back(q2);
  }
  return std::nullopt;
}

class TensorCoreRule final : public Rule {
 public:
  const char *name() const override { return "matmul_tensor_core"; }

  analysis::MatchResult<MatchPtr> match(const PrimFunc &f, const Arch &arch) const override {
    using R = analysis::MatchResult<MatchPtr>;
    if (!arch.memory.cp_async) return R::fail(arch.name + " has no cp.async");
    FuncInfo info = analysis::analyze(f);
    if (info.is_scheduled) return R::fail("the function is already scheduled");
    if (info.has_opaque_structure) return R::fail("it has statements outside blocks");
    std::vector<int> reds = info.reduction_blocks();
    if (reds.size() != 1) return R::fail("it has " + std::to_string(reds.size()) + " reduction blocks; a matmul has one");
    auto v = analysis::match_matmul(info, reds[0]);
    if (!v) {
      // A convolution: as the GEMM the conv2d rule's implicit_gemm form lays
      // it out (constant extents), its window gathers inlined into A's fetch.
      if (std::optional<PrimFunc> g = conv2d_as_gemm(f, arch)) {
        auto gm = match(*g, arch);
        if (!gm) return R::fail("as an implicit GEMM: " + gm.reason());
        auto tm = std::const_pointer_cast<Match>(*gm);
        static_cast<TensorCoreMatch &>(*tm).func = *g;
        return MatchPtr(tm);
      }
      return R::fail(v.reason());
    }
    const BlockInfo &blk = info.blocks[reds[0]];
    const std::string q = "block '" + blk.name + "'";
    if (!blk.trivial_binding) return R::fail(q + " is not bound one-to-one to loops from 0");
    if (blk.is_guarded) return R::fail(q + " is under a condition");
    if (v->m.size() != 1 || v->n.size() != 1 || v->k.size() != 1)
      return R::fail(q + " needs one M, one N and one K loop");
    auto m = std::make_shared<TensorCoreMatch>();
    if (auto why = match_producers(info, reds[0], *m)) return R::fail(*why);
    DataType in = v->a_dtype;
    const bool integer = in == DataType::int_(8);
    if (!(in.is_float16() || in.is_bfloat16() || integer) || v->b_dtype != in)
      return R::fail("operands are " + v->a_dtype.str() + " and " + v->b_dtype.str() +
                     "; the tensor-core rule takes float16, bfloat16 or int8 pairs");
    if (integer ? v->acc_dtype != DataType::int32() : !(v->acc_dtype == DataType::float32() || v->acc_dtype == in))
      return R::fail("the accumulator is " + v->acc_dtype.str() + "; " +
                     (integer ? std::string("int32") : "float32 or the operand type") + " is needed");
    if (!has_mma(arch, in))
      return R::fail(arch.name + " lists no mma.sync " + (integer ? "m16n8k32" : "m16n8k16") + " for " + in.str());
    if (integer && (v->a.inner() != MatmulRole::K || v->b.inner() != MatmulRole::K))
      return R::fail("int8 operands must both be K-contiguous (A [M, K], B [N, K]: \"nt\"); ldmatrix cannot "
                     "transpose 8-bit elements, and this is " + v->layout());

    m->info = info;
    m->func = f;
    m->block = reds[0];
    m->batch = v->batch;
    m->m = v->m[0], m->n = v->n[0], m->k = v->k[0];
    m->in_dtype = in;
    m->acc_dtype = v->acc_dtype;
    m->layout = v->layout();
    m->c = blk.writes.at(0);
    for (size_t d = 0; d < m->c.indices.size(); ++d)
      if (m->c.single_iter(static_cast<int>(d)) < 0) return R::fail(q + " writes its output other than one iter per dimension");
    for (auto [op, mo, role] : {std::tuple{&m->a, &v->a, MatmulRole::M}, {&m->b, &v->b, MatmulRole::N}}) {
      const Access *acc = read_of(blk, mo->buffer);
      if (!acc || !acc->is_simple) return R::fail(q + " reads '" + mo->buffer->name + "' other than at its iters");
      op->buffer = mo->buffer;
      op->access = *acc;
      if (mo->inner() != MatmulRole::K && mo->inner() != role)
        return R::fail("the contiguous dimension of '" + mo->buffer->name + "' is a batch dimension");
      op->k_inner = mo->inner() == MatmulRole::K;
      op->contig = extent_of(mo->buffer.shape().back());
      op->computed = m->producers.count(mo->buffer.get()) > 0;
      const int64_t piece = 4 / in.bytes();  // the narrowest cp.async (4 bytes), in elements
      op->elementwise = op->computed || op->contig <= 0 || op->contig % piece != 0;
    }
    if (auto why = match_epilogue(info, *v, *m)) return R::fail(*why);
    return MatchPtr(m);
  }

  std::unique_ptr<Config> default_config(const Match &mt, const Arch &arch) const override {
    // 128 x 256 x 128 bytes of K with 8 warps of 64 x 64 and 3 stages (the
    // fastest at 4096^3 on an H100; 153 KB of shared memory); smaller tiles
    // for operands copied element by element (their index arithmetic takes
    // registers) and where shared memory is short.
    const auto &m = dynamic_cast<const TensorCoreMatch &>(mt);
    // The first of these that fits (registers, shared memory) on `arch`.
    const int64_t b = m.in_dtype.bytes();
    struct Tiling {
      int64_t bm, bn, bk_bytes, wm, wn, stages;
    };
    const bool elementwise = m.a.elementwise || m.b.elementwise;
    std::vector<Tiling> order = {{128, 128, 64, 2, 4, 3}, {128, 128, 32, 2, 4, 3}, {64, 64, 64, 2, 2, 2},
                                 {64, 64, 32, 2, 2, 2}};
    // 16-bit loads in pieces: the measured winner first.
    if (!elementwise) order.insert(order.begin(), Tiling{128, 256, 128, 2, 4, 3});
    auto c = std::make_unique<TensorCoreConfig>();
    for (const Tiling &t : order) {
      c->in_bytes = b;
      c->a_elementwise = m.a.elementwise, c->b_elementwise = m.b.elementwise;
      c->pad = 16 / b;
      c->block_m = t.bm, c->block_n = t.bn, c->block_k = std::max<int64_t>(t.bk_bytes / b, 32 / b);
      c->warps_m = t.wm, c->warps_n = t.wn, c->stages = t.stages;
      try {
        c->validate(arch);
        break;
      } catch (const ConfigError &) {
      }
    }
    return c;
  }

  std::unique_ptr<Config> config_from_json(const Json &j) const override {
    return std::make_unique<TensorCoreConfig>(TensorCoreConfig::from_json(j));
  }

  schedule::Schedule apply(const PrimFunc &f, const Match &mt, const Config &config) const override;
};

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

/// Builds the kernel body for one match and config (see the header).
class KernelBuilder {
 public:
  KernelBuilder(const TensorCoreMatch &m, const TensorCoreConfig &c) : m_(m), c_(c) {
    const BlockInfo &blk = m.info.blocks[m.block];
    it_ = blk.iters[m.m].var.dtype();
    extent_m_ = blk.iters[m.m].dom.extent;
    extent_n_ = blk.iters[m.n].dom.extent;
    extent_k_ = blk.iters[m.k].dom.extent;
    for (int b : m.batch) batch_extents_.push_back(blk.iters[b].dom.extent);
  }

  Stmt build();
  std::vector<Buffer> allocs() const { return {a_shared_, b_shared_, a_frag_, b_frag_, c_frag_}; }

 private:
  Expr i(int64_t v) const { return make_int(it_, v); }
  Var var(const std::string &name) const { return Var(name, it_); }

  /// A loop over the warps and lanes of the block around `body(warp, lane)`.
  Stmt threads(const std::function<Stmt(Expr, Expr)> &body) const {
    Var ty = var("ty"), tx = var("tx");
    Stmt s = body(ty, tx);
    s = For::make(tx, i(0), i(32), ForKind::ThreadBinding, s, "threadIdx.x");
    return For::make(ty, i(0), i(c_.warps()), ForKind::ThreadBinding, s, "threadIdx.y");
  }
  Stmt loop(const std::string &name, int64_t extent, const std::function<Stmt(Expr)> &body,
            ForKind kind = ForKind::Unrolled) const {
    Var v = var(name);
    Stmt s = body(v);
    if (extent == 1) return substitute(s, {{v, i(0)}});
    return For::make(v, i(0), i(extent), kind, s);
  }
  static Stmt eval(Intrinsic op, std::vector<Expr> args) {
    return Evaluate::make(Call::make(DataType::int32(), op, std::move(args)));
  }

  /// Column `col` of shared row `row` (rows of `row_elems` elements) as
  /// stored: unchanged with padding; with swizzle its 16-byte chunk is
  /// XOR-ed with the row (chunk ^ row % 8 for rows of 8 chunks or more,
  /// chunk ^ (row / 2) % 4 for rows of 4), so the 8 rows an ldmatrix reads
  /// and the chunks a warp's copies write fall in distinct banks.
  Expr swizzled(const Expr &row, const Expr &col, int64_t row_elems) const {
    if (!c_.swizzle) return col;
    const int64_t chunk = 16 / c_.in_bytes, chunks = row_elems / chunk;
    Expr key = chunks >= 8 ? floormod(row, i(8)) : floormod(floordiv(row, i(2)), i(4));
    Expr c = floordiv(col, i(chunk));
    return bitwise_xor(c, key) * i(chunk) + floormod(col, i(chunk));
  }

  /// The element of `op` at matmul iter values (batch from the block, row, k),
  /// its producers inlined.
  Expr operand_load(const OperandInfo &op, const Expr &rows, const Expr &k) const;
  Expr inline_producers(const Expr &e) const;
  Stmt load_tile(const OperandInfo &op, Buffer tile, bool is_a, const Expr &stage, const Expr &k_tile) const;
  Stmt compute_slice(const Expr &stage, int64_t kk) const;
  Stmt epilogue() const;

  const TensorCoreMatch &m_;
  const TensorCoreConfig &c_;
  DataType it_;
  Expr extent_m_, extent_n_, extent_k_;
  std::vector<Expr> batch_extents_;
  /// Batch iter values, row and column tile origins (set by build()).
  std::vector<Expr> batch_;
  Expr m0_, n0_;
  Buffer a_shared_, b_shared_, a_frag_, b_frag_, c_frag_;
};

Expr KernelBuilder::operand_load(const OperandInfo &op, const Expr &rows, const Expr &k) const {
  const BlockInfo &blk = m_.info.blocks[m_.block];
  std::vector<std::pair<Var, Expr>> map;
  for (size_t b = 0; b < m_.batch.size(); ++b) map.push_back({blk.iters[m_.batch[b]].var, batch_[b]});
  bool is_a = op.buffer.same_as(m_.a.buffer);
  map.push_back({blk.iters[is_a ? m_.m : m_.n].var, rows});
  map.push_back({blk.iters[m_.k].var, k});
  std::vector<Expr> idx;
  for (const Expr &e : op.access.indices) idx.push_back(substitute(e, map));
  return inline_producers(Load::make(op.buffer, idx));
}

Expr KernelBuilder::inline_producers(const Expr &e) const {
  class Inliner : public IRMutator {
   public:
    explicit Inliner(const TensorCoreMatch &m) : m_(m) {}
    Expr visit_(const Load *op, const Expr &self) override {
      auto it = m_.producers.find(op->buffer.get());
      if (it == m_.producers.end()) return IRMutator::visit_(op, self);
      std::vector<std::pair<Var, Expr>> map;
      for (size_t d = 0; d < op->indices.size(); ++d) map.push_back({it->second.dim_vars[d], mutate(op->indices[d])});
      return mutate(substitute(it->second.store->value, map));
    }

   private:
    const TensorCoreMatch &m_;
  };
  return Inliner(m_).mutate(e);
}

/// Copies K tile `k_tile` of operand `op` into stage `stage` of `tile`: the
/// tile is [rows][block_k] when K is contiguous, else [block_k][rows].
Stmt KernelBuilder::load_tile(const OperandInfo &op, Buffer tile, bool is_a, const Expr &stage,
                              const Expr &k_tile) const {
  const int64_t rows = is_a ? c_.block_m : c_.block_n;
  const Expr row0 = is_a ? m0_ : n0_;
  const Expr row_extent = is_a ? extent_m_ : extent_n_;
  const int64_t sr = op.k_inner ? rows : c_.block_k, sc = op.k_inner ? c_.block_k : rows;
  // The widest piece every row start keeps aligned (4 bytes at least for cp.async).
  int64_t v = 1;
  for (int64_t bytes : {16, 8, 4}) {
    int64_t w = bytes / c_.in_bytes;
    if (!op.computed && op.contig > 0 && op.contig % w == 0 && sc % w == 0) {
      v = w;
      break;
    }
  }
  const int64_t chunks = sr * sc / v, per_thread = (chunks + c_.threads() - 1) / c_.threads();
  const Expr k0 = k_tile * i(c_.block_k);
  return threads([&](Expr ty, Expr tx) {
    return loop("c", per_thread, [&](Expr it) {
      Expr q = it * i(c_.threads()) + ty * i(32) + tx;
      Expr r = floordiv(q, i(sc / v)), col = floormod(q, i(sc / v)) * i(v);
      Expr row = op.k_inner ? row0 + r : row0 + col, k = op.k_inner ? k0 + col : k0 + r;
      Expr valid = row < row_extent && k < extent_k_;
      Expr dst = Load::make(tile, {stage, r, swizzled(r, col, sc)});
      Stmt s;
      if (v >= 2) {
        Expr bytes = i(v * c_.in_bytes);
        s = eval(Intrinsic::CpAsync, {dst, operand_load(op, row, k), cast(DataType::int32(), bytes),
                                      select(valid, cast(DataType::int32(), bytes), make_int(DataType::int32(), 0))});
      } else {
        s = Store::make(tile, if_then_else(valid, operand_load(op, row, k), make_const(tile.dtype(), 0)),
                        {stage, r, swizzled(r, col, sc)});
      }
      if (chunks % c_.threads() != 0) s = IfThenElse::make(q < i(chunks), s);
      return s;
    });
  });
}

/// One mma-K slice of the warp tile (16 16-bit or 32 8-bit elements):
/// fragments by ldmatrix, then mma.sync.
Stmt KernelBuilder::compute_slice(const Expr &stage, int64_t kk) const {
  const int64_t tiles_m = c_.warp_m() / 16, tiles_n = c_.warp_n() / 8;
  const int64_t unit = 2 / c_.in_bytes;  // elements per 16-bit ldmatrix unit
  const Expr k0 = i(kk * 16 * unit);
  // Lane l gives row l % 8 of matrix l / 8.
  auto ldmatrix = [&](const OperandInfo &op, Buffer tile, Buffer frag, Expr ty, Expr tx, Expr row0, Expr out) {
    Expr j = floordiv(tx, i(8)), rr = floormod(tx, i(8));
    bool is_a = tile.same_as(a_shared_);
    // A's matrices: (row 8 (j % 2), k 8 (j / 2)); B's: (row 8 (j / 2), k 8 (j % 2)).
    Expr row_off = is_a ? floormod(j, i(2)) * i(8) : floordiv(j, i(2)) * i(8);
    Expr k_off = is_a ? floordiv(j, i(2)) * i(8 * unit) : floormod(j, i(2)) * i(8 * unit);
    const int64_t row_elems = op.k_inner ? c_.block_k : (is_a ? c_.block_m : c_.block_n);
    Expr src = op.k_inner
                   ? Load::make(tile, {stage, row0 + row_off + rr, swizzled(row0 + row_off + rr, k0 + k_off, row_elems)})
                   : Load::make(tile, {stage, k0 + k_off + rr, swizzled(k0 + k_off + rr, row0 + row_off, row_elems)});
    return eval(Intrinsic::Ldmatrix, {make_int(DataType::int32(), op.k_inner ? 0 : 1), make_int(DataType::int32(), 4),
                                      Load::make(frag, {ty, tx, out}), src, tx});
  };
  auto warp_m0 = [&](Expr ty) { return floordiv(ty, i(c_.warps_n)) * i(c_.warp_m()); };
  auto warp_n0 = [&](Expr ty) { return floormod(ty, i(c_.warps_n)) * i(c_.warp_n()); };
  std::vector<Stmt> s;
  // A: one x4 per m16 tile; B: one x4 per pair of n8 tiles.
  s.push_back(threads([&](Expr ty, Expr tx) {
    return loop("mi", tiles_m, [&](Expr mi) {
      return ldmatrix(m_.a, a_shared_, a_frag_, ty, tx, warp_m0(ty) + mi * i(16), mi * i(8 * unit));
    });
  }));
  s.push_back(threads([&](Expr ty, Expr tx) {
    return loop("nj", tiles_n / 2, [&](Expr nj) {
      return ldmatrix(m_.b, b_shared_, b_frag_, ty, tx, warp_n0(ty) + nj * i(16), nj * i(8 * unit));
    });
  }));
  s.push_back(threads([&](Expr ty, Expr tx) {
    return loop("mi", tiles_m, [&](Expr mi) {
      return loop("ni", tiles_n, [&](Expr ni) {
        return eval(Intrinsic::MmaSync, {StringImm::make(unit == 2 ? "m16n8k32" : "m16n8k16"),
                                         Load::make(c_frag_, {ty, tx, (mi * i(tiles_n) + ni) * i(4)}),
                                         Load::make(a_frag_, {ty, tx, mi * i(8 * unit)}),
                                         Load::make(b_frag_, {ty, tx, ni * i(4 * unit)}), tx});
      });
    });
  }));
  return Seq::make(s);
}

/// The accumulators through the epilogue into the output, masked at the edges.
Stmt KernelBuilder::epilogue() const {
  const BlockInfo &blk = m_.info.blocks[m_.block];
  const int64_t tiles_m = c_.warp_m() / 16, tiles_n = c_.warp_n() / 8;
  return threads([&](Expr ty, Expr tx) {
    return loop("mi", tiles_m, [&](Expr mi) {
      return loop("ni", tiles_n, [&](Expr ni) {
        return loop("e", 4, [&](Expr e) {
          Expr row = m0_ + floordiv(ty, i(c_.warps_n)) * i(c_.warp_m()) + mi * i(16) + floordiv(tx, i(4)) +
                     floordiv(e, i(2)) * i(8);
          Expr col = n0_ + floormod(ty, i(c_.warps_n)) * i(c_.warp_n()) + ni * i(8) + floormod(tx, i(4)) * i(2) +
                     floormod(e, i(2));
          // Matmul iter -> value at this element.
          std::vector<Expr> at(blk.iters.size());
          for (size_t b = 0; b < m_.batch.size(); ++b) at[m_.batch[b]] = batch_[b];
          at[m_.m] = row;
          at[m_.n] = col;
          Expr value = Load::make(c_frag_, {ty, tx, (mi * i(tiles_n) + ni) * i(4) + e});
          if (value.dtype() != m_.acc_dtype) value = cast(m_.acc_dtype, value);
          Stmt store;
          if (m_.epilogue.empty()) {
            std::vector<Expr> idx;
            for (size_t d = 0; d < m_.c.indices.size(); ++d) idx.push_back(at[m_.c.single_iter(static_cast<int>(d))]);
            store = Store::make(m_.c.buffer, value, idx);
          } else {
            for (const EpilogueStep &st : m_.epilogue) {
              std::vector<std::pair<Var, Expr>> map;
              for (size_t v = 0; v < st.iters.size(); ++v) map.push_back({st.iters[v], at[st.matmul_iter[v]]});
              // The previous value replaces every load of the buffer this step reads.
              class ReplaceLoads : public IRMutator {
               public:
                ReplaceLoads(Buffer b, Expr v) : b_(std::move(b)), v_(std::move(v)) {}
                Expr visit_(const Load *op, const Expr &self) override {
                  return op->buffer.same_as(b_) ? v_ : IRMutator::visit_(op, self);
                }
                Buffer b_;
                Expr v_;
              };
              Expr folded = ReplaceLoads(st.reads, value).mutate(substitute(st.store->value, map));
              std::vector<Expr> idx;
              for (const Expr &x : st.store->indices) idx.push_back(substitute(x, map));
              value = folded;
              store = Store::make(st.store->buffer, folded, idx);
            }
          }
          return IfThenElse::make(row < extent_m_ && col < extent_n_, store);
        });
      });
    });
  });
}

Stmt KernelBuilder::build() {
  const DataType in = m_.in_dtype;
  const int64_t pad = c_.pad;
  auto tile_shape = [&](const OperandInfo &op, int64_t rows) -> std::vector<Expr> {
    return op.k_inner ? std::vector<Expr>{i(c_.stages), i(rows), i(c_.block_k + pad)}
                      : std::vector<Expr>{i(c_.stages), i(c_.block_k), i(rows + pad)};
  };
  a_shared_ = Buffer::make("A_shared", in, tile_shape(m_.a, c_.block_m), "shared");
  b_shared_ = Buffer::make("B_shared", in, tile_shape(m_.b, c_.block_n), "shared");
  const int64_t tiles_m = c_.warp_m() / 16, tiles_n = c_.warp_n() / 8;
  const int64_t unit = 2 / c_.in_bytes;
  const DataType acc = in.is_int() ? DataType::int32() : DataType::float32();
  a_frag_ = Buffer::make("A_frag", in, {i(c_.warps()), i(32), i(tiles_m * 8 * unit)}, "warp");
  b_frag_ = Buffer::make("B_frag", in, {i(c_.warps()), i(32), i(tiles_n * 4 * unit)}, "warp");
  c_frag_ = Buffer::make("C_frag", acc, {i(c_.warps()), i(32), i(tiles_m * tiles_n * 4)}, "warp");

  Var bz = var("bz"), by = var("by"), bx = var("bx");
  // Batch iters from blockIdx.z, the last fastest.
  Expr z = bz;
  batch_.assign(batch_extents_.size(), Expr());
  for (size_t b = batch_extents_.size(); b-- > 0;) {
    batch_[b] = b == 0 ? z : floormod(z, batch_extents_[b]);
    z = floordiv(z, batch_extents_[b]);
  }
  Expr tiles_y = floordiv(extent_m_ + i(c_.block_m - 1), i(c_.block_m));
  Expr tiles_x = floordiv(extent_n_ + i(c_.block_n - 1), i(c_.block_n));
  if (c_.raster > 0) {
    // Rasterized: blockIdx.x walks panels of `raster` tile rows column by
    // column, so the blocks running together share A rows and B columns in L2.
    Expr per_panel = i(c_.raster) * tiles_x, first = floordiv(bx, per_panel) * i(c_.raster);
    Expr rows_here = min(tiles_y - first, i(c_.raster)), in_panel = floormod(bx, per_panel);
    m0_ = (first + floormod(in_panel, rows_here)) * i(c_.block_m);
    n0_ = floordiv(in_panel, rows_here) * i(c_.block_n);
  } else {
    m0_ = by * i(c_.block_m);
    n0_ = bx * i(c_.block_n);
  }

  std::vector<Stmt> body;
  body.push_back(threads([&](Expr ty, Expr tx) {
    return loop("e", tiles_m * tiles_n * 4, [&](Expr e) {
      return Store::make(c_frag_, make_const(c_frag_.dtype(), 0), {ty, tx, e});
    });
  }));
  const int64_t S = c_.stages;
  Expr k_tiles = floordiv(extent_k_ + i(c_.block_k - 1), i(c_.block_k));
  for (int64_t s = 0; s + 1 < S; ++s) {
    body.push_back(load_tile(m_.a, a_shared_, true, i(s), i(s)));
    body.push_back(load_tile(m_.b, b_shared_, false, i(s), i(s)));
    body.push_back(eval(Intrinsic::CpAsyncCommit, {}));
  }
  {
    Var ko = var("ko");
    std::vector<Stmt> step;
    step.push_back(eval(Intrinsic::CpAsyncWait, {make_int(DataType::int32(), S - 2)}));
    step.push_back(eval(Intrinsic::SyncThreads, {}));
    Expr next = ko + i(S - 1), next_stage = floormod(next, i(S));
    step.push_back(load_tile(m_.a, a_shared_, true, next_stage, next));
    step.push_back(load_tile(m_.b, b_shared_, false, next_stage, next));
    step.push_back(eval(Intrinsic::CpAsyncCommit, {}));
    Expr stage = floormod(ko, i(S));
    for (int64_t kk = 0; kk < c_.block_k / (32 / c_.in_bytes); ++kk) step.push_back(compute_slice(stage, kk));
    body.push_back(For::make(ko, i(0), k_tiles, ForKind::Serial, Seq::make(step)));
  }
  body.push_back(eval(Intrinsic::CpAsyncWait, {make_int(DataType::int32(), 0)}));
  body.push_back(epilogue());

  // What the kernel touches, whole: A, B and the epilogue's other inputs; the output.
  std::vector<BufferRegion> reads;
  auto add_read = [&](const Buffer &b) {
    if (m_.producers.count(b.get())) return;
    for (const BufferRegion &r : reads)
      if (r.buffer.same_as(b)) return;
    reads.push_back(BufferRegion::full(b));
  };
  for (const Buffer &b : {m_.a.buffer, m_.b.buffer}) add_read(b);
  for (const auto &[node, p] : m_.producers)
    pre_order_visit(Evaluate::make(p.store->value), [&](const Expr &e) {
      if (const auto *l = e.as<Load>()) add_read(l->buffer);
    }, nullptr);
  Buffer out = m_.c.buffer;
  for (const EpilogueStep &st : m_.epilogue) {
    pre_order_visit(Evaluate::make(st.store->value), [&](const Expr &e) {
      const auto *l = e.as<Load>();
      if (!l || l->buffer.same_as(st.reads)) return;
      for (const BufferRegion &r : reads)
        if (r.buffer.same_as(l->buffer)) return;
      reads.push_back(BufferRegion::full(l->buffer));
    }, nullptr);
    out = st.store->buffer;
  }
  Stmt kernel = Block::make("matmul_tensor_core", {}, {}, Expr(), reads, {BufferRegion::full(out)}, allocs(),
                            std::nullopt, Seq::make(body));
  if (c_.raster > 0) {
    kernel = For::make(bx, i(0), tiles_y * tiles_x, ForKind::ThreadBinding, kernel, "blockIdx.x");
  } else {
    kernel = For::make(bx, i(0), tiles_x, ForKind::ThreadBinding, kernel, "blockIdx.x");
    kernel = For::make(by, i(0), tiles_y, ForKind::ThreadBinding, kernel, "blockIdx.y");
  }
  if (!batch_extents_.empty()) {
    Expr total = batch_extents_[0];
    for (size_t b = 1; b < batch_extents_.size(); ++b) total = total * batch_extents_[b];
    kernel = For::make(bz, i(0), total, ForKind::ThreadBinding, kernel, "blockIdx.z");
  }
  return kernel;
}

schedule::Schedule TensorCoreRule::apply(const PrimFunc &f, const Match &mt, const Config &config) const {
  const auto *m = dynamic_cast<const TensorCoreMatch *>(&mt);
  const auto *c = dynamic_cast<const TensorCoreConfig *>(&config);
  if (!m || !c) throw ConfigError("matmul_tensor_core: the match or config (" + config.str() + ") is another rule's");
  if (c->a_elementwise != m->a.elementwise || c->b_elementwise != m->b.elementwise)
    throw ConfigError("matmul_tensor_core config: a_elementwise/b_elementwise (" + std::to_string(c->a_elementwise) +
                      "/" + std::to_string(c->b_elementwise) + ") do not describe this workload (" +
                      std::to_string(m->a.elementwise) + "/" + std::to_string(m->b.elementwise) + ")");
  if (c->in_bytes != m->in_dtype.bytes())
    throw ConfigError("matmul_tensor_core config: in_bytes = " + std::to_string(c->in_bytes) + " but the operands are " +
                      m->in_dtype.str() + " (" + std::to_string(m->in_dtype.bytes()) + " bytes)");
  KernelBuilder kb(*m, *c);
  Stmt kernel = kb.build();
  // The root keeps its allocations that the kernel still uses: none of the
  // accumulator and epilogue intermediates (registers now).
  const PrimFunc &src = m->func;  // f, or its convolution's GEMM form (same parameters)
  const auto *root = src.body().as<Block>();
  TESSERA_ICHECK(root) << "a function's body is its root block";
  Stmt new_root = Block::make(root->name, {}, {}, Expr(), {}, {}, {}, std::nullopt, kernel, root->annotations);
  return schedule::Schedule(src.with_body(new_root));
}

}  // namespace

TensorCoreProblem tensor_core_problem(const Match &mt) {
  const auto *m = dynamic_cast<const TensorCoreMatch *>(&mt);
  if (!m) throw ConfigError("matmul_tensor_core: the match is another rule's");
  const BlockInfo &blk = m->info.blocks[m->block];
  TensorCoreProblem p;
  for (int b : m->batch) {
    int64_t e = extent_of(blk.iters[b].dom.extent);
    p.batch = e < 0 || p.batch < 0 ? -1 : p.batch * e;
  }
  p.m = extent_of(blk.iters[m->m].dom.extent);
  p.n = extent_of(blk.iters[m->n].dom.extent);
  p.k = extent_of(blk.iters[m->k].dom.extent);
  p.in = m->in_dtype;
  p.a_elementwise = m->a.elementwise, p.b_elementwise = m->b.elementwise;
  return p;
}

const Rule &matmul_tensor_core_rule() {
  static const TensorCoreRule rule;
  return rule;
}

}  // namespace tessera::rules
