//===- InterpreterNumericTest.cpp - The interpreter against Eigen ----------===//
//
// matmul, gemv, sum/max reductions along each axis and softmax, in float32
// and float16 (float16 inputs; Eigen computes in float on the same rounded
// inputs, so the only difference is the interpreter's per-operation rounding).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include "Programs.h"
#include "tessera/support/Half.h"

namespace tessera::testing {
namespace {

using runtime::NDArray;
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

RowMat to_eigen(const NDArray &a) {
  int64_t r = a.shape()[0], c = a.shape().size() > 1 ? a.shape()[1] : 1;
  RowMat m(r, c);
  for (int64_t i = 0; i < a.numel(); ++i) m.data()[i] = static_cast<float>(a.get(i));
  return m;
}

/// Max relative error against an Eigen matrix, scaled by the largest reference value.
double rel_err(const NDArray &got, const RowMat &want) {
  double scale = std::max(1e-30, static_cast<double>(want.cwiseAbs().maxCoeff()));
  double worst = 0;
  for (int64_t i = 0; i < got.numel(); ++i)
    worst = std::max(worst, std::fabs(got.get(i) - want.data()[i]) / scale);
  return worst;
}

class Numeric : public ::testing::TestWithParam<DataType> {};

TEST_P(Numeric, Matmul) {
  DataType t = GetParam();
  PrimFunc f = matmul(i32(33), i32(40), i32(50), t, t);
  auto args = runtime::make_random_args(f, {}, 7);
  run_program(f, args);
  RowMat want = to_eigen(args[0]) * to_eigen(args[1]);
  EXPECT_LT(rel_err(args[2], want), t == DataType::float32() ? 1e-6 : 2e-2);
}

TEST_P(Numeric, MatmulFloat32Accumulate) {
  DataType t = GetParam();
  PrimFunc f = matmul(i32(16), i32(24), i32(64), t, DataType::float32());
  auto args = runtime::make_random_args(f, {}, 8);
  run_program(f, args);
  RowMat want = to_eigen(args[0]) * to_eigen(args[1]);
  EXPECT_LT(rel_err(args[2], want), 1e-6);
}

TEST_P(Numeric, Gemv) {
  DataType t = GetParam();
  int64_t n = 70, k = 129;
  Buffer A = Buffer::make("A", t, {i32(n), i32(k)}), x = Buffer::make("x", t, {i32(k)}), y = Buffer::make("y", t, {i32(n)});
  Var i("i"), kk("k"), vi("vi"), vk("vk");
  Stmt blk = block("gemv", {spatial(vi, i32(n)), reduce(vk, i32(k))}, {i, kk},
                   Store::make(y, Load::make(y, {vi}) + Load::make(A, {vi, vk}) * Load::make(x, {vk}), {vi}),
                   Store::make(y, make_const(t, 0), {vi}));
  PrimFunc f = func("gemv", {A, x, y}, loop(i, n, loop(kk, k, blk)));
  auto args = runtime::make_random_args(f, {}, 9);
  run_program(f, args);
  RowMat want = to_eigen(args[0]) * to_eigen(args[1]);
  EXPECT_LT(rel_err(args[2], want), t == DataType::float32() ? 1e-6 : 2e-2);
}

/// Sum or max of A[r, c] along `axis` into B.
PrimFunc reduction(DataType t, int axis, bool is_max, int64_t r, int64_t c) {
  Buffer A = Buffer::make("A", t, {i32(r), i32(c)});
  int64_t keep = axis == 0 ? c : r, red = axis == 0 ? r : c;
  Buffer B = Buffer::make("B", t, {i32(keep)});
  Var i("i"), k("k"), vi("vi"), vk("vk");
  Expr a = axis == 0 ? Load::make(A, {vk, vi}) : Load::make(A, {vi, vk});
  Expr upd = is_max ? max(Load::make(B, {vi}), a) : Load::make(B, {vi}) + a;
  Expr init = is_max ? Expr(Call::make(t, Intrinsic::MinValue, {})) : make_const(t, 0);
  Stmt blk = block("red", {spatial(vi, i32(keep)), reduce(vk, i32(red))}, {i, k}, Store::make(B, upd, {vi}),
                   Store::make(B, init, {vi}));
  return func("reduce", {A, B}, loop(i, keep, loop(k, red, blk)));
}

TEST_P(Numeric, Reductions) {
  DataType t = GetParam();
  for (int axis : {0, 1}) {
    for (bool is_max : {false, true}) {
      PrimFunc f = reduction(t, axis, is_max, 37, 61);
      auto args = runtime::make_random_args(f, {}, 10 + axis);
      run_program(f, args);
      RowMat a = to_eigen(args[0]);
      Eigen::VectorXf want = axis == 0 ? (is_max ? Eigen::VectorXf(a.colwise().maxCoeff().transpose())
                                                 : Eigen::VectorXf(a.colwise().sum().transpose()))
                                       : (is_max ? Eigen::VectorXf(a.rowwise().maxCoeff()) : Eigen::VectorXf(a.rowwise().sum()));
      RowMat w = want;
      double tol = is_max ? 0.0 : (t == DataType::float32() ? 1e-6 : 2e-2);
      EXPECT_LE(rel_err(args[1], w), tol) << "axis " << axis << (is_max ? " max" : " sum");
    }
  }
}

/// B = softmax(A) along rows, with the row max and sum in root-allocated buffers.
PrimFunc softmax(DataType t, int64_t rows, int64_t cols) {
  Buffer A = Buffer::make("A", t, {i32(rows), i32(cols)}), B = Buffer::make("B", t, {i32(rows), i32(cols)});
  Buffer M = Buffer::make("M", t, {i32(rows)}), S = Buffer::make("S", t, {i32(rows)});
  Var i0("i0"), k0("k0"), v0("v0"), r0("r0");
  Stmt mx = loop(i0, rows, loop(k0, cols, block("max", {spatial(v0, i32(rows)), reduce(r0, i32(cols))}, {i0, k0},
                                                Store::make(M, max(Load::make(M, {v0}), Load::make(A, {v0, r0})), {v0}),
                                                Store::make(M, Call::make(t, Intrinsic::MinValue, {}), {v0}))));
  Var i1("i1"), k1("k1"), v1("v1"), r1("r1");
  Stmt sum = loop(i1, rows, loop(k1, cols, block("sum", {spatial(v1, i32(rows)), reduce(r1, i32(cols))}, {i1, k1},
                                                 Store::make(S, Load::make(S, {v1}) + call(Intrinsic::Exp, {Load::make(A, {v1, r1}) - Load::make(M, {v1})}), {v1}),
                                                 Store::make(S, make_const(t, 0), {v1}))));
  Var i2("i2"), j2("j2"), v2("v2"), w2("w2");
  Stmt norm = loop(i2, rows, loop(j2, cols, block("norm", {spatial(v2, i32(rows)), spatial(w2, i32(cols))}, {i2, j2},
                                                  Store::make(B, call(Intrinsic::Exp, {Load::make(A, {v2, w2}) - Load::make(M, {v2})}) / Load::make(S, {v2}), {v2, w2}))));
  Stmt root = Block::make("root", {}, {}, Expr(), {}, {}, {M, S}, std::nullopt, Seq::make({mx, sum, norm}));
  return func("softmax", {A, B}, root);
}

TEST_P(Numeric, Softmax) {
  DataType t = GetParam();
  PrimFunc f = softmax(t, 9, 200);
  auto args = runtime::make_random_args(f, {}, 12);
  run_program(f, args);
  RowMat a = to_eigen(args[0]);
  RowMat want(a.rows(), a.cols());
  for (int r = 0; r < a.rows(); ++r) {
    Eigen::RowVectorXf e = (a.row(r).array() - a.row(r).maxCoeff()).exp();
    want.row(r) = e / e.sum();
  }
  EXPECT_LT(rel_err(args[1], want), t == DataType::float32() ? 1e-6 : 2e-2);
  for (int64_t i = 0; i < args[1].numel(); ++i) ASSERT_FALSE(std::isnan(args[1].get(i)));
}

INSTANTIATE_TEST_SUITE_P(Interpreter, Numeric, ::testing::Values(DataType::float32(), DataType::float16()),
                         [](const auto &info) { return info.param.str(); });

}  // namespace
}  // namespace tessera::testing
