//===- primitive/Reindex.cpp - reindex -------------------------------------===//
//
// reindex(C, 1, false) gives C's read buffer 1 a copy whose layout follows
// the block's iteration space: one dimension per iter var the indices use,
// in iter var order. For a matmul reading B transposed:
//
//   C[vi, vj] += A[vi, vk] * B[vj, vk]
//   --reindex(C, 1, false)-->
//   for ax0, ax1 in T.grid(80, 48):
//       with T.block("B_reindex"):
//           v0, v1 = T.axis.remap("SS", [ax0, ax1])
//           B_reindex[v0, v1] = B[v0, v1]
//   for i, j, k: C[vi, vj] += A[vi, vk] * B_reindex[vj, vk]
//
// The indices may be any expressions of the iter vars (A[vi + vk] becomes
// A_reindex[vi, vk] copied from A[v0 + v1]); for a write they must be the
// iter vars themselves, so that the copy back writes each element once.
// The copy covers the iter vars' whole domains, which the block's own
// iteration covers too (no predicate on a write, Requires 5).
//
//===----------------------------------------------------------------------===//
#include "../Layout.h"

#include <algorithm>

#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/ir/StructuralEqual.h"

namespace tessera::schedule::detail {

using namespace ir;

//===----------------------------------------------------------------------===//
// Shared helper (declared in Layout.h)
//===----------------------------------------------------------------------===//

namespace {

class AccessRewriter : public IRMutator {
 public:
  AccessRewriter(const Buffer &from, const Buffer &to, const IndexRewrite &fn) : from_(from), to_(to), fn_(fn) {}

 protected:
  Expr visit_(const Load *op, const Expr &self) override {
    Expr e = IRMutator::visit_(op, self);
    const Load *l = e.as<Load>();
    if (!l || !l->buffer.same_as(from_)) return e;
    return Load::make(to_, fn_(l->indices));
  }
  Stmt visit_(const Store *op, const Stmt &self) override {
    Stmt s = IRMutator::visit_(op, self);
    const Store *st = s.as<Store>();
    if (!st || !st->buffer.same_as(from_)) return s;
    return Store::make(to_, st->value, fn_(st->indices));
  }

 private:
  Buffer from_, to_;
  const IndexRewrite &fn_;
};

}  // namespace

Stmt rewrite_accesses(const Stmt &s, const Buffer &from, const Buffer &to, const IndexRewrite &fn) {
  AccessRewriter r(from, to, fn);
  return r.mutate(s);
}

namespace {

constexpr const char *kPrim = "reindex";

//===----------------------------------------------------------------------===//
// 1. Error messages and 2. checks
//===----------------------------------------------------------------------===//

/// The one index list at which `b` (body and init) accesses `buf`.
std::vector<Expr> check_one_index_list(const StmtPath &bp, const Buffer &buf) {
  const Block &b = *bp.block();
  std::vector<std::vector<Expr>> lists;
  auto visit = [&](const Stmt &s) {
    pre_order_visit(s, [&](const Expr &e) {
      if (const Load *l = e.as<Load>(); l && l->buffer.same_as(buf)) lists.push_back(l->indices);
    }, [&](const Stmt &x) {
      if (const Store *st = x.as<Store>(); st && st->buffer.same_as(buf)) lists.push_back(st->indices);
    });
  };
  visit(b.body);
  if (b.init) visit(*b.init);
  std::string why;
  if (lists.empty()) why = "block " + quoted(b.name) + " does not load or store " + quoted(buf.name());
  for (const auto &l : lists) {
    bool same = l.size() == lists[0].size();
    for (size_t d = 0; same && d < l.size(); ++d) same = structural_equal(l[d], lists[0][d]);
    if (!same && why.empty())
      why = "block " + quoted(b.name) + " accesses " + quoted(buf.name()) + " at different index lists";
  }
  if (why.empty()) return lists[0];
  throw ReindexAccessError(kPrim, "cannot reindex: " + why, "cannot reindex " + quoted(buf.name()) + ": " + why,
                           {bp.stmt});
}

/// No other block under the block's outermost loop touches `buf`.
void check_alone_in_nest(const StmtPath &bp, const Stmt &top, const Buffer &buf) {
  std::vector<Stmt> skip = blocks_under(bp.stmt);
  skip.push_back(bp.stmt);
  skip.insert(skip.end(), bp.ancestors.begin(), bp.ancestors.end());
  auto skipped = [&](const Stmt &s) {
    return std::any_of(skip.begin(), skip.end(), [&](const Stmt &x) { return x.same_as(s); });
  };
  for (const Stmt &s : blocks_under(top)) {
    const Block &o = *s.as<Block>();
    if (skipped(s)) continue;
    if (!reads_buffer(o, buf) && !writes_buffer(o, buf)) continue;
    throw ReindexAccessError(kPrim,
                             "cannot reindex " + quoted(buf.name()) + " of block " + quoted(bp.block()->name) +
                                 ": block " + quoted(o.name) + " in the same loop nest accesses it too",
                             "block {0} in the loop nest of block {1} accesses " + quoted(buf.name()) + " too",
                             {s, bp.stmt});
  }
}

void check_read(const StmtPath &bp, const Buffer &buf) {
  if (!writes_buffer(*bp.block(), buf)) return;
  throw CachedBufferWrittenError(kPrim,
                                 "cannot reindex read buffer " + quoted(buf.name()) + ": block " +
                                     quoted(bp.block()->name) + " writes it too (reindex it as a write)",
                                 "block {0} writes the read buffer " + quoted(buf.name()), {bp.stmt});
}

void check_write(const StmtPath &bp, const Buffer &buf, const std::vector<Expr> &idx) {
  const Block &b = *bp.block();
  std::vector<int> seen;
  for (const Expr &e : idx) {
    int p = iter_var_position(b, e);
    if (p >= 0 && std::find(seen.begin(), seen.end(), p) == seen.end()) {
      seen.push_back(p);
      continue;
    }
    throw NonIterVarIndexError(kPrim,
                               "cannot reindex write buffer " + quoted(buf.name()) + " of block " + quoted(b.name) +
                                   ": its indices are not distinct iter vars",
                               "block {0} writes " + quoted(buf.name()) + " at indices that are not distinct iter vars",
                               {bp.stmt});
  }
  if (!is_const_int(b.predicate, 1))
    throw BlockHasPredicateError(kPrim,
                                 "cannot reindex write buffer " + quoted(buf.name()) + ": block " + quoted(b.name) +
                                     " has a predicate, so the copy back would copy unwritten elements",
                                 "block {0} has a predicate", {bp.stmt});
  if (reads_buffer(b, buf) && !b.init)
    throw NotReductionBlockError(kPrim,
                                 "cannot reindex write buffer " + quoted(buf.name()) + ": block " + quoted(b.name) +
                                     " reads it without an init, so the new buffer would start uninitialised",
                                 "block {0} reads " + quoted(buf.name()) + " without an init", {bp.stmt});
}

}  // namespace

//===----------------------------------------------------------------------===//
// 3. The primitive
//===----------------------------------------------------------------------===//

BlockRef reindex(State &st, const BlockRef &block, int64_t buffer_index, bool is_write) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath bp = find_block(st, block, kPrim);
  const Block &b = *bp.block();
  Buffer buf = check_buffer_index(kPrim, bp, is_write ? b.writes : b.reads, buffer_index,
                                  is_write ? "write" : "read")
                   .buffer;
  std::vector<Expr> idx = check_one_index_list(bp, buf);
  std::vector<Stmt> loops = loops_below(bp, Stmt());
  Stmt top = loops.empty() ? bp.stmt : loops.front();
  check_alone_in_nest(bp, top, buf);
  if (is_write)
    check_write(bp, buf, idx);
  else
    check_read(bp, buf);

  // Step 2. Build: the new buffer over the used iter vars, the copy, the rewritten block.
  std::vector<size_t> used;
  for (size_t k = 0; k < b.iter_vars.size(); ++k)
    for (const Expr &e : idx)
      if (uses_var(e, b.iter_vars[k].var)) {
        used.push_back(k);
        break;
      }
  std::vector<Expr> shape, new_idx;
  for (size_t k : used) {
    const IterVar &iv = b.iter_vars[k];
    shape.push_back(iv.dom.extent);
    new_idx.push_back(arith::simplify(sub(iv.var, iv.dom.min)));
  }
  std::set<std::string> buf_names = buffer_names(st.func), blk_names = block_names(st.func);
  Buffer nb = Buffer::make(fresh_name(buf_names, buf.name() + "_reindex"), buf.dtype(), shape, buf.scope());
  std::string name = fresh_name(blk_names, nb.name());
  Stmt copy = make_spatial_nest(st, name, shape, [&](const std::vector<Var> &v) {
    std::vector<std::pair<Var, Expr>> sub_map;
    for (size_t d = 0; d < used.size(); ++d)
      sub_map.emplace_back(b.iter_vars[used[d]].var, arith::simplify(add(v[d], b.iter_vars[used[d]].dom.min)));
    std::vector<Expr> orig, mine(v.begin(), v.end());
    for (const Expr &e : idx) orig.push_back(arith::simplify(substitute(e, sub_map)));
    return is_write ? Store::make(buf, Load::make(nb, mine), orig) : Store::make(nb, Load::make(buf, orig), mine);
  });
  IndexRewrite to_new = [&](const std::vector<Expr> &) { return new_idx; };
  Stmt rewritten = rewrite_accesses(bp.stmt, buf, nb, to_new);
  const Block &rb = *rewritten.as<Block>();
  auto fix = [&](std::vector<BufferRegion> regions) {
    for (BufferRegion &r : regions) {
      if (!r.buffer.same_as(buf)) continue;
      r.buffer = nb;
      r.region.clear();
      for (const Expr &e : new_idx) r.region.push_back(Range{e, make_int(e.dtype(), 1)});
    }
    return regions;
  };
  rewritten = block_with_regions(rb, fix(rb.reads), fix(rb.writes));
  StmtPath sp = scope_path_of(bp);
  size_t pos = item_containing(*sp.block(), top);
  Stmt new_scope = replace_in(sp.stmt, {{bp.stmt.get(), rewritten}});
  new_scope = insert_into_scope(*new_scope.as<Block>(), is_write ? pos + 1 : pos, copy);
  std::vector<Buffer> allocs = new_scope.as<Block>()->allocs;
  allocs.push_back(nb);
  new_scope = block_with_allocs(*new_scope.as<Block>(), allocs);

  // Step 3. Replace (the only mutation)
  replace(st, sp.stmt, new_scope);
  return BlockRef{name};
}

//===----------------------------------------------------------------------===//
// 4. Trace
//===----------------------------------------------------------------------===//

Json encode_reindex(const BlockRef &block, int64_t buffer_index, bool is_write, const BlockRef &out) {
  return Json{{"op", "reindex"}, {"block", block.name}, {"buffer_index", buffer_index}, {"write", is_write},
              {"out", out.name}};
}

namespace {

void replay_reindex(ReplayContext &ctx) {
  const Json &w = ctx.field("write");
  if (!w.is_boolean()) ctx.fail("write", "must be true or false");
  BlockRef out = ctx.sch.reindex(ctx.block("block"), ctx.integer("buffer_index"), w.get<bool>());
  if (ctx.has("out")) ctx.bind(ctx.string("out"), out);
}

[[maybe_unused]] const bool kRegistered = register_instruction("reindex", replay_reindex);

}  // namespace

}  // namespace tessera::schedule::detail
