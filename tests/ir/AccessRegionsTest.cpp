//===- AccessRegionsTest.cpp - Inferring block reads and writes ------------===//
#include <gtest/gtest.h>

#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Op.h"

using namespace tessera::ir;

namespace {

Buffer buf(const std::string &name, std::vector<int64_t> shape) {
  std::vector<Expr> s;
  for (int64_t d : shape) s.push_back(i32(d));
  return Buffer::make(name, DataType::float32(), s);
}

Stmt loop(const Var &v, int64_t lo, int64_t extent, Stmt body) {
  return For::make(v, i32(lo), i32(extent), ForKind::Serial, std::move(body));
}

void expect_range(const Range &r, const Expr &min, int64_t extent) {
  // Structural check through the linear normal form: min - expected is 0.
  Expr d = extent_between(min, r.min);
  EXPECT_TRUE(is_const_int(d, 0)) << "min differs";
  EXPECT_TRUE(is_const_int(r.extent, extent)) << "extent is not " << extent;
}

}  // namespace

TEST(AccessRegions, PointAccessesAtIterVars) {
  Buffer A = buf("A", {128, 64}), B = buf("B", {128});
  Var vi("vi"), vk("vk");
  Stmt body = Store::make(B, add(Load::make(B, {vi}), Load::make(A, {vi, vk})), {vi});
  AccessRegions r = infer_access_regions(std::nullopt, body, {});
  ASSERT_EQ(r.reads.size(), 2u);
  EXPECT_TRUE(r.reads[0].buffer.same_as(B));  // first appearance order
  EXPECT_TRUE(r.reads[1].buffer.same_as(A));
  EXPECT_TRUE(r.reads[1].region[0].min.same_as(vi));
  EXPECT_TRUE(is_const_int(r.reads[1].region[1].extent, 1));
  ASSERT_EQ(r.writes.size(), 1u);
  EXPECT_TRUE(r.writes[0].buffer.same_as(B));
}

TEST(AccessRegions, InnerLoopsAreRelaxed) {
  Buffer A = buf("A", {128, 128}), B = buf("B", {128});
  Var vi("vi"), k("k");
  // for k in range(128): B[vi] += A[vi, vi * 0 + k]   and  A[vi, k // 4]
  Stmt body = loop(k, 0, 128, Store::make(B, add(Load::make(A, {vi, k}), Load::make(A, {vi, floordiv(k, i32(4))})), {vi}));
  AccessRegions r = infer_access_regions(std::nullopt, body, {});
  ASSERT_EQ(r.reads.size(), 1u);
  // k in [0, 128) and k // 4 in [0, 32): bounding box [0, 128).
  expect_range(r.reads[0].region[0], vi, 1);
  expect_range(r.reads[0].region[1], i32(0), 128);
}

TEST(AccessRegions, AffineRelaxationKeepsTidyBounds) {
  Buffer A = buf("A", {1024});
  Var vo("vo"), k("k");
  Stmt body = loop(k, 0, 32, Store::make(A, make_const(DataType::float32(), 0), {add(mul(vo, i32(32)), k)}));
  AccessRegions r = infer_access_regions(std::nullopt, body, {});
  ASSERT_EQ(r.writes.size(), 1u);
  expect_range(r.writes[0].region[0], mul(vo, i32(32)), 32);
}

TEST(AccessRegions, NeighbouringAccessesMerge) {
  Buffer A = buf("A", {100}), B = buf("B", {100});
  Var i("i");
  Stmt body = Store::make(B, add(Load::make(A, {i}), Load::make(A, {add(i, i32(2))})), {add(i, i32(1))});
  AccessRegions r = infer_access_regions(std::nullopt, body, {});
  ASSERT_EQ(r.reads.size(), 1u);
  expect_range(r.reads[0].region[0], i, 3);
  expect_range(r.writes[0].region[0], add(i, i32(1)), 1);
}

TEST(AccessRegions, IncomparableAccessesCoverTheDimension) {
  Buffer A = buf("A", {100}), B = buf("B", {100});
  Var i("i"), j("j");
  Stmt body = Store::make(B, add(Load::make(A, {i}), Load::make(A, {j})), {i});
  AccessRegions r = infer_access_regions(std::nullopt, body, {});
  expect_range(r.reads[0].region[0], i32(0), 100);
}

TEST(AccessRegions, UnboundedIndexCoversTheDimension) {
  Buffer A = buf("A", {100}), B = buf("B", {100});
  Var i("i"), k("k");
  Stmt body = loop(k, 0, 10, Store::make(B, Load::make(A, {mul(k, k)}), {i}));
  AccessRegions r = infer_access_regions(std::nullopt, body, {});
  expect_range(r.reads[0].region[0], i32(0), 100);
}

TEST(AccessRegions, AllocatedBuffersAreExcludedAndInitCounts) {
  Buffer A = buf("A", {16}), T = buf("T", {16}), B = buf("B", {16});
  Var i("i");
  Stmt init = Store::make(B, make_const(DataType::float32(), 0), {i});
  Stmt body = Seq::make({Store::make(T, Load::make(A, {i}), {i}), Store::make(B, add(Load::make(B, {i}), Load::make(T, {i})), {i})});
  AccessRegions r = infer_access_regions(init, body, {T});
  // With an init, the written B is left out of the reads (TVM's rule)...
  ASSERT_EQ(r.reads.size(), 1u);
  EXPECT_TRUE(r.reads[0].buffer.same_as(A));
  ASSERT_EQ(r.writes.size(), 1u);
  EXPECT_TRUE(r.writes[0].buffer.same_as(B));
  // ... and without one it is read.
  AccessRegions plain = infer_access_regions(std::nullopt, body, {T});
  ASSERT_EQ(plain.reads.size(), 2u);
  EXPECT_TRUE(plain.reads[0].buffer.same_as(A));
  EXPECT_TRUE(plain.reads[1].buffer.same_as(B));
}

TEST(AccessRegions, NestedBlocksContributeRelaxedRegions) {
  Buffer A = buf("A", {128, 128}), B = buf("B", {128});
  Var vi("vi"), k("k"), vk("vk");
  Stmt inner_body = Store::make(B, add(Load::make(B, {vi}), Load::make(A, {vi, vk})), {vi});
  Stmt inner = Block::make("inner", {IterVar{vk, Range::from_extent(i32(128)), IterKind::Reduce}}, {k}, Expr(),
                           {BufferRegion{B, {Range{vi, i32(1)}}}, BufferRegion{A, {Range{vi, i32(1)}, Range{vk, i32(1)}}}},
                           {BufferRegion{B, {Range{vi, i32(1)}}}}, {}, std::nullopt, inner_body);
  AccessRegions r = infer_access_regions(std::nullopt, loop(k, 0, 128, inner), {});
  ASSERT_EQ(r.reads.size(), 2u);
  expect_range(r.reads[1].region[1], i32(0), 128);
  ASSERT_EQ(r.writes.size(), 1u);
  expect_range(r.writes[0].region[0], vi, 1);
}

TEST(AccessRegions, LetVariablesAreRelaxedThroughTheirValue) {
  Buffer A = buf("A", {64});
  Var vi("vi"), k("k"), x("x");
  Stmt body = loop(k, 0, 4, LetStmt::make(x, add(mul(vi, i32(4)), k), Store::make(A, make_const(DataType::float32(), 1), {x})));
  AccessRegions r = infer_access_regions(std::nullopt, body, {});
  expect_range(r.writes[0].region[0], mul(vi, i32(4)), 4);
}

TEST(AccessRegions, ExtentBetween) {
  Var k("k"), n("n");
  EXPECT_TRUE(is_const_int(extent_between(mul(k, i32(32)), add(mul(k, i32(32)), i32(32))), 32));
  EXPECT_TRUE(extent_between(i32(0), n).same_as(n));
  Expr e = extent_between(i32(1), n);
  const auto *b = e.as<Binary>();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->op, BinaryOp::Sub);
}
