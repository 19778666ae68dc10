//===- lib/lower/InjectSoftwarePipeline.cpp - Loops run as software pipelines -===//
//
// A serial loop whose body is a sequence of statements (its children: the
// copies of a tile into shared memory, then the compute that reads it) may be
// annotated as TVM's schedules annotate it:
//
//   for k in T.serial(K, annotations={"software_pipeline_stage": [0, 0, 1],
//                                     "software_pipeline_order": [0, 1, 2],
//                                     "software_pipeline_async_stages": [0]}):
//       <copy A tile k>    <copy B tile k>    <compute on tile k>
//
// Child c of iteration i then runs at time step i + stage[c]; within a step
// the children run by `order` (default: as written). With stages [0, 0, 1]
// the copies of tile k + 1 share a step with the compute on tile k:
//
//   <copies of tile 0>                                         prologue
//   for t in range(1, K + 1):
//       if t < K: <copies of tile t>
//       <compute on tile t - 1>
//
// The guard replaces the epilogue a pipeline usually has (the last steps
// run without copies), so the compute's code is not duplicated: half the
// NVRTC time of an epilogue'd matmul, for a uniform branch per step.
//
// A buffer written by one child and read by a later stage gets one version
// per iteration in flight: a leading dimension of (stage distance + 1),
// indexed by the iteration modulo that, so the copy of tile k + 1 does not
// overwrite tile k while it is read. It must be a kernel allocation used only
// in this loop, written by one child that does not read it, and each
// iteration must read only what that iteration wrote (a tile placed by
// compute_at is). Any other dependence between children of different stages,
// or between children the order swaps, keeps the loop as written (serial,
// always right) with the reason in {"software_pipeline_fallback": "..."},
// as legalize_vectorize does; a malformed annotation is a LowerError.
//
// Async stages: in their children a store of a global element into a shared
// buffer (4, 8 or 16 bytes) becomes `T.cp_async`, and so does a vectorized
// run of 4, 8 or 16 bytes, at once where every lane passes its guard and
// both ends are aligned, provably, or else under a run-time test of that
// (the loop element by element when it fails: cp.async, or for elements
// under 4 bytes plain stores). Every step
// commits one group after the last async child; a step whose children read
// what was copied d >= 1 steps earlier starts with
// `T.cp_async_wait_group(d - 1)` and a barrier, which also keeps every
// thread's reads of a version before that version's refill. Stores that
// cannot be made asynchronous stay as they are (insert_barriers orders them),
// and so does every store of an async child whose data is read in the same
// step or in a divergent region (where a barrier would hang).
//
// Extents may be symbolic: a prologue step the extent may not reach is
// guarded too (K = 1 runs each child once), unless provably reached.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/lower/Passes.h"
#include "VarUses.h"
#include "LoopScopedMutator.h"

namespace tessera::lower {

namespace {

using namespace tessera::ir;
using detail::mentions;

constexpr const char *kStageKey = "software_pipeline_stage";
constexpr const char *kOrderKey = "software_pipeline_order";
constexpr const char *kAsyncKey = "software_pipeline_async_stages";
constexpr const char *kFallbackKey = "software_pipeline_fallback";

bool is_shared(const Buffer &b) { return b.scope() == "shared" || b.scope() == "shared.dyn"; }

Stmt intrinsic(Intrinsic op, std::vector<Expr> args = {}) {
  return Evaluate::make(Call::make(DataType::int32(), op, std::move(args)));
}

/// The buffers a statement reads and writes (a cp.async's destination is
/// written, not read), and the async-copy statements it holds already.
struct Accesses {
  std::set<const BufferNode *> reads, writes;
  bool has_async_sync = false;  ///< a commit or wait of its own
  bool touches(const BufferNode *b) const { return reads.count(b) || writes.count(b); }
};

class AccessCollector : public IRVisitor {
 public:
  Accesses acc;

 protected:
  void visit_(const Load *op) override {
    acc.reads.insert(op->buffer.get());
    IRVisitor::visit_(op);
  }
  void visit_(const Store *op) override {
    acc.writes.insert(op->buffer.get());
    IRVisitor::visit_(op);
  }
  void visit_(const BufferPtr *op) override {
    acc.reads.insert(op->buffer.get());
    acc.writes.insert(op->buffer.get());
  }
  void visit_(const Call *op) override {
    if (op->op == Intrinsic::CpAsyncCommit || op->op == Intrinsic::CpAsyncWait) acc.has_async_sync = true;
    if (const auto *dst = op->op == Intrinsic::CpAsync ? op->args[0].as<Load>() : nullptr) {
      acc.writes.insert(dst->buffer.get());
      for (const Expr &i : dst->indices) visit(i);
      for (size_t a = 1; a < op->args.size(); ++a) visit(op->args[a]);
      return;
    }
    IRVisitor::visit_(op);
  }
};

Accesses accesses_of(const Stmt &s) {
  AccessCollector c;
  c.visit(s);
  return c.acc;
}

/// How many loads, stores and pointers name each buffer.
std::unordered_map<const BufferNode *, int64_t> reference_counts(const Stmt &s) {
  std::unordered_map<const BufferNode *, int64_t> n;
  pre_order_visit(
      s,
      [&](const Expr &e) {
        if (const auto *l = e.as<Load>()) ++n[l->buffer.get()];
        if (const auto *p = e.as<BufferPtr>()) ++n[p->buffer.get()];
      },
      [&](const Stmt &st) {
        if (const auto *st_ = st.as<Store>()) ++n[st_->buffer.get()];
      });
  return n;
}

std::string loop_name(const For *f) { return "loop '" + f->loop_var.name() + "'"; }

std::vector<int64_t> int_list(const For *f, const char *key) {
  auto it = f->annotations.find(key);
  if (it == f->annotations.end()) return {};
  std::vector<int64_t> out;
  if (it->second.is_list())
    for (const AnnValue &v : it->second.as_list()) {
      if (!v.is_int()) {
        out.clear();
        break;
      }
      out.push_back(v.as_int());
    }
  if (!it->second.is_list() || out.size() != it->second.as_list().size())
    throw LowerError(loop_name(f) + ": annotation \"" + key + "\" must be a list of integers");
  return out;
}

/// Element offset of `indices` in `b`, row-major unless `b` has strides.
Expr flat_offset(const Buffer &b, const std::vector<Expr> &indices) {
  Expr off = make_int(indices.back().dtype(), 0), stride = make_int(indices.back().dtype(), 1);
  for (int d = b.ndim() - 1; d >= 0; --d) {
    Expr s = b->strides.empty() ? stride : cast(stride.dtype(), b->strides[d]);
    off = add(off, mul(cast(stride.dtype(), indices[d]), s));
    stride = mul(stride, cast(stride.dtype(), b.shape()[d]));
  }
  return off;
}

/// Rewrites the copies of global elements into shared buffers of one child
/// as cp.async (see the file comment).
class AsyncCopyRewriter : public detail::LoopScopedMutator {
 public:
  explicit AsyncCopyRewriter(const arith::Analyzer &ana) { ana_ = ana; }
  bool converted = false;

 protected:
  using LoopScopedMutator::visit_;

  /// The copy `dst = src` of one element, or undefined.
  static std::pair<const Store *, const Load *> copy_of(const Stmt &s) {
    const auto *st = s.as<Store>();
    const auto *src = st ? st->value.as<Load>() : nullptr;
    if (!src || !is_shared(st->buffer) || src->buffer.scope() != "global" ||
        src->buffer.dtype() != st->buffer.dtype() || st->buffer.dtype().lanes() != 1)
      return {nullptr, nullptr};
    return {st, src};
  }
  Stmt async_copy(const Store *st, const Load *src, int64_t bytes, std::vector<Expr> dst_at,
                  std::vector<Expr> src_at) {
    converted = true;
    Expr n = i32(bytes);
    return intrinsic(Intrinsic::CpAsync,
                     {Load::make(st->buffer, std::move(dst_at)), Load::make(src->buffer, std::move(src_at)), n, n});
  }

  Stmt visit_(const Store *op, const Stmt &self) override {
    auto [st, src] = copy_of(self);
    const int64_t bytes = st ? st->buffer.dtype().bytes() : 0;
    if (bytes != 4 && bytes != 8 && bytes != 16) return self;
    return async_copy(st, src, bytes, st->indices, src->indices);
  }

  Stmt visit_(const For *op, const Stmt &self) override {
    if (op->for_kind != ForKind::Vectorized) return LoopScopedMutator::visit_(op, self);
    // Element by element (4 bytes and more): no longer one vector move.
    Stmt each = LoopScopedMutator::visit_(op, self);
    if (const auto *f = each.as<For>(); f && !each.same_as(self))
      each = For::make(f->loop_var, f->min, f->extent, ForKind::Unrolled, f->body, "", f->annotations);
    if (std::optional<Stmt> s = whole_run(op, each)) return *s;
    return each;
  }

  /// `for v in T.vectorized(L): [if c(v):] S[..., a + v] = G[..., b + v]` as
  /// one cp.async of L elements when that is 4, 8 or 16 bytes: at once when
  /// every lane passes `c` and both runs are aligned, provably; else under a
  /// test of that at run time, `otherwise` (the loop element by element)
  /// when it fails. A guard clause that depends on v must be a comparison
  /// linear in v: then it holds for every lane iff it holds for the first
  /// and the last.
  std::optional<Stmt> whole_run(const For *op, const Stmt &otherwise) {
    auto lanes = as_const_int(op->extent);
    if (!lanes || !is_const_int(op->min, 0)) return std::nullopt;
    const Var &v = op->loop_var;
    const auto *guard = op->body.as<IfThenElse>();
    if (guard && guard->else_case) return std::nullopt;
    auto [st, src] = copy_of(guard ? guard->then_case : op->body);
    if (!st) return std::nullopt;
    const int64_t bytes = *lanes * st->buffer.dtype().bytes();
    if (bytes != 4 && bytes != 8 && bytes != 16) return std::nullopt;
    // A version of the tile (a multiple of its size further on) must keep the alignment.
    int64_t elements = 1;
    for (const Expr &e : st->buffer.shape()) elements *= as_const_int(e).value_or(0);
    if (elements % *lanes != 0) return std::nullopt;
    auto at = [&](const Expr &e, int64_t lane) { return ana_.simplify(substitute(e, {{v, make_int(v.dtype(), lane)}})); };
    std::vector<Expr> tests;  // what must hold at run time
    if (guard)
      for (const Expr &clause : split_conjunction(guard->cond)) {
        if (!mentions(clause, v)) {
          tests.push_back(clause);
          continue;
        }
        if (!linear_comparison(clause, v)) return std::nullopt;
        for (int64_t lane : {int64_t{0}, *lanes - 1}) {
          Expr c = at(clause, lane);
          bool known = ana_.can_prove(c) ||
                       std::any_of(tests.begin(), tests.end(), [&](const Expr &t) { return structural_equal(t, c); });
          if (!known) tests.push_back(c);
        }
      }
    // Contiguous in v: only the last index moves, by v; the last dimension dense.
    auto run_start = [&](const Buffer &b, const std::vector<Expr> &idx) -> std::optional<std::vector<Expr>> {
      if (!b->strides.empty() && !is_const_int(b->strides.back(), 1)) return std::nullopt;
      std::vector<Expr> start;
      for (size_t d = 0; d < idx.size(); ++d) {
        Expr s = at(idx[d], 0);
        bool last = d + 1 == idx.size();
        if (last ? !ana_.can_prove_equal(ana_.simplify(sub(idx[d], s)), cast(s.dtype(), Expr(v)))
                 : mentions(idx[d], v))
          return std::nullopt;
        start.push_back(s);
      }
      Expr off = flat_offset(b, start);
      Expr aligned = eq(floormod(off, make_int(off.dtype(), *lanes)), make_int(off.dtype(), 0));
      if (!ana_.can_prove(aligned)) tests.push_back(aligned);
      return start;
    };
    auto dst_at = run_start(st->buffer, st->indices);
    auto src_at = dst_at ? run_start(src->buffer, src->indices) : std::nullopt;
    if (!src_at) return std::nullopt;
    Stmt copy = async_copy(st, src, bytes, *dst_at, *src_at);
    return tests.empty() ? copy : IfThenElse::make(conjunction(tests), copy, otherwise);
  }

  /// `clause` compares two sides whose difference is linear in `v`.
  bool linear_comparison(const Expr &clause, const Var &v) const {
    const auto *cmp = clause.as<Binary>();
    if (!cmp || !is_comparison(cmp->op) || cmp->op == BinaryOp::NE || !cmp->a.dtype().is_integer()) return false;
    Expr d = sub(cmp->a, cmp->b);
    auto at = [&](int64_t lane) { return ana_.simplify(substitute(d, {{v, make_int(v.dtype(), lane)}})); };
    Expr slope = ana_.simplify(sub(at(1), at(0)));
    if (!as_const_int(slope)) return false;
    return ana_.can_prove_equal(ana_.simplify(sub(d, at(0))), mul(cast(d.dtype(), Expr(v)), slope));
  }
};

/// Gives the versioned buffers their leading version index.
class VersionIndexer : public IRMutator {
 public:
  VersionIndexer(const std::unordered_map<const BufferNode *, std::pair<Buffer, int64_t>> &versions, Expr iteration)
      : versions_(versions), iteration_(std::move(iteration)) {}

 protected:
  Expr visit_(const Load *op, const Expr &self) override {
    Expr e = IRMutator::visit_(op, self);
    const auto *l = e.as<Load>();
    auto it = versions_.find(l->buffer.get());
    if (it == versions_.end()) return e;
    return Load::make(it->second.first, with_version(l->indices, it->second.second));
  }
  Stmt visit_(const Store *op, const Stmt &self) override {
    Stmt s = IRMutator::visit_(op, self);
    const auto *st = s.as<Store>();
    auto it = versions_.find(st->buffer.get());
    if (it == versions_.end()) return s;
    return Store::make(it->second.first, st->value, with_version(st->indices, it->second.second));
  }

 private:
  std::vector<Expr> with_version(const std::vector<Expr> &indices, int64_t versions) const {
    std::vector<Expr> out = {floormod(iteration_, make_int(iteration_.dtype(), versions))};
    out.insert(out.end(), indices.begin(), indices.end());
    return out;
  }

  const std::unordered_map<const BufferNode *, std::pair<Buffer, int64_t>> &versions_;
  Expr iteration_;
};

/// Folds what substituting a step's iteration leaves in indices and
/// conditions (`(0 - 0) % 2`, `0 * 16 + i`), knowing the loop ranges.
class IndexSimplifier : public detail::LoopScopedMutator {
 public:
  explicit IndexSimplifier(const arith::Analyzer &ana) { ana_ = ana; }

 protected:
  using LoopScopedMutator::visit_;
  Expr visit_(const Load *op, const Expr &self) override {
    Expr e = IRMutator::visit_(op, self);
    const auto *l = e.as<Load>();
    return Load::make(l->buffer, simplified(l->indices));
  }
  Stmt visit_(const Store *op, const Stmt &self) override {
    Stmt s = IRMutator::visit_(op, self);
    const auto *st = s.as<Store>();
    return Store::make(st->buffer, st->value, simplified(st->indices));
  }
  Stmt visit_(const IfThenElse *op, const Stmt &self) override {
    Stmt s = IRMutator::visit_(op, self);
    const auto *i = s.as<IfThenElse>();
    return IfThenElse::make(ana_.simplify(i->cond), i->then_case, i->else_case);
  }

 private:
  std::vector<Expr> simplified(const std::vector<Expr> &xs) const {
    std::vector<Expr> out;
    for (const Expr &x : xs) out.push_back(ana_.simplify(x));
    return out;
  }
};

/// Why a well-formed annotation cannot be honoured: the loop then runs as
/// written (serial semantics, always right), annotated with the reason.
struct CannotPipeline {
  std::string why;
};

/// One statement of the pipelined loop's body.
struct Child {
  Stmt body;
  int64_t stage = 0, order = 0;
  Accesses acc;
  bool async = false;  ///< holds cp.async issued by this pass
};

/// Builds the prologue and the guarded loop of one annotated loop.
class PipelineBuilder {
 public:
  PipelineBuilder(const For *loop, Stmt body, const arith::Analyzer &ana, bool uniform, bool nested,
                  std::vector<Buffer> &allocs, const std::unordered_map<const BufferNode *, int64_t> &total_refs)
      : loop_(loop), ana_(ana), allocs_(allocs) {
    std::vector<int64_t> stages = int_list(loop, kStageKey), order = int_list(loop, kOrderKey),
                         async = int_list(loop, kAsyncKey);
    std::vector<Stmt> stmts = {body};
    if (const auto *seq = body.as<Seq>()) stmts = seq->stmts;
    if (loop->for_kind != ForKind::Serial && loop->for_kind != ForKind::Unrolled)
      throw CannotPipeline{loop_name(loop) + " is annotated \"" + kStageKey + "\" but is neither serial nor unrolled"};
    if (stages.size() != stmts.size()) {
      std::string why = loop_name(loop) + ": \"" + kStageKey + "\" lists " + std::to_string(stages.size()) +
                        " stages but the loop body has " + std::to_string(stmts.size()) + " statements";
      // Around a pipeline of its own, TVM counts the inner loop's prologue,
      // body and epilogue; this pass expands it differently.
      if (nested) throw CannotPipeline{why + " (after its inner pipeline)"};
      throw LowerError(why);
    }
    if (order.empty()) {
      order.resize(stmts.size());
      std::iota(order.begin(), order.end(), 0);
    }
    std::vector<int64_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i)
      if (sorted.size() != stmts.size() || sorted[i] != static_cast<int64_t>(i))
        throw LowerError(loop_name(loop) + ": \"" + kOrderKey + "\" must list each of 0.." +
                         std::to_string(stmts.size() - 1) + " once, one per statement of the body");
    for (size_t c = 0; c < stmts.size(); ++c) {
      if (stages[c] < 0)
        throw LowerError(loop_name(loop) + ": \"" + kStageKey + "\" has a negative stage " + std::to_string(stages[c]));
      children_.push_back({stmts[c], stages[c], order[c], accesses_of(stmts[c])});
      max_stage_ = std::max(max_stage_, stages[c]);
    }
    check_dependences(total_refs, reference_counts(Stmt(loop->body)));
    if (!async.empty() && uniform) make_async(std::set<int64_t>(async.begin(), async.end()));
    add_versions();
  }

  Stmt build() const;

 private:
  std::string child_name(size_t c) const {
    return "statement " + std::to_string(c) + " (stage " + std::to_string(children_[c].stage) + ")";
  }
  const Buffer *allocation(const BufferNode *b) const {
    for (const Buffer &a : allocs_)
      if (a.get() == b) return &a;
    return nullptr;
  }
  void check_dependences(const std::unordered_map<const BufferNode *, int64_t> &total_refs,
                         const std::unordered_map<const BufferNode *, int64_t> &loop_refs);
  void make_async(const std::set<int64_t> &stages);
  void add_versions();

  /// Child c of iteration `iteration` (0-based), versions indexed.
  Stmt instance(size_t c, const Expr &iteration) const {
    Expr k = ana_.simplify(add(loop_->min, cast(loop_->loop_var.dtype(), iteration)));
    return IndexSimplifier(ana_).mutate(substitute(children_[c].body, {{loop_->loop_var, k}}));
  }
  /// One time step: the children `runs` admits, in order, each under its
  /// guard (undefined: none); the wait/barrier and the commit of async copies.
  Stmt step(const Expr &time, const std::function<bool(const Child &)> &runs,
            const std::function<Expr(const Child &, const Expr &iteration)> &guard) const;

  const For *loop_;
  arith::Analyzer ana_;
  std::vector<Buffer> &allocs_;
  std::vector<Child> children_;
  int64_t max_stage_ = 0;
  /// Versioned buffers: old -> (new, versions); and who writes each.
  std::unordered_map<const BufferNode *, std::pair<Buffer, int64_t>> versions_;
  std::unordered_map<const BufferNode *, size_t> writer_;
  /// cp.async data: the wait count, and the steps' consumers of async data.
  int64_t async_wait_ = -1;
  std::set<size_t> async_consumers_;
};

void PipelineBuilder::check_dependences(const std::unordered_map<const BufferNode *, int64_t> &total_refs,
                                        const std::unordered_map<const BufferNode *, int64_t> &loop_refs) {
  std::set<const BufferNode *> buffers;
  for (const Child &c : children_) {
    buffers.insert(c.acc.reads.begin(), c.acc.reads.end());
    buffers.insert(c.acc.writes.begin(), c.acc.writes.end());
  }
  for (const BufferNode *b : buffers) {
    std::vector<size_t> users, writers;
    for (size_t c = 0; c < children_.size(); ++c) {
      if (children_[c].acc.touches(b)) users.push_back(c);
      if (children_[c].acc.writes.count(b)) writers.push_back(c);
    }
    if (writers.empty() || users.size() < 2) continue;
    const std::string name = "'" + b->name + "'";
    bool one_stage = std::all_of(users.begin(), users.end(),
                                 [&](size_t c) { return children_[c].stage == children_[users[0]].stage; });
    if (one_stage) {
      // Same step: the order must keep each conflicting pair as written.
      for (size_t x = 0; x < users.size(); ++x)
        for (size_t y = x + 1; y < users.size(); ++y) {
          size_t a = users[x], c = users[y];
          bool conflict = children_[a].acc.writes.count(b) || children_[c].acc.writes.count(b);
          if (conflict && children_[a].order > children_[c].order)
            throw CannotPipeline{loop_name(loop_) + ": \"" + kOrderKey + "\" runs " + child_name(c) + " before " +
                             child_name(a) + ", but both access " + name + " and one writes it"};
        }
      continue;
    }
    // Different stages: one version per iteration in flight.
    const Buffer *alloc = allocation(b);
    if (!alloc || (alloc->scope() != "local" && !is_shared(*alloc)))
      throw CannotPipeline{loop_name(loop_) + ": " + name + " is written by " + child_name(writers[0]) +
                       " and accessed by statements of other stages; only a shared or local allocation of "
                       "the kernel can be given a version per stage"};
    if (writers.size() != 1)
      throw CannotPipeline{loop_name(loop_) + ": " + name + " is written by " + child_name(writers[0]) + " and " +
                       child_name(writers[1]) + "; a buffer read across stages must have one writer"};
    const size_t w = writers[0];
    if (children_[w].acc.reads.count(b))
      throw CannotPipeline{loop_name(loop_) + ": " + child_name(w) + " both reads and writes " + name +
                       ", which statements of other stages read; it cannot be given a version per stage"};
    auto total = total_refs.find(b), inside = loop_refs.find(b);
    if (total != total_refs.end() && inside != loop_refs.end() && total->second != inside->second)
      throw CannotPipeline{loop_name(loop_) + ": " + name +
                       " is used outside the loop; a buffer read across stages must live in the loop only"};
    int64_t versions = 1;
    for (size_t r : users) {
      if (r == w) continue;
      const Child &cr = children_[r], &cw = children_[w];
      if (r < w || cr.stage < cw.stage || (cr.stage == cw.stage && cr.order < cw.order))
        throw CannotPipeline{loop_name(loop_) + ": " + child_name(r) + " reads " + name + ", written by " +
                         child_name(w) + ", before the writer runs in the pipeline (a reader must come later "
                         "in the body and run at the same or a later stage)"};
      versions = std::max(versions, cr.stage - cw.stage + 1);
    }
    writer_[b] = w;
    if (versions > 1) versions_[b] = {*alloc, versions};
  }
}

void PipelineBuilder::make_async(const std::set<int64_t> &stages) {
  for (size_t c = 0; c < children_.size(); ++c) {
    Child &ch = children_[c];
    if (!stages.count(ch.stage)) continue;
    if (ch.acc.has_async_sync)
      throw CannotPipeline{loop_name(loop_) + ": " + child_name(c) +
                       " commits or waits for cp.async groups of its own; it cannot be an async stage"};
    // Each buffer this child writes must be read d >= 1 steps later only.
    bool later_only = true;
    for (const BufferNode *b : ch.acc.writes)
      for (size_t r = 0; r < children_.size(); ++r)
        if (r != c && children_[r].acc.reads.count(b) && children_[r].stage <= ch.stage) later_only = false;
    if (!later_only) continue;
    arith::Analyzer ana = ana_;
    AsyncCopyRewriter rewrite(ana);
    Stmt body = rewrite.mutate(ch.body);
    if (!rewrite.converted) continue;
    ch.body = body;
    ch.async = true;
    for (const BufferNode *b : ch.acc.writes)
      for (size_t r = 0; r < children_.size(); ++r)
        if (r != c && children_[r].acc.reads.count(b)) {
          async_consumers_.insert(r);
          int64_t d = children_[r].stage - ch.stage;
          async_wait_ = async_wait_ < 0 ? d - 1 : std::min(async_wait_, d - 1);
        }
  }
}

void PipelineBuilder::add_versions() {
  for (auto &[b, v] : versions_) {
    Buffer old = v.first;
    std::vector<Expr> shape = {make_int(loop_->loop_var.dtype(), v.second)};
    for (const Expr &e : old.shape()) shape.push_back(e);
    std::vector<Expr> strides;
    if (!old->strides.empty()) {
      strides.push_back(mul(old->strides[0], old.shape()[0]));
      for (const Expr &e : old->strides) strides.push_back(e);
    }
    v.first = Buffer::make(old.name(), old.dtype(), shape, old.scope(), strides);
    for (Buffer &a : allocs_)
      if (a.same_as(old)) a = v.first;
  }
  if (versions_.empty()) return;
  VersionIndexer index(versions_, sub(Expr(loop_->loop_var), loop_->min));
  for (Child &c : children_) c.body = index.mutate(c.body);
}

Stmt PipelineBuilder::step(const Expr &time, const std::function<bool(const Child &)> &runs,
                           const std::function<Expr(const Child &, const Expr &)> &guard) const {
  std::vector<size_t> by_order(children_.size());
  for (size_t c = 0; c < children_.size(); ++c) by_order[children_[c].order] = c;
  std::vector<Stmt> out;
  bool waits = false;
  for (size_t c : async_consumers_) waits = waits || runs(children_[c]);
  if (waits) {
    out.push_back(intrinsic(Intrinsic::CpAsyncWait, {i32(async_wait_)}));
    out.push_back(intrinsic(Intrinsic::SyncThreads));
  }
  size_t last_async = children_.size();
  for (size_t p = 0; p < by_order.size(); ++p)
    if (children_[by_order[p]].async) last_async = p;
  Expr last_guard;  // of out.back(), when it is a guarded child
  for (size_t p = 0; p < by_order.size(); ++p) {
    const Child &c = children_[by_order[p]];
    if (runs(c)) {
      Expr iteration = ana_.simplify(sub(time, make_int(time.dtype(), c.stage)));
      Stmt s = instance(by_order[p], iteration);
      Expr g = guard ? guard(c, iteration) : Expr();
      if (g.defined() && last_guard.defined() && structural_equal(g, last_guard)) {
        // One `if` for consecutive children under the same guard.
        out.back() = IfThenElse::make(g, Seq::make({out.back().as<IfThenElse>()->then_case, s}));
      } else {
        out.push_back(g.defined() ? IfThenElse::make(g, s) : s);
      }
      last_guard = g;
    }
    if (p == last_async) {
      out.push_back(intrinsic(Intrinsic::CpAsyncCommit));
      last_guard = Expr();
    }
  }
  return Seq::make(out);
}

Stmt PipelineBuilder::build() const {
  const DataType t = loop_->loop_var.dtype();
  const Expr extent = loop_->extent;
  const int64_t S = max_stage_;
  // A child runs iteration `iteration` when that is below the extent.
  auto in_range = [&](const arith::Analyzer &ana) {
    return [&ana, &extent](const Child &, const Expr &iteration) {
      Expr g = lt(iteration, extent);
      return ana.can_prove(g) ? Expr() : g;
    };
  };
  std::vector<Stmt> out;
  // Prologue: steps 0 .. S-1, the children whose first iteration has come.
  for (int64_t time = 0; time < S; ++time)
    out.push_back(step(make_int(t, time), [&](const Child &ch) { return ch.stage <= time; }, in_range(ana_)));
  // Then steps S .. extent+S-1, every child while its iterations last: the
  // last stage always, the others guarded (a uniform branch, not a copy of
  // the body as an epilogue would be).
  Var tv(loop_->loop_var.name(), t);
  arith::Analyzer ana = ana_;
  ana.bind(tv, Range{make_int(t, S), extent});
  Annotations anns = loop_->annotations;
  for (const char *key : {kStageKey, kOrderKey, kAsyncKey}) anns.erase(key);
  Stmt body = step(Expr(tv), [](const Child &) { return true; }, in_range(ana));
  out.push_back(For::make(tv, make_int(t, S), extent, loop_->for_kind, body, "", anns));
  if (async_wait_ >= 0) out.push_back(intrinsic(Intrinsic::CpAsyncWait, {i32(0)}));
  return Seq::make(out);
}

/// Finds the annotated loops (innermost first) and whether a barrier may be
/// placed there (no threadIdx-dependent condition or loop bound around).
class PipelineInjector : public detail::LoopScopedMutator {
 public:
  explicit PipelineInjector(LoweredFunc &f) : f_(f), total_refs_(reference_counts(f.body)) {}

 protected:
  using LoopScopedMutator::visit_;

  Stmt visit_(const For *op, const Stmt &self) override {
    bool thread = op->for_kind == ForKind::ThreadBinding && op->thread_tag.rfind("threadIdx", 0) == 0;
    bool divergent = depends_on_thread(op->min) || depends_on_thread(op->extent);
    if (thread) thread_vars_.insert(op->loop_var.get());
    divergent_ += divergent;
    Stmt out;
    if (!op->annotations.count(kStageKey)) {
      out = LoopScopedMutator::visit_(op, self);
    } else {
      arith::Analyzer::Scope scope(ana_);
      ana_.bind(op->loop_var, Range{op->min, op->extent});
      bool nested = false;
      pre_order_visit(op->body, nullptr, [&](const Stmt &x) {
        if (const auto *f = x.as<For>(); f && f->annotations.count(kStageKey)) nested = true;
      });
      Stmt body = mutate(op->body);
      try {
        out = PipelineBuilder(op, body, ana_, divergent_ == 0, nested, f_.allocs, total_refs_).build();
      } catch (const CannotPipeline &c) {
        Annotations anns = op->annotations;
        for (const char *key : {kStageKey, kOrderKey, kAsyncKey}) anns.erase(key);
        anns[kFallbackKey] = AnnValue(c.why);
        out = For::make(op->loop_var, op->min, op->extent, op->for_kind, body, op->thread_tag, anns);
      }
    }
    divergent_ -= divergent;
    if (thread) thread_vars_.erase(op->loop_var.get());
    return out;
  }
  Stmt visit_(const IfThenElse *op, const Stmt &self) override {
    bool divergent = depends_on_thread(op->cond);
    divergent_ += divergent;
    Stmt out = IRMutator::visit_(op, self);
    divergent_ -= divergent;
    return out;
  }
  Stmt visit_(const LetStmt *op, const Stmt &self) override {
    bool thread = depends_on_thread(op->value);
    if (thread) thread_vars_.insert(op->var.get());
    Stmt out = IRMutator::visit_(op, self);
    if (thread) thread_vars_.erase(op->var.get());
    return out;
  }

 private:
  bool depends_on_thread(const Expr &e) const { return detail::depends_on(e, thread_vars_); }

  LoweredFunc &f_;
  std::unordered_map<const BufferNode *, int64_t> total_refs_;
  std::set<const VarNode *> thread_vars_;
  int divergent_ = 0;
};

}  // namespace

LoweredFunc inject_software_pipeline(const LoweredFunc &f) {
  LoweredFunc out = f;
  out.body = PipelineInjector(out).mutate(f.body);
  return out;
}

}  // namespace tessera::lower
