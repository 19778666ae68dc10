//===- primitive/Blockize.cpp - blockize -------------------------------------===//
//
// blockize(k_1) wraps the loop nest under k_1 (loops down to one block) in a
// new outer block. Every binding of the inner block is divided at the
// boundary: its outer part (the loops above k_1) becomes an iter var of the
// outer block, its inner part (the loops from k_1 down) stays with the inner
// block.
//
//   for i, k_0, k_1 in T.grid(64, 16, 4):          for i, k_0 in T.grid(64, 16):
//     with T.block("C"):                             with T.block("C_o"):
//       vi = T.axis.spatial(64, i)          -->        vi = T.axis.spatial(64, i)
//       vk = T.axis.reduce(64, k_0 * 4 + k_1)          vk_o = T.axis.reduce(16, k_0)
//       ...                                            with T.init(): C[vi] = 0
//                                                      for k_1 in range(4):
//                                                        with T.block("C"):
//                                                          vk_i = T.axis.reduce(4, k_1)
//                                                          C[vi] += A[vi, vk_o * 4 + vk_i] ...
//
// A binding b is divided as b = outer + inner with outer = b(inner loops := 0)
// and inner = b(outer loops := 0) - b(all loops := 0). Three cases:
//   - inner is 0: the iter var moves to the outer block as is (vi above);
//   - outer uses no loop: the iter var stays with the inner block as is;
//   - both: inner ranges over [0, E), E divides the domain and outer is a
//     multiple of E; the outer block gets v_o = outer / E over dom / E, the
//     inner block v_i = inner over E, and v becomes v_o * E + v_i.
// The outer block's regions are the inner block's relaxed over the inner
// loops. The inner block's init moves to the outer block (it must run once
// per output, before the first outer reduction step); when some spatial iter
// var has an inner part, the init gets its own loops and block `<C>_init`
// over those parts. A predicate conjunct stays with the side whose loops it
// uses; one using both is refused.
//
//===----------------------------------------------------------------------===//
#include <set>

#include "../Dataflow.h"

#include "tessera/arith/IntSet.h"
#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/script/Printer.h"

namespace tessera::schedule::detail {

using namespace ir;

namespace {

//===----------------------------------------------------------------------===//
// 1. Error messages and 2. checks
//===----------------------------------------------------------------------===//

/// The loops from `loop` down to the only block under it, which must form a
/// chain (each loop's body is the next loop or the block).
std::vector<Stmt> check_loop_chain_to_block(const StmtPath &lp, Stmt &block) {
  std::vector<Stmt> blocks = blocks_under(lp.stmt);
  size_t n = child_blocks(lp.stmt).size();
  if (n != 1)
    throw NotSingleBlockError("blockize",
                              "loop " + loop_name(*lp.loop()) + " has " + std::to_string(n) +
                                  " blocks under it; blockize needs exactly one",
                              "loop {0} has " + std::to_string(n) + " blocks under it; blockize needs exactly one",
                              {lp.stmt});
  std::vector<Stmt> chain;
  Stmt s = lp.stmt;
  while (const For *f = s.as<For>()) {
    chain.push_back(s);
    s = f->body;
  }
  if (!s.is<Block>())
    throw NotSingleBlockError("blockize",
                              "loop " + loop_name(*chain.back().as<For>()) +
                                  " holds a statement other than a loop or the block; blockize needs a "
                                  "plain loop nest down to one block",
                              "loop {0} holds a statement other than a loop or the block", {chain.back()});
  block = s;
  return chain;
}

[[noreturn]] void not_divisible(const StmtPath &lp, const StmtPath &bp, size_t k, const std::string &why) {
  const Block &b = *bp.block();
  throw BindingNotDivisibleError("blockize",
                                 "binding of iter var " + quoted(b.iter_vars[k].var.name()) + " of block " +
                                     quoted(b.name) + " cannot be divided at loop " + loop_name(*lp.loop()) +
                                     ": " + why,
                                 "binding of iter var " + quoted(b.iter_vars[k].var.name()) +
                                     " of block {1} cannot be divided at loop {0}: " + why,
                                 {lp.stmt, bp.stmt});
}

bool uses_any(const Expr &e, const std::vector<Var> &vars) {
  for (const Var &v : vars)
    if (uses_var(e, v)) return true;
  return false;
}

/// How one binding divides at the boundary (see the file comment).
struct Division {
  enum Kind { Outer, Inner, Both } kind;
  Expr outer;   // Outer: the binding; Both: outer / E
  Expr inner;   // Inner: the binding; Both: the inner part
  int64_t factor = 1;  // E
};

Division divide_binding(const StmtPath &lp, const StmtPath &bp, size_t k, const std::vector<Var> &outer_loops,
                        const std::vector<Var> &inner_loops, const arith::VarDomains &inner_dom,
                        const arith::Analyzer &ana) {
  const Block &b = *bp.block();
  const Expr &bind = b.bindings[k];
  auto zero_of = [](const std::vector<Var> &vs) {
    std::vector<std::pair<Var, Expr>> m;
    for (const Var &v : vs) m.emplace_back(v, make_int(v.dtype(), 0));
    return m;
  };
  std::vector<Var> all = outer_loops;
  all.insert(all.end(), inner_loops.begin(), inner_loops.end());
  Expr outer = ana.simplify(substitute(bind, zero_of(inner_loops)));
  Expr base = ana.simplify(substitute(bind, zero_of(all)));
  Expr inner = ana.simplify(sub(substitute(bind, zero_of(outer_loops)), base));
  if (!uses_any(bind, inner_loops)) return {Division::Outer, bind, Expr(), 1};
  if (!uses_any(bind, outer_loops)) return {Division::Inner, Expr(), bind, 1};
  if (!ana.can_prove_equal(add(outer, inner), bind))
    not_divisible(lp, bp, k, script::print(bind) + " is not the sum of an outer part " + script::print(outer) +
                                " and an inner part " + script::print(inner));
  Range r = arith::relax(inner, inner_dom, ana);
  std::optional<int64_t> e = as_const_int(ana.simplify(r.extent));
  if (!is_const_int(ana.simplify(r.min), 0) || !e || *e <= 0)
    not_divisible(lp, bp, k, "its inner part " + script::print(inner) + " does not range over [0, E) for a constant E");
  const IterVar &iv = b.iter_vars[k];
  std::optional<int64_t> dom = as_const_int(iv.dom.extent);
  if (!is_const_int(iv.dom.min, 0) || !dom || *dom % *e != 0)
    not_divisible(lp, bp, k, "its inner part " + script::print(inner) + " has extent " + std::to_string(*e) +
                                ", which does not divide the domain extent " + script::print(iv.dom.extent));
  Expr factor = make_int(bind.dtype(), *e);
  Expr q = ana.simplify(floordiv(outer, factor));
  if (!ana.can_prove_equal(mul(q, factor), outer))
    not_divisible(lp, bp, k, "its outer part " + script::print(outer) + " is not a multiple of " +
                                std::to_string(*e));
  return {Division::Both, q, inner, *e};
}

}  // namespace

//===----------------------------------------------------------------------===//
// 3. The primitive
//===----------------------------------------------------------------------===//

BlockRef blockize(State &st, const LoopRef &loop, const std::string &name) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath lp = find_loop(st, loop, "blockize");
  Stmt block_stmt;
  std::vector<Stmt> chain = check_loop_chain_to_block(lp, block_stmt);
  StmtPath bp = find_block(st, BlockRef{block_stmt.as<Block>()->name}, "blockize");
  check_affine_binding("blockize", bp);
  const Block &b = *bp.block();
  std::vector<Var> inner_loops, outer_loops;
  arith::VarDomains inner_dom;
  for (const Stmt &s : chain) {
    inner_loops.push_back(s.as<For>()->loop_var);
    inner_dom.emplace_back(s.as<For>()->loop_var, Range{s.as<For>()->min, s.as<For>()->extent});
  }
  for (const Stmt &s : loops_below(lp, Stmt())) outer_loops.push_back(s.as<For>()->loop_var);
  std::vector<Expr> outer_conds, inner_conds;
  std::vector<Expr> conds = split_conjunction(b.predicate);
  for (const Expr &c : conds) {
    bool o = uses_any(c, outer_loops), i = uses_any(c, inner_loops);
    if (o && i)
      throw BlockHasPredicateError("blockize",
                                   "the predicate " + script::print(c) + " of block " + quoted(b.name) +
                                       " uses loops both above and below loop " + loop_name(*lp.loop()),
                                   "the predicate " + script::print(c) +
                                       " of block {1} uses loops both above and below loop {0}",
                                   {lp.stmt, bp.stmt});
    (o ? outer_conds : inner_conds).push_back(c);
  }
  arith::Analyzer ana = analyzer_for(bp);
  std::vector<Division> divs;
  for (size_t k = 0; k < b.iter_vars.size(); ++k)
    divs.push_back(divide_binding(lp, bp, k, outer_loops, inner_loops, inner_dom, ana));

  // Step 2. Build the outer block around the inner loops.
  std::vector<IterVar> outer_ivs, inner_ivs;
  std::vector<Expr> outer_binds, inner_binds;
  std::vector<std::pair<Var, Expr>> iv_map;  // old iter var -> its value inside the outer block
  std::vector<size_t> spatial_inner;         // positions in inner_ivs of spatial iter vars
  for (size_t k = 0; k < b.iter_vars.size(); ++k) {
    const IterVar &iv = b.iter_vars[k];
    const Division &d = divs[k];
    if (d.kind == Division::Outer) {
      Var v(iv.var.name(), iv.var.dtype());
      outer_ivs.push_back(IterVar{v, iv.dom, iv.kind});
      outer_binds.push_back(d.outer);
      iv_map.emplace_back(iv.var, v);
      continue;
    }
    if (d.kind == Division::Inner) {
      Var v(iv.var.name(), iv.var.dtype());
      if (iv.kind == IterKind::Spatial) spatial_inner.push_back(inner_ivs.size());
      inner_ivs.push_back(IterVar{v, iv.dom, iv.kind});
      inner_binds.push_back(d.inner);
      iv_map.emplace_back(iv.var, v);
      continue;
    }
    DataType t = iv.var.dtype();
    Var vo(iv.var.name() + "_o", t), vi(iv.var.name() + "_i", t);
    int64_t dom = *as_const_int(iv.dom.extent);
    outer_ivs.push_back(IterVar{vo, Range::from_extent(make_int(iv.dom.extent.dtype(), dom / d.factor)), iv.kind});
    outer_binds.push_back(d.outer);
    if (iv.kind == IterKind::Spatial) spatial_inner.push_back(inner_ivs.size());
    inner_ivs.push_back(IterVar{vi, Range::from_extent(make_int(iv.dom.extent.dtype(), d.factor)), iv.kind});
    inner_binds.push_back(d.inner);
    iv_map.emplace_back(iv.var, add(mul(vo, make_int(t, d.factor)), vi));
  }
  auto subst_region = [&](const BufferRegion &r) {
    BufferRegion out{r.buffer, {}};
    for (const Range &x : r.region) out.region.push_back(Range{substitute(x.min, iv_map), substitute(x.extent, iv_map)});
    return out;
  };
  std::vector<BufferRegion> reads, writes;
  for (const BufferRegion &r : b.reads) reads.push_back(subst_region(r));
  for (const BufferRegion &r : b.writes) writes.push_back(subst_region(r));
  // The init moves to the outer block: the inner one reads what it accumulates into.
  if (b.init) reads = reads_without_init(reads, writes);
  Stmt inner_block = Block::make(b.name, inner_ivs, inner_binds, conjunction(inner_conds), reads, writes, b.allocs,
                                 std::nullopt, substitute(b.body, iv_map), b.annotations);
  const Block &ib = *inner_block.as<Block>();

  // The outer block's regions: the inner ones relaxed over the inner loops,
  // simplified knowing the outer iter vars' domains.
  arith::Analyzer oana = analyzer_at(lp);
  for (const IterVar &iv : outer_ivs) oana.bind(iv.var, iv.dom);
  auto relaxed = [&](const std::vector<BufferRegion> &rs) {
    std::vector<BufferRegion> out;
    for (const BufferRegion &r : rs) out.push_back(BufferRegion{r.buffer, region_seen_from(ib, r, chain, oana)});
    return out;
  };

  // The init, in outer terms; spatial inner parts get loops of their own.
  std::optional<Stmt> outer_init;
  std::set<std::string> names = block_names(st.func);
  if (b.init) {
    Stmt init = substitute(*b.init, iv_map);
    if (!spatial_inner.empty()) {
      std::set<std::string> taken = loop_names(st.func);
      std::vector<IterVar> ivs;
      std::vector<Expr> binds;
      std::vector<std::pair<Var, Expr>> m;
      std::vector<Var> loops;
      for (size_t p : spatial_inner) {
        const IterVar &iv = inner_ivs[p];
        Var nv(iv.var.name(), iv.var.dtype());
        Var lv(fresh_name(taken, iv.var.name() + "_init"), iv.dom.extent.dtype());
        ivs.push_back(IterVar{nv, iv.dom, IterKind::Spatial});
        binds.push_back(is_const_int(iv.dom.min, 0) ? Expr(lv) : add(iv.dom.min, lv));
        m.emplace_back(iv.var, nv);
        loops.push_back(lv);
      }
      init = substitute(init, m);
      AccessRegions regions = infer_access_regions(std::nullopt, init, {});
      init = Block::make(fresh_name(names, b.name + "_init"), ivs, binds, Expr(), regions.reads, regions.writes, {},
                         std::nullopt, init);
      for (size_t k = loops.size(); k-- > 0;)
        init = For::make(loops[k], make_int(loops[k].dtype(), 0), ivs[k].dom.extent, ForKind::Serial, init);
    }
    outer_init = init;
  }
  std::string outer_name = fresh_name(names, name.empty() ? b.name + "_o" : name);
  Stmt body = replace_in(lp.stmt, {{bp.stmt.get(), inner_block}});
  std::vector<BufferRegion> outer_writes = relaxed(ib.writes), outer_reads = relaxed(ib.reads);
  if (outer_init) outer_reads = reads_with_init(std::move(outer_reads), outer_writes);
  Stmt outer = Block::make(outer_name, outer_ivs, outer_binds, conjunction(outer_conds), outer_reads, outer_writes,
                           {}, outer_init, body);

  // Step 3. Replace (the only mutation)
  replace(st, lp.stmt, outer);
  return BlockRef{outer_name};
}

//===----------------------------------------------------------------------===//
// 4. Trace
//===----------------------------------------------------------------------===//

Json encode_blockize(const LoopRef &loop, const BlockRef &out) {
  return Json{{"op", "blockize"}, {"loop", loop.name()}, {"out", out.name}};
}

namespace {

void replay_blockize(ReplayContext &ctx) {
  std::string name = ctx.has("out") ? ctx.string("out") : "";
  BlockRef out = ctx.sch.blockize(ctx.loop("loop"), name);
  ctx.bind(name.empty() ? out.name : name, out);
}

[[maybe_unused]] const bool kRegistered = register_instruction("blockize", replay_blockize);

}  // namespace

}  // namespace tessera::schedule::detail
