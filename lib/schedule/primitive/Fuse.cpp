//===- primitive/Fuse.cpp - fuse -------------------------------------------===//
//
// fuse(i, j, k) replaces a perfect nest by one loop f over the product of the
// extents and substitutes i := f // (ej * ek), j := f // ek % ej, k := f % ek.
// The nest must be perfect (each loop's body is exactly the next loop) so no
// statement between the loops would run a different number of times. The
// substituted bindings are simplified with the fused loop's range, so fusing
// split loops gives back `vi = i_0_i_1_fused`.
//
//===----------------------------------------------------------------------===//
#include "../Primitive.h"

#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"

namespace tessera::schedule::detail {

using namespace ir;

namespace {

//===----------------------------------------------------------------------===//
// 1. Error messages
//===----------------------------------------------------------------------===//

[[noreturn]] void not_nested(const StmtPath &outer, const StmtPath &inner) {
  const For &o = *outer.loop(), &i = *inner.loop();
  // Inside `outer` with only sequences between: a sibling shares the body.
  bool inside = false, is_child = false;
  for (const Stmt &a : inner.ancestors) {
    if (a.same_as(outer.stmt)) inside = is_child = true;
    else if (inside && !a.is<Seq>()) is_child = false;
  }
  std::string why = is_child ? "is not the only child of"
                    : inside ? "is not directly inside"
                             : "is not inside";
  throw LoopsNotNestedError("fuse", "loop " + loop_name(i) + " " + why + " loop " + loop_name(o),
                            "loop {1} " + why + " loop {0}; fuse needs a perfect nest, outermost first",
                            {outer.stmt, inner.stmt});
}

//===----------------------------------------------------------------------===//
// 2. Checks
//===----------------------------------------------------------------------===//

std::vector<StmtPath> check_nest(const State &st, const std::vector<LoopRef> &loops) {
  check_loop_list("fuse", loops);
  std::vector<StmtPath> paths;
  for (const LoopRef &l : loops) paths.push_back(find_loop(st, l, "fuse"));
  for (size_t k = 0; k + 1 < paths.size(); ++k)
    if (!paths[k].loop()->body.same_as(paths[k + 1].stmt)) not_nested(paths[k], paths[k + 1]);
  for (const StmtPath &p : paths) check_loop_serial("fuse", p);
  for (const StmtPath &p : paths) check_loop_no_annotation("fuse", p);
  for (const StmtPath &p : paths) check_loop_start_at_zero("fuse", p);
  // Fusing needs a rectangular nest: no loop's extent may use an outer one.
  for (size_t k = 1; k < paths.size(); ++k)
    for (size_t o = 0; o < k; ++o) {
      const For &f = *paths[k].loop();
      const Var &v = paths[o].loop()->loop_var;
      if (!uses_var(f.extent, v)) continue;
      throw DependentLoopRangeError("fuse", "the extent of loop " + loop_name(f) + " uses loop " + quoted(v.name()) +
                                                " (the nest is not rectangular)",
                                    "the extent of loop {0} uses loop {1}", {paths[k].stmt, paths[o].stmt});
    }
  return paths;
}

}  // namespace

//===----------------------------------------------------------------------===//
// 3. The primitive
//===----------------------------------------------------------------------===//

LoopRef fuse(State &st, const std::vector<LoopRef> &loops, const std::string &name) {
  // Step 1. Check (may throw; IR untouched)
  std::vector<StmtPath> paths = check_nest(st, loops);

  // Step 2. Build new loops
  size_t n = paths.size();
  DataType t = paths[0].loop()->loop_var.dtype();
  for (const StmtPath &p : paths) t = promote_types(t, p.loop()->loop_var.dtype());
  std::vector<Expr> extents;
  for (const StmtPath &p : paths) extents.push_back(cast(t, p.loop()->extent));
  std::set<std::string> taken = loop_names(st.func);
  std::string hint;
  for (const StmtPath &p : paths) {
    taken.erase(p.loop()->loop_var.name());
    hint += p.loop()->loop_var.name() + "_";
  }
  Var fused(fresh_name(taken, name.empty() ? hint + "fused" : name), t);
  std::vector<std::pair<Var, Expr>> map;
  Expr stride = make_int(t, 1), total = make_int(t, 1);
  for (size_t k = n; k-- > 0;) {
    Expr v = fused;
    if (!is_const_int(stride, 1)) v = floordiv(v, stride);
    if (k > 0) v = floormod(v, extents[k]);
    const Var &old = paths[k].loop()->loop_var;
    map.emplace_back(old, cast(old.dtype(), v));
    stride = mul_fold(stride, extents[k]);
  }
  total = stride;
  Stmt body = substitute(paths[n - 1].loop()->body, map);
  Stmt loop = For::make(fused, make_int(t, 0), total, ForKind::Serial, body);
  // Fusing the pieces of a split gives back one variable:
  // (f // 16) * 16 + f % 16 -> f, with f's range known.
  loop = simplify_bindings(loop, analyzer_at(paths[0]), {fused});

  // Step 3. Replace (the only mutation)
  replace(st, paths[0].stmt, loop);
  return LoopRef{fused};
}

//===----------------------------------------------------------------------===//
// 4. Trace
//===----------------------------------------------------------------------===//

Json encode_fuse(const std::vector<LoopRef> &loops, const LoopRef &out) {
  return Json{{"op", "fuse"}, {"loops", to_json(loops)}, {"out", out.name()}};
}

namespace {

void replay_fuse(ReplayContext &ctx) {
  std::vector<LoopRef> loops = ctx.loops("loops");
  std::string name = ctx.has("out") ? ctx.string("out") : "";
  LoopRef out = ctx.sch.fuse(loops, name);
  ctx.bind(name.empty() ? out.name() : name, out);
}

[[maybe_unused]] const bool kRegistered = register_instruction("fuse", replay_fuse);

}  // namespace

}  // namespace tessera::schedule::detail
