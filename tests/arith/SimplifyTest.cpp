// Tests for arith::Analyzer: golden simplifications, bounds, proofs, and a
// randomized soundness check against a direct evaluator.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <unordered_map>

#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Op.h"
#include "tessera/script/Printer.h"

namespace tessera::arith {
namespace {

using ir::Expr;
using ir::Var;

std::string str(const Expr &e) { return script::print(e); }

class SimplifyTest : public ::testing::Test {
 protected:
  Var i{"i"}, j{"j"}, k{"k"}, x{"x"}, y{"y"}, n{"n"};
  Analyzer ana;
};

TEST_F(SimplifyTest, ConstantFolding) {
  EXPECT_EQ(str(simplify(ir::i32(3) * 4 + 5)), "17");
  EXPECT_EQ(str(simplify(ir::floordiv(ir::i32(-7), ir::i32(2)))), "-4");
  EXPECT_EQ(str(simplify(ir::floormod(ir::i32(-7), ir::i32(2)))), "1");
  EXPECT_EQ(str(simplify(ir::truncdiv(ir::i32(-7), ir::i32(2)))), "-3");
  EXPECT_EQ(str(simplify(ir::truncmod(ir::i32(-7), ir::i32(2)))), "-1");
  EXPECT_EQ(str(simplify(ir::min(ir::i32(3), ir::i32(-2)))), "-2");
  EXPECT_EQ(str(simplify(ir::i32(3) < 4)), "True");
  // int8 wraps: 100 + 100 == -56.
  Expr a = ir::make_int(ir::DataType::int_(8), 100);
  EXPECT_EQ(ir::as_const_int(simplify(a + a)).value(), -56);
  // Division by zero is left alone.
  EXPECT_FALSE(simplify(ir::floordiv(ir::i32(1), ir::i32(0))).is<ir::IntImm>());
  EXPECT_EQ(str(simplify(ir::cast(ir::DataType::int64(), Expr(x)) * 0 + ir::make_int(ir::DataType::int64(), 7))),
            "T.int64(7)");
}

TEST_F(SimplifyTest, CanonicalSums) {
  EXPECT_EQ(str(simplify(j + i * 16)), "i * 16 + j");
  EXPECT_EQ(str(simplify((x + 3) - (x + 1))), "2");
  EXPECT_EQ(str(simplify(x * 2 + y - x * 2)), "y");
  EXPECT_EQ(str(simplify((i * 4 + j) * 8 + k)), "i * 32 + j * 8 + k");
  EXPECT_EQ(str(simplify(x - y * 3 + 5)), "x - y * 3 + 5");
  EXPECT_EQ(str(simplify(ir::i32(0) - x)), "-x");
  EXPECT_EQ(str(simplify(ir::i32(4) - x * 2)), "4 - x * 2");
  EXPECT_EQ(str(simplify(ir::floordiv(x, ir::i32(4)) * 4 + ir::floormod(x, ir::i32(4)))), "x");
}

TEST_F(SimplifyTest, DivModWithBounds) {
  ana.bind(i, 0, 3);
  ana.bind(j, ir::Range::from_extent(ir::i32(32)));
  ana.bind(k, 0, 3);
  EXPECT_EQ(str(ana.simplify(ir::floordiv(i * 32 + j, ir::i32(32)))), "i");
  EXPECT_EQ(str(ana.simplify(ir::floormod(i * 32 + j, ir::i32(32)))), "j");
  EXPECT_EQ(str(ana.simplify(ir::floordiv(i * 64 + j * 4 + k, ir::i32(4)))), "i * 16 + j");
  EXPECT_EQ(str(ana.simplify(ir::floormod(i * 64 + j * 4 + k, ir::i32(4)))), "k");
  EXPECT_EQ(str(ana.simplify(ir::floordiv(j, ir::i32(32)))), "0");
  // A small part below the gcd of the rest drops out.
  EXPECT_EQ(str(ana.simplify(ir::floordiv(j * 4 + k, ir::i32(16)))), "j // 4");
  EXPECT_EQ(str(ana.simplify(ir::floormod(j * 4 + k, ir::i32(16)))), "j % 4 * 4 + k");
  EXPECT_EQ(str(ana.simplify(ir::floormod(j, ir::i32(32)))), "j");
  // Truncating forms behave like floor ones on non-negative operands.
  EXPECT_EQ(str(ana.simplify(ir::truncdiv(i * 32 + j, ir::i32(32)))), "i");
  EXPECT_EQ(str(ana.simplify(ir::truncmod(i * 32 + j, ir::i32(32)))), "j");
}

TEST_F(SimplifyTest, DivModWithoutBounds) {
  EXPECT_EQ(str(simplify(ir::floordiv(x, ir::i32(1)))), "x");
  EXPECT_EQ(str(simplify(ir::floormod(x, ir::i32(1)))), "0");
  EXPECT_EQ(str(simplify(ir::floordiv(ir::floordiv(x, ir::i32(4)), ir::i32(8)))), "x // 32");
  EXPECT_EQ(str(simplify(ir::floormod(ir::floormod(x, ir::i32(32)), ir::i32(8)))), "x % 8");
  EXPECT_EQ(str(simplify(ir::floormod(x * 8, ir::i32(4)))), "0");
  EXPECT_EQ(str(simplify(ir::floordiv(x * 8 + 16, ir::i32(4)))), "x * 2 + 4");
  EXPECT_EQ(str(simplify(ir::floordiv(x * 8 + 4, ir::i32(16)))), "x // 2");
  EXPECT_EQ(str(simplify(ir::floormod(x * 8 + 4, ir::i32(16)))), "x % 2 * 8 + 4");
  // Digits of a mixed-radix number merge back: the inverse of a fuse.
  auto c = [](int64_t v) { return ir::i32(v); };
  EXPECT_EQ(str(simplify(ir::floordiv(x, c(80)) * 80 + ir::floormod(ir::floordiv(x, c(10)), c(8)) * 10 +
                         ir::floormod(x, c(10)))),
            "x");
  EXPECT_EQ(str(simplify(ir::floormod(ir::floordiv(x, c(4)), c(3)) * 8 + ir::floormod(x, c(4)) * 2)), "x % 12 * 2");
  for (int64_t v = -30; v <= 30; ++v) {  // floor semantics: negative x too
    Expr e = ir::floormod(ir::floordiv(x, c(4)), c(3)) * 8 + ir::floormod(x, c(4)) * 2;
    Analyzer at;
    at.bind(x, v, v);
    EXPECT_EQ(str(at.simplify(e)), str(at.simplify(simplify(e)))) << "x = " << v;
  }
  // Not digits of one number: kept.
  EXPECT_EQ(str(simplify(ir::floormod(ir::floordiv(x, c(4)), c(3)) * 5 + ir::floormod(x, c(4)))),
            "x // 4 % 3 * 5 + x % 4");
  // Truncating division of a possibly negative value is kept.
  EXPECT_EQ(str(simplify(ir::truncdiv(x * 4 + 1, ir::i32(4)))), "T.truncdiv(x * 4 + 1, 4)");
}

TEST_F(SimplifyTest, MinMax) {
  EXPECT_EQ(str(simplify(ir::min(x, x + 3))), "x");
  EXPECT_EQ(str(simplify(ir::max(x, x + 3))), "x + 3");
  EXPECT_EQ(str(simplify(ir::min(ir::min(x, ir::i32(8)), ir::i32(4)))), "T.min(x, 4)");
  EXPECT_EQ(str(simplify(ir::max(ir::i32(2), x))), "T.max(x, 2)");
  ana.bind(i, 0, 15);
  EXPECT_EQ(str(ana.simplify(ir::min(i, ir::i32(16)))), "i");
  EXPECT_EQ(str(ana.simplify(ir::max(i, ir::i32(0)))), "i");
}

TEST_F(SimplifyTest, Comparisons) {
  ana.bind(i, ir::Range::from_extent(ir::i32(128)));
  EXPECT_EQ(str(ana.simplify(i < 128)), "True");
  EXPECT_EQ(str(ana.simplify(i >= 128)), "False");
  EXPECT_EQ(str(simplify(x + 3 < y + 5)), "x < y + 2");
  EXPECT_EQ(str(simplify(x <= y)), "x < y + 1");
  EXPECT_EQ(str(simplify(x >= 1)), "x >= 1");
  EXPECT_EQ(str(simplify(ir::eq(x, x))), "True");
  EXPECT_EQ(str(simplify(ir::eq(x * 4, ir::i32(6)))), "False");
  EXPECT_EQ(str(simplify(x * 4 < 8)), "x < 2");
  EXPECT_EQ(str(simplify(!(x < y))), "y < x + 1");
  EXPECT_EQ(str(simplify((x < y) && (ir::i32(1) < 2))), "x < y");
  EXPECT_EQ(str(simplify((x < y) || (ir::i32(1) < 2))), "True");
}

TEST_F(SimplifyTest, SelectAndCast) {
  ana.bind(i, 0, 7);
  EXPECT_EQ(str(ana.simplify(ir::select(i < 8, x, y))), "x");
  EXPECT_EQ(str(simplify(ir::select(x < y, x + 1, 1 + x))), "x + 1");
  EXPECT_EQ(str(simplify(ir::Cast::make(ir::DataType::int64(), ir::i32(5)))), "T.int64(5)");
  // Floats are never rewritten.
  Var f("f", ir::DataType::float32());
  Expr fe = (f + 1.0) - 1.0;
  EXPECT_TRUE(simplify(fe).same_as(fe));
}

TEST_F(SimplifyTest, SymbolicExtents) {
  ana.bind(n, 1, 1024);
  ana.bind(i, ir::Range::from_extent(n));
  EXPECT_TRUE(ana.can_prove(i < n));
  EXPECT_TRUE(ana.can_prove(i <= n - 1));
  EXPECT_FALSE(ana.can_prove(i < n - 1));
  EXPECT_EQ(ana.const_bound(i).str(), "[0, 1023]");
  EXPECT_EQ(str(ana.simplify(ir::min(i, n - 1))), "i");
  Var k0("k0"), k1("k1");
  ana.bind(k1, ir::Range::from_extent(ir::i32(32)));
  EXPECT_EQ(str(ana.simplify(k0 * 32 + 32 - k0 * 32)), "32");
  // A quotient of a loop over a symbolic multiple (a batch fused with
  // constant tiles: f < n * 49) stays below the symbol; the rest does not.
  Var f("f");
  ana.bind(f, ir::Range::from_extent(n * 49));
  EXPECT_TRUE(ana.can_prove(ir::floordiv(f, ir::i32(49)) < n));
  EXPECT_TRUE(ana.can_prove(ir::floordiv(f, ir::i32(7)) < n * 7));
  EXPECT_FALSE(ana.can_prove(ir::floordiv(f, ir::i32(49)) < n - 1));
  EXPECT_FALSE(ana.can_prove(ir::floordiv(f, ir::i32(48)) < n));
  EXPECT_TRUE(ana.can_prove(ir::floordiv(f, ir::i32(49)) >= 0));
}

TEST_F(SimplifyTest, BoundsProofsAndScopes) {
  ana.bind(i, 0, 3);
  ana.bind(j, ir::Range::from_extent(ir::i32(32)));
  EXPECT_EQ(ana.const_bound(i * 32 + j).str(), "[0, 127]");
  EXPECT_EQ(ana.const_bound(i * 32 + j - i * 32).str(), "[0, 31]");
  EXPECT_TRUE(ana.can_prove(i * 32 + j < 128));
  EXPECT_FALSE(ana.can_prove(i * 32 + j < 127));
  EXPECT_TRUE(ana.can_prove_equal(ir::floordiv(i * 32 + j, ir::i32(32)) * 32 + ir::floormod(j, ir::i32(32)),
                                  i * 32 + j));
  {
    Analyzer::Scope scope(ana);
    ana.bind(k, 0, 3);
    ana.bind(i, 0, 0);
    EXPECT_EQ(ana.const_bound(k).str(), "[0, 3]");
    EXPECT_EQ(str(ana.simplify(i + k)), "k");
  }
  EXPECT_FALSE(ana.is_bound(k));
  EXPECT_EQ(ana.const_bound(i).str(), "[0, 3]");
  // bind_value substitutes.
  {
    Analyzer::Scope scope(ana);
    ana.bind_value(x, i * 2);
    EXPECT_EQ(str(ana.simplify(x + 1 - i)), "i + 1");
  }
  // assume: a predicate becomes a fact.
  Var i0("i0"), i1("i1");
  ana.bind(i0, 0, 6);
  ana.bind(i1, 0, 15);
  {
    Analyzer::Scope scope(ana);
    ana.assume(i0 * 16 + i1 < 100);
    EXPECT_TRUE(ana.can_prove(i0 * 16 + i1 < 101));
    EXPECT_TRUE(ana.can_prove(i0 * 16 + i1 <= 99));
    ana.assume(x < 10);
    EXPECT_EQ(ana.const_bound(x).max, 9);
  }
  EXPECT_FALSE(ana.can_prove(i0 * 16 + i1 < 100));
}

TEST_F(SimplifyTest, Int64Mix) {
  Var a("a", ir::DataType::int64());
  Analyzer an;
  an.bind(a, 0, 63);
  Expr e = ir::floordiv(a * 64 + ir::cast(ir::DataType::int64(), Expr(i)), ir::make_int(ir::DataType::int64(), 64));
  an.bind(i, 0, 63);
  EXPECT_EQ(str(an.simplify(e)), "a");
  EXPECT_EQ(an.simplify(e).dtype(), ir::DataType::int64());
}

//===----------------------------------------------------------------------===//
// Randomized soundness: random integer expressions over bounded variables are
// evaluated before and after simplification at every point of the domain.
//===----------------------------------------------------------------------===//

using Env = std::unordered_map<const ir::VarNode *, int64_t>;

// Evaluates int32 expressions exactly (in int64); nullopt when undefined
// (division by zero) or outside int32 (the simplifier assumes no overflow).
std::optional<int64_t> eval(const Expr &e, const Env &env) {
  if (const auto *imm = e.as<ir::IntImm>()) return imm->value;
  if (const auto *v = e.as<ir::VarNode>()) return env.at(v);
  if (const auto *u = e.as<ir::Unary>()) {
    auto a = eval(u->a, env);
    if (!a) return a;
    if (u->op == ir::UnaryOp::Not) return *a == 0;
    if (u->op == ir::UnaryOp::Neg) return -*a;
    return ~*a;
  }
  if (const auto *s = e.as<ir::Select>()) {
    auto c = eval(s->cond, env), t = eval(s->true_value, env), f = eval(s->false_value, env);
    if (!c || !t || !f) return std::nullopt;
    return *c ? t : f;
  }
  const auto *b = e.as<ir::Binary>();
  if (!b) return std::nullopt;
  auto x = eval(b->a, env), y = eval(b->b, env);
  if (!x || !y) return std::nullopt;
  int64_t p = *x, q = *y, r = 0;
  auto fdiv = [](int64_t a, int64_t c) { int64_t d = a / c; return (a % c != 0 && ((a < 0) != (c < 0))) ? d - 1 : d; };
  switch (b->op) {
    case ir::BinaryOp::Add: r = p + q; break;
    case ir::BinaryOp::Sub: r = p - q; break;
    case ir::BinaryOp::Mul: r = p * q; break;
    case ir::BinaryOp::Div: if (!q) return std::nullopt; r = p / q; break;
    case ir::BinaryOp::Mod: if (!q) return std::nullopt; r = p % q; break;
    case ir::BinaryOp::FloorDiv: if (!q) return std::nullopt; r = fdiv(p, q); break;
    case ir::BinaryOp::FloorMod: if (!q) return std::nullopt; r = p - fdiv(p, q) * q; break;
    case ir::BinaryOp::Min: r = std::min(p, q); break;
    case ir::BinaryOp::Max: r = std::max(p, q); break;
    case ir::BinaryOp::EQ: r = p == q; break;
    case ir::BinaryOp::NE: r = p != q; break;
    case ir::BinaryOp::LT: r = p < q; break;
    case ir::BinaryOp::LE: r = p <= q; break;
    case ir::BinaryOp::GT: r = p > q; break;
    case ir::BinaryOp::GE: r = p >= q; break;
    case ir::BinaryOp::And: r = p && q; break;
    case ir::BinaryOp::Or: r = p || q; break;
    default: return std::nullopt;
  }
  if (b->dtype.is_int() && (r < INT32_MIN || r > INT32_MAX)) return std::nullopt;
  return r;
}

class RandomExpr {
 public:
  RandomExpr(uint32_t seed, std::vector<Var> vars) : rng_(seed), vars_(std::move(vars)) {}

  Expr integer(int depth) {
    if (depth == 0 || pick(4) == 0) {
      if (pick(3) == 0) return ir::i32(static_cast<int>(pick(13)) - 4);
      return vars_[pick(vars_.size())];
    }
    Expr a = integer(depth - 1);
    switch (pick(12)) {
      case 0: case 1: return a + integer(depth - 1);
      case 2: return a - integer(depth - 1);
      case 3: return a * ir::i32(static_cast<int>(pick(9)) - 2);
      case 4: return ir::floordiv(a, divisor());
      case 5: return ir::floormod(a, divisor());
      case 6: return ir::truncdiv(a, divisor());
      case 7: return ir::truncmod(a, divisor());
      case 8: return ir::min(a, integer(depth - 1));
      case 9: return ir::max(a, integer(depth - 1));
      case 10: return ir::select(boolean(depth - 1), a, integer(depth - 1));
      default: return a * integer(0);
    }
  }

  Expr boolean(int depth) {
    Expr a = integer(depth), b = integer(depth);
    switch (pick(7)) {
      case 0: return a < b;
      case 1: return a <= b;
      case 2: return a > b;
      case 3: return a >= b;
      case 4: return ir::eq(a, b);
      case 5: return ir::ne(a, b);
      default: return (a < b) && !(ir::eq(b, integer(0)));
    }
  }

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  Expr divisor() {
    static const int kDivs[] = {1, 2, 3, 4, 8, 16, -2};
    return ir::i32(kDivs[pick(7)]);
  }
  std::mt19937 rng_;
  std::vector<Var> vars_;
};

TEST(SimplifySoundness, RandomExpressions) {
  Var a("a"), b("b"), c("c");
  std::vector<Var> vars{a, b, c};
  struct Dom { int64_t lo, hi; };
  const Dom doms[][3] = {{{0, 7}, {0, 3}, {-3, 3}}, {{0, 15}, {1, 4}, {0, 0}}, {{-5, 5}, {0, 31}, {2, 9}}};
  int checked = 0;
  for (uint32_t seed = 0; seed < 1500; ++seed) {
    const Dom *dom = doms[seed % 3];
    Analyzer ana;
    for (int v = 0; v < 3; ++v) ana.bind(vars[v], dom[v].lo, dom[v].hi);
    RandomExpr gen(seed, vars);
    Expr e = seed % 4 == 3 ? gen.boolean(3) : gen.integer(4);
    Expr s = ana.simplify(e);
    ASSERT_EQ(s.dtype(), e.dtype()) << str(e);
    for (int64_t va = dom[0].lo; va <= dom[0].hi; ++va)
      for (int64_t vb = dom[1].lo; vb <= dom[1].hi; ++vb)
        for (int64_t vc = dom[2].lo; vc <= dom[2].hi; ++vc) {
          Env env{{a.get(), va}, {b.get(), vb}, {c.get(), vc}};
          auto before = eval(e, env);
          if (!before) continue;  // undefined input: nothing to compare
          auto after = eval(s, env);
          ASSERT_TRUE(after.has_value()) << "seed " << seed << ": " << str(e) << "  ->  " << str(s);
          ASSERT_EQ(*before, *after) << "seed " << seed << " at a=" << va << " b=" << vb << " c=" << vc
                                     << ": " << str(e) << "  ->  " << str(s);
          ++checked;
        }
    // Bounds must contain every value.
    IntBound bound = ana.const_bound(e);
    for (int64_t va = dom[0].lo; va <= dom[0].hi; ++va)
      for (int64_t vb = dom[1].lo; vb <= dom[1].hi; ++vb) {
        Env env{{a.get(), va}, {b.get(), vb}, {c.get(), dom[2].lo}};
        if (auto v = eval(e, env)) {
          ASSERT_TRUE(bound.contains(*v)) << str(e) << " bound " << bound.str() << " value " << *v;
        }
      }
  }
  EXPECT_GT(checked, 10000);
}

}  // namespace
}  // namespace tessera::arith
