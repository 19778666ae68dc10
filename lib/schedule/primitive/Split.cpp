//===- primitive/Split.cpp - split -----------------------------------------===//
//
// split(i, {f0, ..., fn-1}) replaces loop i by n nested loops i_0 .. i_n-1
// with extents f0 .. fn-1 and substitutes i := i_0 * s0 + ... + i_n-1, where
// s_k is the product of the later factors. When the factors overshoot the
// extent, the iterations past it must not run: the blocks directly under the
// loop get `T.where(i_0 * s0 + ... < extent)` (TensorIR keeps loops
// rectangular and guards the tail on the block), and statements that are not
// in a block are wrapped in an `if`. The new bindings and predicates are
// simplified with the loops' ranges (arith::Analyzer), so a split of a fused
// loop reads `(f_0 * 32 + f_1) // 80`, or `f_0` when 80 divides evenly.
//
//===----------------------------------------------------------------------===//
#include "../Primitive.h"

#include <functional>
#include <limits>

#include "tessera/ir/Functor.h"

#include "tessera/ir/Op.h"
#include "tessera/script/Printer.h"

namespace tessera::schedule::detail {

using namespace ir;

//===----------------------------------------------------------------------===//
// 1. Error messages
//===----------------------------------------------------------------------===//

namespace {

std::string factors_str(const std::vector<std::optional<int64_t>> &factors) {
  std::string s = "[";
  for (size_t i = 0; i < factors.size(); ++i)
    s += (i ? ", " : "") + (factors[i] ? std::to_string(*factors[i]) : std::string("null"));
  return s + "]";
}

[[noreturn]] void invalid_factors(const StmtPath &p, const std::vector<std::optional<int64_t>> &factors,
                                  const std::string &why) {
  throw InvalidSplitFactorsError("split",
                                 "invalid split factors " + factors_str(factors) + " for loop " +
                                     loop_name(*p.loop()) + ": " + why,
                                 "invalid split factors " + factors_str(factors) + " for loop {0}: " + why, {p.stmt});
}

//===----------------------------------------------------------------------===//
// 2. Checks
//===----------------------------------------------------------------------===//

/// The extents of the new loops (the inferred one computed) and whether the
/// tail needs a predicate.
struct SplitPlan {
  std::vector<Expr> extents;
  bool needs_predicate = false;
};

/// The largest value of an integer loop variable's type.
int64_t max_of(DataType t) {
  return t.bits() >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (t.bits() - 1)) - 1;
}

SplitPlan check_factors(const StmtPath &p, const std::vector<std::optional<int64_t>> &factors) {
  const For &loop = *p.loop();
  DataType t = loop.loop_var.dtype();
  if (factors.empty()) invalid_factors(p, factors, "give at least one factor");
  int inferred = -1;
  int64_t product = 1;
  for (size_t i = 0; i < factors.size(); ++i) {
    if (!factors[i]) {
      if (inferred >= 0) invalid_factors(p, factors, "at most one factor may be inferred (null)");
      inferred = static_cast<int>(i);
      continue;
    }
    if (*factors[i] <= 0)
      invalid_factors(p, factors, "factor " + std::to_string(*factors[i]) + " is not positive");
    // The new loops' indices recombine as i0 * f1 + i1 in the loop
    // variable's type: the product of the factors must fit it.
    if (__builtin_mul_overflow(product, *factors[i], &product) || product > max_of(t))
      invalid_factors(p, factors, "the factors multiply past the largest " + t.str() + " (" +
                                      std::to_string(max_of(t)) + ")");
  }
  SplitPlan plan;
  for (const auto &f : factors) plan.extents.push_back(f ? make_int(t, *f) : Expr());
  std::optional<int64_t> extent = as_const_int(loop.extent);
  if (extent) {
    if (inferred >= 0) {
      int64_t n = *extent / product + (*extent % product != 0);
      plan.extents[inferred] = make_int(t, std::max<int64_t>(n, 1));
      plan.needs_predicate = std::max<int64_t>(n, 1) * product != *extent;
      return plan;
    }
    if (product < *extent)
      throw SplitFactorsMismatchError("split",
                                      "split factors multiply to " + std::to_string(product) + " but loop " +
                                          loop_name(loop) + " has extent " + std::to_string(*extent),
                                      "split factors " + factors_str(factors) + " multiply to " +
                                          std::to_string(product) + " but loop {0} has extent " +
                                          std::to_string(*extent),
                                      {p.stmt});
    plan.needs_predicate = product != *extent;
    return plan;
  }
  if (inferred < 0)
    throw SplitFactorsMismatchError("split",
                                    "loop " + loop_name(loop) + " has a symbolic extent " +
                                        script::print(loop.extent) +
                                        " that constant factors cannot be shown to cover; make one factor null",
                                    "loop {0} has a symbolic extent; make one factor null (inferred)", {p.stmt});
  // ceildiv(extent, product), guarded unless product is 1.
  plan.extents[inferred] =
      product == 1 ? loop.extent : floordiv(add(loop.extent, make_int(t, product - 1)), make_int(t, product));
  plan.needs_predicate = product != 1;
  return plan;
}

bool is_identifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

void check_names(const StmtPath &p, const std::vector<std::string> &names, size_t n) {
  if (names.empty()) return;
  if (names.size() != n)
    throw InvalidLoopNamesError("split",
                                std::to_string(names.size()) + " names given for the " + std::to_string(n) +
                                    " loops that splitting loop " + loop_name(*p.loop()) + " makes",
                                "", {p.stmt});
  for (const std::string &s : names)
    if (!is_identifier(s))
      throw InvalidLoopNamesError("split", "loop name " + quoted(s) + " is not an identifier", "", {p.stmt});
}

/// Adds `pred` to the blocks directly under `body`; a body with statements
/// outside blocks is guarded by an `if` instead.
Stmt guard(const Stmt &body, const Expr &pred) {
  bool bare = false;  // a store or evaluate not inside any block
  std::function<void(const Stmt &)> scan = [&](const Stmt &s) {
    switch (s.kind()) {
      case NodeKind::Block: return;
      case NodeKind::Store:
      case NodeKind::Evaluate: bare = true; return;
      case NodeKind::For: return scan(s.as<For>()->body);
      case NodeKind::Seq:
        for (const Stmt &c : s.as<Seq>()->stmts) scan(c);
        return;
      case NodeKind::IfThenElse:
        scan(s.as<IfThenElse>()->then_case);
        if (s.as<IfThenElse>()->else_case) scan(*s.as<IfThenElse>()->else_case);
        return;
      case NodeKind::LetStmt: return scan(s.as<LetStmt>()->body);
      default: return;
    }
  };
  scan(body);
  if (bare) return IfThenElse::make(pred, body);
  auto with_pred = [&](const Block &b) {
    return block_with_predicate(b, is_const_int(b.predicate, 1) ? pred : logical_and(b.predicate, pred));
  };
  if (const Block *b = body.as<Block>()) return with_pred(*b);
  std::unordered_map<const StmtNode *, Stmt> map;
  for (const Stmt &s : child_blocks(body)) map[s.get()] = with_pred(*s.as<Block>());
  return replace_in(body, map);
}

}  // namespace

//===----------------------------------------------------------------------===//
// 3. The primitive
//===----------------------------------------------------------------------===//

std::vector<LoopRef> split(State &st, const LoopRef &ref, const std::vector<std::optional<int64_t>> &factors,
                           const std::vector<std::string> &names) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath p = find_loop(st, ref, "split");
  const For &loop = *p.loop();
  check_loop_serial("split", p);
  check_loop_no_annotation("split", p);
  check_loop_start_at_zero("split", p);
  SplitPlan plan = check_factors(p, factors);
  check_names(p, names, factors.size());

  // Step 2. Build new loops
  std::set<std::string> taken = loop_names(st.func);
  taken.erase(loop.loop_var.name());
  DataType t = loop.loop_var.dtype();
  size_t n = factors.size();
  std::vector<Var> vars;
  for (size_t i = 0; i < n; ++i)
    vars.emplace_back(fresh_name(taken, names.empty() ? loop.loop_var.name() + "_" + std::to_string(i) : names[i]),
                      t);
  // i := sum_k i_k * stride_k, stride_{n-1} = 1.
  std::vector<Expr> strides(n);
  strides[n - 1] = make_int(t, 1);
  for (size_t k = n - 1; k-- > 0;) strides[k] = mul_fold(strides[k + 1], plan.extents[k + 1]);
  Expr value;
  for (size_t k = 0; k < n; ++k) {
    Expr term = mul_fold(vars[k], strides[k]);
    value = value.defined() ? add(value, term) : term;
  }
  Stmt body = substitute(loop.body, {{loop.loop_var, value}});
  if (plan.needs_predicate) body = guard(body, lt(value, loop.extent));
  for (size_t k = n; k-- > 0;) body = For::make(vars[k], make_int(t, 0), plan.extents[k], ForKind::Serial, body);
  // Bindings that were already sums or splits (a split of a fused loop)
  // simplify with the new loops' ranges: (f_0 * 64 + f_1) // 64 -> f_0.
  body = simplify_bindings(body, analyzer_at(p), vars);

  // Step 3. Replace (the only mutation)
  replace(st, p.stmt, body);
  std::vector<LoopRef> out;
  for (const Var &v : vars) out.push_back(LoopRef{v});
  return out;
}

//===----------------------------------------------------------------------===//
// 4. Trace
//===----------------------------------------------------------------------===//

Json factors_to_json(const std::vector<std::optional<int64_t>> &factors) {
  Json j = Json::array();
  for (const auto &f : factors) j.push_back(f ? Json(*f) : Json(nullptr));
  return j;
}

Json encode_split(const LoopRef &loop, const std::vector<std::optional<int64_t>> &factors,
                  const std::vector<LoopRef> &out) {
  return Json{{"op", "split"}, {"loop", loop.name()}, {"factors", factors_to_json(factors)}, {"out", to_json(out)}};
}

namespace {

std::vector<std::optional<int64_t>> factors_from_json(const ReplayContext &ctx, const Json &j,
                                                      std::string_view field) {
  if (!j.is_array()) ctx.fail(field, "must be a list of integers or null");
  std::vector<std::optional<int64_t>> out;
  for (const Json &x : j) {
    if (x.is_null()) out.push_back(std::nullopt);
    else if (x.is_number_integer()) out.push_back(x.get<int64_t>());
    else ctx.fail(field, "must be a list of integers or null");
  }
  return out;
}

void replay_split(ReplayContext &ctx) {
  LoopRef loop = ctx.loop("loop");
  auto factors = factors_from_json(ctx, ctx.field("factors"), "factors");
  std::vector<std::string> names = ctx.has("out") ? ctx.strings("out") : std::vector<std::string>{};
  std::vector<LoopRef> out = ctx.sch.split(loop, factors, names);
  for (size_t i = 0; i < names.size() && i < out.size(); ++i) ctx.bind(names[i], out[i]);
}

[[maybe_unused]] const bool kRegistered = register_instruction("split", replay_split);

}  // namespace

/// Used by tile's replay (Reorder.cpp).
std::vector<std::optional<int64_t>> split_factors_from_json(const ReplayContext &ctx, const Json &j,
                                                            std::string_view field) {
  return factors_from_json(ctx, j, field);
}

}  // namespace tessera::schedule::detail
