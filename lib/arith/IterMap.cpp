//===- lib/arith/IterMap.cpp - Affine iteration-map detection -------------===//
//
// Three steps:
//   1. The predicate's relations `fused < c` shrink the extent of the mark
//      that `fused` names (creating the fused mark first).
//   2. Each binding is rewritten bottom-up into a sum of splits: a loop is a
//      whole split of its mark; `+` concatenates, `* c` scales; `// c` and
//      `% c` first fuse their operand into one split (a contiguous part of an
//      existing mark, or a new fused mark, deduplicated), then cut it.
//   3. Coverage: the splits that reach each mark (from bindings and from the
//      sources of fused marks the bindings use) must not overlap
//      (Surjective) and must tile the mark exactly (Bijective).
//
//===----------------------------------------------------------------------===//
#include "tessera/arith/IterMap.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <optional>
#include <sstream>

#include "ArithUtil.h"
#include "tessera/ir/Op.h"
#include "tessera/ir/StructuralEqual.h"

namespace tessera::arith {

using ir::BinaryOp;
using ir::Expr;

namespace {

struct Split {
  int mark;
  int64_t lower;
  Expr extent;
  int64_t scale;
};

struct Sum {
  std::vector<Split> args;
  Expr base;
};

struct Mark {
  ir::Var loop;              // a loop mark
  std::vector<Split> fused;  // else its source, decreasing scale
  Expr extent;
  std::string creator;       // binding (or "predicate") that created a fused mark
  bool predicated = false;
  bool is_loop() const { return loop.defined(); }
};

class Detector {
 public:
  Detector(const std::vector<std::pair<ir::Var, ir::Range>> &loops, IterMapLevel level, const Analyzer &ana)
      : loops_(loops), level_(level), ana_(ana) {
    for (const auto &[v, r] : loops) {
      ana_.bind(v, r);
      Mark m;
      m.loop = v;
      m.extent = ana_.simplify(ir::cast(v.dtype(), r.extent));
      marks_.push_back(m);
    }
  }

  std::string why_;
  std::string who_;  // the binding being converted, for messages

  bool check_loops() {
    for (const auto &[v, r] : loops_)
      if (!ana_.can_prove_equal(r.min, ir::make_int(r.min.dtype(), 0)))
        return fail("loop '" + v.name() + "' does not start at 0 (it starts at " + detail::expr_text(r.min) + ")");
    return true;
  }

  bool apply_predicate(const Expr &pred) {
    if (!pred.defined()) return true;
    who_ = "predicate";
    std::vector<Expr> conj;
    flatten_and(ana_.simplify(pred), conj);
    for (const Expr &c : conj) {
      if (auto k = ir::as_const_int(c); k && *k) continue;
      const auto *b = c.as<ir::Binary>();
      // The bound: a constant, or a loop-free symbolic expression (a tile
      // past a symbolic extent: `i_0 * 64 + i_1 < m`).
      bool bounded = b && b->op == BinaryOp::LT && !uses_loop(b->b);
      if (!bounded) {
        if (level_ == IterMapLevel::NoCheck) continue;
        return fail("predicate '" + detail::expr_text(c) + "' is not of the form 'fused < c'");
      }
      auto s = to_sum(b->a);
      if (!s) return false;
      auto sp = fuse(*s);
      if (!sp) return false;
      Mark &m = marks_[sp->mark];
      if (sp->lower != 1 || sp->scale != 1 || !ana_.can_prove_equal(sp->extent, m.extent))
        return fail("predicate '" + detail::expr_text(c) + "' bounds part of an iteration space");
      Expr bound = ana_.simplify(ir::cast(m.extent.dtype(), b->b));
      bool narrows = ana_.can_prove(bound < m.extent) ||
                     (!ir::as_const_int(bound) && ana_.can_prove(bound <= m.extent));
      if (narrows) {
        m.extent = bound;
        m.predicated = true;
      }
    }
    return true;
  }

  std::optional<Sum> to_sum(const Expr &e) {
    DataType t = e.dtype();
    if (!uses_loop(e)) return Sum{{}, e};
    if (const auto *v = e.as<ir::VarNode>()) {
      int m = loop_mark(v);
      return Sum{{Split{m, 1, marks_[m].extent, 1}}, ir::make_int(t, 0)};
    }
    if (const auto *b = e.as<ir::Binary>()) {
      switch (b->op) {
        case BinaryOp::Add:
        case BinaryOp::Sub: {
          auto x = to_sum(b->a), y = to_sum(b->b);
          if (!x || !y) return std::nullopt;
          if (b->op == BinaryOp::Sub && !y->args.empty())
            return fail_sum("'" + detail::expr_text(e) + "' subtracts a loop variable");
          for (const Split &s : y->args) x->args.push_back(s);
          x->base = ana_.simplify(b->op == BinaryOp::Add ? x->base + y->base : x->base - y->base);
          return x;
        }
        case BinaryOp::Mul: {
          bool la = uses_loop(b->a), lb = uses_loop(b->b);
          if (la && lb) return fail_sum("'" + detail::expr_text(e) + "' multiplies two loop variables");
          const Expr &f = la ? b->b : b->a;
          auto k = ir::as_const_int(ana_.simplify(f));
          if (!k) return fail_sum("'" + detail::expr_text(e) + "' scales a loop by a non-constant");
          if (*k <= 0) return fail_sum("'" + detail::expr_text(e) + "' scales a loop by " + std::to_string(*k));
          auto x = to_sum(la ? b->a : b->b);
          if (!x) return std::nullopt;
          for (Split &s : x->args) s.scale *= *k;
          x->base = ana_.simplify(x->base * f);
          return x;
        }
        case BinaryOp::FloorDiv:
        case BinaryOp::FloorMod:
        case BinaryOp::Div:
        case BinaryOp::Mod: {
          bool trunc = b->op == BinaryOp::Div || b->op == BinaryOp::Mod;
          auto k = ir::as_const_int(ana_.simplify(b->b));
          if (!k || *k <= 0 || uses_loop(b->b))
            return fail_sum("'" + detail::expr_text(e) + "' divides by a non-constant or non-positive value");
          if (trunc && ana_.const_bound(b->a).min < 0)
            return fail_sum("'" + detail::expr_text(e) + "' divides a possibly negative value");
          auto x = to_sum(b->a);
          if (!x) return std::nullopt;
          bool div = b->op == BinaryOp::FloorDiv || b->op == BinaryOp::Div;
          return div ? divide(*x, *k, e) : modulo(*x, *k, e);
        }
        default: break;
      }
    }
    return fail_sum("'" + detail::expr_text(e) + "' is not an affine function of the loops");
  }

  // Fuses the splits of `s` (its base is ignored) into one split whose scale
  // is the smallest scale of `s`.
  std::optional<Split> fuse(const Sum &s) {
    if (s.args.empty()) return fail_split("no loop to fuse");
    if (s.args.size() == 1) return s.args[0];
    std::vector<Split> args = s.args;
    std::stable_sort(args.begin(), args.end(), [](const Split &a, const Split &b) { return a.scale < b.scale; });
    int64_t expected = args[0].scale;
    Expr total = ir::make_int(args[0].extent.dtype(), 1);
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].scale != expected)
        return fail_split("'" + text(s) + "' is not a fusion of loops: a part has scale " +
                          std::to_string(args[i].scale) + " where " + std::to_string(expected) + " was expected");
      total = ana_.simplify(total * args[i].extent);
      if (i + 1 == args.size()) break;
      auto ext = ir::as_const_int(args[i].extent);
      if (!ext) return fail_split("'" + text(s) + "' fuses a loop of symbolic extent as an inner part");
      expected *= *ext;
    }
    // A contiguous run of digits of one mark is one split of it.
    bool contiguous = true;
    for (size_t i = 0; i + 1 < args.size() && contiguous; ++i) {
      auto ext = ir::as_const_int(args[i].extent);
      contiguous = args[i + 1].mark == args[0].mark && ext && args[i + 1].lower == args[i].lower * *ext;
    }
    if (contiguous) return Split{args[0].mark, args[0].lower, total, args[0].scale};
    // A new fused mark (or an identical earlier one).
    std::vector<Split> source(args.rbegin(), args.rend());
    for (Split &p : source) p.scale /= args[0].scale;
    for (size_t m = loops_.size(); m < marks_.size(); ++m)
      if (same_source(marks_[m].fused, source)) return Split{static_cast<int>(m), 1, marks_[m].extent, args[0].scale};
    Mark mark;
    mark.fused = source;
    mark.extent = total;
    mark.creator = who_;
    marks_.push_back(mark);
    return Split{static_cast<int>(marks_.size() - 1), 1, total, args[0].scale};
  }

  std::optional<Sum> divide(const Sum &s, int64_t c, const Expr &e) {
    Sum out{{}, ir::make_int(e.dtype(), 0)};
    auto kb = ir::as_const_int(s.base);
    if (!kb || *kb % c != 0)
      return fail_sum("'" + detail::expr_text(e) + "' divides a sum with offset '" + detail::expr_text(s.base) +
                      "' that is not a multiple of " + std::to_string(c));
    out.base = ir::make_int(e.dtype(), *kb / c);
    if (s.args.empty()) return out;
    auto sp = fuse(s);
    if (!sp) return std::nullopt;
    if (sp->scale % c == 0) {
      sp->scale /= c;
      out.args.push_back(*sp);
      return out;
    }
    if (c % sp->scale != 0)
      return fail_sum("'" + detail::expr_text(e) + "' divides a part of scale " + std::to_string(sp->scale) + " by " +
                      std::to_string(c));
    int64_t d = c / sp->scale;
    Expr ext = sp->extent;
    if (!divisible(ext, d)) {
      if (level_ != IterMapLevel::NoCheck) return fail_mismatch(*sp, d);
      ext = ana_.simplify(ext + ir::make_int(ext.dtype(), d - 1));
    }
    out.args.push_back(Split{sp->mark, sp->lower * d, ana_.simplify(ir::floordiv(ext, ir::make_int(ext.dtype(), d))), 1});
    return out;
  }

  std::optional<Sum> modulo(const Sum &s, int64_t c, const Expr &e) {
    Sum out{{}, ir::make_int(e.dtype(), 0)};
    auto kb = ir::as_const_int(s.base);
    if (!kb || *kb % c != 0)
      return fail_sum("'" + detail::expr_text(e) + "' takes the remainder of a sum with offset '" +
                      detail::expr_text(s.base) + "' that is not a multiple of " + std::to_string(c));
    if (s.args.empty()) return out;
    auto sp = fuse(s);
    if (!sp) return std::nullopt;
    if (sp->scale % c == 0) return out;
    if (c % sp->scale != 0)
      return fail_sum("'" + detail::expr_text(e) + "' takes a part of scale " + std::to_string(sp->scale) +
                      " modulo " + std::to_string(c));
    int64_t d = c / sp->scale;
    if (ana_.can_prove(sp->extent <= ir::make_int(sp->extent.dtype(), d))) {
      out.args.push_back(*sp);  // the whole split is below the modulus
      return out;
    }
    if (!divisible(sp->extent, d) && level_ != IterMapLevel::NoCheck) return fail_mismatch(*sp, d);
    out.args.push_back(Split{sp->mark, sp->lower, ir::make_int(sp->extent.dtype(), d), sp->scale});
    return out;
  }

  // Step 3: every mark reachable from the bindings is covered without overlap
  // (and exactly, for Bijective).
  bool check_coverage(const std::vector<Sum> &sums, const std::vector<std::string> &names) {
    struct Use {
      int64_t lower;
      Expr extent;
      std::string who;
    };
    std::vector<std::vector<Use>> uses(marks_.size());
    std::vector<bool> reached(marks_.size(), false);
    std::vector<int> work;
    for (size_t b = 0; b < sums.size(); ++b)
      for (const Split &s : sums[b].args) {
        uses[s.mark].push_back({s.lower, s.extent, names[b]});
        if (!reached[s.mark]) work.push_back(s.mark);
        reached[s.mark] = true;
      }
    while (!work.empty()) {
      int m = work.back();
      work.pop_back();
      for (const Split &s : marks_[m].fused) {
        uses[s.mark].push_back({s.lower, s.extent, marks_[m].creator});
        if (!reached[s.mark]) work.push_back(s.mark);
        reached[s.mark] = true;
      }
    }
    for (size_t m = 0; m < marks_.size(); ++m) {
      const Mark &mark = marks_[m];
      std::string what = mark.is_loop() ? "loop '" + mark.loop.name() + "'" : "fused mark '" + mark_text(mark) + "'";
      auto &u = uses[m];
      if (u.empty()) {
        if (level_ == IterMapLevel::Bijective && mark.is_loop() &&
            !ana_.can_prove_equal(mark.extent, ir::make_int(mark.extent.dtype(), 1)))
          return fail(what + " is not used by any binding");
        if (level_ == IterMapLevel::Bijective && mark.predicated)
          return fail("the predicate bounds " + what + ", which no binding uses whole");
        continue;
      }
      std::stable_sort(u.begin(), u.end(), [](const Use &a, const Use &b) { return a.lower < b.lower; });
      for (size_t i = 0; i + 1 < u.size(); ++i) {
        auto ext = ir::as_const_int(u[i].extent);
        if (!ext) return fail(what + " is used past a part of symbolic extent");
        if (u[i + 1].lower < u[i].lower * *ext) {
          if (u[i].who == u[i + 1].who) return fail("binding '" + u[i].who + "' uses " + what + " twice");
          return fail(what + " is used by both '" + u[i].who + "' and '" + u[i + 1].who + "'");
        }
        if (level_ == IterMapLevel::Bijective && u[i + 1].lower != u[i].lower * *ext)
          return fail(what + " is not fully used: no binding uses '" +
                      digit_text(mark, u[i].lower * *ext, u[i + 1].lower) + "'");
      }
      if (level_ != IterMapLevel::Bijective) continue;
      if (u.front().lower != 1)
        return fail(what + " is not fully used: no binding uses '" + digit_text(mark, 1, u.front().lower) + "'");
      Expr covered = ana_.simplify(ir::make_int(mark.extent.dtype(), u.back().lower) * u.back().extent);
      if (!ana_.can_prove_equal(covered, mark.extent))
        return fail(what + " is not fully used: no binding uses '" + digit_text(mark, covered, Expr()) + "'");
    }
    return true;
  }

  IterSum publish(const Sum &s) {
    IterSum out;
    std::vector<Split> args = s.args;
    std::stable_sort(args.begin(), args.end(), [](const Split &a, const Split &b) { return a.scale > b.scale; });
    for (const Split &p : args) out.args.push_back(publish(p));
    out.base = s.base;
    return out;
  }

  const std::vector<Mark> &marks() const { return marks_; }

 private:
  using DataType = ir::DataType;

  bool fail(const std::string &msg) {
    if (why_.empty()) why_ = msg;
    return false;
  }
  std::optional<Sum> fail_sum(const std::string &msg) {
    fail(who_ == "predicate" ? "predicate: " + msg : "binding '" + who_ + "' is not affine: " + msg);
    return std::nullopt;
  }
  std::optional<Split> fail_split(const std::string &msg) {
    fail(who_ == "predicate" ? "predicate: " + msg : "binding '" + who_ + "' is not affine: " + msg);
    return std::nullopt;
  }

  static void flatten_and(const Expr &e, std::vector<Expr> &out) {
    if (const auto *b = e.as<ir::Binary>(); b && b->op == BinaryOp::And) {
      flatten_and(b->a, out);
      flatten_and(b->b, out);
      return;
    }
    out.push_back(e);
  }

  int loop_mark(const ir::VarNode *v) const {
    for (size_t i = 0; i < loops_.size(); ++i)
      if (loops_[i].first.get() == v) return static_cast<int>(i);
    return -1;
  }
  bool uses_loop(const Expr &e) const {
    return detail::uses_var(e, [this](const ir::VarNode *v) { return loop_mark(v) >= 0; });
  }
  bool divisible(const Expr &ext, int64_t d) {
    return ana_.can_prove(ir::eq(ir::floormod(ext, ir::make_int(ext.dtype(), d)), ir::make_int(ext.dtype(), 0)));
  }
  std::optional<Sum> fail_mismatch(const Split &sp, int64_t d) {
    fail(mismatch(sp, d) + (who_ == "predicate" ? " (in the predicate)" : " (binding '" + who_ + "')"));
    return std::nullopt;
  }
  std::string mismatch(const Split &sp, int64_t d) {
    const Mark &m = marks_[sp.mark];
    std::string what = m.is_loop() ? "loop '" + m.loop.name() + "'" : "fused mark";
    if (sp.lower != 1 || !ana_.can_prove_equal(sp.extent, m.extent)) what = "split of " + what;
    return "extent mismatch: " + what + " extent " + detail::expr_text(sp.extent) + " is not divisible by " +
           std::to_string(d);
  }
  bool same_source(const std::vector<Split> &a, const std::vector<Split> &b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].mark != b[i].mark || a[i].lower != b[i].lower || a[i].scale != b[i].scale ||
          !ana_.can_prove_equal(a[i].extent, b[i].extent))
        return false;
    return true;
  }
  std::string text(const Sum &s) {
    std::string out;
    for (const Split &p : s.args) {
      if (!out.empty()) out += " + ";
      out += detail::expr_text(split_expr(p));
    }
    return out;
  }
  std::string mark_text(const Mark &m) {
    if (m.is_loop()) return m.loop.name();
    Sum s{m.fused, Expr()};
    return text(s);
  }
  Expr split_expr(const Split &p) { return to_expr(publish(p)); }

  // "i // lower % (upper / lower)" (no modulo when upper is undefined).
  std::string digit_text(const Mark &m, const Expr &lower, const Expr &upper) {
    Expr e = m.is_loop() ? Expr(m.loop) : to_expr(publish_mark_expr(m));
    DataType t = e.dtype();
    if (!ir::is_const_int(lower, 1)) e = ir::Binary::make(BinaryOp::FloorDiv, e, ir::cast(t, lower));
    if (upper.defined())
      e = ir::Binary::make(BinaryOp::FloorMod, e, ana_.simplify(ir::floordiv(ir::cast(t, upper), ir::cast(t, lower))));
    return detail::expr_text(e);
  }
  std::string digit_text(const Mark &m, int64_t lower, int64_t upper) {
    DataType t = m.extent.dtype();
    return digit_text(m, ir::make_int(t, lower), ir::make_int(t, upper));
  }
  IterSum publish_mark_expr(const Mark &m) {
    IterSum s;
    for (const Split &p : m.fused) s.args.push_back(publish(p));
    s.base = ir::make_int(m.extent.dtype(), 0);
    return s;
  }

  IterSplit publish(const Split &p) {
    DataType t = p.extent.dtype();
    return IterSplit{publish_mark(p.mark), ir::make_int(t, p.lower), p.extent, ir::make_int(t, p.scale)};
  }
  std::shared_ptr<const IterMark> publish_mark(int m) {
    if (published_.size() < marks_.size()) published_.resize(marks_.size());
    if (published_[m]) return published_[m];
    auto mark = std::make_shared<IterMark>();
    mark->loop = marks_[m].loop;
    mark->extent = marks_[m].extent;
    if (!mark->loop.defined()) {
      for (const Split &p : marks_[m].fused) mark->fused.args.push_back(publish(p));
      mark->fused.base = ir::make_int(marks_[m].extent.dtype(), 0);
    }
    published_[m] = mark;
    return mark;
  }

  const std::vector<std::pair<ir::Var, ir::Range>> &loops_;
  IterMapLevel level_;
  Analyzer ana_;
  std::vector<Mark> marks_;
  std::vector<std::shared_ptr<const IterMark>> published_;
};

}  // namespace

IterMapResult detect_iter_map(const std::vector<Expr> &bindings,
                              const std::vector<std::pair<ir::Var, ir::Range>> &loops, const Expr &predicate,
                              IterMapLevel level, const Analyzer &analyzer,
                              const std::vector<std::string> &binding_names) {
  IterMapResult result;
  Detector det(loops, level, analyzer);
  std::vector<std::string> names;
  for (size_t i = 0; i < bindings.size(); ++i)
    names.push_back(i < binding_names.size() ? binding_names[i] : "#" + std::to_string(i));
  if (!det.check_loops() || !det.apply_predicate(predicate)) {
    result.why_not = det.why_;
    return result;
  }
  std::vector<Sum> sums;
  Analyzer scoped = analyzer;
  for (const auto &[v, r] : loops) scoped.bind(v, r);
  for (size_t i = 0; i < bindings.size(); ++i) {
    det.who_ = names[i];
    auto s = det.to_sum(scoped.simplify(bindings[i]));
    // Checked levels need each binding to be one digit (of a fused mark).
    if (s && level != IterMapLevel::NoCheck && s->args.size() > 1) {
      auto fused = det.fuse(*s);
      if (fused) s->args = {*fused};
      else s.reset();
    }
    if (s && level != IterMapLevel::NoCheck && s->args.size() == 1 && s->args[0].scale != 1) {
      result.why_not = "binding '" + names[i] + "' is not affine: its values are not contiguous (the loops are scaled by " +
                       std::to_string(s->args[0].scale) + ")";
      return result;
    }
    if (!s) {
      result.why_not = det.why_;
      return result;
    }
    sums.push_back(*s);
  }
  if (level != IterMapLevel::NoCheck && !det.check_coverage(sums, names)) {
    result.why_not = det.why_;
    return result;
  }
  for (const Sum &s : sums) result.indices.push_back(det.publish(s));
  return result;
}

bool is_affine_binding(const std::vector<Expr> &bindings, const std::vector<std::pair<ir::Var, ir::Range>> &loops,
                       const Expr &predicate, const Analyzer &analyzer, std::string *why_not) {
  IterMapResult r = detect_iter_map(bindings, loops, predicate, IterMapLevel::Surjective, analyzer);
  if (why_not) *why_not = r.why_not;
  return r.ok();
}

std::vector<Expr> inverse_iter_map(const IterMapResult &result,
                                   const std::vector<std::pair<ir::Var, ir::Range>> &loops,
                                   const std::vector<ir::Var> &outputs, std::string *why_not) {
  auto fail = [&](const std::string &why) {
    if (why_not) *why_not = why;
    return std::vector<Expr>{};
  };
  if (!result.ok()) return fail(result.why_not);
  if (result.indices.size() != outputs.size())
    return fail(std::to_string(outputs.size()) + " outputs for " + std::to_string(result.indices.size()) +
                " bindings");
  // A mark's value is the sum of its digits, each (digit value) * lower
  // factor; a fused mark's digits are those of its parts, resolved once all
  // the splits of the mark (counted first) have given their digit.
  std::unordered_map<const IterMark *, int> uses;
  std::unordered_map<const IterMark *, std::vector<Expr>> parts;
  std::function<void(const IterMark *)> count = [&](const IterMark *m) {
    if (uses[m]++ > 0 || m->is_loop()) return;
    for (const IterSplit &s : m->fused.args) count(s.source.get());
  };
  for (const IterSum &sum : result.indices) {
    if (sum.args.size() != 1) return fail("binding '" + to_string(sum) + "' is not one digit");
    count(sum.args[0].source.get());
  }
  std::unordered_map<const ir::VarNode *, Expr> value;
  std::function<void(const IterSplit &, const Expr &)> give = [&](const IterSplit &s, const Expr &digit) {
    const IterMark *m = s.source.get();
    parts[m].push_back(ir::is_const_int(s.lower_factor, 1) ? digit : digit * s.lower_factor);
    if (static_cast<int>(parts[m].size()) < uses[m]) return;
    Expr v = parts[m][0];
    for (size_t i = 1; i < parts[m].size(); ++i) v = v + parts[m][i];
    if (m->is_loop()) {
      value[m->loop.get()] = v;
      return;
    }
    for (const IterSplit &a : m->fused.args) {
      Expr d = ir::is_const_int(a.scale, 1) ? v : ir::floordiv(v, a.scale);
      give(a, ir::floormod(d, a.extent));
    }
  };
  Analyzer ana;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const IterSum &sum = result.indices[j];
    Expr base = sum.base.defined() ? sum.base : ir::make_int(outputs[j].dtype(), 0);
    ana.bind(outputs[j], ir::Range{base, sum.args[0].extent});
    give(sum.args[0], ir::is_const_int(base, 0) ? Expr(outputs[j]) : outputs[j] - base);
  }
  std::vector<Expr> out;
  for (const auto &[v, r] : loops) {
    auto it = value.find(v.get());
    if (it != value.end()) {
      out.push_back(ana.simplify(it->second));
      continue;
    }
    // A loop of one iteration is no digit of any binding: it is its start.
    if (!ana.can_prove_equal(r.extent, ir::make_int(r.extent.dtype(), 1)))
      return fail("loop '" + v.name() + "' is not used entirely by the bindings");
    out.push_back(r.min.defined() ? r.min : ir::make_int(v.dtype(), 0));
  }
  return out;
}

Expr to_expr(const IterMark &mark) { return mark.is_loop() ? Expr(mark.loop) : to_expr(mark.fused); }

namespace {
// Binds every loop of the tree under `mark` to [0, extent).
void bind_loops(const IterMark &mark, Analyzer &ana) {
  if (mark.is_loop()) {
    ana.bind(mark.loop, ir::Range::from_extent(mark.extent));
    return;
  }
  for (const IterSplit &s : mark.fused.args) bind_loops(*s.source, ana);
}
}  // namespace

Expr to_expr(const IterSplit &split) {
  Analyzer ana;
  bind_loops(*split.source, ana);
  Expr e = to_expr(*split.source);
  if (!ir::is_const_int(split.lower_factor, 1)) e = ir::floordiv(e, split.lower_factor);
  // The top digit of a mark needs no modulo.
  if (!ana.can_prove_equal(split.lower_factor * split.extent, split.source->extent))
    e = ir::floormod(e, split.extent);
  if (!ir::is_const_int(split.scale, 1)) e = e * split.scale;
  return ana.simplify(e);
}

Expr to_expr(const IterSum &sum) {
  Expr e = sum.base;
  for (const IterSplit &s : sum.args) e = e.defined() ? e + to_expr(s) : to_expr(s);
  if (!e.defined()) return ir::i32(0);
  return simplify(e);
}

std::string to_string(const IterSum &sum) {
  std::ostringstream os;
  for (size_t i = 0; i < sum.args.size(); ++i) {
    const IterSplit &s = sum.args[i];
    if (i) os << " + ";
    os << "split(" << (s.source->is_loop() ? s.source->loop.name() : "(" + to_string(s.source->fused) + ")")
       << ", lower=" << detail::expr_text(s.lower_factor) << ", extent=" << detail::expr_text(s.extent)
       << ", scale=" << detail::expr_text(s.scale) << ")";
  }
  if (sum.base.defined() && !ir::is_const_int(sum.base, 0)) os << (sum.args.empty() ? "" : " + ") << detail::expr_text(sum.base);
  if (sum.args.empty() && (!sum.base.defined() || ir::is_const_int(sum.base, 0))) os << "0";
  return os.str();
}

}  // namespace tessera::arith
