//===- primitive/Reorder.cpp - reorder and tile ----------------------------===//
//
// reorder permutes loops of one chain (a path of loops where each has exactly
// one child, the next loop). It keeps serial semantics when every block under
// the chain is a complete block (each iteration writes its own outputs) or a
// reduction block (an associative update whose output index does not depend
// on the reduce iter vars): the same iterations run, in another order, and
// each output still sees its reduction steps in an order the reduction
// tolerates. This is TVM's condition; bindings must also be a surjective
// affine map of the loops (arith::detect_iter_map) so the iteration space
// stays a rectangle whatever the loop order.
//
// tile = split every loop + reorder the pieces level by level.
//
//===----------------------------------------------------------------------===//
#include "../Primitive.h"

#include <algorithm>

namespace tessera::schedule::detail {

using namespace ir;

namespace {

//===----------------------------------------------------------------------===//
// 1. Error messages
//===----------------------------------------------------------------------===//

[[noreturn]] void not_one_chain(const StmtPath &a, const StmtPath &b, const std::string &why) {
  throw LoopsNotInOneChainError("reorder", "loops " + loop_name(*a.loop()) + " and " + loop_name(*b.loop()) + " " + why,
                                "loops {0} and {1} " + why, {a.stmt, b.stmt});
}

//===----------------------------------------------------------------------===//
// 2. Checks
//===----------------------------------------------------------------------===//

/// The chain from the outermost to the innermost of `loops`, every loop on it.
std::vector<Stmt> check_chain(const std::vector<StmtPath> &paths) {
  auto depth = [](const StmtPath &p) { return p.ancestors.size(); };
  const StmtPath *top = &paths[0], *bottom = &paths[0];
  for (const StmtPath &p : paths) {
    if (depth(p) < depth(*top)) top = &p;
    if (depth(p) > depth(*bottom)) bottom = &p;
  }
  // The chain: bottom's ancestors from top down, then bottom.
  std::vector<Stmt> chain;
  bool on = false;
  for (const Stmt &a : bottom->ancestors) {
    on |= a.same_as(top->stmt);
    if (on) chain.push_back(a);
  }
  chain.push_back(bottom->stmt);
  if (chain.front().get() != top->stmt.get()) not_one_chain(*top, *bottom, "are not nested in one another");
  for (const StmtPath &p : paths) {
    bool found = std::any_of(chain.begin(), chain.end(), [&](const Stmt &s) { return s.same_as(p.stmt); });
    if (!found) not_one_chain(*top, p, "are not nested in one another");
  }
  for (size_t k = 0; k + 1 < chain.size(); ++k) {
    const For *f = chain[k].as<For>();
    if (!f && chain[k].is<Seq>()) {
      // chain[k - 1] is a loop (the chain starts at one) with several children.
      throw LoopsNotInOneChainError("reorder",
                                    "loop " + loop_name(*chain[k - 1].as<For>()) +
                                        " has more than one child, so the loops from " + loop_name(*top->loop()) +
                                        " to " + loop_name(*bottom->loop()) + " are not one chain",
                                    "loop {0} has more than one child (the chain runs from {1} to {2})",
                                    {chain[k - 1], top->stmt, bottom->stmt});
    }
    if (!f) {
      std::string what = chain[k].is<Block>() ? "block " + quoted(chain[k].as<Block>()->name) : "a statement";
      throw LoopsNotInOneChainError("reorder", "loops " + loop_name(*top->loop()) + " and " +
                                                   loop_name(*bottom->loop()) + " are separated by " + what,
                                    "loops {0} and {1} are separated by " + what, {top->stmt, bottom->stmt});
    }
    if (!f->body.same_as(chain[k + 1])) {
      throw LoopsNotInOneChainError("reorder",
                                    "loop " + loop_name(*f) + " has more than one child, so the loops from " +
                                        loop_name(*top->loop()) + " to " + loop_name(*bottom->loop()) +
                                        " are not one chain",
                                    "loop {0} has more than one child (the chain runs from {1} to {2})",
                                    {chain[k], top->stmt, bottom->stmt});
    }
  }
  return chain;
}

void check_ranges(const std::vector<Stmt> &chain) {
  for (const Stmt &s : chain) {
    const For *f = s.as<For>();
    for (const Stmt &o : chain) {
      const Var &v = o.as<For>()->loop_var;
      if (!range_uses_var(*f, v)) continue;
      throw DependentLoopRangeError("reorder",
                                    "the range of loop " + loop_name(*f) + " uses loop " + quoted(v.name()) +
                                        " of the same chain",
                                    "the range of loop {0} uses loop {1}", {s, o});
    }
  }
}

}  // namespace

//===----------------------------------------------------------------------===//
// 3. The primitives
//===----------------------------------------------------------------------===//

void reorder(State &st, const std::vector<LoopRef> &loops) {
  // Step 1. Check (may throw; IR untouched)
  check_loop_list("reorder", loops);
  std::vector<StmtPath> paths;
  for (const LoopRef &l : loops) paths.push_back(find_loop(st, l, "reorder"));
  std::vector<Stmt> chain = check_chain(paths);
  for (const Stmt &s : chain) check_loop_serial("reorder", StmtPath{{}, s});
  check_ranges(chain);
  for (const Stmt &b : child_blocks(chain.front())) {
    check_complete_or_reduction_block("reorder", b);
    check_affine_binding("reorder", find_block(st, BlockRef{b.as<Block>()->name}, "reorder"));
  }

  // Step 2. Build new loops: the slots the given loops occupy, refilled in
  // the given order.
  std::vector<const For *> order;
  for (const Stmt &s : chain) order.push_back(s.as<For>());
  size_t next = 0;
  for (const Stmt &s : chain) {
    bool given = std::any_of(paths.begin(), paths.end(), [&](const StmtPath &p) { return p.stmt.same_as(s); });
    if (given) order[&s - chain.data()] = paths[next++].loop();
  }
  Stmt body = chain.back().as<For>()->body;
  for (size_t k = order.size(); k-- > 0;) {
    const For *f = order[k];
    body = For::make(f->loop_var, f->min, f->extent, f->for_kind, body, f->thread_tag, f->annotations);
  }

  // Step 3. Replace (the only mutation)
  replace(st, chain.front(), body);
}

std::vector<std::vector<LoopRef>> tile(State &st, const std::vector<LoopRef> &loops,
                                       const std::vector<std::vector<std::optional<int64_t>>> &factors,
                                       const std::vector<std::vector<std::string>> &names) {
  // Step 1. Check (may throw; IR untouched). The splits and the reorder check
  // themselves; they run on a copy, so a late failure leaves `st` as it was.
  check_loop_list("tile", loops);
  if (factors.size() != loops.size() || (!names.empty() && names.size() != loops.size()))
    throw InvalidLoopListError("tile", std::to_string(loops.size()) + " loops but " +
                                           std::to_string(factors.size()) + " factor lists" +
                                           (names.empty() ? "" : " and " + std::to_string(names.size()) + " name lists"));

  // Step 2. Build new loops
  State work = st;
  std::vector<std::vector<LoopRef>> out;
  for (size_t k = 0; k < loops.size(); ++k)
    out.push_back(split(work, loops[k], factors[k], names.empty() ? std::vector<std::string>{} : names[k]));
  std::vector<LoopRef> order;
  for (size_t level = 0;; ++level) {
    size_t before = order.size();
    for (const auto &pieces : out)
      if (level < pieces.size()) order.push_back(pieces[level]);
    if (order.size() == before) break;
  }
  reorder(work, order);

  // Step 3. Replace (the only mutation)
  st.func = work.func;
  return out;
}

//===----------------------------------------------------------------------===//
// 4. Trace
//===----------------------------------------------------------------------===//

Json encode_reorder(const std::vector<LoopRef> &loops) { return Json{{"op", "reorder"}, {"loops", to_json(loops)}}; }

Json encode_tile(const std::vector<LoopRef> &loops, const std::vector<std::vector<std::optional<int64_t>>> &factors,
                 const std::vector<std::vector<LoopRef>> &out) {
  Json f = Json::array(), o = Json::array();
  for (const auto &x : factors) f.push_back(factors_to_json(x));
  for (const auto &x : out) o.push_back(to_json(x));
  return Json{{"op", "tile"}, {"loops", to_json(loops)}, {"factors", f}, {"out", o}};
}

namespace {

void replay_reorder(ReplayContext &ctx) { ctx.sch.reorder(ctx.loops("loops")); }

void replay_tile(ReplayContext &ctx) {
  std::vector<LoopRef> loops = ctx.loops("loops");
  const Json &f = ctx.field("factors");
  if (!f.is_array()) ctx.fail("factors", "must be a list of factor lists");
  std::vector<std::vector<std::optional<int64_t>>> factors;
  for (const Json &x : f) factors.push_back(split_factors_from_json(ctx, x, "factors"));
  std::vector<std::vector<std::string>> names;
  if (ctx.has("out")) {
    const Json &o = ctx.field("out");
    if (!o.is_array()) ctx.fail("out", "must be a list of name lists");
    for (const Json &x : o) {
      if (!x.is_array()) ctx.fail("out", "must be a list of name lists");
      names.emplace_back();
      for (const Json &n : x) {
        if (!n.is_string()) ctx.fail("out", "must be a list of name lists");
        names.back().push_back(n.get<std::string>());
      }
    }
  }
  auto out = ctx.sch.tile(loops, factors, names);
  for (size_t k = 0; k < names.size() && k < out.size(); ++k)
    for (size_t i = 0; i < names[k].size() && i < out[k].size(); ++i) ctx.bind(names[k][i], out[k][i]);
}

[[maybe_unused]] const bool kRegistered =
    register_instruction("reorder", replay_reorder) && register_instruction("tile", replay_tile);

}  // namespace

}  // namespace tessera::schedule::detail
