//===- primitive/RFactor.cpp - rfactor --------------------------------------===//
//
// rfactor(k_1, axis) turns one reduction into two. With k split into k_0, k_1:
//
//   for i, k_0, k_1 in T.grid(256, 8, 128):
//       with T.block("B"):                      # B[vi] += A[vi, vk]
//           vi = T.axis.spatial(256, i); vk = T.axis.reduce(1024, k_0 * 128 + k_1)
//
// becomes the rfactor block, where the factored loop is a spatial iter var
// and each partial result has its own slot in a new buffer B_rf,
//
//   for i, k_0, k_1 in T.grid(256, 8, 128):
//       with T.block("B_rf"):                   # B_rf[vk_1, vi] += A[vi, vk_0 * 128 + vk_1]
//           vi = spatial(i); vk_1 = spatial(k_1); vk_0 = reduce(k_0)
//
// followed by the write-back block, which reduces the slots:
//
//   for i_1, k_1_1 in T.grid(256, 128):
//       with T.block("B"):                      # B[vi] += B_rf[vk_1, vi]
//           vi = spatial(i_1); vk_1 = reduce(k_1_1)
//
// This is legal because the reducer is associative and commutative, so the
// partial sums may be formed in any grouping; the new reduce iter vars are
// per loop (vk_0 over k_0), which is why every loop must feed either spatial
// or reduce iter vars, never both. B_rf's slots are initialised when the
// other reduce loops start, so the predicate must not skip those iterations:
// a T.where over reduction loops is refused. The rf block is where the
// parallelism is: binding its k_1 to threadIdx.x and the write-back's k_1_1
// to threadIdx.x too gives the classic cross-thread reduction.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "../Primitive.h"

#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/script/Printer.h"

namespace tessera::schedule::detail {

using namespace ir;

namespace {

/// `C[idx] = C[idx] op rhs` (or `rhs op C[idx]`), with `init` the identity.
struct Reducer {
  BinaryOp op;
  Buffer buffer;
  std::vector<Expr> indices;
  Expr rhs;
  bool load_first = true;  // C[idx] op rhs, else rhs op C[idx]
  Expr identity;           // the init's value
};

//===----------------------------------------------------------------------===//
// 1. Error messages
//===----------------------------------------------------------------------===//

[[noreturn]] void unknown_reducer(const Stmt &block, const std::string &why) {
  const Block &b = *block.as<Block>();
  throw UnknownReducerError(
      "rfactor",
      "block " + detail::quoted(b.name) +
          " is not a known reduction (C[v] = C[v] op f(...) with op "
          "one of +, *, max, min and init the identity): " +
          why,
      "block {0} is not a known reduction (C[v] = C[v] op f(...) with op one of +, *, max, "
      "min and init the identity): " +
          why,
      {block});
}

[[noreturn]] void not_reduction_loop(const StmtPath &loop, const Stmt &block, const std::string &why) {
  throw LoopNotReductionError("rfactor", "loop " + loop_name(*loop.loop()) + " " + why,
                              "loop {0} " + why + " (block {1})", {loop.stmt, block});
}

//===----------------------------------------------------------------------===//
// 2. Checks
//===----------------------------------------------------------------------===//

/// The block under `loop`, which must be the only block under the loops of
/// its scope (the write-back block goes after the outermost of them).
StmtPath check_single_block(const State &st, const StmtPath &loop) {
  std::vector<Stmt> blocks = blocks_under(loop.stmt);
  if (blocks.size() != 1)
    throw NotSingleBlockError(
        "rfactor",
        "loop " + loop_name(*loop.loop()) + " has " + std::to_string(blocks.size()) +
            " blocks under it; rfactor needs exactly one",
        "loop {0} has " + std::to_string(blocks.size()) + " blocks under it; rfactor needs exactly one",
        {loop.stmt});
  StmtPath block = find_block(st, BlockRef{blocks[0].as<Block>()->name}, "rfactor");
  for (auto it = block.ancestors.rbegin(); it != block.ancestors.rend() && !it->is<Block>(); ++it) {
    if (!it->is<For>()) continue;
    size_t n = blocks_under(*it).size();
    if (n == 1) continue;
    throw NotSingleBlockError("rfactor",
                              "loop " + loop_name(*it->as<For>()) + " around block " +
                                  detail::quoted(blocks[0].as<Block>()->name) + " has " + std::to_string(n) +
                                  " blocks under it; rfactor needs the block alone in "
                                  "its loop nest",
                              "loop {0} around block {1} has " + std::to_string(n) + " blocks under it",
                              {*it, block.stmt});
  }
  return block;
}

void check_reduction_block(const Stmt &block) {
  const Block &b = *block.as<Block>();
  if (is_reduction_block(b) && b.init) return;
  std::string why = !is_reduction_block(b) ? "is not a reduction block (spatial and reduce iter vars, writes "
                                             "indexed by the spatial ones)"
                                           : "has no init (T.init())";
  throw NotReductionBlockError("rfactor", "block " + detail::quoted(b.name) + " " + why, "block {0} " + why,
                               {block});
}

bool is_identity(BinaryOp op, const Expr &v) {
  DataType t = v.dtype();
  if (const auto *f = v.as<FloatImm>()) {
    switch (op) {
      case BinaryOp::Add:
        return f->value == 0;
      case BinaryOp::Mul:
        return f->value == 1;
      case BinaryOp::Max:
        return std::isinf(f->value) && f->value < 0;
      case BinaryOp::Min:
        return std::isinf(f->value) && f->value > 0;
      default:
        return false;
    }
  }
  if (const auto *c = v.as<Call>()) {
    if (op == BinaryOp::Max) return c->op == Intrinsic::MinValue;
    if (op == BinaryOp::Min) return c->op == Intrinsic::MaxValue;
    return false;
  }
  std::optional<int64_t> k = as_const_int(v);
  if (!k || !t.is_int()) return false;
  switch (op) {
    case BinaryOp::Add:
      return *k == 0;
    case BinaryOp::Mul:
      return *k == 1;
    case BinaryOp::Max:
      return *k == std::numeric_limits<int64_t>::min() >> (64 - t.bits());
    case BinaryOp::Min:
      return *k == std::numeric_limits<int64_t>::max() >> (64 - t.bits());
    default:
      return false;
  }
}

bool same_indices(const std::vector<Expr> &a, const std::vector<Expr> &b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!structural_equal(a[i], b[i])) return false;
  return true;
}

bool reads_buffer(const Expr &e, const Buffer &buf) {
  bool found = false;
  pre_order_visit(
      Evaluate::make(e),
      [&](const Expr &x) {
        if (const Load *l = x.as<Load>()) found |= l->buffer.same_as(buf);
      },
      nullptr);
  return found;
}

Reducer check_reducer(const Stmt &block) {
  const Block &b = *block.as<Block>();
  const Store *store = b.body.as<Store>();
  if (!store) unknown_reducer(block, "its body is not a single store");
  const Binary *bin = store->value.as<Binary>();
  static const BinaryOp kOps[] = {BinaryOp::Add, BinaryOp::Mul, BinaryOp::Max, BinaryOp::Min};
  if (!bin || std::find(std::begin(kOps), std::end(kOps), bin->op) == std::end(kOps))
    unknown_reducer(block, "the stored value " + script::print(store->value) + " is not a +, *, max or min");
  Reducer r{bin->op, store->buffer, store->indices, Expr(), true, Expr()};
  auto is_self = [&](const Expr &e) {
    const Load *l = e.as<Load>();
    return l && l->buffer.same_as(store->buffer) && same_indices(l->indices, store->indices);
  };
  if (is_self(bin->a))
    r.rhs = bin->b;
  else if (is_self(bin->b))
    r.rhs = bin->a, r.load_first = false;
  else
    unknown_reducer(block, "neither operand of " + script::print(store->value) + " is " +
                               store->buffer.name() + " at the stored indices");
  if (reads_buffer(r.rhs, store->buffer))
    unknown_reducer(block, "the reduced value " + script::print(r.rhs) + " reads " +
                               detail::quoted(store->buffer.name()));
  const Store *init = b.init->as<Store>();
  if (!init || !init->buffer.same_as(store->buffer) || !same_indices(init->indices, store->indices))
    unknown_reducer(block,
                    "its init is not a single store to " + store->buffer.name() + " at the stored indices");
  // Max and min are idempotent: the init folded into every partial result
  // and again into the write-back is the serial init (TVM's softmax starts
  // its max at the lowest finite float, not at -inf).
  const bool idempotent = bin->op == BinaryOp::Max || bin->op == BinaryOp::Min;
  if (!idempotent && !is_identity(bin->op, init->value))
    unknown_reducer(block, "its init value " + script::print(init->value) + " is not the identity of " +
                               binary_op_name(bin->op));
  r.identity = init->value;
  return r;
}

/// How the loops of the block's scope feed its iter vars.
struct LoopUse {
  const For *loop;
  Stmt stmt;
  bool spatial = false, reduce = false;
};

std::vector<LoopUse> check_loop_uses(const StmtPath &loop, const StmtPath &block) {
  const Block &b = *block.block();
  std::vector<LoopUse> uses;
  for (const Stmt &a : block.ancestors) {
    if (a.is<Block>()) uses.clear();  // only the loops of the block's own scope
    if (const For *f = a.as<For>()) uses.push_back(LoopUse{f, a});
  }
  for (LoopUse &u : uses) {
    std::string spatial_iv, reduce_iv;
    for (size_t i = 0; i < b.iter_vars.size(); ++i) {
      if (!uses_var(b.bindings[i], u.loop->loop_var)) continue;
      bool reduce = b.iter_vars[i].kind == IterKind::Reduce;
      (reduce ? reduce_iv : spatial_iv) = b.iter_vars[i].var.name();
    }
    u.spatial = !spatial_iv.empty();
    u.reduce = !reduce_iv.empty();
    if (u.spatial && u.reduce)
      not_reduction_loop(StmtPath{{}, u.stmt}, block.stmt,
                         "feeds both the spatial iter var " + detail::quoted(spatial_iv) +
                             " and the reduce iter var " + detail::quoted(reduce_iv));
    if (u.stmt.same_as(loop.stmt) && !u.reduce)
      not_reduction_loop(
          loop, block.stmt,
          u.spatial ? "feeds the spatial iter var " + detail::quoted(spatial_iv) + ", not a reduction"
                    : "feeds no reduce iter var of the block");
  }
  return uses;
}

void check_predicate(const StmtPath &block, const std::vector<LoopUse> &uses) {
  const Block &b = *block.block();
  for (const LoopUse &u : uses) {
    if (!u.reduce || !uses_var(b.predicate, u.loop->loop_var)) continue;
    throw BlockHasPredicateError(
        "rfactor",
        "block " + detail::quoted(b.name) + " has the predicate " + script::print(b.predicate) +
            " over the reduction loop " + detail::quoted(u.loop->loop_var.name()) +
            "; rfactor would leave partial results uninitialised (split with a dividing "
            "factor)",
        "block {0} has a predicate over the reduction loop {1}", {block.stmt, u.stmt});
  }
}

/// factor_axis normalised to [0, ndim]; negative counts from the end (-1: last).
int64_t check_factor_axis(const StmtPath &block, const Buffer &buf, int64_t axis) {
  int64_t ndim = buf.ndim();
  if (axis >= -(ndim + 1) && axis <= ndim) return axis < 0 ? axis + ndim + 1 : axis;
  throw InvalidFactorAxisError("rfactor",
                               "factor axis " + std::to_string(axis) + " is out of range for buffer " +
                                   detail::quoted(buf.name()) + " of " + std::to_string(ndim) +
                                   " dimensions (the rfactor "
                                   "buffer has " +
                                   std::to_string(ndim + 1) + "; valid: " + std::to_string(-(ndim + 1)) +
                                   " to " + std::to_string(ndim) + ")",
                               "", {block.stmt});
}

//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

std::vector<Expr> insert_at(std::vector<Expr> v, int64_t axis, const Expr &e) {
  v.insert(v.begin() + axis, e);
  return v;
}

Expr combine(const Reducer &r, const Expr &acc, const Expr &value) {
  return r.load_first ? binary(r.op, acc, value) : binary(r.op, value, acc);
}

Stmt make_block(const std::string &name, std::vector<IterVar> ivs, std::vector<Expr> bindings, Expr pred,
                std::vector<Buffer> allocs, std::optional<Stmt> init, Stmt body, Annotations ann = {}) {
  AccessRegions regions = infer_access_regions(init, body, allocs);
  return Block::make(name, std::move(ivs), std::move(bindings), std::move(pred), regions.reads,
                     regions.writes, std::move(allocs), init, body, std::move(ann));
}

std::set<std::string> block_names(const PrimFunc &f) {
  std::set<std::string> names;
  names.insert(f.body().as<Block>()->name);
  for (const Stmt &s : blocks_under(f.body())) names.insert(s.as<Block>()->name);
  return names;
}

std::set<std::string> buffer_names(const PrimFunc &f) {
  std::set<std::string> names;
  pre_order_visit(
      f.body(),
      [&](const Expr &e) {
        if (const Load *l = e.as<Load>()) names.insert(l->buffer.name());
      },
      [&](const Stmt &s) {
        if (const Block *b = s.as<Block>()) {
          for (const Buffer &a : b->allocs) names.insert(a.name());
          for (const BufferRegion &r : b->reads) names.insert(r.buffer.name());
          for (const BufferRegion &r : b->writes) names.insert(r.buffer.name());
        }
      });
  return names;
}

}  // namespace

//===----------------------------------------------------------------------===//
// 3. The primitive
//===----------------------------------------------------------------------===//

BlockRef rfactor(State &st, const LoopRef &ref, int64_t factor_axis) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath loop = find_loop(st, ref, "rfactor");
  StmtPath block = check_single_block(st, loop);
  check_reduction_block(block.stmt);
  Reducer red = check_reducer(block.stmt);
  check_affine_binding("rfactor", block);
  check_loop_start_at_zero("rfactor", loop);
  std::vector<LoopUse> uses = check_loop_uses(loop, block);
  check_predicate(block, uses);
  int64_t axis = check_factor_axis(block, red.buffer, factor_axis);

  // Step 2. Build the rfactor block, the rfactor buffer and the write-back nest.
  const Block &b = *block.block();
  const For &rf_loop = *loop.loop();
  DataType it = rf_loop.loop_var.dtype();
  std::set<std::string> bufs = buffer_names(st.func), blocks = block_names(st.func),
                        loops = loop_names(st.func);
  DataType shape_t = red.buffer.shape().empty() ? DataType::int32() : red.buffer.shape()[0].dtype();
  std::vector<Expr> rf_shape =
      insert_at(red.buffer.shape(), axis, arith::simplify(cast(shape_t, rf_loop.extent)));
  Buffer rf_buf = Buffer::make(fresh_name(bufs, red.buffer.name() + "_rf"), red.buffer.dtype(), rf_shape,
                               red.buffer.scope());

  // The rfactor block: the original spatial iter vars, one spatial iter var
  // for the factored loop, one reduce iter var per other reduction loop.
  std::vector<IterVar> ivs;
  std::vector<Expr> bindings;
  for (size_t i = 0; i < b.iter_vars.size(); ++i) {
    if (b.iter_vars[i].kind != IterKind::Spatial) continue;
    ivs.push_back(b.iter_vars[i]);
    bindings.push_back(b.bindings[i]);
  }
  std::vector<std::pair<Var, Expr>> loop_to_iv;
  Var rf_iv("v" + rf_loop.loop_var.name(), it);
  ivs.push_back(IterVar{rf_iv, Range::from_extent(rf_loop.extent), IterKind::Spatial});
  bindings.push_back(rf_loop.loop_var);
  loop_to_iv.emplace_back(rf_loop.loop_var, rf_iv);
  for (const LoopUse &u : uses) {
    if (!u.reduce || u.stmt.same_as(loop.stmt)) continue;
    Var v("v" + u.loop->loop_var.name(), u.loop->loop_var.dtype());
    ivs.push_back(IterVar{v, Range{u.loop->min, u.loop->extent}, IterKind::Reduce});
    bindings.push_back(u.loop->loop_var);
    loop_to_iv.emplace_back(u.loop->loop_var, v);
  }
  // Each old reduce iter var becomes its binding over the new iter vars.
  arith::Analyzer ana;
  for (const IterVar &iv : ivs) ana.bind(iv.var, iv.dom);
  std::vector<std::pair<Var, Expr>> old_reduce;
  for (size_t i = 0; i < b.iter_vars.size(); ++i)
    if (b.iter_vars[i].kind == IterKind::Reduce)
      old_reduce.emplace_back(b.iter_vars[i].var, ana.simplify(substitute(b.bindings[i], loop_to_iv)));
  // With no reduction loop left (`loop` was the only one) each slot gets one
  // value: the rfactor block is a complete block, `identity op x` is `x`.
  std::vector<Expr> rf_idx = insert_at(red.indices, axis, rf_iv);
  Expr rhs = substitute(red.rhs, old_reduce);
  bool reduces = loop_to_iv.size() > 1;
  std::optional<Stmt> rf_init;
  if (reduces) rf_init = Store::make(rf_buf, red.identity, rf_idx);
  Stmt rf_body = Store::make(rf_buf, reduces ? combine(red, Load::make(rf_buf, rf_idx), rhs) : rhs, rf_idx);
  Stmt rf_block = make_block(fresh_name(blocks, b.name + "_rf"), ivs, bindings, b.predicate, b.allocs,
                             rf_init, rf_body, b.annotations);

  // The write-back nest: copies of the spatial loops and of the factored one.
  std::vector<std::pair<Var, Expr>> new_loops;
  std::vector<const For *> wb_loops;
  std::vector<Var> wb_vars;
  for (const LoopUse &u : uses) {
    if (!u.spatial && !u.stmt.same_as(loop.stmt)) continue;
    wb_vars.emplace_back(fresh_name(loops, u.loop->loop_var.name()), u.loop->loop_var.dtype());
    new_loops.emplace_back(u.loop->loop_var, wb_vars.back());
    wb_loops.push_back(u.loop);
  }
  std::vector<IterVar> wb_ivs;
  std::vector<Expr> wb_bindings;
  std::vector<std::pair<Var, Expr>> spatial_to_new;
  for (size_t i = 0; i < b.iter_vars.size(); ++i) {
    const IterVar &iv = b.iter_vars[i];
    if (iv.kind != IterKind::Spatial) continue;
    Var v(iv.var.name(), iv.var.dtype());
    wb_ivs.push_back(IterVar{v, iv.dom, IterKind::Spatial});
    wb_bindings.push_back(substitute(b.bindings[i], new_loops));
    spatial_to_new.emplace_back(iv.var, v);
  }
  Var wb_rv("v" + rf_loop.loop_var.name(), it);
  wb_ivs.push_back(IterVar{wb_rv, Range::from_extent(rf_loop.extent), IterKind::Reduce});
  wb_bindings.push_back(substitute(Expr(rf_loop.loop_var), new_loops));
  std::vector<Expr> wb_idx;
  for (const Expr &e : red.indices) wb_idx.push_back(substitute(e, spatial_to_new));
  Stmt wb_init = Store::make(red.buffer, red.identity, wb_idx);
  Stmt wb_body = Store::make(
      red.buffer,
      combine(red, Load::make(red.buffer, wb_idx), Load::make(rf_buf, insert_at(wb_idx, axis, wb_rv))),
      wb_idx);
  Stmt wb = make_block(b.name, wb_ivs, wb_bindings, substitute(b.predicate, new_loops), {}, wb_init, wb_body);
  for (size_t k = wb_loops.size(); k-- > 0;)
    wb = For::make(wb_vars[k], wb_loops[k]->min, wb_loops[k]->extent, ForKind::Serial, wb);

  // The new scope: the rfactor nest, then the write-back nest, and B_rf allocated.
  const Stmt &top = uses.front().stmt;
  Stmt rf_nest = replace_in(top, {{block.stmt.get(), rf_block}});
  Stmt scope = block.scope();
  const Block &sb = *scope.as<Block>();
  Stmt scope_body = replace_in(sb.body, {{top.get(), Seq::make({rf_nest, wb})}});
  std::vector<Buffer> allocs = sb.allocs;
  allocs.push_back(rf_buf);
  Stmt new_scope = Block::make(sb.name, sb.iter_vars, sb.bindings, sb.predicate, sb.reads, sb.writes, allocs,
                               sb.init, scope_body, sb.annotations);

  // Step 3. Replace (the only mutation)
  replace(st, scope, new_scope);
  return BlockRef{rf_block.as<Block>()->name};
}

//===----------------------------------------------------------------------===//
// 4. Trace
//===----------------------------------------------------------------------===//

Json encode_rfactor(const LoopRef &loop, int64_t factor_axis, const BlockRef &out) {
  return Json{{"op", "rfactor"}, {"loop", loop.name()}, {"factor_axis", factor_axis}, {"out", out.name}};
}

namespace {

void replay_rfactor(ReplayContext &ctx) {
  BlockRef out = ctx.sch.rfactor(ctx.loop("loop"), ctx.integer("factor_axis"));
  ctx.bind(ctx.has("out") ? ctx.string("out") : out.name, out);
}

[[maybe_unused]] const bool kRegistered = register_instruction("rfactor", replay_rfactor);

}  // namespace

}  // namespace tessera::schedule::detail
