//===- lib/runtime/BlockSample.cpp - A kernel's blocks, sampled and covered ===//
//
// The first two parts of runtime/SampledCheck.h: whether a scheduled program
// may be run on some of its thread blocks, the program that runs only those,
// and the program that proves the whole grid writes every output element.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstring>
#include <random>
#include <set>

#include <fmt/format.h>

#include "tessera/arith/Analyzer.h"
#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/runtime/SampledCheck.h"
#include "tessera/script/Printer.h"
#include "tessera/support/Error.h"

#include "BindDims.h"

namespace tessera::runtime {

namespace {

bool is_block_loop(const ir::For *f) {
  return f->for_kind == ir::ForKind::ThreadBinding && f->thread_tag.rfind("blockIdx.", 0) == 0;
}

/// The parameter buffers of `f` with what the body does to each, and the
/// kernels (outermost blockIdx loops) of the body.
struct ParamUses : ir::IRVisitor {
  std::vector<ir::Buffer> params;
  std::vector<bool> loaded, stored, stored_outside_kernel;
  std::vector<const ir::For *> kernels;
  int block_loop_depth = 0;

  explicit ParamUses(const ir::PrimFunc &f) {
    for (const ir::Var &p : f.params()) params.push_back(f.buffer_of(p));
    loaded.assign(params.size(), false);
    stored = stored_outside_kernel = loaded;
    visit(f.body());
  }
  int index_of(const ir::Buffer &b) const {
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].defined() && params[i].same_as(b)) return int(i);
    return -1;
  }
  void visit_(const ir::Load *op) override {
    if (int i = index_of(op->buffer); i >= 0) loaded[size_t(i)] = true;
    ir::IRVisitor::visit_(op);
  }
  void visit_(const ir::BufferPtr *op) override {
    if (int i = index_of(op->buffer); i >= 0) loaded[size_t(i)] = true;
    ir::IRVisitor::visit_(op);
  }
  void visit_(const ir::Store *op) override {
    if (int i = index_of(op->buffer); i >= 0) {
      stored[size_t(i)] = true;
      if (block_loop_depth == 0) stored_outside_kernel[size_t(i)] = true;
    }
    ir::IRVisitor::visit_(op);
  }
  void visit_(const ir::For *op) override {
    const bool block = is_block_loop(op);
    if (block && block_loop_depth == 0) kernels.push_back(op);
    block_loop_depth += block;
    ir::IRVisitor::visit_(op);
    block_loop_depth -= block;
  }
};

/// The blockIdx loops of a kernel, outermost first; empty when they do not
/// form one chain (a blockIdx loop beside another).
std::vector<const ir::For *> block_loop_chain(const ir::For *root) {
  std::vector<const ir::For *> all;
  ir::pre_order_visit(root->body, nullptr, [&](const ir::Stmt &s) {
    if (const auto *f = s.as<ir::For>(); f && is_block_loop(f)) all.push_back(f);
  });
  std::vector<const ir::For *> chain{root};
  for (const ir::For *f : all) {
    // Each must lie inside the previous one: pre-order lists a nested loop
    // after its parent, so a sibling shows up as one not inside the last.
    bool inside = false;
    ir::pre_order_visit(chain.back()->body, nullptr, [&](const ir::Stmt &s) { inside = inside || s.get() == f; });
    if (!inside) return {};
    chain.push_back(f);
  }
  return chain;
}

/// `v in {kept...}` as a disjunction of equalities.
ir::Expr member_of(const ir::Var &v, const std::vector<int64_t> &kept) {
  ir::Expr any;
  for (int64_t k : kept) {
    ir::Expr eq = ir::eq(v, ir::make_int(v.dtype(), k));
    any = any.defined() ? ir::logical_or(any, eq) : eq;
  }
  return any;
}

/// Wraps the body of the loop `target` in `if cond`.
struct GuardLoopBody : ir::IRMutator {
  const ir::For *target;
  ir::Expr cond;
  GuardLoopBody(const ir::For *t, ir::Expr c) : target(t), cond(std::move(c)) {}
  ir::Stmt visit_(const ir::For *op, const ir::Stmt &self) override {
    if (op == target) return op->with_body(ir::IfThenElse::make(cond, op->body));
    return ir::IRMutator::visit_(op, self);
  }
};

/// The statements of a program that decide where its outputs are stored,
/// each such store storing 1.
struct SliceToOutputStores : ir::IRMutator {
  const ParamUses &uses;
  explicit SliceToOutputStores(const ParamUses &u) : uses(u) {}

  bool is_output(const ir::Buffer &b) const {
    int i = uses.index_of(b);
    return i >= 0 && uses.stored[size_t(i)];
  }
  bool has_output_store(const ir::Stmt &s) const {
    bool found = false;
    ir::pre_order_visit(s, nullptr, [&](const ir::Stmt &x) {
      if (const auto *st = x.as<ir::Store>(); st && is_output(st->buffer)) found = true;
    });
    return found;
  }
  /// An index, guard or bound that decides where stores go must not read memory.
  static void require_no_loads(const ir::Expr &e, const char *what) {
    bool loads = false;
    ir::pre_order_visit(ir::Evaluate::make(e), [&](const ir::Expr &x) { loads = loads || x.as<ir::Load>(); }, nullptr);
    if (loads)
      throw UserError(fmt::format("the {} `{}` reads memory: where the kernel stores depends on data, so its "
                                  "coverage cannot be checked without running it",
                                  what, script::print(e)));
  }
  /// A statement with nothing to store.
  static ir::Stmt nothing() { return ir::Evaluate::make(ir::i32(0)); }

  ir::Stmt visit_(const ir::Store *op, const ir::Stmt &) override {
    if (!is_output(op->buffer)) return nothing();
    for (const ir::Expr &i : op->indices) require_no_loads(i, "store index");
    return ir::Store::make(op->buffer, ir::make_const(op->buffer.dtype(), 1), op->indices);
  }
  ir::Stmt visit_(const ir::Evaluate *, const ir::Stmt &) override { return nothing(); }
  ir::Stmt visit_(const ir::Seq *op, const ir::Stmt &) override {
    std::vector<ir::Stmt> kept;
    for (const ir::Stmt &s : op->stmts)
      if (has_output_store(s)) kept.push_back(mutate(s));
    return kept.empty() ? nothing() : ir::Seq::make(std::move(kept));
  }
  ir::Stmt visit_(const ir::For *op, const ir::Stmt &self) override {
    if (!has_output_store(self)) return nothing();
    require_no_loads(op->min, "loop bound");
    require_no_loads(op->extent, "loop bound");
    ir::Stmt body = mutate(op->body);
    // Unrolling and vectorising only change how the loop is emitted.
    ir::ForKind kind = op->for_kind == ir::ForKind::ThreadBinding ? op->for_kind : ir::ForKind::Serial;
    return ir::For::make(op->loop_var, op->min, op->extent, kind, body, op->thread_tag, op->annotations);
  }
  ir::Stmt visit_(const ir::IfThenElse *op, const ir::Stmt &self) override {
    if (!has_output_store(self)) return nothing();
    require_no_loads(op->cond, "guard");
    std::optional<ir::Stmt> else_case;
    if (op->else_case) else_case = mutate(*op->else_case);
    return ir::IfThenElse::make(op->cond, mutate(op->then_case), else_case);
  }
  ir::Stmt visit_(const ir::LetStmt *op, const ir::Stmt &self) override {
    if (!has_output_store(self)) return nothing();
    ir::Stmt body = mutate(op->body);
    // A value the stores only stored (now 1) no longer matters.
    bool used = false;
    ir::pre_order_visit(body, [&](const ir::Expr &e) { used = used || e.get() == op->var.get(); }, nullptr);
    if (!used) return body;
    require_no_loads(op->value, "value of let");
    return ir::LetStmt::make(op->var, op->value, body);
  }
  ir::Stmt visit_(const ir::Block *op, const ir::Stmt &self) override {
    if (!has_output_store(self)) return nothing();
    for (const ir::Expr &b : op->bindings) require_no_loads(b, "block binding");
    require_no_loads(op->predicate, "block predicate");
    std::optional<ir::Stmt> init;
    if (op->init && has_output_store(*op->init)) init = mutate(*op->init);
    return ir::Block::make(op->name, op->iter_vars, op->bindings, op->predicate, op->reads, op->writes, op->allocs,
                           init, mutate(op->body), op->annotations);
  }
};

/// block_sample_refusal, on the uses already gathered.
std::string refusal_of(const ParamUses &uses, const ir::PrimFunc &scheduled) {
  if (uses.kernels.empty()) return "it has no blockIdx loops";
  std::vector<bool> written = ir::written_params(scheduled);
  for (size_t i = 0; i < uses.params.size(); ++i) {
    if (!written[i]) continue;
    const std::string name = uses.params[i].name();
    if (uses.loaded[i])
      return fmt::format("'{}' is read as well as written (or written by an intrinsic): its blocks may depend on "
                         "each other",
                         name);
    if (uses.stored_outside_kernel[i]) return fmt::format("'{}' is written outside the kernel's thread blocks", name);
    // What a sampled run wrote is told by a sentinel byte in each element.
    if (uses.params[i].dtype().bits() < 8)
      return fmt::format("'{}' holds {} elements, narrower than a byte", name, uses.params[i].dtype().str());
  }
  if (uses.kernels.size() > 1)
    return fmt::format("it launches {} kernels: a later one may read what an earlier one's blocks wrote",
                       uses.kernels.size());
  if (block_loop_chain(uses.kernels[0]).empty()) return "its blockIdx loops are not nested one in another";
  return "";
}

/// The next row-major index of an array of `shape` after `idx`.
void advance(std::vector<int64_t> &idx, const std::vector<int64_t> &shape) {
  for (size_t d = shape.size(); d-- > 0;) {
    if (++idx[d] < shape[d]) return;
    idx[d] = 0;
  }
}

}  // namespace

std::string block_sample_refusal(const ir::PrimFunc &scheduled) { return refusal_of(ParamUses(scheduled), scheduled); }

int64_t BlockSample::kept_blocks() const {
  int64_t n = 1;
  for (const GridAxis &a : axes) n *= int64_t(a.kept.size());
  return n;
}

int64_t BlockSample::total_blocks() const {
  int64_t n = 1;
  for (const GridAxis &a : axes) n *= a.extent;
  return n;
}

std::string BlockSample::str() const {
  std::string where;
  for (const GridAxis &a : axes) {
    if (!where.empty()) where += "; ";
    where += a.tag;
    for (size_t i = 0; i < a.kept.size(); ++i) where += (i ? ", " : " ") + std::to_string(a.kept[i]);
  }
  return fmt::format("{} of {} thread blocks ({})", kept_blocks(), total_blocks(), where);
}

BlockSample sample_blocks(const ir::PrimFunc &scheduled, const DimBindings &dims, int per_axis, uint64_t seed) {
  ParamUses uses(scheduled);
  if (std::string why = refusal_of(uses, scheduled); !why.empty())
    throw UserError("cannot verify '" + scheduled.name() + "' on a sample of its thread blocks: " + why);
  if (per_axis < 1) throw UserError("a block sample keeps at least one block per axis");
  std::vector<const ir::For *> chain = block_loop_chain(uses.kernels[0]);
  arith::Analyzer ana;
  detail::bind_dims(ana, scheduled, dims);
  std::mt19937_64 rng(seed);
  BlockSample s;
  ir::Expr cond;
  for (const ir::For *f : chain) {
    arith::IntBound extent = ana.const_bound(f->extent), min = ana.const_bound(f->min);
    if (!extent.is_const() || !min.is_const())
      throw UserError(fmt::format("the extent of {} ({}) is not known at these sizes", f->thread_tag,
                                  script::print(f->extent)));
    GridAxis axis{f->thread_tag, extent.min, {}};
    std::set<int64_t> kept;
    if (axis.extent > 0) {
      kept.insert(0);
      if (per_axis > 1) kept.insert(axis.extent - 1);
      std::uniform_int_distribution<int64_t> pick(0, axis.extent - 1);
      // Draws until the sample is full or no index is left to draw.
      while (int64_t(kept.size()) < std::min<int64_t>(per_axis, axis.extent)) kept.insert(pick(rng));
    }
    for (int64_t k : kept) axis.kept.push_back(min.min + k);
    ir::Expr in = member_of(f->loop_var, axis.kept);
    if (in.defined()) cond = cond.defined() ? ir::logical_and(cond, in) : in;
    s.axes.push_back(std::move(axis));
  }
  s.func = cond.defined() ? scheduled.with_body(GuardLoopBody(chain.back(), cond).mutate(scheduled.body()))
                          : scheduled;
  return s;
}

ir::PrimFunc coverage_program(const ir::PrimFunc &scheduled) {
  ParamUses uses(scheduled);
  SliceToOutputStores slice(uses);
  return scheduled.with_body(slice.mutate(scheduled.body()));
}

std::vector<Unwritten> unwritten_elements(const ir::PrimFunc &coverage, const ir::PrimFunc &f,
                                          const std::vector<NDArray> &inputs, Oracle oracle, Oracle *used) {
  const std::vector<bool> written = ir::written_params(f);
  std::vector<NDArray> covered = inputs;
  for (size_t i = 0; i < written.size(); ++i)
    if (written[i]) covered[i] = NDArray(covered[i].dtype(), covered[i].shape());
  const Oracle ran = execute(coverage, covered, oracle);
  if (used) *used = ran;
  std::vector<Unwritten> out(written.size());
  for (size_t i = 0; i < written.size(); ++i)
    if (written[i])
      for (int64_t e = 0; e < covered[i].numel(); ++e)
        if (covered[i].get(e) == 0 && out[i].count++ == 0) out[i].first = e;
  return out;
}

std::vector<std::vector<uint8_t>> run_sampled_blocks(const BlockSample &sample, const ir::PrimFunc &f,
                                                     std::vector<NDArray> &args, Oracle oracle, Oracle *used) {
  const std::vector<bool> written = ir::written_params(f);
  auto sentinel = [](ir::DataType t) -> uint8_t { return t.is_float() ? 0xFF : 0xA5; };
  for (size_t i = 0; i < written.size(); ++i) {
    if (!written[i]) continue;
    TESSERA_ICHECK(args.at(i).dtype().bits() >= 8) << "a sampled output narrower than a byte (sample_blocks refuses it)";
    std::memset(args[i].data(), sentinel(args[i].dtype()), args[i].nbytes());
  }
  const Oracle ran = execute(sample.func, args, oracle);
  if (used) *used = ran;
  std::vector<std::vector<uint8_t>> changed(written.size());
  for (size_t i = 0; i < written.size(); ++i) {
    if (!written[i]) continue;
    const NDArray &a = args[i];
    const size_t width = size_t(a.dtype().bits() / 8);
    const uint8_t s = sentinel(a.dtype());
    changed[i].assign(size_t(a.numel()), 0);
    for (size_t e = 0; e < changed[i].size(); ++e)
      for (size_t b = 0; b < width && !changed[i][e]; ++b) changed[i][e] = a.data()[e * width + b] != s;
  }
  return changed;
}

IndexRanges marked_ranges(const std::vector<uint8_t> &mask, const std::vector<int64_t> &shape, size_t max_ranges) {
  int64_t numel = 1;
  for (int64_t e : shape) numel *= e;
  if (int64_t(mask.size()) != numel) throw UserError("a mask of " + std::to_string(mask.size()) + " elements for " +
                                                      std::to_string(numel));
  std::vector<std::vector<uint8_t>> marked(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) marked[d].assign(size_t(shape[d]), 0);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t flat = 0; flat < numel; ++flat) {
    if (mask[size_t(flat)])
      for (size_t d = 0; d < shape.size(); ++d) marked[d][size_t(idx[d])] = 1;
    advance(idx, shape);
  }
  IndexRanges out(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    std::vector<IndexRange> all;
    for (int64_t i = 0; i < shape[d]; ++i) {
      if (!marked[d][size_t(i)]) continue;
      if (!all.empty() && all.back().end == i) ++all.back().end;
      else all.push_back({i, i + 1});
    }
    if (all.size() > max_ranges && max_ranges > 0) {
      std::vector<IndexRange> spread;
      for (size_t k = 0; k < max_ranges; ++k)
        spread.push_back(all[max_ranges == 1 ? 0 : k * (all.size() - 1) / (max_ranges - 1)]);
      all = std::move(spread);
    }
    out[d] = std::move(all);
  }
  return out;
}

void keep_within(std::vector<uint8_t> &mask, const std::vector<int64_t> &shape, const IndexRanges &ranges) {
  if (ranges.empty()) return;
  std::vector<std::vector<uint8_t>> in(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    in[d].assign(size_t(shape[d]), ranges[d].empty() ? 1 : 0);
    for (const IndexRange &r : ranges[d])
      for (int64_t i = std::max<int64_t>(r.begin, 0); i < std::min(r.end, shape[d]); ++i) in[d][size_t(i)] = 1;
  }
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t flat = 0; flat < mask.size(); ++flat) {
    for (size_t d = 0; d < shape.size() && mask[flat]; ++d)
      if (!in[d][size_t(idx[d])]) mask[flat] = 0;
    advance(idx, shape);
  }
}

}  // namespace tessera::runtime
