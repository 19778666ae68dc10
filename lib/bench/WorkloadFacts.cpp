//===- lib/bench/WorkloadFacts.cpp - What a benchmark needs to judge a time ----===//
#include "tessera/bench/WorkloadFacts.h"

#include <algorithm>

#include "tessera/analysis/BlockInfo.h"
#include "tessera/analysis/MatmulView.h"
#include "tessera/ir/Expr.h"
#include "tessera/ir/Stmt.h"

namespace tessera::bench {

using analysis::BlockInfo;
using analysis::FuncInfo;

namespace {

int64_t constant(const ir::Expr &e, const std::string &what) {
  std::optional<int64_t> v = ir::as_const_int(e);
  if (!v) throw UserError(what + " is not a constant (specialise every size variable first)");
  return *v;
}

std::vector<int64_t> shape_of(const ir::Buffer &b) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < b.shape().size(); ++d)
    out.push_back(constant(b.shape()[d], "dimension " + std::to_string(d) + " of buffer '" + b.name() + "'"));
  return out;
}

size_t bytes_of(const ir::Buffer &b) {
  size_t n = b.dtype().bytes();
  for (int64_t e : shape_of(b)) n *= size_t(e);
  return n;
}

int64_t iterations_of(const BlockInfo &b) {
  int64_t n = 1;
  for (const ir::Stmt &l : b.loops) n *= constant(l.as<ir::For>()->extent, "the extent of a loop around '" + b.name + "'");
  return n;
}

/// `W[idx] = W[idx] + a * b`: one multiply-add per iteration.
bool is_sum_of_products(const BlockInfo &b) {
  if (!b.is_reduction() || b.combiner != analysis::Combiner::Sum) return false;
  const auto *mul = b.reduce_value.as<ir::Binary>();
  return mul && mul->op == ir::BinaryOp::Mul;
}

/// A, B and C of a GEMM with the role of each buffer dimension ('B', 'M', 'N', 'K').
struct Operands {
  ir::Buffer a, b, c;
  std::string a_roles, b_roles, c_roles;
  bool tf32 = false;  ///< the program rounds both factors to tf32
};

std::string roles_of(const analysis::MatmulOperand &op) {
  std::string out;
  for (analysis::MatmulRole r : op.dims) out += static_cast<char>(r);
  return out;
}

/// y[i] += W[i, k] * x[k] (or W[k, i]): the vector x has no spatial iter of
/// its own, which match_matmul declines. One spatial and one reduce iter.
std::optional<Operands> match_gemv(const BlockInfo &b, std::string &why) {
  if (!is_sum_of_products(b) || b.reads.size() != 2) {
    why = "block '" + b.name + "' is not a sum of products of two buffers";
    return std::nullopt;
  }
  int spatial = -1, reduce = -1;
  for (size_t i = 0; i < b.iters.size(); ++i) {
    int &slot = b.iters[i].kind == ir::IterKind::Reduce ? reduce : spatial;
    if (slot >= 0) {
      why = "block '" + b.name + "' has more than one spatial or reduce iter";
      return std::nullopt;
    }
    slot = static_cast<int>(i);
  }
  auto roles = [&](const analysis::Access &a) {
    std::string out;
    for (const auto &d : a.dim_iters) {
      if (d.size() != 1 || !a.is_simple) return std::string();
      out += d[0] == spatial ? 'M' : 'K';
    }
    return out;
  };
  Operands ops;
  const analysis::Access *matrix = &b.reads[0], *vector = &b.reads[1];
  if (roles(*vector).size() == 2) std::swap(matrix, vector);
  ops.a = matrix->buffer, ops.a_roles = roles(*matrix);
  ops.b = vector->buffer, ops.b_roles = roles(*vector);
  ops.c = b.writes[0].buffer, ops.c_roles = roles(b.writes[0]);
  if (spatial < 0 || reduce < 0 || !(ops.a_roles == "MK" || ops.a_roles == "KM") || ops.b_roles != "K" ||
      ops.c_roles != "M") {
    why = "block '" + b.name + "' is neither a matmul nor a plain matrix-vector product";
    return std::nullopt;
  }
  return ops;
}

/// Fills facts.gemm from the operands, or says why cuBLAS cannot take them.
void describe_gemm(const Operands &ops, WorkloadFacts &facts) {
  std::string a = ops.a_roles, b = ops.b_roles, c = ops.c_roles;
  std::vector<int64_t> sa = shape_of(ops.a), sb = shape_of(ops.b), sc = shape_of(ops.c);
  runtime::GemmDesc g;
  bool batched = a.front() == 'B';
  if (batched != (b.front() == 'B') || batched != (c.front() == 'B')) {
    facts.gemm_note = "the batch dimension is not the outermost of every operand";
    return;
  }
  if (batched) {
    g.batch = sa[0];
    a.erase(0, 1), b.erase(0, 1), c.erase(0, 1);
    sa.erase(sa.begin()), sb.erase(sb.begin()), sc.erase(sc.begin());
  }
  if (b == "K") b = "KN", sb.push_back(1);  // a gemv: x[K] is B[K, 1]
  if (c == "M") c = "MN", sc.push_back(1);
  if (!(a == "MK" || a == "KM") || !(b == "KN" || b == "NK") || c != "MN") {
    facts.gemm_note = "operand layouts " + ops.a_roles + " x " + ops.b_roles + " -> " + ops.c_roles +
                      " are not one batched row-major GEMM";
    return;
  }
  g.a_transposed = a == "KM";
  g.b_transposed = b == "NK";
  g.m = sa[g.a_transposed ? 1 : 0];
  g.k = sa[g.a_transposed ? 0 : 1];
  g.n = sb[g.b_transposed ? 0 : 1];
  if (sb[g.b_transposed ? 1 : 0] != g.k || sc[0] != g.m || sc[1] != g.n) {
    facts.gemm_note = "operand shapes disagree on M, N or K";
    return;
  }
  g.a_dtype = ops.a.dtype();
  g.b_dtype = ops.b.dtype();
  auto takes = [](ir::DataType t) {
    return t == ir::DataType::float16() || t == ir::DataType::bfloat16() || t == ir::DataType::float32();
  };
  if (g.a_dtype != g.b_dtype || !takes(g.a_dtype)) {
    facts.gemm_note = "cuBLAS takes float16, bfloat16 or float32 operands of one dtype, not " + g.a_dtype.str() +
                      " x " + g.b_dtype.str();
    return;
  }
  g.tf32 = ops.tf32;
  g.c_dtype = g.a_dtype;  // the natural output; the exact check below may set the function's
  facts.gemm = g;
}

int param_position(const ir::PrimFunc &f, const ir::Buffer &b) {
  for (size_t i = 0; i < f.params().size(); ++i)
    if (f.buffer_of(f.params()[i]).same_as(b)) return static_cast<int>(i);
  return -1;
}

/// Decides facts.gemm_exact (see the header); `reduction` computes C.
void check_exact(const FuncInfo &info, int reduction, const Operands &ops, WorkloadFacts &facts) {
  const ir::PrimFunc &f = info.func;
  facts.a_param = param_position(f, ops.a);
  facts.b_param = param_position(f, ops.b);
  if (facts.a_param < 0 || facts.b_param < 0) {
    const ir::Buffer &inner = facts.a_param < 0 ? ops.a : ops.b;
    facts.gemm_note = "operand '" + inner.name() + "' is computed in the function; cuBLAS is given it ready";
    return;
  }
  ir::Buffer out = ops.c;
  if (param_position(f, out) < 0) {
    // The accumulator is an intermediate: one epilogue block must copy or
    // cast it, element for element, into a parameter.
    const BlockInfo &r = info.blocks[reduction];
    if (info.blocks.size() != 2 || r.consumers.size() != 1) {
      facts.gemm_note = "the function does more than the matrix product";
      return;
    }
    const BlockInfo &e = info.blocks[r.consumers[0]];
    const auto *store = e.block.as<ir::Block>()->body.as<ir::Store>();
    const ir::Load *load = store ? analysis::strip_casts(store->value) : nullptr;
    if (!load || !load->buffer.same_as(ops.c) || !e.is_elementwise() || e.reads.size() != 1 ||
        e.reads[0].dim_iters != e.writes[0].dim_iters || shape_of(store->buffer) != shape_of(ops.c)) {
      facts.gemm_note = "the epilogue block '" + e.name + "' does more than cast the accumulator";
      return;
    }
    out = store->buffer;
  } else if (info.blocks.size() != 1) {
    facts.gemm_note = "the function does more than the matrix product";
    return;
  }
  facts.c_param = param_position(f, out);
  if (facts.c_param < 0 || f.params().size() != 3) {
    facts.gemm_note = "the function has parameters other than A, B and the output";
    return;
  }
  if (out.dtype() != ir::DataType::float32() && out.dtype() != facts.gemm->a_dtype) {
    facts.gemm_note = "cuBLAS cannot write a " + out.dtype().str() + " output";
    return;
  }
  facts.gemm->c_dtype = out.dtype();
  facts.gemm_exact = true;
}

}  // namespace

WorkloadFacts workload_facts(const ir::PrimFunc &f) {
  WorkloadFacts facts;
  for (const ir::Var &p : f.params()) {
    ir::Buffer b = f.buffer_of(p);
    if (b.defined()) facts.bytes += bytes_of(b);
  }
  FuncInfo info = analysis::analyze(f);
  for (const BlockInfo &b : info.blocks) {
    int64_t n = iterations_of(b);
    facts.iterations += n;
    if (is_sum_of_products(b)) facts.flops += 2.0 * double(n);
  }

  std::vector<int> reductions = info.reduction_blocks();
  if (reductions.size() != 1) {
    facts.gemm_note = std::to_string(reductions.size()) + " reduction blocks, not one matrix product";
    return facts;
  }
  int r = reductions[0];
  std::optional<Operands> ops;
  analysis::MatchResult<analysis::MatmulView> mm = analysis::match_matmul(info, r);
  if (mm) {
    ops = Operands{mm->a.buffer, mm->b.buffer, mm->c.buffer, roles_of(mm->a), roles_of(mm->b), roles_of(mm->c),
                   mm->tf32};
    if (std::count(ops->a_roles.begin(), ops->a_roles.end(), 'B') > 1) ops.reset();
  } else {
    ops = match_gemv(info.blocks[r], facts.gemm_note);
    if (!ops) facts.gemm_note = mm.reason() + "; " + facts.gemm_note;
  }
  if (!ops) {
    if (facts.gemm_note.empty()) facts.gemm_note = "more than one batch dimension";
    return facts;
  }
  describe_gemm(*ops, facts);
  if (facts.gemm) check_exact(info, r, *ops, facts);
  return facts;
}

}  // namespace tessera::bench
