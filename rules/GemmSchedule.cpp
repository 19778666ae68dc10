//===- rules/GemmSchedule.cpp - The SIMT GEMM schedule shared by matmul and conv -===//
#include "GemmSchedule.h"

#include <algorithm>
#include <bit>
#include <map>
#include <set>

#include "tessera/analysis/BlockInfo.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Stmt.h"
#include "tessera/support/Error.h"

namespace tessera::rules::detail {

using schedule::BlockRef;
using schedule::LoopRef;
using schedule::Schedule;

namespace {

/// The loops of a block, with the pieces each tiled loop was split into.
struct Pieces {
  std::vector<LoopRef> batch, m_outer, n_outer, m_thread, n_thread, k_outer, k_inner, m_per, n_per;
};

std::optional<int64_t> const_extent(const Schedule &sch, const LoopRef &l) {
  return ir::as_const_int(sch.get(l).as<ir::For>()->extent);
}

/// Splits a spatial loop into (block tiles, threads, per thread), leaving
/// out pieces of one.
void split_spatial(Schedule &sch, const LoopRef &loop, const TiledLoop &t, std::vector<LoopRef> &outer,
                   std::vector<LoopRef> &thread, std::vector<LoopRef> &per) {
  TESSERA_ICHECK(t.block >= 1 && t.threads >= 1 && t.block % t.threads == 0)
      << "bad tile for iter " << t.iter;
  int64_t per_thread = t.block / t.threads;
  std::vector<std::optional<int64_t>> factors{std::nullopt};
  if (t.threads > 1) factors.push_back(t.threads);
  if (per_thread > 1) factors.push_back(per_thread);
  if (factors.size() == 1) {
    outer.push_back(loop);
    return;
  }
  std::vector<LoopRef> parts = sch.split(loop, factors);
  size_t next = 0;
  outer.push_back(parts[next++]);
  if (t.threads > 1) thread.push_back(parts[next++]);
  if (per_thread > 1) per.push_back(parts[next++]);
}

/// Splits a reduce loop into (outer, K step); `always` splits even when the
/// step covers the loop (the last K loop, so that a K outer loop exists).
void split_reduce(Schedule &sch, const LoopRef &loop, int64_t step, bool always, std::vector<LoopRef> &outer,
                  std::vector<LoopRef> &inner) {
  TESSERA_ICHECK(step >= 1) << "bad K step " << step;
  std::optional<int64_t> extent = const_extent(sch, loop);
  if (!always && step == 1) {
    outer.push_back(loop);
    return;
  }
  if (!always && extent && step >= *extent) {
    inner.push_back(loop);
    return;
  }
  std::vector<LoopRef> parts = sch.split(loop, {std::nullopt, step});
  outer.push_back(parts[0]);
  inner.push_back(parts[1]);
}

std::optional<LoopRef> fuse_all(Schedule &sch, const std::vector<LoopRef> &loops) {
  if (loops.empty()) return std::nullopt;
  if (loops.size() == 1) return loops[0];
  return sch.fuse(loops);
}

/// The position of `buffer` (by name) among the reads of `block`.
int64_t read_index(const Schedule &sch, const BlockRef &block, const std::string &buffer) {
  const auto &reads = sch.get(block).as<ir::Block>()->reads;
  for (size_t i = 0; i < reads.size(); ++i)
    if (reads[i].buffer.name() == buffer) return static_cast<int64_t>(i);
  TESSERA_ICHECK(false) << "block '" << block.name << "' does not read '" << buffer << "'";
  return -1;
}

/// The loops of `block` below `anchor` (its own loops after compute_at).
std::vector<LoopRef> loops_below(Schedule &sch, const BlockRef &block, const LoopRef &anchor) {
  std::vector<LoopRef> all = sch.get_loops(block);
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i] == anchor) return {all.begin() + static_cast<std::ptrdiff_t>(i) + 1, all.end()};
  TESSERA_ICHECK(false) << "loop '" << anchor.name() << "' is not above block '" << block.name << "'";
  return {};
}

/// Every thread of the block copies `vector`-element chunks, consecutive
/// threads consecutive chunks (coalesced along the innermost dimension).
void cooperative_fetch(Schedule &sch, const BlockRef &copy, const LoopRef &anchor, int64_t ty, int64_t tx,
                       int64_t vector) {
  std::vector<LoopRef> own = loops_below(sch, copy, anchor);
  if (own.empty()) return;  // a single element: every thread stores it (same value)
  LoopRef fused = *fuse_all(sch, own);
  std::optional<int64_t> extent = const_extent(sch, fused);
  // No outer loop when one round of the threads covers the tile.
  bool outer = !extent || *extent > ty * tx * vector;
  std::vector<std::optional<int64_t>> factors;
  factors.reserve(4);
  if (outer) factors.push_back(std::nullopt);
  if (ty > 1) factors.push_back(ty);
  if (tx > 1) factors.push_back(tx);
  if (vector > 1) factors.push_back(vector);
  if (factors.size() <= 1 && outer) return;
  // A single piece that is not exactly the thread count still gets split
  // (to the thread count, masked), so that every loop bound to a thread
  // axis has the compute's extent.
  bool exact = factors.size() == 1 && extent == factors[0];
  std::vector<LoopRef> parts = exact ? std::vector<LoopRef>{fused} : sch.split(fused, factors);
  size_t next = 0;
  if (outer) sch.unroll(parts[next++]);
  if (ty > 1) sch.bind(parts[next++], "threadIdx.y");
  if (tx > 1) sch.bind(parts[next++], "threadIdx.x");
  if (vector > 1) sch.vectorize(parts[next++]);
}

/// Splits the write-back's loops (one per output dimension, under `tile`)
/// like the compute's: threads of the M and N loops bound as there, per-thread
/// pieces unrolled innermost, the last one stored `vector_c` at a time.
void tile_write_back(Schedule &sch, const BlockRef &wb, const LoopRef &tile, const analysis::BlockInfo &blk,
                     const GemmPlan &p) {
  std::vector<LoopRef> own = loops_below(sch, wb, tile);
  const analysis::Access &out = blk.writes[0];
  TESSERA_ICHECK(own.size() == out.dim_iters.size())
      << "write-back of '" << p.block << "' has " << own.size() << " loops for " << out.dim_iters.size()
      << " dimensions";
  std::vector<LoopRef> outer, m_per, n_per;
  // Thread pieces by their loop's position in the plan: fused in the
  // compute's order, so that each thread writes back the tile it computed
  // whatever the output's dimension order.
  std::map<size_t, LoopRef> m_threads, n_threads;
  bool last_is_n = false;
  for (size_t d = 0; d < own.size(); ++d) {
    int it = out.dim_iters[d].size() == 1 ? out.dim_iters[d][0] : -1;
    const TiledLoop *t = nullptr;
    bool is_n = false;
    size_t pos = 0;
    for (size_t i = 0; i < p.m.size(); ++i)
      if (p.m[i].iter == it) t = &p.m[i], pos = i;
    for (size_t i = 0; i < p.n.size(); ++i)
      if (p.n[i].iter == it) t = &p.n[i], pos = i, is_n = true;
    if (!t) {
      outer.push_back(own[d]);  // a batch dimension: one per block
      continue;
    }
    // The loop covers the block's tile: threads x per-thread pieces, no outer one.
    std::vector<LoopRef> per;
    int64_t per_thread = t->block / t->threads;
    std::vector<std::optional<int64_t>> factors;
    if (t->threads > 1) factors.push_back(t->threads);
    if (per_thread > 1) factors.push_back(per_thread);
    if (factors.empty()) {
      outer.push_back(own[d]);
      continue;
    }
    bool exact = factors.size() == 1 && const_extent(sch, own[d]) == factors[0];
    std::vector<LoopRef> parts = exact ? std::vector<LoopRef>{own[d]} : sch.split(own[d], factors);
    if (t->threads > 1) (is_n ? n_threads : m_threads).emplace(pos, parts[0]);
    if (per_thread > 1) per.push_back(parts.back());
    (is_n ? n_per : m_per).insert((is_n ? n_per : m_per).end(), per.begin(), per.end());
    last_is_n = is_n && d + 1 == own.size() && !per.empty();
  }
  std::vector<LoopRef> m_thread, n_thread;
  for (const auto &[pos, l] : m_threads) m_thread.push_back(l);
  for (const auto &[pos, l] : n_threads) n_thread.push_back(l);
  std::vector<LoopRef> order;
  for (const auto *g : {&outer, &m_thread, &n_thread, &m_per, &n_per})
    order.insert(order.end(), g->begin(), g->end());
  if (order.size() > 1) sch.reorder(order);
  if (auto ty = fuse_all(sch, m_thread)) sch.bind(*ty, "threadIdx.y");
  if (auto tx = fuse_all(sch, n_thread)) sch.bind(*tx, "threadIdx.x");
  std::optional<LoopRef> vector;
  if (last_is_n && p.vector_c > 1) {
    if (const_extent(sch, n_per.back()) == p.vector_c) {
      vector = n_per.back();
      n_per.pop_back();
    } else {
      std::vector<LoopRef> parts = sch.split(n_per.back(), {std::nullopt, p.vector_c});
      n_per.back() = parts[0];
      vector = parts[1];
    }
  }
  for (const auto *g : {&m_per, &n_per})
    for (const LoopRef &l : *g) sch.unroll(l);
  if (vector) sch.vectorize(*vector);
}

/// lambda v0, .., vn: (v0, .., vn, vn-1): the last two dimensions swapped.
schedule::IndexMap swap_last_two(int ndim) {
  schedule::IndexMap m;
  for (int d = 0; d < ndim; ++d) m.src.emplace_back("v" + std::to_string(d), ir::DataType::int32());
  for (int d = 0; d < ndim; ++d) m.dst.push_back(m.src[d]);
  std::swap(m.dst[ndim - 1], m.dst[ndim - 2]);
  return m;
}

/// The read of `buffer` in `b`, or nullptr.
const analysis::Access *read_of(const analysis::BlockInfo &b, const ir::Buffer &buffer) {
  for (const analysis::Access &a : b.reads)
    if (a.buffer.same_as(buffer)) return &a;
  return nullptr;
}

}  // namespace

std::string find_prologue_epilogue(const analysis::FuncInfo &info, int r,
                                   std::vector<std::string> &prologue_names,
                                   std::vector<std::string> &epilogue_names) {
  const analysis::BlockInfo &red = info.blocks[r];
  std::set<int> prologue;
  for (int i = 0; i < r; ++i) {
    const analysis::BlockInfo &b = info.blocks[i];
    if (!b.is_inlinable())
      return "block '" + b.name + "' (" + b.dom_kind() +
             ") before the reduction cannot be inlined into its operands";
    prologue.insert(i);
    prologue_names.push_back(b.name);
  }
  for (int i : prologue)
    for (int c : info.blocks[i].consumers)
      if (c != r && !prologue.count(c))
        return "block '" + info.blocks[i].name + "' before the reduction also feeds block '" +
               info.blocks[c].name + "'";
  ir::Buffer current = red.writes[0].buffer;
  for (size_t i = r + 1; i < info.blocks.size(); ++i) {
    const analysis::BlockInfo &b = info.blocks[i];
    const std::string q = "epilogue block '" + b.name + "'";
    if (red.writes_output || (i > static_cast<size_t>(r) + 1 && info.blocks[i - 1].writes_output))
      return q + " reads '" + current.name() + "', an output of the function (it cannot be folded)";
    if (!b.is_elementwise()) return q + " (" + b.dom_kind() + ") is not elementwise";
    if (b.writes.size() != 1) return q + " writes " + std::to_string(b.writes.size()) + " buffers, not 1";
    const analysis::Access *in = read_of(b, current);
    if (!in) return q + " does not read '" + current.name() + "', the previous block's result";
    int uses = 0;
    for (const analysis::Access &a : b.reads) uses += a.buffer.same_as(current);
    if (uses != 1 || in->indices.size() != b.iters.size())
      return q + " reads '" + current.name() + "' other than once, element for element";
    for (const analysis::Access &a : b.reads)
      for (size_t j = r + 1; j < i; ++j)
        if (!a.buffer.same_as(current) && a.buffer.same_as(info.blocks[j].writes[0].buffer))
          return q + " reads '" + a.buffer.name() + "', an earlier intermediate";
    epilogue_names.push_back(b.name);
    current = b.writes[0].buffer;
  }
  return "";
}

Schedule schedule_gemm(const ir::PrimFunc &f, const GemmPlan &p) {
  Schedule sch(f);
  schedule_gemm(sch, p);
  return sch;
}

void schedule_gemm(Schedule &sch, const GemmPlan &p) {
  analysis::FuncInfo info = analysis::analyze(sch.func());
  int bi = info.find(p.block);
  TESSERA_ICHECK(bi >= 0) << "no block '" << p.block << "'";
  const analysis::BlockInfo &blk = info.blocks[bi];
  BlockRef c = sch.get_block(p.block);
  std::vector<LoopRef> loops = sch.get_loops(c);
  auto loop_of = [&](int iter) {
    TESSERA_ICHECK(iter >= 0 && iter < static_cast<int>(blk.iters.size()) && blk.iters[iter].loop.defined())
        << "iter " << iter << " of '" << p.block << "' has no loop of its own";
    for (const LoopRef &l : loops)
      if (l.var.same_as(blk.iters[iter].loop)) return l;
    TESSERA_ICHECK(false) << "the loop of iter " << iter << " is not above '" << p.block << "'";
    return loops[0];
  };

  // Step 1. Tile: split every loop by its role, reorder, fuse and bind.
  Pieces pc;
  for (int it : p.batch) pc.batch.push_back(loop_of(it));
  for (const TiledLoop &t : p.m) split_spatial(sch, loop_of(t.iter), t, pc.m_outer, pc.m_thread, pc.m_per);
  for (const TiledLoop &t : p.n) split_spatial(sch, loop_of(t.iter), t, pc.n_outer, pc.n_thread, pc.n_per);
  for (size_t i = 0; i < p.k.size(); ++i)
    split_reduce(sch, loop_of(p.k[i].iter), p.k[i].block, i + 1 == p.k.size(), pc.k_outer, pc.k_inner);
  TESSERA_ICHECK(!pc.k_outer.empty() && !pc.k_inner.empty()) << "no K step";
  std::vector<LoopRef> order;
  // The K step loops sit above the thread loops, so that the tiles fetched
  // at the innermost of them are the whole block's (compute_at relaxes the
  // loops below its target only).
  for (const auto *g : {&pc.batch, &pc.m_outer, &pc.n_outer, &pc.k_outer, &pc.m_thread, &pc.n_thread,
                        &pc.k_inner, &pc.m_per, &pc.n_per})
    order.insert(order.end(), g->begin(), g->end());
  sch.reorder(order);
  std::optional<LoopRef> bz = fuse_all(sch, pc.batch), by = fuse_all(sch, pc.m_outer),
                         bx = fuse_all(sch, pc.n_outer), ty = fuse_all(sch, pc.m_thread),
                         tx = fuse_all(sch, pc.n_thread);
  if (bz) sch.bind(*bz, "blockIdx.z");
  if (by) sch.bind(*by, "blockIdx.y");
  if (bx) sch.bind(*bx, "blockIdx.x");
  if (ty) sch.bind(*ty, "threadIdx.y");
  if (tx) sch.bind(*tx, "threadIdx.x");
  int64_t threads_y = 1, threads_x = 1;
  for (const TiledLoop &t : p.m) threads_y *= t.threads;
  for (const TiledLoop &t : p.n) threads_x *= t.threads;
  // The innermost loop of the block's tile: where the write-back goes.
  LoopRef tile = bx ? *bx : by ? *by : *bz;

  // Step 2. Operands: shared tiles (optionally K-major), register fragments,
  // the prologue inlined into the fetches.
  struct Staged {
    const OperandPlan *plan;
    BlockRef shared;
    std::optional<BlockRef> local;
  };
  std::vector<Staged> staged;
  for (const OperandPlan *op : {&p.a, &p.b}) {
    BlockRef s = sch.cache_read(c, read_index(sch, c, op->buffer), "shared");
    if (op->k_major) {
      int ndim = sch.get(s).as<ir::Block>()->writes[0].buffer.ndim();
      sch.transform_layout(s, 0, true, swap_last_two(ndim));
    }
    staged.push_back({op, s, std::nullopt});
  }
  for (const std::string &name : p.prologue) sch.compute_inline(sch.get_block(name));
  for (Staged &st : staged) {
    if (!st.plan->fragment) continue;
    std::string shared = sch.get(st.shared).as<ir::Block>()->writes[0].buffer.name();
    st.local = sch.cache_read(c, read_index(sch, c, shared), "local");
    sch.compute_at(*st.local, pc.k_inner.back());
    std::vector<LoopRef> own = loops_below(sch, *st.local, pc.k_inner.back());
    if (!own.empty()) {
      for (size_t i = 0; i + 1 < own.size(); ++i) sch.unroll(own[i]);
      sch.vectorize(own.back());
    }
  }
  for (Staged &st : staged) {
    sch.compute_at(st.shared, pc.k_outer.back());
    cooperative_fetch(sch, st.shared, pc.k_outer.back(), threads_y, threads_x, st.plan->vector);
    if (st.plan->pad > 0) {
      int ndim = sch.get(st.shared).as<ir::Block>()->writes[0].buffer.ndim();
      // Row pitch exactly pitch + pad: the smallest multiple of it.
      sch.storage_align(st.shared, 0, ndim - 2, st.plan->pitch + st.plan->pad, 0);
    }
  }

  // Step 3. Accumulate in registers; the epilogue rides on the write-back,
  // which each thread does for its own tile (split and bound as the compute).
  BlockRef wb = sch.cache_write(c, 0, "local");
  for (const std::string &name : p.epilogue) sch.reverse_compute_inline(sch.get_block(name));
  sch.reverse_compute_at(wb, tile, /*preserve_unit_loops=*/true);
  tile_write_back(sch, wb, tile, blk, p);
  BlockRef init = sch.decompose_reduction(c, pc.k_outer.front());
  for (const LoopRef &l : loops_below(sch, init, tile))
    if (sch.get(l).as<ir::For>()->for_kind == ir::ForKind::Serial) sch.unroll(l);

  // Step 4. Registers are indexed by the per-thread pieces: unroll them.
  int64_t per_thread = 1;
  for (const auto *g : {&pc.m_per, &pc.n_per})
    for (const LoopRef &l : *g) {
      sch.unroll(l);
      if (auto e = ir::as_const_int(sch.get(l).as<ir::For>()->extent)) per_thread *= *e;
    }
  if (p.unroll) unroll_k_inner(sch, pc.k_inner.back(), per_thread);

  // Step 5. Pipeline the K steps: the fetches at stage 0 (asynchronous),
  // the statement holding the compute at the last.
  if (p.stages > 1) {
    const LoopRef &k_step = pc.k_outer.back();
    ir::Stmt body = sch.get(k_step).as<ir::For>()->body;
    std::vector<ir::Stmt> parts = {body};
    if (const auto *seq = body.as<ir::Seq>()) parts = seq->stmts;
    ir::AnnValue::List stage;
    for (const ir::Stmt &s : parts) {
      bool computes = false;
      ir::pre_order_visit(s, nullptr, [&](const ir::Stmt &x) {
        if (const auto *b = x.as<ir::Block>(); b && b->name == p.block) computes = true;
      });
      stage.push_back(ir::AnnValue(computes ? p.stages - 1 : 0));
    }
    sch.annotate(k_step, "software_pipeline_stage", stage);
    sch.annotate(k_step, "software_pipeline_async_stages", ir::AnnValue::List{0});
  }
}

void unroll_k_inner(schedule::Schedule &sch, const schedule::LoopRef &k, int64_t per_thread) {
  std::optional<int64_t> extent = ir::as_const_int(sch.get(k).as<ir::For>()->extent);
  int64_t fit = std::max<int64_t>(1, kMaxUnrolledFmas / std::max<int64_t>(per_thread, 1));
  auto chunk = int64_t(std::bit_floor(uint64_t(fit)));  // a power of two
  if (!extent || *extent <= chunk || *extent % chunk != 0) {
    sch.unroll(k);
    return;
  }
  std::vector<LoopRef> parts = sch.split(k, {std::nullopt, chunk});
  sch.unroll(parts[1]);
}

int64_t bank_conflict_degree(const std::vector<int64_t> &byte_addresses, int64_t access_bytes, int64_t banks,
                             int64_t bank_bytes) {
  if (banks <= 0 || bank_bytes <= 0) return 1;
  // Accesses wider than a bank are served in phases of lanes that together
  // move banks x bank_bytes bytes (8 lanes of 16 bytes, 16 lanes of 8 bytes).
  const size_t phase =
      static_cast<size_t>(std::max<int64_t>(1, banks * bank_bytes / std::max(access_bytes, bank_bytes)));
  const size_t words_per_lane =
      static_cast<size_t>(std::max<int64_t>(1, (access_bytes + bank_bytes - 1) / bank_bytes));
  // The distinct words of each bank in a phase, `cap` slots per bank (scratch
  // kept between calls: policies call this for every candidate pad).
  const size_t cap = phase * words_per_lane;
  // Power-of-two banks and bank widths (every GPU's) by shift and mask: this runs per lane.
  const bool pow2 = (banks & (banks - 1)) == 0 && (bank_bytes & (bank_bytes - 1)) == 0;
  const int shift = pow2 ? std::countr_zero(static_cast<uint64_t>(bank_bytes)) : 0;
  auto divide = [&](int64_t bytes) { return pow2 ? bytes >> shift : bytes / bank_bytes; };
  auto bank_of = [&](int64_t word) { return pow2 ? word & (banks - 1) : word % banks; };
  thread_local std::vector<int64_t> slots, count;
  slots.resize(static_cast<size_t>(banks) * cap);
  count.resize(static_cast<size_t>(banks));
  int64_t worst = 1;
  for (size_t start = 0; start < byte_addresses.size(); start += phase) {
    std::fill(count.begin(), count.end(), 0);
    for (size_t l = start; l < byte_addresses.size() && l < start + phase; ++l)
      for (size_t w = 0; w < words_per_lane; ++w) {
        const int64_t word = divide(byte_addresses[l]) + static_cast<int64_t>(w);
        const size_t bank = static_cast<size_t>(bank_of(word));
        int64_t *own = &slots[bank * cap];
        if (std::find(own, own + count[bank], word) != own + count[bank]) continue;  // broadcast
        own[count[bank]++] = word;
        worst = std::max(worst, count[bank]);
      }
  }
  return worst;
}

int64_t widest_vector(int64_t max_lanes, std::initializer_list<int64_t> extents) {
  int64_t v = std::max<int64_t>(max_lanes, 1);
  while (v > 1) {
    bool ok = true;
    for (int64_t e : extents) ok = ok && e > 0 && e % v == 0;
    if (ok) break;
    v /= 2;
  }
  return v;
}

int64_t choose_pad(int64_t step, int64_t limit,
                   const std::function<std::pair<int64_t, int64_t>(int64_t pad)> &degrees) {
  step = std::max<int64_t>(step, 1);
  int64_t best = 0;
  std::pair<int64_t, int64_t> best_degrees = degrees(0);
  for (int64_t pad = step; pad < limit; pad += step) {
    std::pair<int64_t, int64_t> d = degrees(pad);
    if (d < best_degrees) best = pad, best_degrees = d;
  }
  return best;
}

}  // namespace tessera::rules::detail
