//===- primitive/DecomposeReduction.cpp - decompose_reduction --------------===//
//
// decompose_reduction(C, k0) turns the init statement of reduction block C
// into a block of its own, `C_init`, placed right before loop k0:
//
//   for k0:                                  for i1_init, j1_init:      # new
//     for i1, j1, k1:                          block C_init: C[vi, vj] = 0
//       block C: init {C[vi, vj] = 0}   -->  for k0:
//                C[vi, vj] += ...              for i1, j1, k1:
//                                                block C: C[vi, vj] += ...
//
// The init block gets copies of the loops from k0 down to C that feed C's
// spatial iter vars (kind and thread binding kept, so a threadIdx-bound
// tile initialises with the same threads); loops that feed only reduction
// iter vars are not copied. It is correct because no loop above k0 feeds a
// reduction iter var: every output is initialised once, before its first
// update, as the init statement did at the first reduction step. Where that
// step may not exist or be masked (a symbolic reduce extent may be 0), the
// init block is guarded by the same condition, so an output the program
// never reduces into is not written.
//
//===----------------------------------------------------------------------===//
#include "../Dataflow.h"

#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"

namespace tessera::schedule::detail {

using namespace ir;

namespace {

//===----------------------------------------------------------------------===//
// 1. Error messages and 2. checks
//===----------------------------------------------------------------------===//

void check_reduction_with_init(const StmtPath &bp) {
  const Block &b = *bp.block();
  if (is_reduction_block(b) && b.init) return;
  std::string why = !is_reduction_block(b) ? "is not a reduction block" : "has no init statement (T.init)";
  throw NotReductionBlockError("decompose_reduction", "block " + quoted(b.name) + " " + why,
                               "block {0} " + why, {bp.stmt});
}

/// The position of `loop` among the loops between the block's scope and the block.
size_t check_loop_is_ancestor(const StmtPath &bp, const StmtPath &lp, const std::vector<Stmt> &loops) {
  for (size_t k = 0; k < loops.size(); ++k)
    if (loops[k].same_as(lp.stmt)) return k;
  throw LoopNotAncestorError("decompose_reduction",
                             "loop " + loop_name(*lp.loop()) + " is not an ancestor of block " +
                                 quoted(bp.block()->name) + " in its scope",
                             "loop {0} is not an ancestor of block {1} in its scope", {lp.stmt, bp.stmt});
}

void check_no_reduction_loop_above(const StmtPath &bp, const StmtPath &lp, const std::vector<Stmt> &above) {
  const Block &b = *bp.block();
  for (const Stmt &s : above) {
    const For *f = s.as<For>();
    for (size_t k = 0; k < b.iter_vars.size(); ++k) {
      if (b.iter_vars[k].kind == IterKind::Spatial || !uses_var(b.bindings[k], f->loop_var)) continue;
      throw ReductionLoopAboveError("decompose_reduction",
                                    "loop " + loop_name(*f) + " above loop " + loop_name(*lp.loop()) +
                                        " feeds reduction iter var " + quoted(b.iter_vars[k].var.name()) +
                                        " of block " + quoted(b.name) +
                                        ", so the init would run more than once per output",
                                    "loop {0} above {1} feeds reduction iter var " +
                                        quoted(b.iter_vars[k].var.name()) + " of block {2}",
                                    {s, lp.stmt, bp.stmt});
    }
  }
}

}  // namespace

//===----------------------------------------------------------------------===//
// 3. The primitive
//===----------------------------------------------------------------------===//

BlockRef decompose_reduction(State &st, const BlockRef &block, const LoopRef &loop, const std::string &name) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath bp = find_block(st, block, "decompose_reduction");
  StmtPath lp = find_loop(st, loop, "decompose_reduction");
  check_reduction_with_init(bp);
  std::vector<Stmt> loops = loops_below(bp, Stmt());
  size_t at = check_loop_is_ancestor(bp, lp, loops);
  check_no_reduction_loop_above(bp, lp, std::vector<Stmt>(loops.begin(), loops.begin() + at));
  const Block &b = *bp.block();

  // Step 2. Build the init block and its loops.
  std::set<std::string> taken = loop_names(st.func);
  std::vector<std::pair<Var, Expr>> loop_map;
  std::vector<std::pair<const For *, Var>> copied;
  // Loops under `loop` that are not copied, and each at its first step.
  std::vector<const For *> dropped;
  std::vector<std::pair<Var, Expr>> first_step;
  for (size_t k = at; k < loops.size(); ++k) {
    const For *f = loops[k].as<For>();
    bool spatial_use = false;
    for (size_t i = 0; i < b.iter_vars.size(); ++i)
      spatial_use |= b.iter_vars[i].kind == IterKind::Spatial && uses_var(b.bindings[i], f->loop_var);
    if (!spatial_use) {
      dropped.push_back(f);
      first_step.emplace_back(f->loop_var, f->min);
      continue;
    }
    Var v(fresh_name(taken, f->loop_var.name() + "_init"), f->loop_var.dtype());
    copied.emplace_back(f, v);
    loop_map.emplace_back(f->loop_var, v);
  }
  std::vector<IterVar> ivs;
  std::vector<Expr> bindings;
  std::vector<std::pair<Var, Expr>> iv_map;
  for (size_t i = 0; i < b.iter_vars.size(); ++i) {
    const IterVar &iv = b.iter_vars[i];
    if (iv.kind != IterKind::Spatial) continue;
    Var nv(iv.var.name(), iv.var.dtype());
    ivs.push_back(IterVar{nv, iv.dom, IterKind::Spatial});
    bindings.push_back(substitute(b.bindings[i], loop_map));
    iv_map.emplace_back(iv.var, nv);
  }
  // Conjuncts of the predicate that involve a dropped (reduction) loop guard
  // the reduction steps, not the outputs: the init needs them only at the
  // first step, where the init ran. It ran only if that step exists and is
  // unmasked (a symbolic extent may be 0): those conditions guard the init
  // block where they are not provably true.
  arith::Analyzer ana = analyzer_for(lp);
  std::vector<Expr> kept;
  arith::Analyzer::Scope scope(ana);
  for (const Expr &c : split_conjunction(b.predicate)) {
    bool uses_dropped = false;
    for (const For *f : dropped) uses_dropped |= uses_var(c, f->loop_var);
    Expr at_first = uses_dropped ? ana.simplify(substitute(c, first_step)) : c;
    if (uses_dropped && ana.can_prove(at_first)) continue;
    kept.push_back(substitute(at_first, loop_map));
    ana.assume(at_first);
  }
  // A loop's first step exists (checked after the mask, which often implies it).
  for (const For *f : dropped) {
    Expr runs = ana.simplify(substitute(gt(f->extent, make_int(f->extent.dtype(), 0)), first_step));
    if (!ana.can_prove(runs)) kept.push_back(substitute(runs, loop_map));
  }
  std::set<std::string> names = block_names(st.func);
  std::string init_name = fresh_name(names, name.empty() ? b.name + "_init" : name);
  Stmt init_body = substitute(*b.init, iv_map);
  AccessRegions regions = infer_access_regions(std::nullopt, init_body, {});
  Stmt nest = Block::make(init_name, ivs, bindings, conjunction(kept), regions.reads, regions.writes, {},
                          std::nullopt, init_body);
  for (size_t k = copied.size(); k-- > 0;) {
    const For *f = copied[k].first;
    nest = For::make(copied[k].second, substitute(f->min, loop_map), substitute(f->extent, loop_map), f->for_kind,
                     nest, f->thread_tag);
  }
  // Without its init the update block reads what it accumulates into (TVM's
  // rule leaves a block's written buffers out of its reads only while it has one).
  Stmt update = Block::make(b.name, b.iter_vars, b.bindings, b.predicate, reads_without_init(b.reads, b.writes),
                            b.writes, b.allocs, std::nullopt, b.body, b.annotations);
  Stmt new_loop = replace_in(lp.stmt, {{bp.stmt.get(), update}});

  // Step 3. Replace (the only mutation)
  replace(st, lp.stmt, Seq::make({nest, new_loop}));
  return BlockRef{init_name};
}

//===----------------------------------------------------------------------===//
// 4. Trace
//===----------------------------------------------------------------------===//

Json encode_decompose_reduction(const BlockRef &block, const LoopRef &loop, const BlockRef &out) {
  return Json{{"op", "decompose_reduction"}, {"block", block.name}, {"loop", loop.name()}, {"out", out.name}};
}

namespace {

void replay_decompose_reduction(ReplayContext &ctx) {
  std::string name = ctx.has("out") ? ctx.string("out") : "";
  BlockRef out = ctx.sch.decompose_reduction(ctx.block("block"), ctx.loop("loop"), name);
  ctx.bind(name.empty() ? out.name : name, out);
}

[[maybe_unused]] const bool kRegistered = register_instruction("decompose_reduction", replay_decompose_reduction);

}  // namespace

}  // namespace tessera::schedule::detail
