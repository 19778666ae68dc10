//===- TeWorkloads.h - TE programs shared by the TE tests -------------------===//
//
// Workloads that TeTest.cpp checks node by node and TeScriptTest.cpp checks
// against TVMScript, built once here so the two look at the same program.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tessera/te/Tensor.h"

namespace tessera::te::workloads {

/// A product reducer: combine x * y, identity 1.
inline CommReducer prod_reducer() {
  return CommReducer{[](ir::Expr x, ir::Expr y) { return x * y; },
                     [](ir::DataType t) { return ir::make_const(t, 1); }, "prod"};
}

/// A float32 NHWC convolution with HWIO weights, padding 1 and stride 2: the
/// 1x14x14x8 input X is padded into stage `pad` (1x16x16x8), then a 3x3 kernel
/// W to 16 channels gives `conv`, 1x7x7x16.
struct ConvWithPadding {
  Tensor X, W, P, Y;
};
inline ConvWithPadding conv_with_padding() {
  const ir::DataType f32 = ir::DataType::float32();
  Tensor X = placeholder({1, 14, 14, 8}, f32, "X");
  Tensor W = placeholder({3, 3, 8, 16}, f32, "W");
  Tensor P = compute({1, 16, 16, 8},
                     [&](ir::Var n, ir::Var h, ir::Var w, ir::Var c) {
                       return if_then_else(1 <= h && h < 15 && 1 <= w && w < 15, X(n, h - 1, w - 1, c),
                                           make_const(f32, 0));
                     },
                     "pad", {"n", "h", "w", "c"});
  ReduceAxis rh = reduce_axis(3, "rh"), rw = reduce_axis(3, "rw"), rc = reduce_axis(8, "rc");
  Tensor Y = compute({1, 7, 7, 16},
                     [&](ir::Var n, ir::Var h, ir::Var w, ir::Var co) {
                       return sum(P(n, h * 2 + rh, w * 2 + rw, rc) * W(rh, rw, rc, co), {rh, rw, rc});
                     },
                     "conv", {"n", "h", "w", "co"});
  return {X, W, P, Y};
}

/// A float32 softmax over the rows of the 16x32 input A, in TOPI's four stages:
/// row max M, exp(A - M) E, row sum S, and the normalised output N.
struct Softmax {
  Tensor A, M, E, S, N;
};
inline Softmax softmax() {
  using ir::Var;
  Tensor A = placeholder({16, 32}, ir::DataType::float32(), "A");
  ReduceAxis k = reduce_axis(32, "k");
  Tensor M = compute({16}, [&](Var i) { return max(A(i, k), {k}); }, "T_softmax_maxelem", {"i0"});
  Tensor E =
      compute({16, 32}, [&](Var i, Var j) { return te::exp(A(i, j) - M(i)); }, "T_softmax_exp", {"i0", "i1"});
  ReduceAxis k2 = reduce_axis(32, "k");
  Tensor S = compute({16}, [&](Var i) { return sum(E(i, k2), {k2}); }, "T_softmax_expsum", {"i0"});
  Tensor N = compute({16, 32}, [&](Var i, Var j) { return E(i, j) / S(i); }, "T_softmax_norm", {"i0", "i1"});
  return {A, M, E, S, N};
}

}  // namespace tessera::te::workloads
