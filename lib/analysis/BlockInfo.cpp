//===- lib/analysis/BlockInfo.cpp - Blocks, iters, accesses, dataflow ------===//
#include "tessera/analysis/BlockInfo.h"

#include <algorithm>
#include <unordered_map>

#include "tessera/ir/Functor.h"
#include "tessera/ir/StructuralEqual.h"

namespace tessera::analysis {

using namespace tessera::ir;

//===----------------------------------------------------------------------===//
// Access and BlockInfo queries
//===----------------------------------------------------------------------===//

int Access::single_iter(int d) const { return dim_iters[d].size() == 1 ? dim_iters[d][0] : -1; }

std::vector<int> Access::iters() const {
  std::vector<int> out;
  for (const auto &d : dim_iters) out.insert(out.end(), d.begin(), d.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int Access::inner_iter() const { return dim_iters.empty() ? -1 : single_iter(static_cast<int>(dim_iters.size()) - 1); }

const char *to_string(Combiner c) {
  switch (c) {
    case Combiner::None: return "none";
    case Combiner::Sum: return "sum";
    case Combiner::Product: return "product";
    case Combiner::Max: return "max";
    case Combiner::Min: return "min";
    case Combiner::BitAnd: return "bitand";
    case Combiner::BitOr: return "bitor";
    case Combiner::BitXor: return "bitxor";
  }
  return "?";
}

std::string BlockInfo::dom_kind() const {
  std::string s;
  for (const IterInfo &it : iters)
    s += it.kind == IterKind::Spatial ? 'S' : it.kind == IterKind::Reduce ? 'R' : 'O';
  return s;
}

bool BlockInfo::has_reduce() const {
  return std::any_of(iters.begin(), iters.end(), [](const IterInfo &i) { return i.kind == IterKind::Reduce; });
}

bool BlockInfo::is_spatial() const {
  if (has_reduce() || combiner != Combiner::None || block.as<Block>()->init) return false;
  for (const IterInfo &i : iters)
    if (i.kind != IterKind::Spatial) return false;
  for (const Access &r : reads)
    for (const Access &w : writes)
      if (r.buffer.same_as(w.buffer)) return false;
  return true;
}

bool BlockInfo::is_reduction() const {
  if (!has_reduce() || combiner == Combiner::None || writes.size() != 1) return false;
  for (const IterInfo &i : iters)
    if (i.kind == IterKind::Opaque) return false;
  for (int i : writes[0].iters())
    if (iters[i].kind != IterKind::Spatial) return false;
  return true;
}

bool BlockInfo::is_tuple_reduction() const {
  if (!has_reduce() || combiner == Combiner::None || tuple_values.size() < 2 || writes.size() != tuple_values.size())
    return false;
  for (const IterInfo &i : iters)
    if (i.kind == IterKind::Opaque) return false;
  for (const Access &w : writes)
    for (int i : w.iters())
      if (iters[i].kind != IterKind::Spatial) return false;
  return true;
}

bool BlockInfo::is_injective() const {
  if (!is_spatial() || writes.size() != 1 || !writes[0].is_simple) return false;
  std::vector<int> used;
  for (const auto &d : writes[0].dim_iters) used.insert(used.end(), d.begin(), d.end());
  std::sort(used.begin(), used.end());
  if (used.size() != iters.size()) return false;
  for (size_t i = 0; i < used.size(); ++i)
    if (used[i] != static_cast<int>(i)) return false;
  return true;
}

bool BlockInfo::is_elementwise() const {
  if (!is_injective()) return false;
  // The write's iter order, dimension by dimension.
  std::vector<int> order;
  for (const auto &d : writes[0].dim_iters) order.insert(order.end(), d.begin(), d.end());
  for (const Access &r : reads) {
    if (!r.is_simple) return false;
    size_t pos = 0;
    for (const auto &d : r.dim_iters) {
      if (d.empty()) continue;
      while (pos < order.size() && order[pos] != d[0]) ++pos;
      if (pos == order.size()) return false;  // not a subsequence: a transpose
      ++pos;
    }
  }
  return true;
}

bool BlockInfo::is_inlinable() const {
  const auto *b = block.as<Block>();
  return is_spatial() && writes.size() == 1 && !writes_output && writes[0].is_simple && b->allocs.empty() &&
         !is_guarded && b->body.as<Store>() != nullptr;
}

int FuncInfo::find(const std::string &name) const {
  for (size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].name == name) return static_cast<int>(i);
  return -1;
}

std::vector<int> FuncInfo::reduction_blocks() const {
  std::vector<int> out;
  for (size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].is_reduction()) out.push_back(static_cast<int>(i));
  return out;
}

//===----------------------------------------------------------------------===//
// The analysis
//===----------------------------------------------------------------------===//

namespace {

bool same_expr(const Expr &a, const Expr &b) { return a.same_as(b) || structural_equal(a, b); }

bool same_indices(const std::vector<Expr> &a, const std::vector<Expr> &b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_expr(a[i], b[i])) return false;
  return true;
}

/// Builds the Access of `indices` into `buffer` for the iters of a block.
Access make_access(const Buffer &buffer, const std::vector<Expr> &indices, const std::vector<IterInfo> &iters) {
  std::unordered_map<const VarNode *, int> pos;
  for (size_t i = 0; i < iters.size(); ++i) pos[iters[i].var.get()] = static_cast<int>(i);
  Access a;
  a.buffer = buffer;
  a.indices = indices;
  for (const Expr &e : indices) {
    struct Uses : IRVisitor {
      const std::unordered_map<const VarNode *, int> *pos;
      std::vector<int> found;
      void visit_(const VarNode *op) override {
        if (auto it = pos->find(op); it != pos->end()) found.push_back(it->second);
      }
    } uses;
    uses.pos = &pos;
    uses.visit(e);
    std::sort(uses.found.begin(), uses.found.end());
    uses.found.erase(std::unique(uses.found.begin(), uses.found.end()), uses.found.end());
    bool simple = e.as<IntImm>() || (e.as<VarNode>() && uses.found.size() == 1);
    a.is_simple = a.is_simple && simple;
    a.dim_iters.push_back(std::move(uses.found));
  }
  return a;
}

/// Every Load (in order) and Store of a statement.
struct AccessCollector : IRVisitor {
  std::vector<const Load *> loads;
  std::vector<const Store *> stores;
  void visit_(const Load *op) override {
    loads.push_back(op);
    IRVisitor::visit_(op);
  }
  void visit_(const Store *op) override {
    stores.push_back(op);
    IRVisitor::visit_(op);
  }
};

/// Recognises `W[idx] = combine(W[idx], value)`.
void find_combiner(const Store &st, BlockInfo &info) {
  auto is_update_read = [&](const Expr &e) {
    const auto *l = e.as<Load>();
    return l && l->buffer.same_as(st.buffer) && same_indices(l->indices, st.indices);
  };
  const auto *bin = st.value.as<Binary>();
  if (!bin) return;
  Combiner c = Combiner::None;
  switch (bin->op) {
    case BinaryOp::Add: c = Combiner::Sum; break;
    case BinaryOp::Mul: c = Combiner::Product; break;
    case BinaryOp::Max: c = Combiner::Max; break;
    case BinaryOp::Min: c = Combiner::Min; break;
    case BinaryOp::BitAnd: c = Combiner::BitAnd; break;
    case BinaryOp::BitOr: c = Combiner::BitOr; break;
    case BinaryOp::BitXor: c = Combiner::BitXor; break;
    default: return;
  }
  if (is_update_read(bin->a)) info.reduce_value = bin->b;
  else if (is_update_read(bin->b)) info.reduce_value = bin->a;
  else return;
  info.combiner = c;
}

/// A tuple reduction's updates: the body's `let` values substituted into a
/// sequence of stores `W_i[idx] = W_i[idx] op v_i` (one op, one idx). Sets
/// the combiner and tuple_values, and returns the stores; empty otherwise.
std::vector<Stmt> find_tuple_combiner(const Stmt &body, BlockInfo &info) {
  std::vector<std::pair<Var, Expr>> lets;
  Stmt s = body;
  while (const auto *l = s.as<LetStmt>()) {
    lets.emplace_back(l->var, substitute(l->value, lets));
    s = l->body;
  }
  const auto *seq = s.as<Seq>();
  if (!seq || seq->stmts.size() < 2) return {};
  std::vector<Stmt> stores;
  for (const Stmt &x : seq->stmts) {
    const auto *st = x.as<Store>();
    if (!st) return {};
    stores.push_back(Store::make(st->buffer, substitute(st->value, lets), st->indices));
  }
  std::vector<Expr> values;
  Combiner combiner = Combiner::None;
  for (size_t i = 0; i < stores.size(); ++i) {
    const Store &st = *stores[i].as<Store>();
    BlockInfo one;
    find_combiner(st, one);
    if (one.combiner == Combiner::None || (combiner != Combiner::None && one.combiner != combiner)) return {};
    if (!same_indices(st.indices, stores[0].as<Store>()->indices)) return {};
    for (size_t j = 0; j < i; ++j)
      if (stores[j].as<Store>()->buffer.same_as(st.buffer)) return {};
    combiner = one.combiner;
    values.push_back(one.reduce_value);
  }
  info.combiner = combiner;
  info.reduce_value = values[0];
  info.tuple_values = std::move(values);
  return stores;
}

/// Walks the statement tree above the leaf blocks, keeping the enclosing
/// loops and guards.
class Walker {
 public:
  explicit Walker(FuncInfo &out) : out_(out) {}

  void walk(const Stmt &s) {
    if (const auto *f = s.as<For>()) {
      if (f->for_kind == ForKind::ThreadBinding) out_.is_scheduled = true;
      loops_.push_back(s);
      walk(f->body);
      loops_.pop_back();
      return;
    }
    if (const auto *seq = s.as<Seq>()) {
      for (const Stmt &x : seq->stmts) walk(x);
      return;
    }
    if (const auto *ite = s.as<IfThenElse>()) {
      ++guards_;
      walk(ite->then_case);
      if (ite->else_case) walk(*ite->else_case);
      --guards_;
      return;
    }
    if (const auto *let = s.as<LetStmt>()) return walk(let->body);
    if (const auto *b = s.as<Block>()) return on_block(s, *b);
    // Stores and evaluations outside any leaf block.
    out_.has_opaque_structure = true;
  }

 private:
  void on_block(const Stmt &s, const Block &b) {
    bool nested = false;
    pre_order_visit(b.body, nullptr, [&](const Stmt &x) { nested = nested || x.as<Block>(); });
    if (nested || block_depth_ == 0) {
      // The root block, or a block of blocks (after blockize): look inside.
      if (block_depth_ > 0) out_.has_opaque_structure = true;
      ++block_depth_;
      walk(b.body);
      --block_depth_;
      return;
    }
    out_.blocks.push_back(analyze_leaf(s, b));
  }

  BlockInfo analyze_leaf(const Stmt &s, const Block &b) {
    BlockInfo info;
    info.name = b.name;
    info.block = s;
    info.loops = loops_;
    info.is_guarded = guards_ > 0 || !is_const_int(b.predicate, 1);
    for (const Stmt &l : loops_)
      if (l.as<For>()->for_kind == ForKind::ThreadBinding) info.is_thread_bound = true;

    // Iters and their loops.
    info.trivial_binding = true;
    std::vector<bool> loop_used(loops_.size(), false);
    for (size_t i = 0; i < b.iter_vars.size(); ++i) {
      const IterVar &iv = b.iter_vars[i];
      IterInfo it{iv.var, iv.kind, iv.dom, Var()};
      if (const auto *v = b.bindings[i].as<VarNode>()) {
        for (size_t l = 0; l < loops_.size(); ++l) {
          const auto *f = loops_[l].as<For>();
          if (f->loop_var.get() != v || loop_used[l]) continue;
          if (is_const_int(f->min, 0) && is_const_int(iv.dom.min, 0) && same_expr(f->extent, iv.dom.extent)) {
            it.loop = f->loop_var;
            loop_used[l] = true;
          }
          break;
        }
      }
      if (!it.loop.defined()) info.trivial_binding = false;
      info.iters.push_back(it);
    }
    for (size_t l = 0; l < loops_.size(); ++l)
      if (!loop_used[l] && !is_const_int(loops_[l].as<For>()->extent, 1)) info.trivial_binding = false;

    // Writes, the combiner, reads without the update read.
    AccessCollector body;
    body.visit(b.body);
    for (const Store *st : body.stores) info.writes.push_back(make_access(st->buffer, st->indices, info.iters));
    const Store *update = b.body.as<Store>();
    if (update && (b.init || info.has_reduce())) find_combiner(*update, info);
    std::vector<Stmt> tuple;
    if (!update && (b.init || info.has_reduce())) tuple = find_tuple_combiner(b.body, info);
    for (const Load *l : body.loads) {
      bool is_update_read = update && info.combiner != Combiner::None && l->buffer.same_as(update->buffer) &&
                            same_indices(l->indices, update->indices);
      for (const Stmt &t : tuple)
        is_update_read |= l->buffer.same_as(t.as<Store>()->buffer) && same_indices(l->indices, t.as<Store>()->indices);
      if (!is_update_read) info.reads.push_back(make_access(l->buffer, l->indices, info.iters));
    }
    if (b.init) {
      AccessCollector init;
      init.visit(*b.init);
      for (const Load *l : init.loads) info.reads.push_back(make_access(l->buffer, l->indices, info.iters));
      if (const auto *st = b.init->as<Store>(); st && update && st->buffer.same_as(update->buffer) &&
                                                 same_indices(st->indices, update->indices))
        info.init_value = st->value;
    }
    for (const Access &w : info.writes)
      for (const Buffer &p : out_.func.param_buffers())
        if (p.same_as(w.buffer)) info.writes_output = true;
    return info;
  }

  FuncInfo &out_;
  std::vector<Stmt> loops_;
  int guards_ = 0;
  int block_depth_ = 0;
};

void link_dataflow(FuncInfo &info) {
  auto &bs = info.blocks;
  for (size_t c = 0; c < bs.size(); ++c)
    for (size_t p = 0; p < c; ++p) {
      bool feeds = false;
      for (const Access &w : bs[p].writes)
        for (const Access &r : bs[c].reads) feeds = feeds || w.buffer.same_as(r.buffer);
      if (!feeds) continue;
      bs[c].producers.push_back(static_cast<int>(p));
      bs[p].consumers.push_back(static_cast<int>(c));
    }
}

}  // namespace

FuncInfo analyze(const PrimFunc &f) {
  FuncInfo info;
  info.func = f;
  Walker w(info);
  w.walk(f.body());
  link_dataflow(info);
  return info;
}

}  // namespace tessera::analysis
