// Tests for arith::detect_iter_map / is_affine_binding / inverse_iter_map.
#include <gtest/gtest.h>

#include <set>

#include "tessera/arith/IterMap.h"
#include "tessera/ir/Op.h"
#include "tessera/script/Printer.h"

namespace tessera::arith {
namespace {

using ir::Expr;
using ir::Range;
using ir::Var;

using Loops = std::vector<std::pair<Var, Range>>;
Range ext(int64_t e) { return Range::from_extent(ir::i32(e)); }
Expr c(int64_t v) { return ir::i32(v); }

IterMapResult detect(const std::vector<Expr> &b, const Loops &loops, Expr pred = Expr(),
                     IterMapLevel level = IterMapLevel::Bijective, std::vector<std::string> names = {}) {
  Analyzer ana;
  return detect_iter_map(b, loops, pred, level, ana, names);
}

TEST(IterMapTest, SplitLoop) {
  Var i0("i0"), i1("i1");
  auto r = detect({i0 * 16 + i1}, {{i0, ext(8)}, {i1, ext(16)}});
  ASSERT_TRUE(r.ok()) << r.why_not;
  ASSERT_EQ(r.indices.size(), 1u);
  // One split of the fused mark (i0 * 16 + i1), extent 128.
  ASSERT_EQ(r.indices[0].args.size(), 1u);
  const IterSplit &s = r.indices[0].args[0];
  EXPECT_FALSE(s.source->is_loop());
  EXPECT_EQ(script::print(s.extent), "128");
  EXPECT_EQ(script::print(to_expr(r.indices[0])), "i0 * 16 + i1");
  EXPECT_EQ(to_string(r.indices[0]), "split((split(i0, lower=1, extent=8, scale=16) + split(i1, lower=1, extent=16, scale=1)), lower=1, extent=128, scale=1)");
}

TEST(IterMapTest, FusedLoop) {
  Var f("f");
  auto r = detect({ir::floordiv(f, c(80)), ir::floormod(f, c(80))}, {{f, ext(8000)}});
  ASSERT_TRUE(r.ok()) << r.why_not;
  EXPECT_EQ(to_string(r.indices[0]), "split(f, lower=80, extent=100, scale=1)");
  EXPECT_EQ(to_string(r.indices[1]), "split(f, lower=1, extent=80, scale=1)");
  EXPECT_EQ(script::print(to_expr(r.indices[0])), "f // 80");
  EXPECT_EQ(script::print(to_expr(r.indices[1])), "f % 80");
}

TEST(IterMapTest, NestedSplit) {
  Var i0("i0"), i1("i1"), i2("i2");
  auto r = detect({(i0 * 4 + i1) * 8 + i2}, {{i0, ext(2)}, {i1, ext(4)}, {i2, ext(8)}});
  ASSERT_TRUE(r.ok()) << r.why_not;
  EXPECT_EQ(script::print(to_expr(r.indices[0])), "i0 * 32 + i1 * 8 + i2");
}

TEST(IterMapTest, TilePattern) {
  // A 2-D tiling: i = io * 32 + ii, j = jo * 16 + ji, loops reordered io, jo, ii, ji.
  Var io("io"), jo("jo"), ii("ii"), ji("ji");
  auto r = detect({io * 32 + ii, jo * 16 + ji}, {{io, ext(4)}, {jo, ext(8)}, {ii, ext(32)}, {ji, ext(16)}}, Expr(),
                  IterMapLevel::Bijective, {"vi", "vj"});
  ASSERT_TRUE(r.ok()) << r.why_not;
  // Each binding is one fused mark over two loops: a tiling of (i, j).
  for (const IterSum &s : r.indices) {
    ASSERT_EQ(s.args.size(), 1u);
    ASSERT_EQ(s.args[0].source->fused.args.size(), 2u);
  }
}

TEST(IterMapTest, SplitOfFuse) {
  // f fuses (i, j) with j extent 16, then f is split by 4: vi = f // 16 = fo // 4.
  Var fo("fo"), fi("fi");
  auto r = detect({ir::floordiv(fo * 4 + fi, c(16)), ir::floormod(fo * 4 + fi, c(16))}, {{fo, ext(32)}, {fi, ext(4)}});
  ASSERT_TRUE(r.ok()) << r.why_not;
  EXPECT_EQ(script::print(to_expr(r.indices[0])), "fo // 4");
  EXPECT_EQ(script::print(to_expr(r.indices[1])), "fo % 4 * 4 + fi");
}

TEST(IterMapTest, FuseOfSplit) {
  // vi = f // 16 * 4 + g // 4 (vi's outer digits from f, inner from g), vj = f % 16, vk = g % 4.
  Var f("f"), g("g");
  auto r = detect({ir::floordiv(f, c(16)) * 4 + ir::floordiv(g, c(4)), ir::floormod(f, c(16)), ir::floormod(g, c(4))},
                  {{f, ext(64)}, {g, ext(16)}});
  ASSERT_TRUE(r.ok()) << r.why_not;
  // vi is one digit of a new mark fusing (f // 16, g // 4).
  ASSERT_EQ(r.indices[0].args.size(), 1u);
  EXPECT_EQ(r.indices[0].args[0].source->fused.args.size(), 2u);
  EXPECT_EQ(script::print(to_expr(r.indices[0])), "f // 16 * 4 + g // 4");
  // Splitting that fused value again reuses the same mark.
  Expr fused = ir::floordiv(f, c(16)) * 4 + ir::floordiv(g, c(4));
  auto r2 = detect({ir::floordiv(fused, c(2)), ir::floormod(fused, c(2)), ir::floormod(f, c(16)), ir::floormod(g, c(4))},
                   {{f, ext(64)}, {g, ext(16)}});
  ASSERT_TRUE(r2.ok()) << r2.why_not;
}

TEST(IterMapTest, NonDividingSplitWithPredicate) {
  Var i0("i0"), i1("i1");
  Expr fused = i0 * 16 + i1;
  auto r = detect({fused}, {{i0, ext(7)}, {i1, ext(16)}}, fused < 100);
  ASSERT_TRUE(r.ok()) << r.why_not;
  EXPECT_EQ(script::print(r.indices[0].args[0].extent), "100");
  // Without the predicate the binding still is a bijection onto [0, 112).
  auto r2 = detect({fused}, {{i0, ext(7)}, {i1, ext(16)}});
  ASSERT_TRUE(r2.ok()) << r2.why_not;
  EXPECT_EQ(script::print(r2.indices[0].args[0].extent), "112");
  // A fused loop with a predicate, split again.
  Var f("f");
  auto r3 = detect({ir::floordiv(f, c(10)), ir::floormod(f, c(10))}, {{f, ext(112)}}, f < 100);
  ASSERT_TRUE(r3.ok()) << r3.why_not;
  EXPECT_EQ(to_string(r3.indices[0]), "split(f, lower=10, extent=10, scale=1)");
}

TEST(IterMapTest, SymbolicExtent) {
  Var n("n"), i("i"), j("j");
  Analyzer ana;
  ana.bind(n, 1, 4096);
  auto r = detect_iter_map({i, j}, {{i, Range::from_extent(n)}, {j, ext(4)}}, Expr(), IterMapLevel::Bijective, ana);
  ASSERT_TRUE(r.ok()) << r.why_not;
  // An outer loop of symbolic extent fused with a constant inner one.
  auto r2 = detect_iter_map({i * 4 + j}, {{i, Range::from_extent(n)}, {j, ext(4)}}, Expr(), IterMapLevel::Bijective, ana);
  ASSERT_TRUE(r2.ok()) << r2.why_not;
  EXPECT_EQ(script::print(r2.indices[0].args[0].extent), "n * 4");
}

TEST(IterMapTest, SymbolicPredicateBound) {
  // A symbolic extent split by constants: the tiles past `m` are masked by
  // `fused < m` (a loop-free bound); the binding stays affine and bijective
  // (the mark keeps the loops' extent when m <= it cannot be proved).
  Var m("m"), i0("i0"), i1("i1"), i2("i2");
  Analyzer ana;
  ana.bind(m, 1, 1 << 20);
  Expr fused = i0 * 64 + i1 * 8 + i2;
  Loops loops{{i0, Range::from_extent(ir::floordiv(m + 63, c(64)))}, {i1, ext(8)}, {i2, ext(8)}};
  auto r = detect_iter_map({fused}, loops, fused < m, IterMapLevel::Bijective, ana);
  ASSERT_TRUE(r.ok()) << r.why_not;
  // A symbolic bound provably within the extent narrows it.
  Var n("n"), j0("j0"), j1("j1");
  Analyzer ana2;
  ana2.bind(n, 1, 64);
  auto r3 = detect_iter_map({j0 * 8 + j1}, {{j0, ext(8)}, {j1, ext(8)}}, j0 * 8 + j1 < n, IterMapLevel::Bijective,
                            ana2);
  ASSERT_TRUE(r3.ok()) << r3.why_not;
  EXPECT_EQ(script::print(r3.indices[0].args[0].extent), "n");
  // A bound that uses a loop is still refused.
  auto r2 = detect_iter_map({fused}, loops, fused < i1 + m, IterMapLevel::Bijective, ana);
  EXPECT_FALSE(r2.ok());
}

TEST(IterMapTest, Negatives) {
  Var i("i"), j("j"), k("k"), f("f");
  auto r = detect({i * 4 + ir::floordiv(i, c(2)), j}, {{i, ext(8)}, {j, ext(4)}}, Expr(), IterMapLevel::Bijective,
                  {"vi", "vj"});
  EXPECT_EQ(r.why_not, "binding 'vi' uses loop 'i' twice");
  r = detect({i * 9}, {{i, ext(8)}}, Expr(), IterMapLevel::Surjective, {"vi"});
  EXPECT_EQ(r.why_not, "binding 'vi' is not affine: its values are not contiguous (the loops are scaled by 9)");
  EXPECT_TRUE(detect({i * 9}, {{i, ext(8)}}, Expr(), IterMapLevel::NoCheck).ok());
  r = detect({i, i}, {{i, ext(8)}}, Expr(), IterMapLevel::Surjective, {"vi", "vj"});
  EXPECT_EQ(r.why_not, "loop 'i' is used by both 'vi' and 'vj'");
  r = detect({i, j}, {{i, ext(8)}, {j, ext(4)}, {k, ext(16)}}, Expr(), IterMapLevel::Bijective, {"vi", "vj"});
  EXPECT_EQ(r.why_not, "loop 'k' is not used by any binding");
  // Surjective allows an unused loop (a spatial block under a reduction loop).
  EXPECT_TRUE(detect({i, j}, {{i, ext(8)}, {j, ext(4)}, {k, ext(16)}}, Expr(), IterMapLevel::Surjective).ok());
  r = detect({ir::floordiv(f, c(16)), ir::floormod(f, c(16))}, {{f, ext(100)}}, Expr(), IterMapLevel::Bijective, {"vi", "vj"});
  EXPECT_EQ(r.why_not, "extent mismatch: loop 'f' extent 100 is not divisible by 16 (binding 'vi')");
  r = detect({ir::floordiv(i * 10 + j, c(16))}, {{i, ext(10)}, {j, ext(10)}}, Expr(), IterMapLevel::Bijective, {"vi"});
  EXPECT_EQ(r.why_not, "extent mismatch: fused mark extent 100 is not divisible by 16 (binding 'vi')");
  r = detect({i * j}, {{i, ext(8)}, {j, ext(4)}}, Expr(), IterMapLevel::Surjective, {"vi"});
  EXPECT_EQ(r.why_not, "binding 'vi' is not affine: 'i * j' multiplies two loop variables");
  r = detect({i * 3 + j}, {{i, ext(8)}, {j, ext(4)}}, Expr(), IterMapLevel::Surjective, {"vi"});
  EXPECT_EQ(r.why_not, "binding 'vi' is not affine: 'i * 3 + j' is not a fusion of loops: a part has scale 3 where 4 was expected");
  r = detect({ir::floordiv(i, c(2))}, {{i, ext(8)}}, Expr(), IterMapLevel::Bijective, {"vi"});
  EXPECT_EQ(r.why_not, "loop 'i' is not fully used: no binding uses 'i % 2'");
  r = detect({ir::floormod(i, c(2))}, {{i, ext(8)}}, Expr(), IterMapLevel::Bijective, {"vi"});
  EXPECT_EQ(r.why_not, "loop 'i' is not fully used: no binding uses 'i // 2'");
  EXPECT_TRUE(detect({ir::floordiv(i, c(2))}, {{i, ext(8)}}, Expr(), IterMapLevel::Surjective).ok());
  r = detect({i}, {{i, Range{c(1), c(8)}}});
  EXPECT_EQ(r.why_not, "loop 'i' does not start at 0 (it starts at 1)");
  std::string why;
  Analyzer ana;
  EXPECT_FALSE(is_affine_binding({i - j}, {{i, ext(8)}, {j, ext(4)}}, Expr(), ana, &why));
  EXPECT_EQ(why, "binding '#0' is not affine: 'i - j' subtracts a loop variable");
  EXPECT_TRUE(is_affine_binding({i * 4 + j, k}, {{i, ext(8)}, {j, ext(4)}, {k, ext(2)}}, Expr(), ana, &why));
}

TEST(IterMapTest, LoopFreeOffsetsAndExtentOne) {
  Var i("i"), u("u"), n("n");
  // A loop of extent 1 need not be used; loop-free symbols are offsets.
  auto r = detect({i + n * 4}, {{i, ext(4)}, {u, ext(1)}});
  ASSERT_TRUE(r.ok()) << r.why_not;
  EXPECT_EQ(script::print(r.indices[0].base), "n * 4");
}

// Every accepted Bijective map really is one: the loop nest's points map to
// distinct binding tuples, and to_expr gives the bindings' values.
TEST(IterMapTest, BruteForceBijective) {
  Var a("a"), b("b"), d("d");
  Loops loops{{a, ext(6)}, {b, ext(4)}, {d, ext(8)}};
  std::vector<std::vector<Expr>> cases = {
      {a * 4 + b, d},
      {ir::floordiv(b * 8 + d, c(16)), ir::floormod(b * 8 + d, c(16)), a},
      {(a * 4 + b) * 8 + d},
      {ir::floordiv(a * 32 + b * 8 + d, c(12)), ir::floormod(a * 32 + b * 8 + d, c(12))},
      {ir::floordiv(d, c(4)) * 4 + b, ir::floormod(d, c(4)), a},
  };
  for (const auto &bindings : cases) {
    auto r = detect(bindings, loops);
    ASSERT_TRUE(r.ok()) << r.why_not;
    std::set<std::vector<int64_t>> seen;
    for (int va = 0; va < 6; ++va)
      for (int vb = 0; vb < 4; ++vb)
        for (int vd = 0; vd < 8; ++vd) {
          Analyzer at;
          at.bind(a, va, va);
          at.bind(b, vb, vb);
          at.bind(d, vd, vd);
          std::vector<int64_t> tuple;
          for (size_t k = 0; k < bindings.size(); ++k) {
            int64_t v = ir::as_const_int(at.simplify(bindings[k])).value();
            ASSERT_EQ(v, ir::as_const_int(at.simplify(to_expr(r.indices[k]))).value());
            tuple.push_back(v);
          }
          seen.insert(tuple);
        }
    EXPECT_EQ(seen.size(), 6u * 4u * 8u);
  }
}

TEST(IterMapTest, InverseOfFusedGroups) {
  // The conv's (n, h, w) -> m and (r, s, c) -> k, with a batch of one.
  Var n("n"), h("h"), w("w"), r("r"), s("s"), k("k"), m("m"), q("q");
  Loops loops{{n, ext(1)}, {h, ext(3)}, {w, ext(4)}, {r, ext(3)}, {s, ext(2)}, {k, ext(5)}};
  auto res = detect({n * 12 + h * 4 + w, r * 10 + s * 5 + k}, loops);
  ASSERT_TRUE(res.ok()) << res.why_not;
  std::string why;
  std::vector<Expr> inv = inverse_iter_map(res, loops, {m, q}, &why);
  ASSERT_EQ(inv.size(), 6u) << why;
  std::vector<std::string> got;
  for (const Expr &e : inv) got.push_back(script::print(e));
  EXPECT_EQ(got, (std::vector<std::string>{"0", "m // 4", "m % 4", "q // 10", "q // 5 % 2", "q % 5"}));
  // A split loop comes back as the sum of its digits.
  Var f("f");
  Loops one{{f, ext(8000)}};
  auto split = detect({ir::floordiv(f, c(80)), ir::floormod(f, c(80))}, one);
  ASSERT_TRUE(split.ok()) << split.why_not;
  inv = inverse_iter_map(split, one, {m, q});
  ASSERT_EQ(inv.size(), 1u);
  EXPECT_EQ(script::print(inv[0]), "m * 80 + q");
  // Not bijective: no inverse, and why.
  IterMapResult bad;
  bad.why_not = "loop 'f' is not fully used";
  EXPECT_TRUE(inverse_iter_map(bad, one, {m}, &why).empty());
  EXPECT_EQ(why, "loop 'f' is not fully used");
}

// The inverse of every case of BruteForceBijective gives each point back.
TEST(IterMapTest, BruteForceInverse) {
  Var a("a"), b("b"), d("d");
  Loops loops{{a, ext(6)}, {b, ext(4)}, {d, ext(8)}};
  std::vector<std::vector<Expr>> cases = {
      {a * 4 + b, d},
      {ir::floordiv(b * 8 + d, c(16)), ir::floormod(b * 8 + d, c(16)), a},
      {(a * 4 + b) * 8 + d},
      {ir::floordiv(a * 32 + b * 8 + d, c(12)), ir::floormod(a * 32 + b * 8 + d, c(12))},
      {ir::floordiv(d, c(4)) * 4 + b, ir::floormod(d, c(4)), a},
      {d, a * 4 + b},
  };
  for (const auto &bindings : cases) {
    auto r = detect(bindings, loops);
    ASSERT_TRUE(r.ok()) << r.why_not;
    std::vector<Var> outs;
    for (size_t k = 0; k < bindings.size(); ++k) outs.emplace_back("u" + std::to_string(k));
    std::string why;
    std::vector<Expr> inv = inverse_iter_map(r, loops, outs, &why);
    ASSERT_EQ(inv.size(), 3u) << why;
    for (int va = 0; va < 6; ++va)
      for (int vb = 0; vb < 4; ++vb)
        for (int vd = 0; vd < 8; ++vd) {
          Analyzer at;
          at.bind(a, va, va);
          at.bind(b, vb, vb);
          at.bind(d, vd, vd);
          Analyzer back;
          for (size_t k = 0; k < bindings.size(); ++k) {
            int64_t v = ir::as_const_int(at.simplify(bindings[k])).value();
            back.bind(outs[k], v, v);
          }
          int64_t want[] = {va, vb, vd};
          for (int l = 0; l < 3; ++l)
            ASSERT_EQ(ir::as_const_int(back.simplify(inv[l])).value(), want[l])
                << script::print(inv[l]) << " at a=" << va << " b=" << vb << " d=" << vd;
        }
  }
}

}  // namespace
}  // namespace tessera::arith
