//===- tessera/rules/Conv2d.h - 2-d convolution as an implicit GEMM ----------===//
//
// Matches a function with one reduction block
//   out[.., y, x, o] += in[.., a*y + b*r + c, d*x + e*s + f, k] * w[.., r, s, k, o]
// (casts allowed): one operand (the input) indexed through exactly two
// convolution windows, each an affine `stride * spatial + dilation * reduce
// (+ offset)` of one output iter and one window iter, the other (the
// weights) and the output by plain iters. match_matmul declines such a block
// ("convolution window"); this rule schedules it as the GEMM
//   M = batch x out height x out width, N = out channels, K = window x in channels
// with the matmul rule's scheduling code (rules/GemmSchedule.h) and its
// config fields, M tiled as a block_h x block_w rectangle of output pixels
// (each thread thread_h x thread_w of them) rather than as a fused row
// index, so that the input tile of a thread block is a rectangle:
//
//   per K step (block_k input channels, the whole window):
//     in_shared  <- the input window of the block's pixels: a halo tile of
//                   ((block_h - 1) * stride_h + (kernel_h - 1) * dilation_h + 1) x (...w) x block_k
//     w_shared   <- kernel_h x kernel_w x block_k x block_n weights
//     for r, s, k in the window and the step: FMA into thread_h x thread_w x thread_n registers
//
// This is a direct convolution with an input halo tile in shared memory
// (every input element is fetched from global memory once per K step, not
// once per window tap as an im2col GEMM would), correct for any stride,
// padding and dilation: the halo comes from the index expressions, and a
// padding block (`pad = if_then_else(inside, in, 0)`) is inlined into the
// fetch. A fused M row index (true im2col tiling) would need its input tile
// as a transformed block layout, which the schedule primitives cannot
// express: the box of a fused row tile in (y, x) coordinates spans whole
// image rows.
//
// The config copies the window geometry from the match (validate() sizes the
// halo tile with it; apply() rejects a config whose geometry differs):
//   {"rule": "conv2d", "block_h": 8, "block_w": 8, "block_n": 64, "block_k": 16,
//    "thread_h": 2, "thread_w": 4, "thread_n": 4, "vector_a": 1, "vector_b": 4,
//    "vector_c": 4, "pad_a": 0, "pad_b": 0, "unroll": true, "stages": 1,
//    "a_bytes": 2, "b_bytes": 2, "acc_bytes": 4, "kernel_h": 3, "kernel_w": 3,
//    "stride_h": 1, "stride_w": 1, "dilation_h": 1, "dilation_w": 1}
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tessera/rules/Matmul.h"

namespace tessera::rules {

struct Conv2dConfig final : Config {
  int64_t block_h = 8;   ///< output rows per thread block
  int64_t block_w = 8;   ///< output columns per thread block
  int64_t block_n = 64;  ///< output channels per thread block
  int64_t block_k = 16;  ///< input channels per K step (the whole window each step)
  int64_t thread_h = 2;  ///< output rows per thread (divides block_h)
  int64_t thread_w = 4;  ///< output columns per thread (divides block_w)
  int64_t thread_n = 4;  ///< output channels per thread (divides block_n)
  int64_t vector_a = 1;  ///< input elements per thread and fetch step
  int64_t vector_b = 4;  ///< weight elements per thread and fetch step
  int64_t vector_c = 4;  ///< output elements per store (divides thread_n)
  int64_t pad_a = 0;     ///< elements added to each pixel's channels in the input tile
  int64_t pad_b = 0;     ///< elements added to each row of the weight tile
  bool unroll = true;    ///< unroll the loop over the K step's channels
  int64_t stages = 1;    ///< pipeline depth (1 only, as the matmul rule)
  int64_t a_bytes = 2, b_bytes = 2, acc_bytes = 4;  ///< workload facts: element sizes
  int64_t kernel_h = 3, kernel_w = 3;               ///< workload facts: window size
  int64_t stride_h = 1, stride_w = 1;               ///< workload facts: strides
  int64_t dilation_h = 1, dilation_w = 1;           ///< workload facts: dilations

  const char *rule() const override { return "conv2d"; }
  Json to_json() const override;
  /// As MatmulConfig::validate on the GEMM view (block_m = block_h x
  /// block_w, thread_m = thread_h x thread_w), with the halo tile in the
  /// shared memory count.
  void validate(const Arch &arch) const override;
  static Conv2dConfig from_json(const Json &j);

  /// The GEMM view (threads, registers, vectors) the matmul config checks.
  MatmulConfig gemm() const;
  /// Input tile rows and columns (the halo of block_h x block_w pixels).
  int64_t halo_h() const { return (block_h - 1) * stride_h + (kernel_h - 1) * dilation_h + 1; }
  int64_t halo_w() const { return (block_w - 1) * stride_w + (kernel_w - 1) * dilation_w + 1; }
  int64_t shared_bytes() const;
};

/// The conv2d rule (registered in all_rules()).
const Rule &conv2d_rule();

/// The sizes a conv2d match found, for policies (-1: symbolic). The window
/// geometry is in the default config's workload facts.
struct Conv2dProblem {
  int64_t images = 1;              ///< every other output loop (batch, groups) multiplied: blocks along them
  int64_t out_h = -1, out_w = -1;  ///< output rows and columns
  int64_t out_c = -1, in_c = -1;   ///< output and input channels
  bool padded = false;             ///< a padding block is inlined into the input fetch
  bool in_channels_inner = true;   ///< the input's contiguous dimension is its channels
  bool weights_out_inner = true;   ///< the weights' contiguous dimension is the output channels
  bool out_channels_inner = true;  ///< the stored output's contiguous dimension is its channels
  int64_t out_bytes = 2;           ///< bytes per stored output element
};

/// ConfigError when `m` is another rule's match.
Conv2dProblem conv2d_problem(const Match &m);

/// Completes a tiling for the conv2d rule's match `m` as default_config
/// completes its own: from the block_* and thread_* fields of `c`, sets the
/// vector widths (the widest the layouts, row lengths and tiles allow, each
/// at most its value in `c` when positive; 1 for an input read through a
/// padding block) and pad_a (the fewest bank conflicts). ConfigError when
/// `m` is another rule's match.
void fit_conv2d_layout(const Match &m, const Arch &arch, Conv2dConfig &c);

}  // namespace tessera::rules
