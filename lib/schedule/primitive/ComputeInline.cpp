//===- primitive/ComputeInline.cpp - compute_inline, reverse_compute_inline ===//
//
// compute_inline(B) substitutes producer B's stored value into every load of
// its buffer: `B[v0, v1] = f(v0, v1)` turns a load `B[e0, e1]` into
// `f(e0, e1)`. Blocks whose loads changed get their reads inferred again.
// The producer and the buffer's allocation disappear.
//
// reverse_compute_inline(C) folds consumer `C[g(u)] = h(B[u0, u1], ...)` into
// the only producer `B[v0, v1] = f(v)` of B: the producer becomes
// `C[g(v)] = h(f(v), ...)` (the consumer's iter vars renamed to the
// producer's by the dimension they index), keeping the producer's loops and
// name. It needs the consumer to read B one element per iteration at its
// own iter vars, over the producer's domains, so every consumer iteration
// corresponds to exactly one producer iteration.
//
//===----------------------------------------------------------------------===//
#include "../Dataflow.h"

#include "tessera/ir/Functor.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/script/Printer.h"

namespace tessera::schedule::detail {

using namespace ir;

namespace {

//===----------------------------------------------------------------------===//
// 1. Error messages and 2. checks
//===----------------------------------------------------------------------===//

void check_complete(std::string_view prim, const StmtPath &bp) {
  if (is_complete_block(*bp.block())) return;
  throw BlockNotCompleteError(std::string(prim),
                              "block " + quoted(bp.block()->name) +
                                  " is not a complete block (it has non-spatial iter vars or reads what it writes)",
                              "block {0} is not a complete block", {bp.stmt});
}

void check_no_predicate(std::string_view prim, const Stmt &s) {
  const Block &b = *s.as<Block>();
  if (is_const_int(b.predicate, 1)) return;
  throw BlockHasPredicateError(std::string(prim),
                               "block " + quoted(b.name) + " has the predicate " + script::print(b.predicate) +
                                   ", which inlining would lose",
                               "block {0} has a predicate", {s});
}

/// The index of the iter var each store index is, when they are distinct
/// iter vars covering all of them; nullopt otherwise.
std::optional<std::vector<size_t>> iter_var_indices(const Block &b, const std::vector<Expr> &indices) {
  if (indices.size() != b.iter_vars.size()) return std::nullopt;
  std::vector<size_t> out;
  for (const Expr &e : indices) {
    size_t found = b.iter_vars.size();
    for (size_t k = 0; k < b.iter_vars.size(); ++k)
      if (e.same_as(b.iter_vars[k].var)) found = k;
    if (found == b.iter_vars.size() || std::find(out.begin(), out.end(), found) != out.end()) return std::nullopt;
    out.push_back(found);
  }
  return out;
}

/// The single store of an inlineable producer; NotInlineableBodyError otherwise.
const Store &check_inlineable_producer(std::string_view prim, const Stmt &s) {
  const Block &b = *s.as<Block>();
  const Store *st = b.body.as<Store>();
  std::string why;
  if (b.init || !st) why = "its body is not a single store";
  else if (!iter_var_indices(b, st->indices)) why = "it does not store at its iter vars, each once (B[v0, v1])";
  if (why.empty()) return *st;
  throw NotInlineableBodyError(std::string(prim), "block " + quoted(b.name) + " cannot be inlined: " + why,
                               "block {0} cannot be inlined: " + why, {s});
}

void check_not_output(std::string_view prim, const PrimFunc &f, const Stmt &s, const Buffer &buf) {
  if (!is_param_buffer(f, buf)) return;
  throw OutputBlockError(std::string(prim),
                         "block " + quoted(s.as<Block>()->name) + " writes the function's output " +
                             quoted(buf.name()) + ", which must stay",
                         "block {0} writes the output buffer " + quoted(buf.name()), {s});
}

/// Replaces loads of one buffer by an expression of their indices, drops its
/// allocation and infers again the regions of blocks that changed.
class Inliner : public IRMutator {
 public:
  Inliner(Buffer buf, std::vector<Var> vars, Expr value, const StmtNode *root)
      : buf_(std::move(buf)), vars_(std::move(vars)), value_(std::move(value)), root_(root) {}
  using IRMutator::mutate;

 protected:
  Expr visit_(const Load *op, const Expr &self) override {
    Expr e = IRMutator::visit_(op, self);
    const Load *l = e.as<Load>();
    if (!value_.defined() || !l->buffer.same_as(buf_)) return e;
    std::vector<std::pair<Var, Expr>> map;
    for (size_t k = 0; k < vars_.size(); ++k) map.emplace_back(vars_[k], l->indices[k]);
    return substitute(value_, map);
  }
  Stmt visit_(const Block *op, const Stmt &self) override {
    Stmt s = IRMutator::visit_(op, self);
    const Block *b = s.as<Block>();
    std::vector<Buffer> allocs;
    for (const Buffer &a : b->allocs)
      if (!a.same_as(buf_)) allocs.push_back(a);
    if (allocs.size() != b->allocs.size()) s = block_with_allocs(*b, allocs);
    if (s.same_as(self) || op == root_) return s;
    return block_with_inferred_regions(*s.as<Block>());
  }

 private:
  Buffer buf_;
  std::vector<Var> vars_;
  Expr value_;
  const StmtNode *root_;
};

}  // namespace

//===----------------------------------------------------------------------===//
// 3. The primitives
//===----------------------------------------------------------------------===//

void compute_inline(State &st, const BlockRef &block) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath bp = find_block(st, block, "compute_inline");
  check_complete("compute_inline", bp);
  const Store &store = check_inlineable_producer("compute_inline", bp.stmt);
  check_no_predicate("compute_inline", bp.stmt);
  check_not_output("compute_inline", st.func, bp.stmt, store.buffer);
  for (const Stmt &s : blocks_under(st.func.body())) {
    if (s.same_as(bp.stmt) || !writes_buffer(*s.as<Block>(), store.buffer)) continue;
    throw BufferHasOtherWriterError("compute_inline",
                                    "block " + quoted(s.as<Block>()->name) + " also writes " +
                                        quoted(store.buffer.name()) + ", so block " + quoted(bp.block()->name) +
                                        " cannot be inlined",
                                    "block {0} also writes " + quoted(store.buffer.name()), {s, bp.stmt});
  }

  // Step 2. Build: the function without the block, its value substituted.
  std::vector<Var> vars;
  for (const Expr &e : store.indices) vars.push_back(Var::from(e));
  Stmt body = remove_stmt(st.func.body(), bp.stmt.get());
  body = Inliner(store.buffer, vars, store.value, body.get()).mutate(body);

  // Step 3. Replace (the only mutation)
  replace(st, st.func.body(), body);
}

void reverse_compute_inline(State &st, const BlockRef &block) {
  // Step 1. Check (may throw; IR untouched)
  const char *prim = "reverse_compute_inline";
  StmtPath bp = find_block(st, block, prim);
  const Block &c = *bp.block();
  check_complete(prim, bp);
  const Store *cstore = c.body.as<Store>();
  if (!cstore)
    throw NotInlineableBodyError(prim, "block " + quoted(c.name) + " cannot be inlined: its body is not a single store",
                                 "block {0} cannot be inlined: its body is not a single store", {bp.stmt});
  check_no_predicate(prim, bp.stmt);
  // The produced buffer and its producer.
  std::vector<std::pair<Buffer, std::vector<Stmt>>> produced;
  for (const BufferRegion &r : c.reads) {
    std::vector<Stmt> writers;
    for (const Stmt &s : child_blocks(bp.scope()))
      if (!s.same_as(bp.stmt) && writes_buffer(*s.as<Block>(), r.buffer)) writers.push_back(s);
    if (!writers.empty()) produced.emplace_back(r.buffer, writers);
  }
  if (produced.size() != 1 || produced[0].second.size() != 1) {
    std::string why = produced.empty()        ? "no buffer it reads is written in its scope"
                      : produced.size() > 1   ? "it reads " + std::to_string(produced.size()) + " produced buffers"
                                              : "buffer " + quoted(produced[0].first.name()) + " has " +
                                                  std::to_string(produced[0].second.size()) + " producers";
    throw ProducerNotUniqueError(prim, "block " + quoted(c.name) + " has no unique producer: " + why,
                                 "block {0} has no unique producer: " + why, {bp.stmt});
  }
  Buffer buf = produced[0].first;
  Stmt pstmt = produced[0].second[0];
  const Block &p = *pstmt.as<Block>();
  // The producer's predicate (a tail guard, say) stays on the folded block:
  // it runs exactly where the producer ran.
  const Store &pstore = check_inlineable_producer(prim, pstmt);
  // The consumer's loads of `buf`: one index tuple, its iter vars, the producer's domains.
  std::vector<std::vector<Expr>> loads;
  pre_order_visit(c.body, [&](const Expr &e) {
    if (const Load *l = e.as<Load>(); l && l->buffer.same_as(buf)) loads.push_back(l->indices);
  }, nullptr);
  auto dims = loads.empty() ? std::nullopt : iter_var_indices(c, loads[0]);
  bool ok = dims.has_value();
  for (const auto &idx : loads)
    for (size_t d = 0; ok && d < idx.size(); ++d) ok &= idx[d].same_as(loads[0][d]);
  std::vector<size_t> pdims = *iter_var_indices(p, pstore.indices);
  for (size_t d = 0; ok && d < dims->size(); ++d) {
    const Range &cd = c.iter_vars[(*dims)[d]].dom, &pd = p.iter_vars[pdims[d]].dom;
    ok &= structural_equal(cd.min, pd.min) && structural_equal(cd.extent, pd.extent);
  }
  if (!ok)
    throw NonIterVarIndexError(prim,
                               "block " + quoted(c.name) + " does not load " + quoted(buf.name()) +
                                   " once per iteration at its own iter vars over the producer's domains",
                               "block {0} does not load " + quoted(buf.name()) + " at its iter vars", {bp.stmt});
  check_not_output(prim, st.func, pstmt, buf);
  for (const Stmt &s : blocks_under(st.func.body())) {
    if (s.same_as(bp.stmt) || s.same_as(pstmt) || !reads_buffer(*s.as<Block>(), buf)) continue;
    throw BufferHasOtherReaderError(prim,
                                    "block " + quoted(s.as<Block>()->name) + " also reads " + quoted(buf.name()) +
                                        ", which would no longer be written",
                                    "block {0} also reads " + quoted(buf.name()), {s, bp.stmt});
  }

  // Step 2. Build: the producer storing the consumer's value.
  std::vector<std::pair<Var, Expr>> rename;  // consumer iter var -> producer iter var
  for (size_t d = 0; d < dims->size(); ++d)
    rename.emplace_back(c.iter_vars[(*dims)[d]].var, p.iter_vars[pdims[d]].var);
  std::vector<Var> pvars;
  for (const Expr &e : pstore.indices) pvars.push_back(Var::from(e));
  Stmt folded = Inliner(buf, pvars, pstore.value, nullptr).mutate(c.body);
  folded = substitute(folded, rename);
  Stmt new_producer = block_with_inferred_regions(*p.with_body(folded).as<Block>());
  Stmt body = replace_in(st.func.body(), {{pstmt.get(), new_producer}});
  body = remove_stmt(body, bp.stmt.get());
  body = Inliner(buf, {}, Expr(), body.get()).mutate(body);  // drops the allocation

  // Step 3. Replace (the only mutation)
  replace(st, st.func.body(), body);
}

//===----------------------------------------------------------------------===//
// 4. Trace
//===----------------------------------------------------------------------===//

Json encode_block_op(std::string_view op, const BlockRef &block) { return Json{{"op", op}, {"block", block.name}}; }

namespace {

void replay_compute_inline(ReplayContext &ctx) { ctx.sch.compute_inline(ctx.block("block")); }
void replay_reverse_compute_inline(ReplayContext &ctx) { ctx.sch.reverse_compute_inline(ctx.block("block")); }

[[maybe_unused]] const bool kRegistered =
    register_instruction("compute_inline", replay_compute_inline) &&
    register_instruction("reverse_compute_inline", replay_reverse_compute_inline);

}  // namespace

}  // namespace tessera::schedule::detail
