//===- tessera/rules/Conv2d.h - 2-d convolution as a GEMM --------------------===//
//
// Matches a function with one reduction block
//   out[.., y, x, o] += in[.., a*y + b*r + c, d*x + e*s + f, k] * w[.., r, s, k, o]
// (casts allowed): one operand (the input) indexed through exactly two
// convolution windows, each an affine `stride * spatial + dilation * reduce
// (+ offset)` of one output iter and one window iter, the other (the
// weights) and the output by plain iters. match_matmul declines such a block
// ("convolution window"); this rule schedules it as the GEMM
//   M = batch x out height x out width, N = out channels, K = window x in channels
// with the matmul rule's scheduling code (rules/GemmSchedule.h), in one of
// two forms (config field "form"):
//
// "direct": M tiled as a block_h x block_w rectangle of output pixels (each
// thread thread_h x thread_w of them), so that the input tile of a thread
// block is a rectangle:
//
//   per K step (block_k input channels, the whole window):
//     in_shared  <- the input window of the block's pixels: a halo tile of
//                   ((block_h - 1) * stride_h + (kernel_h - 1) * dilation_h + 1) x (...w) x block_k
//     w_shared   <- kernel_h x kernel_w x block_k x block_n weights
//     for r, s, k in the window and the step: FMA into thread_h x thread_w x thread_n registers
//
// Every input element is fetched from global memory once per K step, not
// once per window tap.
//
// "implicit_gemm": the true im2col GEMM, tiled exactly like the matmul rule
// (block_m x block_n outputs per thread block, thread_m x thread_n per
// thread, block_k of the fused K per step). M and K are fused iters and the
// A tile is gathered from the input, zero where the window leaves it:
//
//   A_shared[m, k] = in[n(m), oh(m) * stride + r(k) * dilation - pad,
//                           ow(m) * stride + s(k) * dilation - pad, c(k)]   (0 outside)
//   with m = (n * out_h + oh) * out_w + ow, k = (r * kernel_w + s) * in_channels + c
//
// The primitives get there without bypassing any check: reindex the input,
// the weights and the output (buffers over the iters they use), lay them out
// [M, K], [K, N], [M, N] (transform_layout), re-iterate the conv block and the
// three copy blocks over the fused iters (transform_block_layout), fold the
// epilogue into the output copy; then the GEMM schedule inlines the padding
// and the operand copies into the shared-memory fetches (compute_inline) and
// the output copy into the write-back (reverse_compute_inline), so nothing
// im2col-sized is ever stored. The extents must be constant (the fused
// strides are numbers). The A tile re-reads an input pixel once per window
// tap that covers it, and each element's address takes divisions, which is
// why "direct" stays the default (see default_config in Conv2d.cpp).
//
// The config copies the window geometry from the match (validate() sizes the
// halo tile with it; apply() rejects a config whose geometry differs). The
// tile fields depend on the form:
//   {"rule": "conv2d", "form": "direct", "block_h": 8, "block_w": 8,
//    "block_n": 64, "block_k": 16, "thread_h": 2, "thread_w": 4, "thread_n": 4,
//    "vector_a": 1, "vector_b": 4, "vector_c": 4, "pad_a": 0, "pad_b": 0,
//    "unroll": true, "stages": 1, "a_bytes": 2, "b_bytes": 2, "acc_bytes": 4,
//    "kernel_h": 3, "kernel_w": 3, "stride_h": 1, "stride_w": 1,
//    "dilation_h": 1, "dilation_w": 1}
//   {"rule": "conv2d", "form": "implicit_gemm", "block_m": 64, "block_n": 64,
//    "block_k": 16, "thread_m": 4, "thread_n": 4, ... the same from vector_a on}
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>

#include "tessera/rules/Matmul.h"

namespace tessera::rules {

struct Conv2dConfig final : Config {
  static constexpr const char *kDirect = "direct";
  static constexpr const char *kImplicitGemm = "implicit_gemm";
  std::string form = kDirect;  ///< "direct" (halo tile) or "implicit_gemm" (im2col tile)
  int64_t block_h = 8;   ///< direct: output rows per thread block
  int64_t block_w = 8;   ///< direct: output columns per thread block
  int64_t block_m = 64;  ///< implicit_gemm: output pixels (fused M) per thread block
  int64_t block_n = 64;  ///< output channels per thread block
  int64_t block_k = 16;  ///< per K step: direct, input channels (the whole window); implicit_gemm, fused K
  int64_t thread_h = 2;  ///< direct: output rows per thread (divides block_h)
  int64_t thread_w = 4;  ///< direct: output columns per thread (divides block_w)
  int64_t thread_m = 4;  ///< implicit_gemm: output pixels per thread (divides block_m)
  int64_t thread_n = 4;  ///< output channels per thread (divides block_n)
  int64_t vector_a = 1;  ///< input elements per thread and fetch step
  int64_t vector_b = 4;  ///< weight elements per thread and fetch step
  int64_t vector_c = 4;  ///< output elements per store (divides thread_n)
  int64_t pad_a = 0;     ///< elements added to each pixel (direct) / row (implicit_gemm) of the input tile
  int64_t pad_b = 0;     ///< elements added to each row of the weight tile
  bool unroll = true;    ///< unroll the innermost loop of the K step
  int64_t stages = 1;    ///< shared tiles in flight, as the matmul's (> 1: a cp.async pipeline over the K steps)
  int64_t a_bytes = 2, b_bytes = 2, acc_bytes = 4;  ///< workload facts: element sizes
  int64_t kernel_h = 3, kernel_w = 3;               ///< workload facts: window size
  int64_t stride_h = 1, stride_w = 1;               ///< workload facts: strides
  int64_t dilation_h = 1, dilation_w = 1;           ///< workload facts: dilations

  const char *rule() const override { return "conv2d"; }
  /// The form's tile fields only (a direct config has no block_m).
  Json to_json() const override;
  /// As MatmulConfig::validate on the GEMM view (direct: block_m = block_h x
  /// block_w, thread_m = thread_h x thread_w), with the halo tile (direct) or
  /// the matmul's A and B tiles (implicit_gemm) in the shared memory count.
  void validate(const Arch &arch) const override;
  static Conv2dConfig from_json(const Json &j);

  bool implicit_gemm() const { return form == kImplicitGemm; }
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

/// Completes a tiling of either form for the conv2d rule's match `m` as
/// default_config completes its own: from the form, block_* and thread_*
/// fields of `c`, sets the vector widths (the widest the layouts, row
/// lengths and tiles allow, each at most its value in `c` when positive; 1
/// for an input read through a padding block; for implicit_gemm an input
/// vector also divides in_channels, so that it never straddles two window
/// taps) and the pads of the fewest bank conflicts: pad_a (direct: of the
/// halo tile's pixels when the channels are innermost), and for
/// implicit_gemm pad_a and pad_b of the [block_m, block_k] and [block_k,
/// block_n] tiles as the matmul rule pads them. ConfigError when `m` is
/// another rule's match.
void fit_conv2d_layout(const Match &m, const Arch &arch, Conv2dConfig &c);

/// `f`'s convolution (as the conv2d rule matches it) re-laid out as a GEMM
/// block over [batch.., M, N, K] by the implicit_gemm form's primitives
/// (reindex, transform_layout, transform_block_layout; the padding and the
/// operand copies become producers, the output copy with the epilogue a
/// consumer), for the tensor-core rule; nullopt where the conv2d rule does
/// not match or the extents are symbolic.
std::optional<ir::PrimFunc> conv2d_as_gemm(const ir::PrimFunc &f, const Arch &arch);

}  // namespace tessera::rules
