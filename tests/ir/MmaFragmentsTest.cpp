//===- tests/ir/MmaFragmentsTest.cpp - Tensor-core fragment maps -----------===//
//
// ir/MmaFragments.h against the PTX ISA's figures: every map is a bijection
// between the 32 lanes' elements and its tile, spot values from the figures,
// and ldmatrix delivers tiles in the order mma.sync expects them (x4 of a
// 16 x 16 A tile gives a0..a7; x2.trans of a row-major 16 x 8 B tile gives
// b0..b3).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <set>

#include "tessera/ir/MmaFragments.h"
#include "tessera/support/Error.h"

namespace tessera::ir::mma {
namespace {

std::vector<FragmentLayout> all_layouts() {
  std::vector<FragmentLayout> out;
  for (MmaShape s : {MmaShape::M16N8K16, MmaShape::M16N8K32, MmaShape::M16N8K8})
    for (Operand o : {Operand::A, Operand::B, Operand::C}) out.emplace_back(s, o);
  return out;
}

TEST(MmaFragments, EveryMapIsABijectionAndOwnerIsItsInverse) {
  for (const FragmentLayout &f : all_layouts()) {
    SCOPED_TRACE(f.str());
    std::set<std::pair<int, int>> seen;
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < f.per_lane(); ++i) {
        Element e = f.at(lane, i);
        ASSERT_TRUE(e.row >= 0 && e.row < f.rows() && e.col >= 0 && e.col < f.cols());
        EXPECT_TRUE(seen.insert({e.row, e.col}).second) << "(" << e.row << ", " << e.col << ") twice";
        EXPECT_EQ(f.owner(e.row, e.col), (Slot{lane, i}));
      }
    EXPECT_EQ(int(seen.size()), f.rows() * f.cols());
  }
}

TEST(MmaFragments, ShapesAndElementsPerLane) {
  FragmentLayout a16(MmaShape::M16N8K16, Operand::A), b32(MmaShape::M16N8K32, Operand::B),
      a8(MmaShape::M16N8K8, Operand::A), c(MmaShape::M16N8K8, Operand::C);
  EXPECT_EQ(a16.str(), "m16n8k16 A (16 x 16)");
  EXPECT_EQ(a16.per_lane(), 8);   // four .f16x2 registers
  EXPECT_EQ(b32.str(), "m16n8k32 B (32 x 8)");
  EXPECT_EQ(b32.per_lane(), 8);   // two registers of four int8
  EXPECT_EQ(a8.per_lane(), 4);    // four .tf32 registers
  EXPECT_EQ(c.per_lane(), 4);
}

// Values read off the PTX ISA's fragment figures (groupID = lane / 4,
// threadID_in_group = lane % 4).
TEST(MmaFragments, ValuesOfThePtxFigures) {
  FragmentLayout a(MmaShape::M16N8K16, Operand::A), b(MmaShape::M16N8K16, Operand::B),
      c(MmaShape::M16N8K16, Operand::C);
  EXPECT_EQ(a.at(0, 0), (Element{0, 0}));
  EXPECT_EQ(a.at(0, 1), (Element{0, 1}));
  EXPECT_EQ(a.at(0, 2), (Element{8, 0}));
  EXPECT_EQ(a.at(0, 4), (Element{0, 8}));
  EXPECT_EQ(a.at(5, 0), (Element{1, 2}));
  EXPECT_EQ(a.at(5, 7), (Element{9, 11}));
  EXPECT_EQ(a.at(31, 7), (Element{15, 15}));
  EXPECT_EQ(b.at(6, 0), (Element{4, 1}));
  EXPECT_EQ(b.at(6, 3), (Element{13, 1}));
  EXPECT_EQ(c.at(31, 3), (Element{15, 7}));
  EXPECT_EQ(c.at(2, 1), (Element{0, 5}));
  FragmentLayout a32(MmaShape::M16N8K32, Operand::A), b32(MmaShape::M16N8K32, Operand::B);
  EXPECT_EQ(a32.at(1, 0), (Element{0, 4}));
  EXPECT_EQ(a32.at(1, 4), (Element{8, 4}));
  EXPECT_EQ(a32.at(1, 8), (Element{0, 20}));
  EXPECT_EQ(a32.at(1, 15), (Element{8, 23}));
  EXPECT_EQ(b32.at(7, 5), (Element{29, 1}));
  FragmentLayout a8(MmaShape::M16N8K8, Operand::A), b8(MmaShape::M16N8K8, Operand::B);
  EXPECT_EQ(a8.at(9, 0), (Element{2, 1}));
  EXPECT_EQ(a8.at(9, 1), (Element{10, 1}));
  EXPECT_EQ(a8.at(9, 2), (Element{2, 5}));
  EXPECT_EQ(a8.at(9, 3), (Element{10, 5}));
  EXPECT_EQ(b8.at(9, 1), (Element{5, 2}));
}

TEST(MmaFragments, LdmatrixX4OfASixteenBySixteenTileGivesTheAOrder) {
  // Lanes 0-15 address rows 0-15 of the left 16 x 8 half, lanes 16-31 the
  // right half: matrices 0..3 are the quadrants (0,0), (8,0), (0,8), (8,8).
  LdmatrixLayout ld(4, false);
  FragmentLayout a(MmaShape::M16N8K16, Operand::A);
  const Element origin[4] = {{0, 0}, {8, 0}, {0, 8}, {8, 8}};
  for (int lane = 0; lane < 32; ++lane) {
    Element addr = ld.address_of(lane);
    EXPECT_EQ(origin[addr.row].row + addr.col, lane % 16);  // row l % 16 ...
    EXPECT_EQ(origin[addr.row].col, 8 * (lane / 16));        // ... of column half l / 16
    for (int j = 0; j < 4; ++j)
      for (int h = 0; h < 2; ++h) {
        Element e = ld.at(lane, j, h);
        EXPECT_EQ((Element{origin[j].row + e.row, origin[j].col + e.col}), a.at(lane, 2 * j + h))
            << "lane " << lane << " register " << j << " half " << h;
      }
  }
}

TEST(MmaFragments, LdmatrixX2TransOfARowMajorKByNTileGivesTheBOrder) {
  // B (16 x 8, k x n) stored k-major: rows k 0-7 are matrix 0, 8-15 matrix 1.
  LdmatrixLayout ld(2, true);
  FragmentLayout b(MmaShape::M16N8K16, Operand::B);
  for (int lane = 0; lane < 32; ++lane)
    for (int j = 0; j < 2; ++j)
      for (int h = 0; h < 2; ++h) {
        Element e = ld.at(lane, j, h);
        EXPECT_EQ((Element{8 * j + e.row, e.col}), b.at(lane, 2 * j + h));
      }
  EXPECT_EQ(ld.address_lane(1, 3), 11);
  EXPECT_EQ(ld.address_of(20).row, -1);  // x2 reads addresses from lanes 0-15 only
}

TEST(MmaFragments, LdmatrixEachRegisterIsABijectionOfItsTile) {
  for (int n : {1, 2, 4})
    for (bool trans : {false, true}) {
      LdmatrixLayout ld(n, trans);
      for (int j = 0; j < n; ++j) {
        std::set<std::pair<int, int>> seen;
        for (int lane = 0; lane < 32; ++lane)
          for (int h = 0; h < 2; ++h) {
            Element e = ld.at(lane, j, h);
            EXPECT_TRUE(e.row >= 0 && e.row < 8 && e.col >= 0 && e.col < 8);
            seen.insert({e.row, e.col});
          }
        EXPECT_EQ(seen.size(), 64u) << "x" << n << (trans ? ".trans" : "") << " register " << j;
      }
    }
}

TEST(MmaFragments, OutOfRangeIsAnInternalError) {
  FragmentLayout a(MmaShape::M16N8K16, Operand::A);
  EXPECT_THROW(a.at(32, 0), InternalError);
  EXPECT_THROW(a.at(0, 8), InternalError);
  EXPECT_THROW(a.owner(16, 0), InternalError);
  EXPECT_THROW(LdmatrixLayout(3, false), InternalError);
  EXPECT_THROW(LdmatrixLayout(2, false).at(0, 2, 0), InternalError);
}

}  // namespace
}  // namespace tessera::ir::mma
