//===- primitive/TransformBlockLayout.cpp - transform_block_layout ---------===//
//
// transform_block_layout(B, lambda vi, vj: (vi * 8 + vj,)) re-iterates a block
// over a new iteration space, the image of its own under a bijective affine
// map: new iter vars, one loop each, and the old iter vars read back through
// the inverse map (arith::inverse_iter_map):
//
//   for i, j in T.grid(4, 8):                 for i_j_fused in range(32):
//     vi, vj = T.axis.remap("SS", [i, j])  -->  vi_vj = T.axis.spatial(32, i_j_fused)
//     B[vi * 8 + vj] = A[vi, vj]                B[vi_vj] = A[vi_vj // 8, vi_vj % 8]
//
// This is what fuse cannot do: fuse merges loops, the block keeps its iter
// vars (vi = f // 8, vj = f % 8), so a buffer laid out by the fused index
// (transform_layout) is still indexed by an expression of them. Here the
// block's iter vars themselves are fused, so that an implicit-GEMM conv reads
// its reindexed operands at plain [m, k] (rules/Conv2d.cpp).
//
// Every point of the old space is visited exactly once (bijective), so the
// block computes the same; the order changes, which is what the block
// semantics allow (spatial points are independent, a reduction combines in
// any order). An output mixing spatial and reduce iter vars would make a
// reduction iter var that writes several outputs: refused (Requires 4).
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "../Layout.h"

#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/script/Printer.h"

namespace tessera::schedule::detail {

using namespace ir;

namespace {

constexpr const char *kPrim = "transform_block_layout";

//===----------------------------------------------------------------------===//
// 1. Error messages and 2. checks
//===----------------------------------------------------------------------===//

[[noreturn]] void not_plain(const StmtPath &bp, const std::string &why) {
  throw NotPlainLoopNestError(kPrim,
                              "block " + quoted(bp.block()->name) + " is not a plain loop nest: " + why,
                              "block {0} is not a plain loop nest: " + why, {bp.stmt});
}

/// A plain nest (check_plain_loop_nest) whose every loop binds an iter var and
/// is serial without annotations (the new loops replace them all).
void check_nest(const StmtPath &bp, const std::vector<Stmt> &loops) {
  std::vector<int> bound = check_plain_loop_nest(kPrim, bp, loops);
  if (bp.block()->iter_vars.empty()) not_plain(bp, "it has no iter vars");
  for (size_t l = 0; l < loops.size(); ++l) {
    const For &f = *loops[l].as<For>();
    if (bound[l] < 0) not_plain(bp, "loop " + quoted(f.loop_var.name()) + " binds no iter var");
    if (f.for_kind != ForKind::Serial) not_plain(bp, "loop " + quoted(f.loop_var.name()) + " is not serial");
    if (!f.annotations.empty()) not_plain(bp, "loop " + quoted(f.loop_var.name()) + " has annotations");
  }
}

void check_map(const StmtPath &bp, const IndexMap &m) {
  const Block &b = *bp.block();
  std::string why = why_not_index_map(
      m, b.iter_vars.size(),
      "block " + quoted(b.name) + " has " + std::to_string(b.iter_vars.size()) + " iter vars");
  if (why.empty()) return;
  throw InvalidIndexMapError(kPrim, "invalid index map '" + m.str() + "': " + why,
                             "invalid index map '" + m.str() + "' for block {0}: " + why, {bp.stmt});
}

/// The map's inputs over the iter vars' domains.
std::vector<std::pair<Var, Range>> input_domains(const Block &b, const IndexMap &m) {
  std::vector<std::pair<Var, Range>> dom;
  for (size_t i = 0; i < m.src.size(); ++i) dom.emplace_back(m.src[i], b.iter_vars[i].dom);
  return dom;
}

/// The new extents, and the detected map; the map must be bijective.
std::vector<Expr> check_bijective(const StmtPath &bp, const IndexMap &m, arith::IterMapResult &iter_map) {
  std::string why;
  std::vector<Expr> extents = bijective_range(m, input_domains(*bp.block(), m), why, &iter_map);
  if (why.empty()) return extents;
  throw NonBijectiveIndexMapError(
      kPrim,
      "index map '" + m.str() + "' is not a bijection of the iteration space of block " +
          quoted(bp.block()->name) + ": " + why,
      "index map '" + m.str() + "' is not a bijection of the iteration space of block {0}: " + why,
      {bp.stmt});
}

/// The kind of each output: that of the iter vars it combines, all one kind.
std::vector<IterKind> check_kinds(const StmtPath &bp, const IndexMap &m) {
  const Block &b = *bp.block();
  std::vector<IterKind> kinds;
  for (const Expr &out : m.dst) {
    std::optional<IterKind> kind;
    for (size_t i = 0; i < m.src.size(); ++i) {
      if (!uses_var(out, m.src[i])) continue;
      IterKind k = b.iter_vars[i].kind;
      if (kind && *kind != k) {
        std::string why = "output '" + script::print(out) + "' combines iter vars of different kinds (" +
                          iter_kind_char(*kind) + " and " + iter_kind_char(k) + ")";
        throw MixedIterKindError(kPrim, "cannot transform block " + quoted(b.name) + ": " + why,
                                 "cannot transform block {0}: " + why, {bp.stmt});
      }
      kind = k;
    }
    kinds.push_back(kind.value_or(IterKind::Spatial));
  }
  return kinds;
}

/// Simplifies the indices of every load and store, so that an access laid
/// out like the map (B[vi * 8 + vj]) reads the new iter var (B[vi_vj]).
class IndexSimplifier : public IRMutator {
 public:
  explicit IndexSimplifier(const arith::Analyzer &ana) : ana_(ana) {}

 protected:
  Expr visit_(const Load *op, const Expr &self) override {
    Expr e = IRMutator::visit_(op, self);
    const Load *l = e.as<Load>();
    return Load::make(l->buffer, simplified(l->indices));
  }
  Stmt visit_(const Store *op, const Stmt &self) override {
    Stmt s = IRMutator::visit_(op, self);
    const Store *st = s.as<Store>();
    return Store::make(st->buffer, st->value, simplified(st->indices));
  }

 private:
  std::vector<Expr> simplified(const std::vector<Expr> &idx) const {
    std::vector<Expr> out;
    for (const Expr &e : idx) out.push_back(ana_.simplify(e));
    return out;
  }
  const arith::Analyzer &ana_;
};

}  // namespace

//===----------------------------------------------------------------------===//
// 3. The primitive
//===----------------------------------------------------------------------===//

void transform_block_layout(State &st, const BlockRef &block, const IndexMap &map) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath bp = find_block(st, block, kPrim);
  std::vector<Stmt> loops = loops_below(bp, Stmt());
  check_nest(bp, loops);
  check_map(bp, map);
  arith::IterMapResult iter_map;
  std::vector<Expr> extents = check_bijective(bp, map, iter_map);
  std::vector<IterKind> kinds = check_kinds(bp, map);
  const Block &b = *bp.block();

  // Step 2. Build: one iter var and loop per output (an output that is one
  // iter var keeps it and its loop variable), the body through the inverse.
  auto loop_of = [&](size_t i) -> const For & {
    for (const Stmt &l : loops)
      if (b.bindings[i].same_as(l.as<For>()->loop_var)) return *l.as<For>();
    return *loops.front().as<For>();  // unreachable: check_nest bound every iter var
  };
  std::set<std::string> taken = loop_names(st.func);
  for (const Stmt &l : loops) taken.erase(l.as<For>()->loop_var.name());
  std::vector<IterVar> ivs;
  std::vector<Var> new_loops;
  for (size_t j = 0; j < map.dst.size(); ++j) {
    const Expr &out = map.dst[j];
    auto same = std::find_if(map.src.begin(), map.src.end(), [&](const Var &v) { return out.same_as(v); });
    if (same != map.src.end()) {
      size_t i = static_cast<size_t>(same - map.src.begin());
      ivs.push_back(IterVar{b.iter_vars[i].var, Range::from_extent(extents[j]), kinds[j]});
      new_loops.push_back(loop_of(i).loop_var);
      taken.insert(new_loops.back().name());
      continue;
    }
    std::string iv_name, loop_name;
    for (size_t i = 0; i < map.src.size(); ++i) {
      if (!uses_var(out, map.src[i])) continue;
      iv_name += (iv_name.empty() ? "" : "_") + b.iter_vars[i].var.name();
      loop_name += (loop_name.empty() ? "" : "_") + loop_of(i).loop_var.name();
    }
    if (iv_name.empty()) iv_name = loop_name = "u";
    ivs.push_back(IterVar{Var(iv_name, out.dtype()), Range::from_extent(extents[j]), kinds[j]});
    new_loops.push_back(Var(fresh_name(taken, loop_name + "_fused"), out.dtype()));
  }
  std::vector<Var> outputs;
  for (const IterVar &iv : ivs) outputs.push_back(iv.var);
  std::string why;
  std::vector<Expr> inverse = arith::inverse_iter_map(iter_map, input_domains(b, map), outputs, &why);
  TESSERA_ICHECK(inverse.size() == b.iter_vars.size()) << "no inverse of a bijective map: " << why;
  std::vector<std::pair<Var, Expr>> sub;
  for (size_t i = 0; i < b.iter_vars.size(); ++i) sub.emplace_back(b.iter_vars[i].var, inverse[i]);
  arith::Analyzer ana;
  for (const IterVar &iv : ivs) ana.bind(iv.var, iv.dom);
  IndexSimplifier simplify(ana);
  Stmt body = simplify.mutate(substitute(b.body, sub));
  std::optional<Stmt> init;
  if (b.init) init = simplify.mutate(substitute(*b.init, sub));
  AccessRegions regions = infer_access_regions(init, body, b.allocs);
  std::vector<Expr> bindings(new_loops.begin(), new_loops.end());
  Stmt nest = Block::make(b.name, ivs, bindings, Expr(), regions.reads, regions.writes, b.allocs, init, body,
                          b.annotations);
  for (size_t j = new_loops.size(); j-- > 0;)
    nest = For::make(new_loops[j], make_int(new_loops[j].dtype(), 0), extents[j], ForKind::Serial, nest);

  // Step 3. Replace (the only mutation)
  replace(st, loops.empty() ? bp.stmt : loops.front(), nest);
}

//===----------------------------------------------------------------------===//
// 4. Trace
//===----------------------------------------------------------------------===//

Json encode_transform_block_layout(const BlockRef &block, const IndexMap &map) {
  return Json{{"op", kPrim}, {"block", block.name}, {"index_map", map.str()}};
}

namespace {

void replay_transform_block_layout(ReplayContext &ctx) {
  IndexMap m;
  try {
    m = IndexMap::parse(ctx.string("index_map"));
  } catch (const UserError &e) {
    ctx.fail("index_map", std::string("is not an index map: ") + e.what());
  }
  ctx.sch.transform_block_layout(ctx.block("block"), m);
}

[[maybe_unused]] const bool kRegistered = register_instruction(kPrim, replay_transform_block_layout);

}  // namespace

}  // namespace tessera::schedule::detail
