// Tests for arith::relax / relax_region / union_ranges.
#include <gtest/gtest.h>

#include <random>

#include "tessera/arith/IntSet.h"
#include "tessera/ir/Op.h"
#include "tessera/script/Printer.h"

namespace tessera::arith {
namespace {

using ir::Expr;
using ir::Range;
using ir::Var;

std::string str(const Range &r) { return "[" + script::print(r.min) + ", +" + script::print(r.extent) + ")"; }
Range ext(int64_t e) { return Range::from_extent(ir::i32(e)); }

TEST(IntSetTest, AffineWithSymbolicOffset) {
  Var k0("k0"), k1("k1");
  Analyzer ana;
  EXPECT_EQ(str(relax(k0 * 32 + k1, {{k1, ext(32)}}, ana)), "[k0 * 32, +32)");
  EXPECT_EQ(str(relax(k0 * 32 + k1, {{k0, ext(4)}, {k1, ext(32)}}, ana)), "[0, +128)");
  EXPECT_EQ(str(relax(k1 - k0 * 2, {{k1, ext(8)}}, ana)), "[k0 * -2, +8)");
  EXPECT_EQ(str(relax(ir::i32(63) - k1, {{k1, ext(64)}}, ana)), "[0, +64)");
  EXPECT_EQ(str(relax(k0, {{k1, ext(64)}}, ana)), "[k0, +1)");
}

TEST(IntSetTest, DivModMinMax) {
  Var i("i"), j("j"), n("n");
  Analyzer ana;
  EXPECT_EQ(str(relax(ir::floordiv(i, ir::i32(4)), {{i, ext(64)}}, ana)), "[0, +16)");
  EXPECT_EQ(str(relax(ir::floormod(i, ir::i32(4)), {{i, ext(64)}}, ana)), "[0, +4)");
  // The remainder stays within one block: exact.
  EXPECT_EQ(str(relax(ir::floormod(j * 16 + i, ir::i32(16)), {{i, Range{ir::i32(4), ir::i32(8)}}}, ana)),
            "[4, +8)");
  EXPECT_EQ(str(relax(ir::min(i, ir::i32(10)), {{i, ext(64)}}, ana)), "[0, +11)");
  EXPECT_EQ(str(relax(ir::max(i * 2, j), {{i, ext(8)}}, ana)), "[T.max(j, 0), +T.max(j, 14) - T.max(j, 0) + 1)");
  // Symbolic domain.
  ana.bind(n, 1, 4096);
  EXPECT_EQ(str(relax(i + j * 4, {{i, Range::from_extent(n)}}, ana)), "[j * 4, +n)");
  // Tiles of a split loop: (io*16 + ii) over ii.
  Var io("io"), ii("ii");
  EXPECT_EQ(str(relax(ir::floordiv(io * 16 + ii, ir::i32(4)), {{ii, ext(16)}}, ana)), "[io * 4, +4)");
}

TEST(IntSetTest, RegionsAndUnions) {
  Var vi("vi"), vk("vk"), ii("ii"), k("k");
  Analyzer ana;
  auto region = relax_region({vi * 16 + ii, vk}, {{ii, ext(16)}}, ana);
  ASSERT_EQ(region.size(), 2u);
  EXPECT_EQ(str(region[0]), "[vi * 16, +16)");
  EXPECT_EQ(str(region[1]), "[vk, +1)");
  EXPECT_EQ(str(union_ranges({Range{k * 32, ir::i32(16)}, Range{k * 32 + 16, ir::i32(16)}}, ana)),
            "[k * 32, +32)");
  EXPECT_EQ(str(union_ranges({Range{k * 32 + 8, ir::i32(4)}, Range{k * 32, ir::i32(4)}}, ana)),
            "[k * 32, +12)");
  auto box = union_regions({{Range{ir::i32(0), ir::i32(4)}, Range{vk, ir::i32(1)}},
                            {Range{ir::i32(2), ir::i32(8)}, Range{vk + 1, ir::i32(1)}}},
                           ana);
  EXPECT_EQ(str(box[0]), "[0, +10)");
  EXPECT_EQ(str(box[1]), "[vk, +2)");
}

TEST(IntSetTest, UnknownFallsBack) {
  Var i("i"), j("j");
  Analyzer ana;
  EXPECT_FALSE(try_relax(i * j, {{i, ext(4)}}, ana).has_value());
  Range r = relax(i * j, {{i, ext(4)}}, ana);
  EXPECT_EQ(str(r), "[0, +2147483647)");
  ana.bind(j, 0, 3);
  EXPECT_EQ(str(relax(i * j, {{i, ext(4)}}, ana)), "[0, +10)");
}

// Soundness: every value at every point lies in the relaxed range.
TEST(IntSetTest, RandomSoundness) {
  Var a("a"), b("b");
  std::mt19937 rng(7);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  for (int trial = 0; trial < 300; ++trial) {
    Expr e = a * (pick(7) - 3) + b * (pick(5) - 2) + (pick(9) - 4);
    int op = pick(5);
    if (op == 1) e = ir::floordiv(e, ir::i32(pick(6) + 1));
    if (op == 2) e = ir::floormod(e, ir::i32(pick(6) + 1));
    if (op == 3) e = ir::min(e, a * 2);
    if (op == 4) e = ir::max(e, b - a);
    int a_lo = pick(5) - 2, a_ext = pick(6) + 1, b_ext = pick(5) + 1;
    Analyzer ana;
    Range r = relax(e, {{a, Range{ir::i32(a_lo), ir::i32(a_ext)}}, {b, ext(b_ext)}}, ana);
    auto lo = ir::as_const_int(r.min), n = ir::as_const_int(r.extent);
    ASSERT_TRUE(lo && n) << str(r);
    for (int va = a_lo; va < a_lo + a_ext; ++va)
      for (int vb = 0; vb < b_ext; ++vb) {
        Analyzer at;
        at.bind(a, va, va);
        at.bind(b, vb, vb);
        int64_t v = ir::as_const_int(at.simplify(e)).value();
        ASSERT_TRUE(*lo <= v && v < *lo + *n) << script::print(e) << " a=" << va << " b=" << vb << " in " << str(r);
      }
  }
}

}  // namespace
}  // namespace tessera::arith
