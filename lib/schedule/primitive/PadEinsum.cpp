//===- primitive/PadEinsum.cpp - pad_einsum --------------------------------===//
//
// pad_einsum(C, {32, 32, 32}) grows the iteration space of an einsum-like
// block to multiples of the padding, so that later splits divide it and need
// no predicate:
//
//   for i, j, k in T.grid(100, 77, 50):            # C[vi, vj] += A[vi, vk] * B[vk, vj]
//   --pad_einsum(C, {32, 32, 32})-->
//   for ax0, ax1 in T.grid(128, 64):  A_pad[v0, v1] = T.if_then_else(v0 < 100 and v1 < 50, A[v0, v1], 0)
//   for ax0, ax1 in T.grid(64, 96):   B_pad[v0, v1] = T.if_then_else(v0 < 50 and v1 < 77, B[v0, v1], 0)
//   for i, j, k in T.grid(128, 96, 64):  C_pad[vi, vj] += A_pad[vi, vk] * B_pad[vk, vj]
//   for ax0, ax1 in T.grid(100, 77):  C[v0, v1] = C_pad[v0, v1]          # block "C_pad"
//
// Only buffers indexed by an iter var whose extent grows are padded. Why the
// answer cannot change: padded spatial points compute values nobody copies
// back; padded reduction points add `x * y * ...` where a factor loads a
// zero-filled padding, i.e. they add zero (checked, Requires 6).
//
//===----------------------------------------------------------------------===//
#include "../Layout.h"

#include <algorithm>

#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/ir/StructuralEqual.h"

namespace tessera::schedule::detail {

using namespace ir;

//===----------------------------------------------------------------------===//
// Shared helpers (declared in Layout.h)
//===----------------------------------------------------------------------===//

Stmt make_spatial_nest(State &st, const std::string &name, const std::vector<Expr> &extents,
                       const std::function<Stmt(const std::vector<Var> &)> &body) {
  std::set<std::string> taken = loop_names(st.func);
  std::vector<Var> loops, vars;
  std::vector<IterVar> ivs;
  std::vector<Expr> bindings;
  for (size_t d = 0; d < extents.size(); ++d) {
    DataType t = extents[d].dtype();
    loops.push_back(Var(fresh_name(taken, "ax" + std::to_string(d)), t));
    vars.push_back(Var("v" + std::to_string(d), t));
    ivs.push_back(IterVar{vars[d], Range::from_extent(extents[d]), IterKind::Spatial});
    bindings.push_back(loops[d]);
  }
  Stmt s = body(vars);
  AccessRegions r = infer_access_regions(std::nullopt, s, {});
  Stmt nest = Block::make(name, ivs, bindings, Expr(), r.reads, r.writes, {}, std::nullopt, s);
  for (size_t d = extents.size(); d-- > 0;)
    nest = For::make(loops[d], make_int(loops[d].dtype(), 0), extents[d], ForKind::Serial, nest);
  return nest;
}

int iter_var_position(const Block &b, const Expr &e) {
  for (size_t k = 0; k < b.iter_vars.size(); ++k)
    if (e.same_as(b.iter_vars[k].var)) return static_cast<int>(k);
  return -1;
}

std::vector<int> check_plain_loop_nest(std::string_view primitive, const StmtPath &bp,
                                       const std::vector<Stmt> &loops) {
  const Block &b = *bp.block();
  std::string why;
  if (!is_const_int(b.predicate, 1)) why = "it has a predicate";
  for (size_t l = 0; why.empty() && l < loops.size(); ++l) {
    const Stmt &next = l + 1 < loops.size() ? loops[l + 1] : bp.stmt;
    if (!loops[l].as<For>()->body.same_as(next))
      why = "loop " + quoted(loops[l].as<For>()->loop_var.name()) + " holds more than the block";
  }
  std::vector<int> bound(loops.size(), -1);
  for (size_t i = 0; why.empty() && i < b.iter_vars.size(); ++i) {
    const IterVar &iv = b.iter_vars[i];
    size_t l = 0;
    while (l < loops.size() && !b.bindings[i].same_as(loops[l].as<For>()->loop_var)) ++l;
    if (l == loops.size() || bound[l] >= 0) {
      why = "iter var " + quoted(iv.var.name()) + " is not bound to a loop of its own";
      break;
    }
    const For &f = *loops[l].as<For>();
    if (!is_const_int(f.min, 0) || !is_const_int(iv.dom.min, 0) || !structural_equal(f.extent, iv.dom.extent))
      why = "iter var " + quoted(iv.var.name()) + " and loop " + quoted(f.loop_var.name()) +
            " do not both range over [0, extent)";
    bound[l] = static_cast<int>(i);
  }
  if (why.empty()) return bound;
  throw NotPlainLoopNestError(std::string(primitive),
                              "block " + quoted(b.name) + " is not a plain loop nest: " + why,
                              "block {0} is not a plain loop nest: " + why, {bp.stmt});
}

namespace {

constexpr const char *kPrim = "pad_einsum";

//===----------------------------------------------------------------------===//
// 1. Error messages and 2. checks
//===----------------------------------------------------------------------===//

void check_padding(const StmtPath &bp, const std::vector<int64_t> &padding) {
  const Block &b = *bp.block();
  std::string why;
  if (padding.size() != b.iter_vars.size())
    why = "got " + std::to_string(padding.size()) + " paddings for the " + std::to_string(b.iter_vars.size()) +
          " iter vars of block " + quoted(b.name);
  for (size_t i = 0; why.empty() && i < padding.size(); ++i)
    if (padding[i] <= 0)
      why = "padding " + std::to_string(padding[i]) + " of iter var " + quoted(b.iter_vars[i].var.name()) +
            " is not positive";
  if (why.empty()) return;
  throw InvalidPaddingError(kPrim, "invalid padding for block " + quoted(b.name) + ": " + why,
                            "invalid padding for block {0}: " + why, {bp.stmt});
}

/// One buffer of an einsum block and the iter vars (positions) indexing it.
struct Access {
  Buffer buffer;
  std::vector<int> dims;
};

/// The accesses of an einsum block (the written buffer first), or why it is not one.
std::vector<Access> einsum_accesses(const Block &b, std::string &why) {
  const Store *st = b.body.as<Store>();
  if (!st) {
    why = "its body is not a single store";
    return {};
  }
  std::vector<Access> out;
  auto note = [&](const Buffer &buf, const std::vector<Expr> &idx) {
    if (!why.empty()) return;
    Access a{buf, {}};
    for (const Expr &e : idx) {
      int p = iter_var_position(b, e);
      if (p < 0 || std::find(a.dims.begin(), a.dims.end(), p) != a.dims.end()) {
        why = "it accesses " + quoted(buf.name()) + " at an index that is not a distinct plain iter var";
        return;
      }
      a.dims.push_back(p);
    }
    for (const Access &o : out)
      if (o.buffer.same_as(buf)) {
        if (o.dims != a.dims) why = "it accesses " + quoted(buf.name()) + " at two different index lists";
        return;
      }
    out.push_back(a);
  };
  note(st->buffer, st->indices);
  bool reads_output = false;
  pre_order_visit(Evaluate::make(st->value), [&](const Expr &e) {
    const Load *l = e.as<Load>();
    if (!l) return;
    reads_output |= l->buffer.same_as(st->buffer);
    note(l->buffer, l->indices);
  }, nullptr);
  if (b.init) {
    const Store *is = b.init->as<Store>();
    if (!is || !is->buffer.same_as(st->buffer))
      why = why.empty() ? "its init is not a single store to " + quoted(st->buffer.name()) : why;
    else
      note(is->buffer, is->indices);
    pre_order_visit(*b.init, [&](const Expr &e) {
      if (e.as<Load>() && why.empty()) why = "its init loads a buffer";
    }, nullptr);
  }
  if (why.empty() && reads_output && !b.init)
    why = "it reads " + quoted(st->buffer.name()) + ", which it writes, without an init";
  return out;
}

std::vector<Access> check_einsum(const StmtPath &bp) {
  std::string why;
  std::vector<Access> acc = einsum_accesses(*bp.block(), why);
  if (why.empty()) return acc;
  throw NotEinsumBlockError(kPrim, "block " + quoted(bp.block()->name) + " is not an einsum block: " + why,
                            "block {0} is not an einsum block: " + why, {bp.stmt});
}

std::vector<int64_t> check_constant_extents(const StmtPath &bp) {
  std::vector<int64_t> out;
  for (const IterVar &iv : bp.block()->iter_vars) {
    auto c = as_const_int(iv.dom.extent);
    if (!c)
      throw SymbolicExtentError(kPrim,
                                "iter var " + quoted(iv.var.name()) + " of block " + quoted(bp.block()->name) +
                                    " has a symbolic extent; pad_einsum needs constant extents",
                                "iter var " + quoted(iv.var.name()) + " of block {0} has a symbolic extent", {bp.stmt});
    out.push_back(*c);
  }
  return out;
}

/// The factors of a product (through multiplications and casts).
void factors_of(const Expr &e, std::vector<Expr> &out) {
  if (const Binary *m = e.as<Binary>(); m && m->op == BinaryOp::Mul) {
    factors_of(m->a, out);
    factors_of(m->b, out);
    return;
  }
  if (const Cast *c = e.as<Cast>()) return factors_of(c->value, out);
  out.push_back(e);
}

/// A padded reduction iter var must only add zeros: the update is
/// `C = C + x * y * ...` and some factor loads a buffer indexed by it.
void check_reduction_adds_zero(const StmtPath &bp, const std::vector<bool> &grows) {
  const Block &b = *bp.block();
  const Store &st = *b.body.as<Store>();
  const Binary *add = st.value.as<Binary>();
  auto is_self = [&](const Expr &e) {
    const Load *l = e.as<Load>();
    return l && l->buffer.same_as(st.buffer);
  };
  Expr term;
  if (add && add->op == BinaryOp::Add) term = is_self(add->a) ? add->b : is_self(add->b) ? add->a : Expr();
  for (size_t i = 0; i < b.iter_vars.size(); ++i) {
    if (b.iter_vars[i].kind != IterKind::Reduce || !grows[i]) continue;
    bool zero = false;
    if (term.defined()) {
      std::vector<Expr> fs;
      factors_of(term, fs);
      for (const Expr &f : fs)
        if (const Load *l = f.as<Load>())
          for (const Expr &x : l->indices) zero |= x.same_as(b.iter_vars[i].var);
    }
    if (zero) continue;
    std::string why = "padding reduction iter var " + quoted(b.iter_vars[i].var.name()) +
                      " would change the result: the update is not `C = C + x * ...` with a factor indexed by it";
    throw PaddingChangesReductionError(kPrim, "cannot pad block " + quoted(b.name) + ": " + why,
                                       "cannot pad block {0}: " + why, {bp.stmt});
  }
}

}  // namespace

//===----------------------------------------------------------------------===//
// 3. The primitive
//===----------------------------------------------------------------------===//

void pad_einsum(State &st, const BlockRef &block, const std::vector<int64_t> &padding) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath bp = find_block(st, block, kPrim);
  check_complete_or_reduction_block(kPrim, bp.stmt);
  check_padding(bp, padding);
  std::vector<Access> accesses = check_einsum(bp);
  std::vector<Stmt> loops = loops_below(bp, Stmt());
  std::vector<int> bound = check_plain_loop_nest(kPrim, bp, loops);
  std::vector<int64_t> extents = check_constant_extents(bp);
  const Block &b = *bp.block();
  std::vector<int64_t> padded(extents.size());
  std::vector<bool> grows(extents.size());
  for (size_t i = 0; i < extents.size(); ++i) {
    padded[i] = (extents[i] + padding[i] - 1) / padding[i] * padding[i];
    grows[i] = padded[i] != extents[i];
  }
  check_reduction_adds_zero(bp, grows);
  if (std::find(grows.begin(), grows.end(), true) == grows.end()) return;  // already a multiple

  // Step 2. Build: padded buffers, their producers/write-back, the grown nest.
  StmtPath sp = scope_path_of(bp);
  std::set<std::string> buf_names = buffer_names(st.func), blk_names = block_names(st.func);
  auto ext_of = [&](int i, const std::vector<int64_t> &e) { return make_int(b.iter_vars[i].var.dtype(), e[i]); };
  const Buffer &out = accesses[0].buffer;
  std::vector<Stmt> before, after;
  std::vector<Buffer> allocs;
  bool out_padded = false;
  Stmt new_block = bp.stmt;
  for (const Access &a : accesses) {
    bool pads = false;
    for (int d : a.dims) pads |= grows[d];
    if (!pads) continue;
    std::vector<Expr> shape, old_shape;
    for (int d : a.dims) {
      shape.push_back(ext_of(d, padded));
      old_shape.push_back(ext_of(d, extents));
    }
    Buffer pad = Buffer::make(fresh_name(buf_names, a.buffer.name() + "_pad"), a.buffer.dtype(), shape,
                              a.buffer.scope());
    std::string name = fresh_name(blk_names, pad.name());
    // Allocated in program order: the inputs' copies, then the output's.
    allocs.insert(a.buffer.same_as(out) ? allocs.end() : allocs.end() - (out_padded ? 1 : 0), pad);
    new_block = replace_buffer(new_block, a.buffer, pad);
    if (a.buffer.same_as(out)) {
      out_padded = true;
      after.push_back(make_spatial_nest(st, name, old_shape, [&](const std::vector<Var> &v) {
        std::vector<Expr> idx(v.begin(), v.end());
        return Store::make(out, Load::make(pad, idx), idx);
      }));
      continue;
    }
    before.push_back(make_spatial_nest(st, name, shape, [&](const std::vector<Var> &v) {
      std::vector<Expr> idx(v.begin(), v.end()), conds;
      for (size_t k = 0; k < a.dims.size(); ++k)
        if (grows[a.dims[k]]) conds.push_back(lt(v[k], old_shape[k]));
      Expr value = if_then_else(conjunction(conds), Load::make(a.buffer, idx), make_const(a.buffer.dtype(), 0));
      return Store::make(pad, value, idx);
    }));
  }
  // The block over the padded domains, and its loops over the same.
  const Block &nb = *new_block.as<Block>();
  std::vector<IterVar> ivs = nb.iter_vars;
  for (size_t i = 0; i < ivs.size(); ++i) ivs[i].dom = Range::from_extent(ext_of(static_cast<int>(i), padded));
  Stmt nest = Block::make(nb.name, ivs, nb.bindings, nb.predicate, nb.reads, nb.writes, nb.allocs, nb.init, nb.body,
                          nb.annotations);
  for (size_t l = loops.size(); l-- > 0;) {
    const For &f = *loops[l].as<For>();
    Expr ext = bound[l] >= 0 ? ext_of(bound[l], padded) : f.extent;
    nest = For::make(f.loop_var, f.min, ext, f.for_kind, nest, f.thread_tag, f.annotations);
  }
  Stmt top = loops.empty() ? bp.stmt : loops.front();
  const Block &scope_block = *sp.block();
  size_t pos = item_containing(scope_block, top);
  Stmt new_scope = replace_in(sp.stmt, {{top.get(), nest}});
  for (size_t k = 0; k < after.size(); ++k) new_scope = insert_into_scope(*new_scope.as<Block>(), pos + 1, after[k]);
  for (size_t k = before.size(); k-- > 0;) new_scope = insert_into_scope(*new_scope.as<Block>(), pos, before[k]);
  std::vector<Buffer> scope_allocs = new_scope.as<Block>()->allocs;
  scope_allocs.insert(scope_allocs.end(), allocs.begin(), allocs.end());
  new_scope = block_with_allocs(*new_scope.as<Block>(), scope_allocs);

  // Step 3. Replace (the only mutation)
  replace(st, sp.stmt, new_scope);
}

//===----------------------------------------------------------------------===//
// 4. Trace
//===----------------------------------------------------------------------===//

Json encode_pad_einsum(const BlockRef &block, const std::vector<int64_t> &padding) {
  return Json{{"op", "pad_einsum"}, {"block", block.name}, {"padding", padding}};
}

namespace {

void replay_pad_einsum(ReplayContext &ctx) {
  const Json &j = ctx.field("padding");
  std::vector<int64_t> padding;
  if (!j.is_array()) ctx.fail("padding", "must be a list of integers");
  for (const Json &x : j) {
    if (!x.is_number_integer()) ctx.fail("padding", "must be a list of integers");
    padding.push_back(x.get<int64_t>());
  }
  ctx.sch.pad_einsum(ctx.block("block"), padding);
}

[[maybe_unused]] const bool kRegistered = register_instruction("pad_einsum", replay_pad_einsum);

}  // namespace

}  // namespace tessera::schedule::detail
