//===- primitive/Tensorize.cpp - tensorize -----------------------------------===//
//
// tensorize(C_o, "tessera.dot4_f32") replaces the body of block C_o by the
// intrinsic's implementation after checking that the body computes what the
// intrinsic's description computes:
//
//   with T.block("C_o"):                            with T.block("C_o"):
//     vi = ...; vk_o = ...                            vi = ...; vk_o = ...
//     T.reads(C[vi], A[vi, vk_o*4:vk_o*4+4], ...)     T.reads(...)   # unchanged
//     for k_1 in range(4):                  -->       C[vi] = C[vi] + A[vi, vk_o*4] * B[vk_o*4]
//       with T.block("C"):                                  + A[vi, vk_o*4 + 1] * B[vk_o*4 + 1] + ...
//         vk_i = T.axis.reduce(4, k_1)
//         C[vi] = C[vi] + A[vi, vk_o*4 + vk_i] * B[vk_o*4 + vk_i]
//
// Matching. The buffers the body accesses are paired, in order of first
// access, with those the description accesses. Each program buffer's region
// (from the block's T.writes, else T.reads) must have the description
// buffer's shape once leading dimensions of extent 1 are dropped. The body
// is then rewritten into the description's terms (each access relative to
// its region's start, leading unit dimensions dropped, nested blocks renamed
// after the description's, nested T.reads/T.writes left out since they
// follow from the bodies) and must be structurally equal to the
// description's body: same loops and extents, iter var kinds and domains,
// operators and index expressions. The first difference is reported.
//
// Replacing. The implementation's accesses become accesses of the matched
// program buffers offset by the region starts; its loops and blocks get
// fresh names and variables. The block keeps its iter vars, regions and init
// (an intrinsic describes the update, not the initialisation).
//
//===----------------------------------------------------------------------===//
#include <map>
#include <set>

#include "../Dataflow.h"

#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/schedule/Intrinsic.h"
#include "tessera/script/Printer.h"

namespace tessera::schedule::detail {

using namespace ir;

namespace {

//===----------------------------------------------------------------------===//
// 1. Error messages and 2. checks
//===----------------------------------------------------------------------===//

const TensorIntrin &check_intrinsic(const std::string &name) {
  if (const TensorIntrin *t = lookup_intrinsic(name)) return *t;
  std::string names;
  for (const std::string &n : intrinsic_names()) names += (names.empty() ? "" : ", ") + quoted(n);
  throw UnknownIntrinsicError("tensorize", "no tensor intrinsic named " + quoted(name) +
                                               " is registered; the intrinsics are " +
                                               (names.empty() ? "none" : names));
}

void check_no_predicate(const StmtPath &bp) {
  const Block &b = *bp.block();
  if (is_const_int(b.predicate, 1)) return;
  throw BlockHasPredicateError("tensorize",
                               "block " + quoted(b.name) + " has the predicate " + script::print(b.predicate) +
                                   "; an intrinsic computes its whole tile",
                               "block {0} has the predicate " + script::print(b.predicate), {bp.stmt});
}

[[noreturn]] void mismatch(const StmtPath &bp, const std::string &intrin, const std::string &why) {
  throw TensorizeMismatchError("tensorize",
                               "the body of block " + quoted(bp.block()->name) +
                                   " does not match the description of intrinsic " + quoted(intrin) + ": " + why,
                               "the body of block {0} does not match the description of intrinsic " +
                                   quoted(intrin) + ": " + why,
                               {bp.stmt});
}

/// The buffers accessed (loaded or stored) under `s`, in order of first access.
std::vector<Buffer> accessed_buffers(const Stmt &s) {
  std::vector<Buffer> out;
  auto add = [&](const Buffer &b) {
    for (const Buffer &x : out)
      if (x.same_as(b)) return;
    out.push_back(b);
  };
  pre_order_visit(
      s, [&](const Expr &e) { if (const Load *l = e.as<Load>()) add(l->buffer); },
      [&](const Stmt &t) { if (const Store *st = t.as<Store>()) add(st->buffer); });
  return out;
}

/// A program buffer matched to a description parameter, with its region.
struct Binding {
  Buffer desc;
  Buffer prog;
  std::vector<Range> region;  // in the program, full rank
  size_t lead = 0;            // leading unit dimensions dropped
};

std::string region_text(const Buffer &b, const std::vector<Range> &region) {
  std::string s = b.name() + "[";
  for (size_t d = 0; d < region.size(); ++d) {
    s += d ? ", " : "";
    if (is_const_int(region[d].extent, 1))
      s += script::print(region[d].min);
    else
      s += script::print(region[d].min) + ":" + script::print(add(region[d].min, region[d].extent));
  }
  return s + "]";
}

std::vector<Binding> check_buffers(const StmtPath &bp, const TensorIntrin &t, const arith::Analyzer &ana) {
  const Block &b = *bp.block();
  std::vector<Buffer> prog = accessed_buffers(b.body), desc = accessed_buffers(t.desc.root_block().body);
  if (prog.size() != desc.size())
    mismatch(bp, t.name,
             "the body accesses " + std::to_string(prog.size()) + " buffers but the description accesses " +
                 std::to_string(desc.size()));
  std::vector<Binding> out;
  for (size_t k = 0; k < prog.size(); ++k) {
    if (prog[k].dtype() != desc[k].dtype())
      mismatch(bp, t.name,
               "buffer " + quoted(prog[k].name()) + " has dtype " + prog[k].dtype().str() +
                   " but the description's buffer " + quoted(desc[k].name()) + " has " + desc[k].dtype().str());
    const BufferRegion *r = nullptr;
    for (const auto *list : {&b.writes, &b.reads})
      for (const BufferRegion &x : *list)
        if (!r && x.buffer.same_as(prog[k])) r = &x;
    if (!r)
      mismatch(bp, t.name, "buffer " + quoted(prog[k].name()) + " is accessed but not in T.reads or T.writes");
    Binding m{desc[k], prog[k], r->region, 0};
    size_t pr = r->region.size(), dr = static_cast<size_t>(desc[k].ndim());
    bool ok = pr >= dr;
    if (ok) m.lead = pr - dr;
    for (size_t d = 0; ok && d < m.lead; ++d) ok = ana.can_prove_equal(r->region[d].extent, make_int(DataType::int32(), 1));
    for (size_t d = 0; ok && d < dr; ++d) ok = ana.can_prove_equal(r->region[m.lead + d].extent, desc[k].shape()[d]);
    if (!ok) {
      std::string ext, shape;
      for (size_t d = 0; d < pr; ++d) ext += (d ? ", " : "") + script::print(ana.simplify(r->region[d].extent));
      for (size_t d = 0; d < dr; ++d) shape += (d ? ", " : "") + script::print(desc[k].shape()[d]);
      throw TensorizeRegionMismatchError(
          "tensorize",
          "block " + quoted(b.name) + " accesses the region " + region_text(prog[k], r->region) + " of extents (" +
              ext + ") but the description's buffer " + quoted(desc[k].name()) + " of intrinsic " +
              quoted(t.name) + " has shape (" + shape + ")",
          "block {0} accesses the region " + region_text(prog[k], r->region) + " of extents (" + ext +
              ") but the description's buffer " + quoted(desc[k].name()) + " has shape (" + shape + ")",
          {bp.stmt});
    }
    out.push_back(m);
  }
  return out;
}

/// Rewrites the program's body into the description's terms (see the file
/// comment); also used on the description itself with no bindings, to leave
/// out nested regions the same way.
class ToDescription : public IRMutator {
 public:
  ToDescription(const std::vector<Binding> &bs, const arith::Analyzer &ana, std::vector<std::string> names)
      : bs_(bs), ana_(ana), names_(std::move(names)) {}

 protected:
  const Binding *find(const Buffer &b) const {
    for (const Binding &m : bs_)
      if (m.prog.same_as(b)) return &m;
    return nullptr;
  }
  std::vector<Expr> relative(const Binding &m, const std::vector<Expr> &idx) {
    std::vector<Expr> out;
    for (size_t d = m.lead; d < idx.size(); ++d) out.push_back(ana_.simplify(sub(idx[d], m.region[d].min)));
    return out;
  }
  Expr visit_(const Load *op, const Expr &self) override {
    Expr e = IRMutator::visit_(op, self);
    const Load *l = e.as<Load>();
    if (const Binding *m = find(l->buffer)) return Load::make(m->desc, relative(*m, l->indices));
    return e;
  }
  Stmt visit_(const Store *op, const Stmt &self) override {
    Stmt s = IRMutator::visit_(op, self);
    const Store *st = s.as<Store>();
    if (const Binding *m = find(st->buffer)) return Store::make(m->desc, st->value, relative(*m, st->indices));
    return s;
  }
  Stmt visit_(const Block *op, const Stmt &self) override {
    std::string name = next_ < names_.size() ? names_[next_] : op->name;
    ++next_;
    Stmt copy = Block::make(name, op->iter_vars, op->bindings, op->predicate, {}, {}, op->allocs, op->init, op->body,
                            op->annotations);
    return IRMutator::visit_(copy.as<Block>(), copy);
  }

 private:
  const std::vector<Binding> &bs_;
  const arith::Analyzer &ana_;
  std::vector<std::string> names_;
  size_t next_ = 0;
};

void check_body_matches(const StmtPath &bp, const TensorIntrin &t, const std::vector<Binding> &bs,
                        const arith::Analyzer &ana) {
  const Block &root = t.desc.root_block();
  std::vector<std::string> names;
  for (const Stmt &s : blocks_under(root.body)) names.push_back(s.as<Block>()->name);
  std::vector<Binding> none;
  Stmt desc_body = ToDescription(none, ana, {}).mutate(root.body);
  Stmt prog_body = ToDescription(bs, ana, names).mutate(bp.block()->body);
  PrimFunc want = t.desc.with_body(root.with_body(desc_body));
  PrimFunc got = t.desc.with_body(root.with_body(prog_body));
  std::string diff = structural_diff(got, want);
  if (!diff.empty()) mismatch(bp, t.name, "first difference (block vs description) at " + diff);
}

/// The implementation, instantiated on the matched program regions.
class Instantiate : public IRMutator {
 public:
  Instantiate(const std::vector<std::pair<Buffer, const Binding *>> &impl_to, const arith::Analyzer &ana,
              std::set<std::string> &loops, std::set<std::string> &blocks)
      : map_(impl_to), ana_(ana), loops_(loops), blocks_(blocks) {}

 protected:
  const Binding *find(const Buffer &b) const {
    for (const auto &[ib, m] : map_)
      if (ib.same_as(b)) return m;
    return nullptr;
  }
  std::vector<Expr> absolute(const Binding &m, const std::vector<Expr> &idx) {
    std::vector<Expr> out;
    for (size_t d = 0; d < m.lead; ++d) out.push_back(m.region[d].min);
    for (size_t d = 0; d < idx.size(); ++d) out.push_back(ana_.simplify(add(m.region[m.lead + d].min, idx[d])));
    return out;
  }
  BufferRegion region(const BufferRegion &r) {
    BufferRegion x = mutate_region(r);
    const Binding *m = find(r.buffer);
    if (!m) return x;
    BufferRegion out{m->prog, {}};
    for (size_t d = 0; d < m->lead; ++d) out.region.push_back(Range{m->region[d].min, make_int(DataType::int32(), 1)});
    for (size_t d = 0; d < x.region.size(); ++d)
      out.region.push_back(Range{ana_.simplify(add(m->region[m->lead + d].min, x.region[d].min)), x.region[d].extent});
    return out;
  }
  Expr visit_(const VarNode *op, const Expr &self) override {
    for (const auto &[from, to] : vars_)
      if (from.get() == op) return to;
    return self;
  }
  Expr visit_(const Load *op, const Expr &self) override {
    Expr e = IRMutator::visit_(op, self);
    const Load *l = e.as<Load>();
    if (const Binding *m = find(l->buffer)) return Load::make(m->prog, absolute(*m, l->indices));
    return e;
  }
  Stmt visit_(const Store *op, const Stmt &self) override {
    Stmt s = IRMutator::visit_(op, self);
    const Store *st = s.as<Store>();
    if (const Binding *m = find(st->buffer)) return Store::make(m->prog, st->value, absolute(*m, st->indices));
    return s;
  }
  Stmt visit_(const For *op, const Stmt &) override {
    Var v(fresh_name(loops_, op->loop_var.name()), op->loop_var.dtype());
    Expr min = mutate(op->min), extent = mutate(op->extent);
    vars_.emplace_back(op->loop_var, v);
    return For::make(v, min, extent, op->for_kind, mutate(op->body), op->thread_tag, op->annotations);
  }
  Stmt visit_(const Block *op, const Stmt &) override {
    std::vector<IterVar> ivs;
    std::vector<Expr> binds;
    for (size_t k = 0; k < op->iter_vars.size(); ++k) {
      const IterVar &iv = op->iter_vars[k];
      binds.push_back(mutate(op->bindings[k]));
      Var v(iv.var.name(), iv.var.dtype());
      vars_.emplace_back(iv.var, v);
      ivs.push_back(IterVar{v, Range{mutate(iv.dom.min), mutate(iv.dom.extent)}, iv.kind});
    }
    std::vector<BufferRegion> reads, writes;
    for (const BufferRegion &r : op->reads) reads.push_back(region(r));
    for (const BufferRegion &r : op->writes) writes.push_back(region(r));
    std::optional<Stmt> init;
    if (op->init) init = mutate(*op->init);
    return Block::make(fresh_name(blocks_, op->name), ivs, binds, mutate(op->predicate), reads, writes, op->allocs,
                       init, mutate(op->body), op->annotations);
  }

 private:
  const std::vector<std::pair<Buffer, const Binding *>> &map_;
  const arith::Analyzer &ana_;
  std::set<std::string> &loops_;
  std::set<std::string> &blocks_;
  std::vector<std::pair<Var, Expr>> vars_;
};

}  // namespace

//===----------------------------------------------------------------------===//
// 3. The primitive
//===----------------------------------------------------------------------===//

BlockRef tensorize(State &st, const BlockOrLoop &target, const std::string &intrin) {
  // Step 1. Check (may throw; `st` untouched: a loop is blockized on a copy)
  const TensorIntrin &t = check_intrinsic(intrin);
  State work = st;
  BlockRef block = std::holds_alternative<BlockRef>(target) ? std::get<BlockRef>(target)
                                                            : blockize(work, std::get<LoopRef>(target), "");
  StmtPath bp = find_block(work, block, "tensorize");
  check_no_predicate(bp);
  const Block &b = *bp.block();
  arith::Analyzer ana = analyzer_for(bp);
  for (const IterVar &iv : b.iter_vars) ana.bind(iv.var, iv.dom);
  std::vector<Binding> bs = check_buffers(bp, t, ana);
  check_body_matches(bp, t, bs, ana);

  // Step 2. Instantiate the implementation on the matched regions.
  std::vector<Buffer> desc_params = t.desc.param_buffers(), impl_params = t.impl.param_buffers();
  std::vector<std::pair<Buffer, const Binding *>> impl_to;
  for (size_t k = 0; k < impl_params.size(); ++k)
    for (const Binding &m : bs)
      if (m.desc.same_as(desc_params[k])) impl_to.emplace_back(impl_params[k], &m);
  std::set<std::string> loops = loop_names(work.func), blocks = block_names(work.func);
  Stmt body = Instantiate(impl_to, ana, loops, blocks).mutate(t.impl.root_block().body);
  Stmt tensorized = Block::make(b.name, b.iter_vars, b.bindings, b.predicate, b.reads, b.writes, b.allocs, b.init,
                                body, b.annotations);

  // Step 3. Replace (the only mutation)
  replace(work, bp.stmt, tensorized);
  st = std::move(work);
  return block;
}

//===----------------------------------------------------------------------===//
// 4. Trace
//===----------------------------------------------------------------------===//

Json encode_tensorize(const BlockOrLoop &target, const std::string &intrin, const BlockRef &out) {
  if (const auto *b = std::get_if<BlockRef>(&target))
    return Json{{"op", "tensorize"}, {"block", b->name}, {"intrin", intrin}};
  return Json{{"op", "tensorize"}, {"loop", std::get<LoopRef>(target).name()}, {"intrin", intrin}, {"out", out.name}};
}

namespace {

void replay_tensorize(ReplayContext &ctx) {
  std::string intrin = ctx.string("intrin");
  if (ctx.has("block")) {
    ctx.sch.tensorize(ctx.block("block"), intrin);
    return;
  }
  BlockRef out = ctx.sch.tensorize(ctx.loop("loop"), intrin);
  if (ctx.has("out")) ctx.bind(ctx.string("out"), out);
}

[[maybe_unused]] const bool kRegistered = register_instruction("tensorize", replay_tensorize);

}  // namespace

}  // namespace tessera::schedule::detail
