//===- rules/Gemv.cpp - Matrix-vector products ------------------------------===//
#include "tessera/rules/Gemv.h"

#include <algorithm>
#include <map>

#include "ConfigJson.h"
#include "tessera/analysis/BlockInfo.h"
#include "tessera/analysis/MatmulView.h"
#include "tessera/ir/Expr.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/schedule/Error.h"

namespace tessera::rules {

using analysis::Access;
using analysis::BlockInfo;
using analysis::FuncInfo;
using schedule::BlockRef;
using schedule::LoopRef;

Json GemvConfig::to_json() const {
  return Json{{"rule", rule()},
              {"threads_x", threads_x},
              {"threads_y", threads_y},
              {"vector", vector},
              {"reduce_step", reduce_step},
              {"unroll", unroll},
              {"x_in_shared", x_in_shared}};
}

GemvConfig GemvConfig::from_json(const Json &j) {
  ConfigReader r(j, "gemv");
  GemvConfig c;
  c.threads_x = r.integer("threads_x");
  c.threads_y = r.integer("threads_y");
  c.vector = r.integer("vector");
  c.reduce_step = r.integer("reduce_step");
  c.unroll = r.boolean("unroll");
  c.x_in_shared = r.boolean("x_in_shared");
  r.finish();
  return c;
}

void GemvConfig::validate(const Arch &arch) const {
  const int64_t max_threads = arch.limits.max_threads_per_block;
  require(threads_x >= 1 && threads_x <= max_threads, rule(), "threads_x", threads_x,
          "is outside [1, " + std::to_string(max_threads) + "], the threads per block of " + arch.name);
  require(threads_y >= 1 && threads_y <= max_threads, rule(), "threads_y", threads_y,
          "is outside [1, " + std::to_string(max_threads) + "], the threads per block of " + arch.name);
  require(threads_x * threads_y <= max_threads, rule(), "threads_y", threads_y,
          "gives threads_x * threads_y = " + std::to_string(threads_x * threads_y) + " threads, more than the " +
              std::to_string(max_threads) + " per block of " + arch.name);
  require(vector >= 1 && vector <= 128 && (vector & (vector - 1)) == 0, rule(), "vector", vector,
          "is not a power of two in [1, 128]");
  require(reduce_step >= 1, rule(), "reduce_step", reduce_step, "must be at least 1");
  // Each thread stages reduce_step * vector elements in registers; leave at
  // least half of a thread's registers for addresses and accumulators.
  const int64_t staged_limit = arch.limits.max_regs_per_thread / 2;
  require(reduce_step * vector <= staged_limit, rule(), "reduce_step", reduce_step,
          "stages reduce_step * vector = " + std::to_string(reduce_step * vector) +
              " elements per thread, more than half of the " + std::to_string(arch.limits.max_regs_per_thread) +
              " registers per thread of " + arch.name);
}

namespace {

enum class Layout { Inner, Outer };

/// Where the loads of one operand come from once the prologue is inlined: the
/// buffer and how many k elements one of its elements holds (8 for int4
/// nibbles packed in a uint32).
struct Stream {
  std::string buffer;  ///< empty: no single buffer (not staged)
  int64_t pack = 1;
  int bytes = 0;
};

struct GemvMatch final : Match {
  Layout layout = Layout::Inner;
  std::string block;                  ///< the reduction block
  std::vector<std::string> prologue;  ///< blocks to inline, program order
  std::vector<std::string> epilogue;  ///< blocks after the reduction, program order
  /// Blocks whose (only) write buffer is an intermediate to keep per thread.
  std::vector<std::string> to_local;
  int row_loop = -1, k_loop = -1, batch_loop = -1;  ///< positions in the block's loops
  /// Loops of extent 1 (the unit batch axes relax prints: C[0, 0, i]), fused
  /// into the row loop before scheduling.
  std::vector<int> unit_loops;
  int64_t rows = -1, k = -1;                        ///< -1: symbolic
  int64_t batch = 1;
  std::string matrix, vector;  ///< the operands as the block reads them before inlining
  Stream w, x;                 ///< where their loads come from after inlining
  int64_t max_smem = 0;        ///< the arch's opt-in shared memory per block
  int max_vector_bytes = 16;

  std::string describe() const override {
    std::string s = std::string(layout == Layout::Inner ? "inner" : "outer") + "-reduction gemv '" + block + "' (" +
                    matrix + " x " + vector + ", rows " + (rows < 0 ? "symbolic" : std::to_string(rows)) + ", k " +
                    (k < 0 ? "symbolic" : std::to_string(k));
    if (batch > 1) s += ", batch " + std::to_string(batch);
    s += ")";
    if (!prologue.empty()) s += ", " + std::to_string(prologue.size()) + " prologue block(s) inlined";
    if (w.pack > 1) s += ", " + std::to_string(w.pack) + " weights per " + w.buffer + " element";
    if (!epilogue.empty()) s += ", " + std::to_string(epilogue.size()) + " epilogue block(s)";
    return s;
  }
};

bool uses(const Access &a, int iter) {
  for (const auto &d : a.dim_iters)
    if (std::find(d.begin(), d.end(), iter) != d.end()) return true;
  return false;
}

std::optional<int64_t> static_extent(const ir::Range &r) { return ir::as_const_int(r.extent); }

/// The stream of `buffer` (read by the reduction, dimension `k_dim` indexed by
/// k): the buffer itself, or, when a prologue block computes it, the read of
/// that block indexed along k by `j` or `j // c` with the smallest c.
Stream find_stream(const FuncInfo &info, const std::vector<int> &prologue, const ir::Buffer &buffer, int k_dim) {
  for (int p : prologue) {
    const BlockInfo &pb = info.blocks[p];
    if (!pb.writes[0].buffer.same_as(buffer)) continue;
    int j = pb.writes[0].single_iter(k_dim);
    if (j < 0) return {};
    Stream best;
    for (const Access &a : pb.reads) {
      if (a.indices.empty()) continue;
      const ir::Expr &idx = a.indices.back();
      int64_t pack = 0;
      if (const auto *v = idx.as<ir::VarNode>(); v && v == pb.iters[j].var.get()) pack = 1;
      if (const auto *d = idx.as<ir::Binary>(); d && d->op == ir::BinaryOp::FloorDiv) {
        const auto *v = d->a.as<ir::VarNode>();
        auto c = ir::as_const_int(d->b);
        if (v && v == pb.iters[j].var.get() && c && *c > 0) pack = *c;
      }
      if (pack == 0) continue;
      if (best.buffer.empty() || pack < best.pack) best = {a.buffer.name(), pack, a.buffer.dtype().bytes()};
    }
    return best;
  }
  return {buffer.name(), 1, buffer.dtype().bytes()};
}

class GemvRule final : public Rule {
 public:
  const char *name() const override { return "gemv"; }

  analysis::MatchResult<MatchPtr> match(const ir::PrimFunc &f, const Arch &arch) const override {
    using R = analysis::MatchResult<MatchPtr>;
    FuncInfo info = analysis::analyze(f);
    if (info.is_scheduled) return R::fail("the function is already scheduled");
    if (info.has_opaque_structure) return R::fail("it has statements outside blocks");
    std::vector<int> reds = info.reduction_blocks();
    if (reds.empty()) return R::fail("it has no reduction block (a gemv is y[m] += W[m, k] * x[k])");
    if (reds.size() > 1) return R::fail("it has " + std::to_string(reds.size()) + " reduction blocks; a gemv has one");
    const int r = reds[0];
    const BlockInfo &bi = info.blocks[r];
    const std::string q = "block '" + bi.name + "'";
    if (bi.combiner != analysis::Combiner::Sum)
      return R::fail(q + " reduces with " + analysis::to_string(bi.combiner) + ", not a sum of products");
    const auto *mul = bi.reduce_value.as<ir::Binary>();
    if (!mul || mul->op != ir::BinaryOp::Mul) return R::fail(q + " adds a value that is not a product");
    const ir::Load *la = analysis::strip_casts(mul->a), *lb = analysis::strip_casts(mul->b);
    if (!la || !lb) return R::fail(q + " multiplies something other than two (possibly cast) loads");
    if (bi.reads.size() != 2) return R::fail(q + " reads " + std::to_string(bi.reads.size()) + " buffers, not 2");
    const Access &out = bi.writes[0];
    for (const Access *a : {&bi.reads[0], &bi.reads[1], &out})
      if (!a->is_simple) return R::fail(q + " indexes '" + a->buffer.name() + "' with expressions, not plain iter vars");
    if (!bi.trivial_binding) return R::fail(q + " is not bound one-to-one to loops from 0");
    if (bi.is_guarded) return R::fail(q + " is under a condition");

    // Iter roles: one reduce iter k; the row iter used by the matrix and the
    // output; an optional batch iter used by the vector and the output.
    int k_iter = -1;
    for (size_t i = 0; i < bi.iters.size(); ++i) {
      if (bi.iters[i].kind != ir::IterKind::Reduce) continue;
      if (k_iter >= 0) return R::fail(q + " reduces over several iters; a gemv reduces over one");
      k_iter = static_cast<int>(i);
    }
    const Access &r0 = bi.reads[0], &r1 = bi.reads[1];
    if (!uses(r0, k_iter) || !uses(r1, k_iter))
      return R::fail(q + ": the reduce iter is not used by both operands");
    std::vector<int> own0, own1, both, units;
    for (size_t i = 0; i < bi.iters.size(); ++i) {
      int it = static_cast<int>(i);
      if (it == k_iter) continue;
      if (static_extent(bi.iters[i].dom) == 1 && uses(out, it)) {
        units.push_back(it);  // a unit axis (batch 1 of a decode step): no role
        continue;
      }
      const std::string name = "iter '" + bi.iters[i].var.name() + "'";
      bool in0 = uses(r0, it), in1 = uses(r1, it);
      if (!uses(out, it)) return R::fail(q + ": the spatial " + name + " does not index the output");
      if (in0 && in1) both.push_back(it);
      else if (in0) own0.push_back(it);
      else if (in1) own1.push_back(it);
      else return R::fail(q + ": the spatial " + name + " is used by neither operand");
    }
    if (!both.empty())
      return R::fail(q + ": iter '" + bi.iters[both[0]].var.name() +
                     "' indexes both operands (a batched product: bmm, not a gemv)");
    if (own0.empty() && own1.empty()) return R::fail(q + " has no row iter (a dot product: the reduction rule's)");
    // The matrix has the row iter; the vector at most a small batch iter.
    // When both operands have iters of their own this is a matmul unless one
    // side is a constant of at most kGemvMaxBatch (the smaller one; on a tie
    // the one the output indexes first).
    auto small_batch = [&](const std::vector<int> &own) -> int64_t {
      if (own.size() != 1) return -1;
      auto e = static_extent(bi.iters[own[0]].dom);
      return e && *e <= kGemvMaxBatch ? *e : -1;
    };
    bool zero_is_matrix = own1.empty();
    if (!own0.empty() && !own1.empty()) {
      int64_t b0 = small_batch(own0), b1 = small_batch(own1);
      if (b0 < 0 && b1 < 0)
        return R::fail(q + " is a matmul: both operands have spatial iters of their own, neither a constant batch of at most " +
                       std::to_string(kGemvMaxBatch));
      if (b0 >= 0 && b1 >= 0 && b0 == b1) zero_is_matrix = out.dim_iters[0][0] == own1[0];
      else zero_is_matrix = b0 < 0 || (b1 >= 0 && b1 < b0);
    }
    const Access &mat = zero_is_matrix ? r0 : r1, &vec = zero_is_matrix ? r1 : r0;
    const std::vector<int> &rows = zero_is_matrix ? own0 : own1, &batch = zero_is_matrix ? own1 : own0;
    if (rows.size() != 1)
      return R::fail(q + ": the matrix '" + mat.buffer.name() + "' has " + std::to_string(rows.size()) +
                     " row iters; a gemv has one");
    if (batch.size() > 1) return R::fail(q + ": the vector '" + vec.buffer.name() + "' has several batch iters");
    const int row_iter = rows[0];
    const int batch_iter = batch.empty() ? -1 : batch[0];
    if (mat.buffer.ndim() != 2)
      return R::fail(q + ": the matrix '" + mat.buffer.name() + "' has " + std::to_string(mat.buffer.ndim()) +
                     " dimensions, not 2");
    for (const Access *a : {&mat, &vec, &out})
      for (const auto &d : a->dim_iters)
        if (d.size() != 1)
          return R::fail(q + " indexes '" + a->buffer.name() + "' with a constant in some dimension");
    if (vec.inner_iter() != k_iter)
      return R::fail(q + ": the vector '" + vec.buffer.name() + "' is not contiguous along the reduction");

    auto m = std::make_shared<GemvMatch>();
    m->block = bi.name;
    m->matrix = mat.buffer.name();
    m->vector = vec.buffer.name();
    m->layout = mat.inner_iter() == k_iter ? Layout::Inner : Layout::Outer;
    m->max_smem = arch.max_smem_per_block();
    m->max_vector_bytes = std::max(1, arch.memory.max_vector_bytes);
    if (batch_iter >= 0) {
      auto e = static_extent(bi.iters[batch_iter].dom);
      if (!e) return R::fail(q + ": the batch iter '" + bi.iters[batch_iter].var.name() + "' has a symbolic extent");
      if (*e > kGemvMaxBatch)
        return R::fail(q + ": the batch of " + std::to_string(*e) + " exceeds " + std::to_string(kGemvMaxBatch) +
                       " (a matmul)");
      m->batch = *e;
    }
    m->rows = static_extent(bi.iters[row_iter].dom).value_or(-1);
    m->k = static_extent(bi.iters[k_iter].dom).value_or(-1);
    auto loop_of = [&](int it) {
      for (size_t l = 0; l < bi.loops.size(); ++l)
        if (bi.loops[l].as<ir::For>()->loop_var.same_as(bi.iters[it].loop)) return static_cast<int>(l);
      return -1;
    };
    m->row_loop = loop_of(row_iter);
    m->k_loop = loop_of(k_iter);
    m->batch_loop = batch_iter >= 0 ? loop_of(batch_iter) : -1;
    for (int u : units) m->unit_loops.push_back(loop_of(u));
    if (bi.loops.size() != bi.iters.size())
      return R::fail(q + " has loops that carry no iter var; normalise the loop nest first");

    // Prologue: everything before the reduction is inlined.
    std::vector<int> prologue;
    for (int b = 0; b < r; ++b) {
      const BlockInfo &p = info.blocks[b];
      if (!p.is_inlinable())
        return R::fail("block '" + p.name + "' before the reduction (" + p.dom_kind() + ") cannot be inlined");
      prologue.push_back(b);
      m->prologue.push_back(p.name);
    }
    int mat_k_dim = -1, vec_k_dim = static_cast<int>(vec.dim_iters.size()) - 1;
    for (size_t d = 0; d < mat.dim_iters.size(); ++d)
      if (mat.dim_iters[d][0] == k_iter) mat_k_dim = static_cast<int>(d);
    m->w = find_stream(info, prologue, mat.buffer, mat_k_dim);
    m->x = find_stream(info, prologue, vec.buffer, vec_k_dim);
    if (m->x.pack != 1) m->x = {};

    // Epilogue: injective blocks over the output space consuming the result.
    std::vector<const ir::BufferNode *> produced = {out.buffer.get()};
    if (!f.is_param_buffer(out.buffer)) m->to_local.push_back(bi.name);
    for (size_t b = r + 1; b < info.blocks.size(); ++b) {
      const BlockInfo &e = info.blocks[b];
      const std::string eq = "block '" + e.name + "' after the reduction";
      if (!e.is_injective()) return R::fail(eq + " (" + e.dom_kind() + ") is not an injective epilogue");
      if (!e.trivial_binding) return R::fail(eq + " is not bound one-to-one to loops from 0");
      if (e.is_guarded) return R::fail(eq + " is under a condition");
      bool consumes = false;
      for (const Access &a : e.reads) {
        if (std::find(produced.begin(), produced.end(), a.buffer.get()) == produced.end()) continue;
        consumes = true;
        if (!a.is_simple) return R::fail(eq + " reads '" + a.buffer.name() + "' with expressions, not iter vars");
      }
      if (!consumes) return R::fail(eq + " does not consume its result");
      if (!same_space(e, bi)) return R::fail(eq + " does not iterate over the output's (batch, row) space");
      produced.push_back(e.writes[0].buffer.get());
      m->epilogue.push_back(e.name);
      if (!f.is_param_buffer(e.writes[0].buffer)) m->to_local.push_back(e.name);
    }
    return R(MatchPtr(m));
  }

  std::unique_ptr<Config> default_config(const Match &mm, const Arch &arch) const override {
    const auto &m = static_cast<const GemvMatch &>(mm);
    auto c = std::make_unique<GemvConfig>();
    const int64_t warp = std::max(1, arch.compute.warp_size);
    const int64_t max_threads = arch.limits.max_threads_per_block;
    const int64_t stream_bytes = std::max(1, m.w.bytes > 0 ? m.w.bytes : 2);
    const int64_t target_threads = std::min<int64_t>(4 * warp, max_threads);  // four warps per block
    // A cross-thread reduction over a symbolic k does not lower yet (the
    // lowering cannot prove that a thread's first step is unmasked, k >= 1),
    // so a symbolic k reduces serially in each thread.
    const bool serial_k = m.k < 0;
    if (m.layout == Layout::Inner) {
      // One 16-byte (max_vector_bytes) load per step: 8 float16, 32 int4 weights.
      c->vector = std::max<int64_t>(1, m.max_vector_bytes / stream_bytes) * m.w.pack;
      c->threads_x = serial_k ? 1 : std::min(warp, max_threads);
      while (m.k > 0 && c->threads_x > 4 && c->threads_x * c->vector > m.k) c->threads_x /= 2;
      while (m.k > 0 && c->vector > m.w.pack && c->threads_x * c->vector > m.k) c->vector /= 2;
      // Two loads in flight per thread when the row is long enough, if the
      // steps still divide k (the staged path).
      const int64_t step = c->threads_x * c->vector;
      c->reduce_step = serial_k || (m.k >= 4 * step && m.k % (2 * step) == 0) ? 2 : 1;
      c->threads_y = std::max<int64_t>(1, target_threads / c->threads_x);
      // Keep at least one thread block per SM.
      while (m.rows > 0 && c->threads_y > 1 && (m.rows + c->threads_y - 1) / c->threads_y < arch.compute.sm_count)
        c->threads_y /= 2;
    } else {
      // Threads along m (coalesced rows of W); as many blocks as the SMs
      // take, then threads along k to keep enough loads in flight.
      c->threads_x = std::min(warp, max_threads);
      while (m.rows > 0 && c->threads_x > 8 && (m.rows + c->threads_x - 1) / c->threads_x < 2 * arch.compute.sm_count)
        c->threads_x /= 2;
      while (m.rows > 0 && c->threads_x > 1 && c->threads_x / 2 >= m.rows) c->threads_x /= 2;
      c->vector = 1;
      c->threads_y = serial_k ? 1 : std::max<int64_t>(1, std::min<int64_t>(512, max_threads) / c->threads_x);
      while (m.k > 0 && c->threads_y > 1 && c->threads_y * 4 > m.k) c->threads_y /= 2;
      c->reduce_step = 4;
    }
    c->unroll = true;
    // x in shared memory when its copy keeps a full SM of resident threads.
    int64_t x_bytes = m.k < 0 || m.x.buffer.empty() ? -1 : m.k * m.batch * m.x.bytes;
    int64_t threads = c->threads_x * c->threads_y;
    int64_t blocks_per_sm = std::max<int64_t>(1, arch.limits.max_threads_per_sm / std::max<int64_t>(1, threads));
    c->x_in_shared = x_bytes > 0 && x_bytes <= arch.limits.smem_per_block_bytes &&
                     x_bytes * blocks_per_sm <= arch.limits.smem_per_sm_bytes;
    return c;
  }

  std::unique_ptr<Config> config_from_json(const Json &j) const override {
    return std::make_unique<GemvConfig>(GemvConfig::from_json(j));
  }

  schedule::Schedule build_schedule(const ir::PrimFunc &f, const Match &mm, const Config &config) const override;

 private:
  /// The epilogue's iters have the extents of the reduction's spatial iters
  /// (as a multiset: the epilogue may order its loops differently).
  static bool same_space(const BlockInfo &e, const BlockInfo &red) {
    std::vector<ir::Expr> want;
    for (const auto &it : red.iters)
      if (it.kind == ir::IterKind::Spatial) want.push_back(it.dom.extent);
    if (e.iters.size() != want.size()) return false;
    for (const auto &it : e.iters) {
      auto hit = std::find_if(want.begin(), want.end(),
                              [&](const ir::Expr &x) { return ir::structural_equal(x, it.dom.extent); });
      if (hit == want.end()) return false;
      want.erase(hit);
    }
    return true;
  }
};


/// The position of `buffer` among the T.reads of `block`, or -1.
int64_t read_index(const schedule::Schedule &sch, const BlockRef &block, const std::string &buffer) {
  const auto *b = sch.get(block).as<ir::Block>();
  for (size_t i = 0; i < b->reads.size(); ++i)
    if (b->reads[i].buffer.name() == buffer) return static_cast<int64_t>(i);
  return -1;
}

/// The loops of `block` inside `at` (those compute_at created).
std::vector<LoopRef> loops_inside(schedule::Schedule &sch, const BlockRef &block, const LoopRef &at) {
  std::vector<LoopRef> loops = sch.get_loops(block);
  auto it = std::find(loops.begin(), loops.end(), at);
  return it == loops.end() ? std::vector<LoopRef>{} : std::vector<LoopRef>(it + 1, loops.end());
}

std::optional<int64_t> loop_extent(const schedule::Schedule &sch, const LoopRef &l) {
  return ir::as_const_int(sch.get(l).as<ir::For>()->extent);
}

/// Copies what `block` reads of `buffer` per iteration of `at` into a new
/// buffer of `scope` placed at `at`, moving `lanes` contiguous elements per
/// vector access (the innermost copy loop split and vectorized). Returns the
/// copy block's write buffer name ("" when `buffer` is not read).
std::string stage(schedule::Schedule &sch, const BlockRef &block, const std::string &buffer, const std::string &scope,
                  const LoopRef &at, int64_t lanes, bool unroll) {
  int64_t idx = read_index(sch, block, buffer);
  if (idx < 0) return "";
  BlockRef copy = sch.cache_read(block, idx, scope, buffer + "_" + scope);
  sch.compute_at(copy, at);
  std::vector<LoopRef> loops = loops_inside(sch, copy, at);
  std::optional<int64_t> e = loops.empty() ? std::nullopt : loop_extent(sch, loops.back());
  while (lanes > 1 && e && *e % lanes != 0) lanes /= 2;
  if (e && lanes > 1 && *e > lanes) {
    std::vector<LoopRef> parts = sch.split(loops.back(), {std::nullopt, lanes});
    loops.back() = parts[0];
    sch.vectorize(parts[1]);
  } else if (e && lanes > 1 && *e == lanes) {
    sch.vectorize(loops.back());
    loops.pop_back();
  }
  if (unroll)
    for (const LoopRef &l : loops)
      if (loop_extent(sch, l).value_or(0) > 1) sch.unroll(l);
  return sch.get(copy).as<ir::Block>()->writes[0].buffer.name();
}

/// Copies the whole of `buffer` that `block` reads into shared memory at
/// `at` (the thread block's loop), every thread of the (ty, tx) block moving
/// `lanes` contiguous elements at a time.
std::string stage_shared(schedule::Schedule &sch, const BlockRef &block, const std::string &buffer, const LoopRef &at,
                         int64_t ty, int64_t tx, int64_t lanes) {
  int64_t idx = read_index(sch, block, buffer);
  if (idx < 0) return "";
  BlockRef copy = sch.cache_read(block, idx, "shared", buffer + "_shared");
  sch.compute_at(copy, at);
  std::vector<LoopRef> loops = loops_inside(sch, copy, at);
  if (loops.empty()) return sch.get(copy).as<ir::Block>()->writes[0].buffer.name();
  LoopRef fused = loops.size() == 1 ? loops[0] : sch.fuse(loops);
  std::optional<int64_t> total = loop_extent(sch, fused);
  while (lanes > 1 && (!total || *total % lanes != 0)) lanes /= 2;
  std::vector<std::optional<int64_t>> factors{std::nullopt};
  std::vector<std::string> names{"xs_o"};
  if (ty > 1) factors.push_back(ty), names.push_back("xs_ty");
  if (tx > 1) factors.push_back(tx), names.push_back("xs_tx");
  if (lanes > 1) factors.push_back(lanes), names.push_back("xs_v");
  std::vector<LoopRef> parts = sch.split(fused, factors, names);
  size_t next = 1;
  if (ty > 1) sch.bind(parts[next++], "threadIdx.y");
  if (tx > 1) sch.bind(parts[next++], "threadIdx.x");
  if (lanes > 1) sch.vectorize(parts[next++]);
  return sch.get(copy).as<ir::Block>()->writes[0].buffer.name();
}

/// Splits `loop` into the parts whose factor is not 1; a factor of 0 is the
/// inferred part (exactly one). Returns one entry per factor, nullopt where
/// the factor was 1 (no loop).
std::vector<std::optional<LoopRef>> split_parts(schedule::Schedule &sch, const LoopRef &loop,
                                                const std::vector<int64_t> &factors,
                                                const std::vector<std::string> &names) {
  std::vector<std::optional<int64_t>> f;
  std::vector<std::string> n;
  for (size_t i = 0; i < factors.size(); ++i) {
    if (factors[i] == 1) continue;
    f.push_back(factors[i] == 0 ? std::nullopt : std::optional<int64_t>(factors[i]));
    n.push_back(names[i]);
  }
  std::vector<LoopRef> parts = f.size() == 1 ? std::vector<LoopRef>{loop} : sch.split(loop, f, n);
  std::vector<std::optional<LoopRef>> out;
  size_t next = 0;
  for (int64_t factor : factors) out.push_back(factor != 1 ? std::optional(parts[next++]) : std::nullopt);
  return out;
}

/// Puts the loops of `block` in the order given (missing entries skipped);
/// a no-op when they already are.
void order_loops(schedule::Schedule &sch, const BlockRef &block, const std::vector<std::optional<LoopRef>> &want) {
  std::vector<LoopRef> order;
  for (const auto &l : want)
    if (l) order.push_back(*l);
  std::vector<LoopRef> now = sch.get_loops(block);
  std::vector<LoopRef> tail(now.end() - static_cast<std::ptrdiff_t>(std::min(now.size(), order.size())), now.end());
  if (order.size() > 1 && tail != order) sch.reorder(order);
}

/// Runs the epilogue blocks at `bx` (the thread block's loop), each output
/// element computed by one thread of the (ty, tx) block: after a
/// cross-thread reduction only the first thread of a row holds the result in
/// the reduction's (shared) buffer, and every thread of a row storing it
/// would be a race.
void cooperative_epilogue(schedule::Schedule &sch, const GemvMatch &m, const LoopRef &bx, int64_t ty, int64_t tx) {
  for (const std::string &name : m.epilogue) {
    BlockRef e = sch.get_block(name);
    sch.reverse_compute_at(e, bx, /*preserve_unit_loops=*/true);
    std::vector<LoopRef> loops = loops_inside(sch, e, bx);
    if (loops.empty()) continue;
    LoopRef fused = loops.size() == 1 ? loops[0] : sch.fuse(loops);
    std::vector<std::optional<int64_t>> factors{std::nullopt};
    std::vector<std::string> names{name + "_o"};
    if (ty > 1) factors.push_back(ty), names.push_back(name + "_ty");
    if (tx > 1) factors.push_back(tx), names.push_back(name + "_tx");
    if (factors.size() == 1) continue;
    std::vector<LoopRef> parts = sch.split(fused, factors, names);
    size_t next = 1;
    if (ty > 1) sch.bind(parts[next++], "threadIdx.y");
    if (tx > 1) sch.bind(parts[next++], "threadIdx.x");
  }
}

/// The loops of the rfactor block after compute_at, by the role of the loop
/// each of its iter vars was bound to before (`before`: loop var -> role).
std::map<std::string, LoopRef> loops_by_role(schedule::Schedule &sch, const BlockRef &rf, const LoopRef &at,
                                             const std::vector<std::pair<std::string, int>> &iter_roles) {
  std::map<std::string, LoopRef> out;
  const auto *b = sch.get(rf).as<ir::Block>();
  for (const LoopRef &l : loops_inside(sch, rf, at))
    for (const auto &[role, iter] : iter_roles)
      if (const auto *v = b->bindings[static_cast<size_t>(iter)].as<ir::VarNode>(); v && v == l.var.get())
        out.emplace(role, l);
  return out;
}

/// Inner reduction (see Gemv.h): rows over (blockIdx.x, threadIdx.y), k over
/// threadIdx.x. With a constant k that the thread chunks divide, the loop
/// nest is rfactored over tx so that each thread's partial sums live in a
/// nest of their own, where the matrix and vector loads can be staged in
/// registers with vector loads (the cross-thread write-back nest holds only
/// the reduction, as its lowering requires); otherwise the loads are direct
/// and masked.
bool schedule_inner(schedule::Schedule &sch, const GemvMatch &m, const GemvConfig &c, const BlockRef &blk,
                    const LoopRef &row, const LoopRef &k, const std::optional<LoopRef> &bb) {
  const int64_t lanes_x = std::max<int64_t>(1, m.max_vector_bytes / std::max(1, m.x.bytes));
  int64_t lanes_w = std::max<int64_t>(1, c.vector / m.w.pack);
  lanes_w = std::min(lanes_w, std::max<int64_t>(1, m.max_vector_bytes / std::max(1, m.w.bytes)));
  const int64_t chunk = c.threads_x * c.reduce_step * c.vector;
  auto unroll_steps = [&](const std::vector<std::optional<LoopRef>> &ls) {
    if (c.unroll)
      for (const auto &l : ls)
        if (l) sch.unroll(*l);
  };
  const std::vector<std::string> k_names = {"ko", "tx", "rs", "v"};

  if (c.threads_x > 1 && m.k > 0 && m.k % chunk == 0) {
    // Staged: rfactor over tx (before the rows are split, so that the
    // partial-sum block has no predicate to lose), then move the partial-sum
    // nest under the write-back's row loop.
    order_loops(sch, blk, {row, bb, k});
    auto kk = split_parts(sch, k, {0, c.threads_x, c.reduce_step, c.vector}, k_names);
    std::optional<LoopRef> ko = kk[0], tx = kk[1], rs = kk[2], v = kk[3];
    order_loops(sch, blk, {row, bb, tx, ko, rs, v});
    std::vector<std::pair<std::string, int>> iter_roles;
    BlockRef rf = sch.rfactor(*tx, 0);
    {
      const auto *b = sch.get(rf).as<ir::Block>();
      std::vector<std::pair<std::string, std::optional<LoopRef>>> roles = {
          {"tx", tx}, {"ko", ko}, {"rs", rs}, {"v", v}, {"b", bb}};
      for (size_t i = 0; i < b->bindings.size(); ++i)
        for (const auto &[role, l] : roles)
          if (l && b->bindings[i].as<ir::VarNode>() == l->var.get()) iter_roles.emplace_back(role, static_cast<int>(i));
    }
    std::vector<LoopRef> wb = sch.get_loops(blk);  // copies of row (and bb), then tx
    const LoopRef wtx = wb.back();
    std::optional<LoopRef> wbb;
    if (bb) wbb = wb[wb.size() - 2];
    auto r = split_parts(sch, wb.front(), {0, c.threads_y}, {"bx", "ty"});
    const LoopRef wbx = *r[0];
    const std::optional<LoopRef> wty = r[1];
    sch.bind(wbx, "blockIdx.x");
    if (wty) sch.bind(*wty, "threadIdx.y");
    sch.bind(wtx, "threadIdx.x");
    const LoopRef at = wty ? *wty : wbx;
    sch.compute_at(rf, at);
    std::map<std::string, LoopRef> rl = loops_by_role(sch, rf, at, iter_roles);
    auto role = [&](const char *name) -> std::optional<LoopRef> {
      auto it = rl.find(name);
      return it == rl.end() ? std::nullopt : std::optional<LoopRef>(it->second);
    };
    std::optional<LoopRef> rtx = role("tx"), rko = role("ko"), rrs = role("rs"), rv = role("v"), rb = role("b");
    if (!rtx) throw schedule::SimpleScheduleError("compute_at", "gemv: the partial-sum nest lost its thread loop");
    try {
      order_loops(sch, rf, {rtx, rko, rrs, rv, rb});
    } catch (const schedule::ScheduleError &) {
      // A symbolic row tail predicate blocks reorder (the schedule is left
      // as it was): the batch loop then stays outside the steps.
      order_loops(sch, rf, {rtx, rko, rrs, rv});
    }
    sch.bind(*rtx, "threadIdx.x");
    std::string x_buf = m.x.buffer;
    if (c.x_in_shared) x_buf = stage_shared(sch, rf, x_buf, wbx, wty ? c.threads_y : 1, c.threads_x, lanes_x);
    // A single step (k = one chunk) leaves no step loop: stage per thread.
    const LoopRef step = rko ? *rko : *rtx;
    if (!m.w.buffer.empty()) stage(sch, rf, m.w.buffer, "local", step, lanes_w, c.unroll);
    if (!x_buf.empty()) stage(sch, rf, x_buf, "local", step, std::min(c.vector, lanes_x), c.unroll);
    unroll_steps({rrs, rv, rb});
    for (const auto &l : {rko, rrs, rv})
      if (l) {
        sch.decompose_reduction(rf, *l);
        break;
      }
    cooperative_epilogue(sch, m, wbx, wty ? c.threads_y : 1, c.threads_x);
    sch.set_scope(rf, 0, "local");
    return true;
  }

  if (c.threads_x == 1) {
    // One thread per row: a plain per-thread reduction, every b per weight load.
    order_loops(sch, blk, {row, k, bb});
    auto r = split_parts(sch, row, {0, c.threads_y}, {"bx", "ty"});
    auto kk = split_parts(sch, k, {0, c.reduce_step, c.vector}, {"ko", "rs", "v"});
    std::optional<LoopRef> bx = r[0], ty = r[1], ko = kk[0], rs = kk[1], v = kk[2];
    sch.bind(*bx, "blockIdx.x");
    if (ty) sch.bind(*ty, "threadIdx.y");
    std::string x_buf = m.x.buffer;
    if (c.x_in_shared) x_buf = stage_shared(sch, blk, x_buf, *bx, ty ? c.threads_y : 1, 1, lanes_x);
    if (!m.w.buffer.empty()) stage(sch, blk, m.w.buffer, "local", *ko, lanes_w, c.unroll);
    if (!x_buf.empty()) stage(sch, blk, x_buf, "local", *ko, std::min(c.vector, lanes_x), c.unroll);
    unroll_steps({rs, v, bb});
    sch.decompose_reduction(blk, *ko);
    for (const std::string &e : m.epilogue) sch.reverse_compute_at(sch.get_block(e), ty ? *ty : *bx);
    return false;
  }
  // Masked tail (or symbolic sizes): the cross-thread reduce nest must hold
  // the block alone, so the loads are direct. With constant sizes the chunks
  // of a step are contiguous across the threads (coalesced); reorder cannot
  // move loops under a symbolic tail predicate, so there each thread takes a
  // contiguous range of k instead.
  order_loops(sch, blk, {row, bb, k});
  auto r = split_parts(sch, row, {0, c.threads_y}, {"bx", "ty"});
  std::optional<LoopRef> bx = r[0], ty = r[1], ko, tx, rs, v;
  if (m.rows > 0 && m.k > 0) {
    auto kk = split_parts(sch, k, {0, c.threads_x, c.reduce_step, c.vector}, k_names);
    ko = kk[0], tx = kk[1], rs = kk[2], v = kk[3];
    order_loops(sch, blk, {bx, ty, bb, tx, ko, rs, v});
  } else {
    auto kk = split_parts(sch, k, {c.threads_x, 0, c.reduce_step, c.vector}, {"tx", "ko", "rs", "v"});
    tx = kk[0], ko = kk[1], rs = kk[2], v = kk[3];
  }
  sch.bind(*bx, "blockIdx.x");
  if (ty) sch.bind(*ty, "threadIdx.y");
  sch.bind(*tx, "threadIdx.x");
  if (c.x_in_shared) stage_shared(sch, blk, m.x.buffer, *bx, ty ? c.threads_y : 1, c.threads_x, lanes_x);
  unroll_steps({rs, v});
  cooperative_epilogue(sch, m, *bx, ty ? c.threads_y : 1, c.threads_x);
  return true;
}

/// Outer reduction (see Gemv.h): threads along m; k serial per thread, or
/// also split over threadIdx.y (a cross-thread reduction whose nest holds
/// the block alone).
bool schedule_outer(schedule::Schedule &sch, const GemvMatch &m, const GemvConfig &c, const BlockRef &blk,
                    const LoopRef &row, const LoopRef &k, const std::optional<LoopRef> &bb) {
  const int64_t lanes_x = std::max<int64_t>(1, m.max_vector_bytes / std::max(1, m.x.bytes));
  if (c.threads_y == 1) {
    order_loops(sch, blk, {row, k, bb});
    std::optional<LoopRef> bx, tx, vm, ko, rs;
    // With constant sizes each thread owns `vector` adjacent m (vector loads
    // of W); reorder cannot cross a symbolic tail predicate, so there the
    // `vector` rows of a thread are threads_x apart and reduced in turn.
    const bool adjacent = m.rows > 0 && m.k > 0;
    if (adjacent) {
      auto r = split_parts(sch, row, {0, c.threads_x, c.vector}, {"bx", "tx", "vm"});
      bx = r[0], tx = r[1], vm = r[2];
    } else {
      auto r = split_parts(sch, row, {0, c.vector, c.threads_x}, {"bx", "vm", "tx"});
      bx = r[0], vm = r[1], tx = r[2];
    }
    auto kk = split_parts(sch, k, {0, c.reduce_step}, {"ko", "rs"});
    ko = kk[0], rs = kk[1];
    if (adjacent) order_loops(sch, blk, {bx, tx, ko, rs, vm, bb});
    sch.bind(*bx, "blockIdx.x");
    if (tx) sch.bind(*tx, "threadIdx.x");
    std::string x_buf = m.x.buffer;
    if (c.x_in_shared) x_buf = stage_shared(sch, blk, x_buf, *bx, 1, tx ? c.threads_x : 1, lanes_x);
    if (adjacent && !m.w.buffer.empty() && m.w.pack == 1) {
      int64_t lanes = std::min(c.vector, std::max<int64_t>(1, m.max_vector_bytes / std::max(1, m.w.bytes)));
      stage(sch, blk, m.w.buffer, "local", *ko, lanes, c.unroll);
    }
    if (!x_buf.empty()) stage(sch, blk, x_buf, "local", *ko, std::min(c.reduce_step, lanes_x), c.unroll);
    if (c.unroll)
      for (const auto &l : {rs, adjacent ? vm : std::nullopt, bb})
        if (l) sch.unroll(*l);
    sch.decompose_reduction(blk, *ko);
    for (const std::string &e : m.epilogue) sch.reverse_compute_at(sch.get_block(e), tx ? *tx : *bx);
    return false;
  }
  // k over threadIdx.y as well (each ty a contiguous range of k); the
  // batch inside the row loops, outside the reduction.
  order_loops(sch, blk, {row, bb, k});
  auto r = split_parts(sch, row, {0, c.vector, c.threads_x}, {"bx", "vm", "tx"});
  auto kk = split_parts(sch, k, {c.threads_y, 0, c.reduce_step}, {"ty", "ko", "rs"});
  std::optional<LoopRef> bx = r[0], vm = r[1], tx = r[2], ty = kk[0], ko = kk[1], rs = kk[2];
  sch.bind(*bx, "blockIdx.x");
  if (tx) sch.bind(*tx, "threadIdx.x");
  sch.bind(*ty, "threadIdx.y");
  if (c.x_in_shared) stage_shared(sch, blk, m.x.buffer, *bx, c.threads_y, tx ? c.threads_x : 1, lanes_x);
  if (c.unroll && rs) sch.unroll(*rs);
  cooperative_epilogue(sch, m, *bx, c.threads_y, tx ? c.threads_x : 1);
  return true;
}

schedule::Schedule GemvRule::build_schedule(const ir::PrimFunc &f, const Match &mm, const Config &config) const {
  const auto &m = static_cast<const GemvMatch &>(mm);
  const auto *c = dynamic_cast<const GemvConfig *>(&config);
  if (!c) throw ConfigError(std::string("the gemv rule got a config for '") + config.rule() + "'");
  if (c->x_in_shared) {
    if (m.k < 0) throw ConfigError("gemv config: x_in_shared needs a constant k; this gemv's k is symbolic");
    if (m.x.buffer.empty())
      throw ConfigError("gemv config: x_in_shared: the vector '" + m.vector + "' is not read from one buffer");
    int64_t bytes = m.k * m.batch * m.x.bytes;
    if (bytes > m.max_smem)
      throw ConfigError("gemv config: x_in_shared needs " + std::to_string(bytes) +
                        " bytes of shared memory, more than the " + std::to_string(m.max_smem) + " a block may use");
  }
  schedule::Schedule sch(f);
  for (const std::string &p : m.prologue) sch.compute_inline(sch.get_block(p));
  BlockRef blk = sch.get_block(m.block);
  // A serial reduction into an output parameter accumulates in registers and
  // stores once (the copy runs as the first epilogue block).
  const bool serial = m.layout == Layout::Inner ? c->threads_x == 1 : c->threads_y == 1;
  const bool to_param = std::find(m.to_local.begin(), m.to_local.end(), m.block) == m.to_local.end();
  GemvMatch plan = m;
  if (serial && to_param) {
    BlockRef store = sch.cache_write(blk, 0, "local");
    plan.epilogue.insert(plan.epilogue.begin(), store.name);
  }
  std::vector<LoopRef> loops = sch.get_loops(blk);
  std::optional<LoopRef> bb;
  if (m.batch_loop >= 0) bb = loops[m.batch_loop];
  LoopRef row = loops[m.row_loop];
  if (!m.unit_loops.empty()) {
    // The unit axes go into the row loop: moved just outside it, then fused.
    std::vector<LoopRef> fused;
    for (int u : m.unit_loops) fused.push_back(loops[u]);
    fused.push_back(row);
    // Every loop in its old place, except that the unit loops come right
    // before the row loop.
    std::vector<LoopRef> order;
    for (size_t l = 0; l < loops.size(); ++l) {
      bool unit = std::find(m.unit_loops.begin(), m.unit_loops.end(), int(l)) != m.unit_loops.end();
      if (unit) continue;
      if (int(l) == m.row_loop) order.insert(order.end(), fused.begin(), fused.end());
      else order.push_back(loops[l]);
    }
    sch.reorder(order);
    row = sch.fuse(fused, loops[m.row_loop].name());
  }
  bool cross_thread = m.layout == Layout::Inner ? schedule_inner(sch, plan, *c, blk, row, loops[m.k_loop], bb)
                                                : schedule_outer(sch, plan, *c, blk, row, loops[m.k_loop], bb);
  // Intermediates stay in registers; after a cross-thread reduction the
  // result goes through shared memory to the threads of the epilogue.
  for (const std::string &b : m.to_local)
    sch.set_scope(sch.get_block(b), 0, cross_thread && b == m.block ? "shared" : "local");
  return sch;
}

}  // namespace

const Rule &gemv_rule() {
  static const GemvRule rule;
  return rule;
}

}  // namespace tessera::rules
