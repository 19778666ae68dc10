//===- primitive/ComputeAt.cpp - compute_at and reverse_compute_at ---------===//
//
// compute_at(P, loop) moves producer block P to the start of `loop`'s body,
// in new loops that cover exactly what P's consumers under `loop` read in one
// iteration of it; reverse_compute_at(C, loop) moves consumer C to the end
// of `loop`'s body, covering what its producers under `loop` write in one
// iteration:
//
//   for ax0, ax1 in T.grid(64, 48):          for i0, j0, k0 in T.grid(4, 5, 6):
//     block AS: AS[v0, v1] = A[v0, v1]  -->    for ax0, ax1 in T.grid(16, 8):
//   for i0, j0, k0, i1, j1, k1:                  block AS: v0 = i0 * 16 + ax0
//     block C: ... AS[vi, vk] ...                          v1 = k0 * 8 + ax1
//                                              for i1, j1, k1: block C: ...
//
// The region is computed from the other side's accesses: their regions with
// their bindings substituted, the loops strictly below `loop` relaxed
// (arith::relax), unioned per buffer. The moved block accesses that buffer at
// its own iter vars (B[v0, v1]), so each iter var gets the range of its
// dimension; iter vars that index nothing there (reduction iter vars, say)
// cover their whole domain. Every iter var keeps its domain; its binding
// becomes `range min + new loop`, and a predicate guards the domain where the
// range provably overshoots nowhere else (a tail tile of a non-dividing split).
// Loops of extent 1 are dropped unless preserve_unit_loops.
//
// Correctness: the moved block runs after everything it reads is written
// (its producers are not under `loop`, resp. all are) and before everything
// that reads it (all consumers under `loop`, resp. none), and in every
// iteration it computes at least what is consumed in that iteration.
//
//===----------------------------------------------------------------------===//
#include "../Dataflow.h"

#include <map>

#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/script/Printer.h"

namespace tessera::schedule::detail {

using namespace ir;

namespace {

const char *prim_name(bool reverse) { return reverse ? "reverse_compute_at" : "compute_at"; }

//===----------------------------------------------------------------------===//
// 1. Error messages and 2. checks
//===----------------------------------------------------------------------===//

void check_location(bool reverse, const StmtPath &bp, const StmtPath &lp) {
  std::string why;
  if (!lp.scope().same_as(bp.scope())) why = "is not in the scope of block " + quoted(bp.block()->name);
  else if (is_ancestor(bp, lp.stmt)) why = "is an ancestor of block " + quoted(bp.block()->name);
  if (why.empty()) return;
  throw InvalidComputeLocationError(prim_name(reverse), "loop " + loop_name(*lp.loop()) + " " + why,
                                    "loop {0} " + why, {lp.stmt, bp.stmt});
}

void check_block_kind(bool reverse, const StmtPath &bp, const PrimFunc &f) {
  const Block &b = *bp.block();
  if (!reverse) check_complete_or_reduction_block("compute_at", bp.stmt);
  if (reverse && !is_complete_block(b))
    throw BlockNotCompleteError("reverse_compute_at",
                                "block " + quoted(b.name) +
                                    " is not a complete block (it has non-spatial iter vars or reads what it writes)",
                                "block {0} is not a complete block", {bp.stmt});
  if (!is_const_int(b.predicate, 1))
    throw BlockHasPredicateError(prim_name(reverse),
                                 "block " + quoted(b.name) + " has the predicate " + script::print(b.predicate) +
                                     ", which moving it would lose",
                                 "block {0} has a predicate", {bp.stmt});
  if (reverse) return;
  for (const BufferRegion &w : b.writes)
    if (is_param_buffer(f, w.buffer))
      throw OutputBlockError("compute_at",
                             "block " + quoted(b.name) + " writes the function's output " + quoted(w.buffer.name()) +
                                 ", which must be computed whole",
                             "block {0} writes the output buffer " + quoted(w.buffer.name()), {bp.stmt});
}

/// The blocks of the scope on the other side of the data flow: consumers
/// (compute_at) or producers (reverse_compute_at) of the block.
std::vector<Stmt> partners(bool reverse, const StmtPath &bp) {
  const Block &b = *bp.block();
  std::vector<Stmt> out;
  for (const Stmt &s : child_blocks(bp.scope())) {
    if (s.same_as(bp.stmt)) continue;
    const Block &o = *s.as<Block>();
    bool related = false;
    for (const BufferRegion &r : reverse ? b.reads : b.writes)
      related |= reverse ? writes_buffer(o, r.buffer) : reads_buffer(o, r.buffer);
    if (related) out.push_back(s);
  }
  return out;
}

void check_partners(bool reverse, const State &st, const StmtPath &bp, const StmtPath &lp,
                    const std::vector<Stmt> &others) {
  const std::string what = reverse ? "producer" : "consumer";
  const Block &b = *bp.block();
  auto fail = [&](const std::string &brief, const std::string &detail, std::vector<NodeRef> locs) {
    if (reverse) throw ProducersNotUnderLoopError("reverse_compute_at", brief, detail, std::move(locs));
    throw ConsumersNotUnderLoopError("compute_at", brief, detail, std::move(locs));
  };
  if (others.empty())
    fail("block " + quoted(b.name) + " has no " + what + " in its scope to be computed at",
         "block {0} has no " + what, {bp.stmt});
  for (const Stmt &o : others) {
    StmtPath op = find_block(st, BlockRef{o.as<Block>()->name}, prim_name(reverse));
    if (is_ancestor(op, lp.stmt)) continue;
    fail("the " + what + " " + quoted(o.as<Block>()->name) + " of block " + quoted(b.name) +
             " is not under loop " + loop_name(*lp.loop()),
         "the " + what + " {0} of block {1} is not under loop {2}", {o, bp.stmt, lp.stmt});
  }
}

/// compute_at: nothing under `loop` writes what the block reads;
/// reverse_compute_at: nothing under `loop` reads what the block writes.
void check_nothing_conflicting_under(bool reverse, const StmtPath &bp, const StmtPath &lp) {
  const Block &b = *bp.block();
  for (const Stmt &s : blocks_under(lp.stmt)) {
    const Block &o = *s.as<Block>();
    for (const BufferRegion &r : reverse ? b.writes : b.reads) {
      if (!(reverse ? reads_buffer(o, r.buffer) : writes_buffer(o, r.buffer))) continue;
      std::string brief = "block " + quoted(o.name) + " under loop " + loop_name(*lp.loop()) +
                          (reverse ? " reads " : " writes ") + quoted(r.buffer.name()) + ", which block " +
                          quoted(b.name) + (reverse ? " writes" : " reads");
      std::string detail = "block {0} under loop {1}" + std::string(reverse ? " reads " : " writes ") +
                           quoted(r.buffer.name()) + ", which block {2}" + (reverse ? " writes" : " reads");
      if (reverse) throw ConsumerUnderLoopError("reverse_compute_at", brief, detail, {s, lp.stmt, bp.stmt});
      throw ProducerUnderLoopError("compute_at", brief, detail, {s, lp.stmt, bp.stmt});
    }
  }
}

/// A dimension indexed by a constant (`B[0, v1]`): no iter var ranges over it.
constexpr size_t kConstantIndex = static_cast<size_t>(-1);

/// For each dimension of `r`, the iter var index it is (`B[v0, v1]`), or
/// kConstantIndex for a constant index.
std::vector<size_t> check_iter_var_indices(bool reverse, const StmtPath &bp, const BufferRegion &r) {
  const Block &b = *bp.block();
  std::vector<size_t> out;
  for (const Range &x : r.region) {
    if (as_const_int(x.min) && is_const_int(x.extent, 1)) {
      out.push_back(kConstantIndex);
      continue;
    }
    size_t found = b.iter_vars.size();
    for (size_t k = 0; k < b.iter_vars.size(); ++k)
      if (x.min.same_as(b.iter_vars[k].var) && is_const_int(x.extent, 1)) found = k;
    bool repeated = std::find(out.begin(), out.end(), found) != out.end();
    if (found == b.iter_vars.size() || repeated) {
      std::string what = std::string(reverse ? "reads " : "writes ") + quoted(r.buffer.name());
      throw NonIterVarIndexError(prim_name(reverse),
                                 "block " + quoted(b.name) + " " + what +
                                     " at indices that are not distinct iter vars of the block",
                                 "block {0} " + what + " at indices that are not distinct iter vars", {bp.stmt});
    }
    out.push_back(found);
  }
  return out;
}

}  // namespace

//===----------------------------------------------------------------------===//
// 3. The primitives
//===----------------------------------------------------------------------===//

namespace {

/// Whether `e` reads the variable of `lp`'s loop or of a loop around it.
bool uses_loop_var(const Expr &e, const StmtPath &lp) {
  if (uses_var(e, lp.loop()->loop_var)) return true;
  for (const Stmt &a : lp.ancestors)
    if (const For *f = a.as<For>(); f && uses_var(e, f->loop_var)) return true;
  return false;
}

void compute_at_impl(State &st, const BlockRef &block, const LoopRef &loop, bool preserve_unit_loops,
                     bool reverse) {
  // Step 1. Check (may throw; IR untouched)
  const char *prim = prim_name(reverse);
  StmtPath bp = find_block(st, block, prim);
  StmtPath lp = find_loop(st, loop, prim);
  const Block &b = *bp.block();
  check_location(reverse, bp, lp);
  check_block_kind(reverse, bp, st.func);
  std::vector<Stmt> others = partners(reverse, bp);
  check_partners(reverse, st, bp, lp, others);
  check_nothing_conflicting_under(reverse, bp, lp);
  // The buffers through which the block and its partners communicate, with
  // the block's iter var for each dimension.
  std::vector<std::pair<BufferRegion, std::vector<size_t>>> links;
  for (const BufferRegion &r : reverse ? b.reads : b.writes) {
    bool linked = false;
    for (const Stmt &o : others)
      linked |= reverse ? writes_buffer(*o.as<Block>(), r.buffer) : reads_buffer(*o.as<Block>(), r.buffer);
    if (linked) links.emplace_back(r, check_iter_var_indices(reverse, bp, r));
  }

  // Step 2. Build the new loop nest: the range each iter var needs.
  arith::Analyzer ana = analyzer_for(lp);
  std::map<size_t, std::vector<Range>> needed;
  for (const Stmt &o : others) {
    StmtPath op = find_block(st, BlockRef{o.as<Block>()->name}, prim);
    std::vector<Stmt> relaxed = loops_below(op, lp.stmt);
    const Block &ob = *op.block();
    for (const auto &[mine, dims] : links)
      for (const BufferRegion &r : reverse ? ob.writes : ob.reads) {
        if (!r.buffer.same_as(mine.buffer)) continue;
        std::vector<Range> region = region_seen_from(ob, r, relaxed, ana);
        for (size_t d = 0; d < dims.size(); ++d)
          if (dims[d] != kConstantIndex) needed[dims[d]].push_back(region[d]);
      }
  }
  // The block's old loops go away first, so their names are free again.
  Stmt body = remove_stmt(st.func.body(), bp.stmt.get());
  std::set<std::string> taken = loop_names(st.func.with_body(body));
  std::vector<std::pair<Var, Expr>> new_loops;  // (var, extent), outermost first
  std::vector<Expr> bindings, guards;
  arith::Analyzer inner = ana;
  for (size_t k = 0; k < b.iter_vars.size(); ++k) {
    const IterVar &iv = b.iter_vars[k];
    DataType t = iv.var.dtype();
    Range r = needed.count(k) ? arith::union_ranges(needed[k], ana) : iv.dom;
    Expr extent = ana.simplify(r.extent);
    std::optional<int64_t> c = as_const_int(extent);
    if (c == 1 && !preserve_unit_loops) {
      bindings.push_back(ana.simplify(r.min));
      continue;
    }
    Var ax(fresh_name(taken, "ax" + std::to_string(new_loops.size())), t);
    Expr loop_extent = extent;
    if (!c && !uses_loop_var(extent, lp)) {
      // A symbolic size of the function (a row of `n` columns): the loop
      // runs over exactly it, the same for every iteration of the loops
      // around, so no guard is needed.
    } else if (!c) {
      // A symbolic tile (clamped at an edge): loop over its largest size, guarded.
      arith::IntBound bound = ana.const_bound(extent);
      loop_extent = bound.max != arith::IntBound::kPosInf ? make_int(t, bound.max) : iv.dom.extent;
      guards.push_back(lt(ax, extent));
    }
    inner.bind(ax, Range::from_extent(loop_extent));
    new_loops.emplace_back(ax, loop_extent);
    bindings.push_back(ana.simplify(add(r.min, ax)));
  }
  for (size_t k = 0; k < b.iter_vars.size(); ++k) {
    const Range &dom = b.iter_vars[k].dom;
    if (!inner.can_prove(ge(bindings[k], dom.min))) guards.push_back(ge(bindings[k], dom.min));
    if (!inner.can_prove(lt(bindings[k], add(dom.min, dom.extent))))
      guards.push_back(lt(bindings[k], ana.simplify(add(dom.min, dom.extent))));
  }
  Stmt nest = Block::make(b.name, b.iter_vars, bindings, conjunction(guards), b.reads, b.writes, b.allocs, b.init,
                          b.body, b.annotations);
  for (size_t k = new_loops.size(); k-- > 0;)
    nest = For::make(new_loops[k].first, make_int(new_loops[k].first.dtype(), 0), new_loops[k].second,
                     ForKind::Serial, nest);
  const For &l = *lp.loop();
  Stmt new_loop = l.with_body(reverse ? seq_after(l.body, nest) : seq_before(nest, l.body));
  body = replace_in(body, {{lp.stmt.get(), new_loop}});  // `loop` was not under the removed nest

  // Step 3. Replace (the only mutation)
  replace(st, st.func.body(), body);
}

}  // namespace

void compute_at(State &st, const BlockRef &block, const LoopRef &loop, bool preserve_unit_loops) {
  compute_at_impl(st, block, loop, preserve_unit_loops, /*reverse=*/false);
}

void reverse_compute_at(State &st, const BlockRef &block, const LoopRef &loop, bool preserve_unit_loops) {
  compute_at_impl(st, block, loop, preserve_unit_loops, /*reverse=*/true);
}

//===----------------------------------------------------------------------===//
// 4. Trace
//===----------------------------------------------------------------------===//

Json encode_compute_at(std::string_view op, const BlockRef &block, const LoopRef &loop, bool preserve_unit_loops) {
  Json j{{"op", op}, {"block", block.name}, {"loop", loop.name()}};
  if (preserve_unit_loops) j["preserve_unit_loops"] = true;
  return j;
}

namespace {

template <bool kReverse>
void replay_compute_at(ReplayContext &ctx) {
  bool preserve = false;
  if (ctx.has("preserve_unit_loops")) {
    const Json &v = ctx.field("preserve_unit_loops");
    if (!v.is_boolean()) ctx.fail("preserve_unit_loops", "must be true or false");
    preserve = v.get<bool>();
  }
  if (kReverse) ctx.sch.reverse_compute_at(ctx.block("block"), ctx.loop("loop"), preserve);
  else ctx.sch.compute_at(ctx.block("block"), ctx.loop("loop"), preserve);
}

[[maybe_unused]] const bool kRegistered = register_instruction("compute_at", replay_compute_at<false>) &&
                                          register_instruction("reverse_compute_at", replay_compute_at<true>);

}  // namespace

}  // namespace tessera::schedule::detail
