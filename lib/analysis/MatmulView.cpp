//===- lib/analysis/MatmulView.cpp - A reduction block seen as a matmul -----===//
#include "tessera/analysis/MatmulView.h"

#include "tessera/ir/Expr.h"

namespace tessera::analysis {

using namespace tessera::ir;

std::string MatmulOperand::roles() const {
  std::string s;
  for (MatmulRole r : dims) s += static_cast<char>(r);
  return s;
}

std::string MatmulView::layout() const {
  std::string s;
  s += a.inner() == MatmulRole::K ? 'n' : 't';
  s += b.inner() == MatmulRole::N ? 'n' : 't';
  return s;
}

const Load *strip_casts(const Expr &e) {
  Expr x = e;
  while (true) {
    if (const auto *c = x.as<Cast>()) {
      x = c->value;
    } else if (const auto *r = x.as<Call>(); r && r->op == Intrinsic::RoundToTf32) {
      x = r->args[0];
    } else {
      return x.as<Load>();
    }
  }
}

namespace {

bool uses(const Access &a, int iter) {
  for (const auto &d : a.dim_iters)
    for (int i : d)
      if (i == iter) return true;
  return false;
}

/// A dimension indexed by a constant over an extent of 1: an operand
/// broadcast along it (TVM's batch_matmul prints B[T.int64(0), j, k]).
bool is_broadcast_dim(const Access &a, size_t d) {
  return a.dim_iters[d].empty() && is_const_int(a.buffer.shape()[d], 1);
}

/// Iter `it` indexes dimension d of `x`, and `y` (of the same rank) is
/// broadcast along that same dimension: a batch iter `y` is shared across.
bool broadcast_across(const Access &x, const Access &y, int it) {
  if (x.dim_iters.size() != y.dim_iters.size()) return false;
  for (size_t d = 0; d < x.dim_iters.size(); ++d)
    if (x.dim_iters[d].size() == 1 && x.dim_iters[d][0] == it) return is_broadcast_dim(y, d);
  return false;
}

}  // namespace

MatchResult<MatmulView> match_matmul(const FuncInfo &info, int block) {
  using R = MatchResult<MatmulView>;
  const BlockInfo &bi = info.blocks.at(block);
  const std::string q = "block '" + bi.name + "'";
  if (!bi.is_reduction()) return R::fail(q + " is not a reduction (iter kinds " + bi.dom_kind() + ")");
  if (bi.combiner != Combiner::Sum)
    return R::fail(q + " reduces with " + to_string(bi.combiner) + ", not a sum of products");
  const auto *mul = bi.reduce_value.as<Binary>();
  if (!mul || mul->op != BinaryOp::Mul) return R::fail(q + " adds a value that is not a product of two loads");
  const Load *la = strip_casts(mul->a), *lb = strip_casts(mul->b);
  if (!la || !lb) return R::fail(q + " multiplies something other than two (possibly cast or rounded) loads");
  if (bi.reads.size() != 2) return R::fail(q + " reads " + std::to_string(bi.reads.size()) + " buffers, not 2");
  const Access &w = bi.writes[0];
  for (const Access *acc : {&bi.reads[0], &bi.reads[1], &w})
    if (!acc->is_simple)
      return R::fail(q + " indexes '" + acc->buffer.name() +
                     "' with expressions, not plain iter vars (a convolution window? reindex it first)");

  // Roles per iter: which accesses use it.
  const Access &r0 = bi.reads[0], &r1 = bi.reads[1];
  MatmulView v;
  v.block = block;
  std::vector<char> role(bi.iters.size(), 0);
  for (size_t i = 0; i < bi.iters.size(); ++i) {
    int it = static_cast<int>(i);
    bool in0 = uses(r0, it), in1 = uses(r1, it), inc = uses(w, it);
    bool reduce = bi.iters[i].kind == IterKind::Reduce;
    const std::string name = "iter '" + bi.iters[i].var.name() + "'";
    if (reduce) {
      if (!(in0 && in1)) return R::fail(q + ": the reduce " + name + " is not used by both operands");
      role[i] = 'K';
    } else if (in0 && in1 && inc) {
      role[i] = 'B';
    } else if (inc && (in0 != in1) && broadcast_across(in0 ? r0 : r1, in0 ? r1 : r0, it)) {
      role[i] = 'B';  // a batch the other operand is broadcast over
    } else if (inc && (in0 != in1)) {
      role[i] = in0 ? '0' : '1';  // M or N, decided once A is known
    } else if (!in0 && !in1 && !inc) {
      return R::fail(q + ": " + name + " is used by no access");
    } else {
      return R::fail(q + ": the spatial " + name + " is used by the operands but not by the output");
    }
  }
  // Unit axes (relax's C[0, i, j] += A[0, i, k] * B[k, j]): where an
  // operand has several iters of its own, those of extent 1 are a batch of
  // one, so that one M (or N) iter is left; a lone unit iter stays M or N
  // (a batched product with M = 1 is still a matmul).
  for (char side : {'0', '1'}) {
    std::vector<size_t> own;
    for (size_t i = 0; i < role.size(); ++i)
      if (role[i] == side) own.push_back(i);
    size_t left = own.size();
    for (size_t i : own)
      if (left > 1 && is_const_int(bi.iters[i].dom.extent, 1)) role[i] = 'B', --left;
  }
  // A is the operand with the first output-and-operand iter (the rows of C).
  int a_side = -1;
  for (const auto &d : w.dim_iters)
    for (int i : d)
      if (a_side < 0 && (role[i] == '0' || role[i] == '1')) a_side = role[i] - '0';
  bool has_one_side[2] = {false, false};
  for (char r : role)
    if (r == '0' || r == '1') has_one_side[r - '0'] = true;
  if (!has_one_side[0] || !has_one_side[1])
    return R::fail(q + " has no spatial iter of its own for one operand (a matrix-vector product: gemv)");
  const Access &A = a_side == 0 ? r0 : r1, &B = a_side == 0 ? r1 : r0;
  const Load *load_a = A.buffer.same_as(la->buffer) ? la : lb, *load_b = load_a == la ? lb : la;
  if (!load_a->buffer.same_as(A.buffer) || !load_b->buffer.same_as(B.buffer))
    return R::fail(q + " multiplies loads of buffers other than the ones it reads");

  for (size_t i = 0; i < role.size(); ++i) {
    int it = static_cast<int>(i);
    switch (role[i]) {
      case 'B': v.batch.push_back(it); break;
      case 'K': v.k.push_back(it); break;
      default: ((role[i] - '0') == a_side ? v.m : v.n).push_back(it); break;
    }
  }
  auto operand = [&](const Access &acc) {
    MatmulOperand op;
    op.buffer = acc.buffer;
    for (size_t k = 0; k < acc.dim_iters.size(); ++k) {
      const auto &d = acc.dim_iters[k];
      if (d.empty()) {  // broadcast (checked below): a batch dimension of extent 1
        op.dims.push_back(MatmulRole::Batch);
        continue;
      }
      int it = d[0];  // simple: exactly one iter or none
      MatmulRole r = role[it] == 'B' ? MatmulRole::Batch
                     : role[it] == 'K' ? MatmulRole::K
                     : (role[it] - '0') == a_side ? MatmulRole::M
                                                  : MatmulRole::N;
      op.dims.push_back(r);
    }
    return op;
  };
  for (const Access *acc : {&A, &B, &w})
    for (size_t d = 0; d < acc->dim_iters.size(); ++d)
      if (acc->dim_iters[d].empty() && (acc == &w || !is_broadcast_dim(*acc, d)))
        return R::fail(q + " indexes '" + acc->buffer.name() + "' with a constant in dimension " + std::to_string(d) +
                       (acc == &w ? "" : " whose extent is not 1 (only a broadcast batch dimension may be constant)"));
  v.a = operand(A);
  v.b = operand(B);
  v.c = operand(w);
  v.a_dtype = A.buffer.dtype();
  v.b_dtype = B.buffer.dtype();
  v.acc_dtype = w.buffer.dtype();
  auto rounded = [](const Expr &e) {
    const auto *c = e.as<Call>();
    return c && c->op == Intrinsic::RoundToTf32;
  };
  v.tf32 = rounded(mul->a) && rounded(mul->b);
  if (v.a.inner() == MatmulRole::Batch || v.b.inner() == MatmulRole::Batch)
    return R::fail(q + ": an operand's innermost dimension is a batch dimension");

  for (int p : bi.producers)
    if (info.blocks[p].is_elementwise() || info.blocks[p].is_inlinable()) v.prologue.push_back(p);
  for (int c : bi.consumers)
    if (info.blocks[c].is_spatial()) v.epilogue.push_back(c);
  return v;
}

}  // namespace tessera::analysis
