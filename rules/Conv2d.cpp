//===- rules/Conv2d.cpp - 2-d convolution as a GEMM (direct or implicit) ----===//
#include "tessera/rules/Conv2d.h"

#include <set>

#include "ConfigJson.h"
#include "GemmSchedule.h"

#include "tessera/analysis/BlockInfo.h"
#include "tessera/analysis/MatmulView.h"
#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"

namespace tessera::rules {

using analysis::Access;
using analysis::BlockInfo;
using analysis::FuncInfo;

//===----------------------------------------------------------------------===//
// Config
//===----------------------------------------------------------------------===//

Json Conv2dConfig::to_json() const {
  Json j{{"rule", rule()}, {"form", form}};
  if (implicit_gemm())
    j.update({{"block_m", block_m}, {"thread_m", thread_m}});
  else
    j.update({{"block_h", block_h}, {"block_w", block_w}, {"thread_h", thread_h}, {"thread_w", thread_w}});
  j.update({{"block_n", block_n},
            {"block_k", block_k},
            {"thread_n", thread_n},
            {"vector_a", vector_a},
            {"vector_b", vector_b},
            {"vector_c", vector_c},
            {"pad_a", pad_a},
            {"pad_b", pad_b},
            {"unroll", unroll},
            {"stages", stages},
            {"a_bytes", a_bytes},
            {"b_bytes", b_bytes},
            {"acc_bytes", acc_bytes},
            {"kernel_h", kernel_h},
            {"kernel_w", kernel_w},
            {"stride_h", stride_h},
            {"stride_w", stride_w},
            {"dilation_h", dilation_h},
            {"dilation_w", dilation_w}});
  return j;
}

Conv2dConfig Conv2dConfig::from_json(const Json &j) {
  ConfigReader r(j, "conv2d");
  Conv2dConfig c;
  c.form = r.choice("form", {kDirect, kImplicitGemm});
  std::vector<std::pair<const char *, int64_t *>> tiles;
  if (c.implicit_gemm())
    tiles = {{"block_m", &c.block_m}, {"thread_m", &c.thread_m}};
  else
    tiles = {{"block_h", &c.block_h},
             {"block_w", &c.block_w},
             {"thread_h", &c.thread_h},
             {"thread_w", &c.thread_w}};
  for (auto [name, field] : tiles) *field = r.integer(name);
  for (auto [name, field] : {std::pair{"block_n", &c.block_n},
                             {"block_k", &c.block_k},
                             {"thread_n", &c.thread_n},
                             {"vector_a", &c.vector_a},
                             {"vector_b", &c.vector_b},
                             {"vector_c", &c.vector_c},
                             {"pad_a", &c.pad_a},
                             {"pad_b", &c.pad_b}})
    *field = r.integer(name);
  c.unroll = r.boolean("unroll");
  for (auto [name, field] : {std::pair{"stages", &c.stages},
                             {"a_bytes", &c.a_bytes},
                             {"b_bytes", &c.b_bytes},
                             {"acc_bytes", &c.acc_bytes},
                             {"kernel_h", &c.kernel_h},
                             {"kernel_w", &c.kernel_w},
                             {"stride_h", &c.stride_h},
                             {"stride_w", &c.stride_w},
                             {"dilation_h", &c.dilation_h},
                             {"dilation_w", &c.dilation_w}})
    *field = r.integer(name);
  r.finish();
  return c;
}

MatmulConfig Conv2dConfig::gemm() const {
  MatmulConfig g;
  if (implicit_gemm())
    g.block_m = block_m, g.thread_m = thread_m;
  else
    g.block_m = block_h * block_w, g.thread_m = thread_h * thread_w;
  g.block_n = block_n, g.thread_n = thread_n, g.block_k = block_k;
  g.vector_a = vector_a, g.vector_b = vector_b, g.vector_c = vector_c;
  g.pad_a = pad_a, g.pad_b = pad_b, g.unroll = unroll, g.stages = stages;
  g.a_bytes = a_bytes, g.b_bytes = b_bytes, g.acc_bytes = acc_bytes;
  return g;
}

int64_t Conv2dConfig::shared_bytes() const {
  if (implicit_gemm()) return gemm().shared_bytes();
  return stages * (halo_h() * halo_w() * (block_k + pad_a) * a_bytes +
                   kernel_h * kernel_w * block_k * (block_n + pad_b) * b_bytes);
}

void Conv2dConfig::validate(const Arch &arch) const {
  if (form != kDirect && !implicit_gemm())
    throw ConfigError(std::string(rule()) + " config: form = \"" + form + "\" is not \"" + kDirect +
                      "\" or \"" + kImplicitGemm + "\"");
  std::vector<std::pair<const char *, int64_t>> positive{
      {"kernel_h", kernel_h}, {"kernel_w", kernel_w},     {"stride_h", stride_h},
      {"stride_w", stride_w}, {"dilation_h", dilation_h}, {"dilation_w", dilation_w}};
  if (!implicit_gemm())
    positive.insert(
        positive.begin(),
        {{"block_h", block_h}, {"block_w", block_w}, {"thread_h", thread_h}, {"thread_w", thread_w}});
  for (auto [name, v] : positive) require(v >= 1, rule(), name, v, "must be at least 1");
  if (!implicit_gemm()) {
    require(block_h % thread_h == 0, rule(), "block_h", block_h,
            "is not a multiple of thread_h = " + std::to_string(thread_h));
    require(block_w % thread_w == 0, rule(), "block_w", block_w,
            "is not a multiple of thread_w = " + std::to_string(thread_w));
  }
  gemm().check_common(rule(), arch);
  const std::string tiles =
      implicit_gemm() ? "a block_m x block_k input tile and a block_k x block_n weight tile, with padding"
                      : "a " + std::to_string(halo_h()) + " x " + std::to_string(halo_w()) +
                            " x block_k input tile and a " + std::to_string(kernel_h) + " x " +
                            std::to_string(kernel_w) + " x block_k x block_n weight tile";
  require(shared_bytes() <= arch.max_smem_per_block(), rule(), "shared memory", shared_bytes(),
          "bytes (" + tiles + ") exceed the " + std::to_string(arch.max_smem_per_block()) +
              " bytes one block of " + arch.name + " may use");
}

//===----------------------------------------------------------------------===//
// Match
//===----------------------------------------------------------------------===//

namespace {

using detail::extent_of;

/// A window dimension `stride * spatial + dilation * reduce + offset`.
struct Window {
  int spatial = -1, reduce = -1;
  int64_t stride = 0, dilation = 0;
};

/// The window `index` forms over iters `sp` and `rd` of `b`, or why not.
std::string read_window(const BlockInfo &b, const ir::Expr &index, int sp, int rd, Window &w) {
  const ir::Var &vs = b.iters[sp].var, &vr = b.iters[rd].var;
  auto at = [&](int64_t s, int64_t r) {
    ir::DataType t = vs.dtype();
    return arith::simplify(
        ir::substitute(index, {{vs, ir::make_int(t, s)}, {vr, ir::make_int(vr.dtype(), r)}}));
  };
  auto diff = [&](const ir::Expr &a, const ir::Expr &c) {
    return ir::as_const_int(arith::simplify(ir::sub(a, c)));
  };
  ir::Expr base = at(0, 0);
  auto stride = diff(at(1, 0), base), dilation = diff(at(0, 1), base), both = diff(at(2, 3), base);
  if (!stride || !dilation || !both || *stride <= 0 || *dilation <= 0 || *both != 2 * *stride + 3 * *dilation)
    return "it is not stride * " + vs.name() + " + dilation * " + vr.name() +
           " + offset with positive constants";
  w = {sp, rd, *stride, *dilation};
  return "";
}

struct ConvMatch final : Match {
  std::string block;
  std::vector<int> batch, m_other;  ///< iters: in input, weights and output; in input and output only
  Window h, w;                      ///< the two windows (rows, then columns)
  int n = -1, c = -1;               ///< output channels, input channels
  std::string in_buffer, w_buffer;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t a_bytes = 2, b_bytes = 2, acc_bytes = 4, out_bytes = 2;
  int64_t out_h = -1, out_w = -1, out_c = -1, in_c = -1;  ///< extents (-1 symbolic)
  int64_t images = 1;  ///< the batch and m_other extents multiplied (-1 symbolic)
  bool in_inner_is_c = true, w_inner_is_n = true, out_inner_is_n = true;
  int64_t in_contig = -1, w_contig = -1, out_contig = -1;
  std::vector<std::string> prologue, epilogue;

  std::string describe() const override {
    auto e = [](int64_t v) { return v < 0 ? std::string("symbolic") : std::to_string(v); };
    return "block '" + block + "': conv2d " + std::to_string(kernel_h) + "x" + std::to_string(kernel_w) +
           " window, stride " + std::to_string(h.stride) + "x" + std::to_string(w.stride) + ", dilation " +
           std::to_string(h.dilation) + "x" + std::to_string(w.dilation) + ", output " + e(out_h) + "x" +
           e(out_w) + "x" + e(out_c) + " from " + e(in_c) + " channels" +
           (prologue.empty() ? "" : ", padding inlined") + (epilogue.empty() ? "" : ", epilogue");
  }
};

bool uses(const Access &a, int iter) {
  for (const auto &d : a.dim_iters)
    for (int i : d)
      if (i == iter) return true;
  return false;
}

/// The lanes of a warp's accesses `addr(l)` (`access` bytes each) put in
/// one bank at most (1 = conflict free), for a block of `threads` threads.
template <class Addr>
int64_t warp_degree(const Arch &arch, int64_t threads, Addr &&addr, int64_t access) {
  std::vector<int64_t> a;
  for (int64_t l = 0; l < std::min<int64_t>(arch.compute.warp_size, threads); ++l) a.push_back(addr(l));
  return detail::bank_conflict_degree(a, access, arch.memory.smem_banks, arch.memory.smem_bank_bytes);
}

/// The fewest-conflict pads of the implicit GEMM's [block_m, K step] input
/// and [K step, block_n] weight tiles, as the matmul rule pads "nn": compute
/// reads of A broadcast along threadIdx.x and apart by thread_m rows across
/// threadIdx.y, B fragments side by side; fetch stores of `vector` elements
/// consecutive along the rows.
void fit_implicit_pads(const ConvMatch &m, const Arch &arch, Conv2dConfig &c) {
  const int64_t banks = arch.memory.smem_banks, bank_bytes = arch.memory.smem_bank_bytes;
  const int64_t tx_n = c.block_n / c.thread_n, ty_n = c.block_m / c.thread_m, threads = tx_n * ty_n;
  const int64_t k_extent = m.in_c > 0 ? m.kernel_h * m.kernel_w * m.in_c : -1;
  auto stores = [&](int64_t pitch, int64_t row_pitch, int64_t vec, int64_t bytes) {
    return warp_degree(
        arch, threads,
        [&](int64_t l) {
          const int64_t f = l * vec;
          return ((f / pitch) * row_pitch + f % pitch) * bytes;
        },
        vec * bytes);
  };
  {
    const int64_t ab = m.a_bytes, pitch = detail::tile_pitch(c.block_k, k_extent);
    c.pad_a = detail::choose_pad(c.vector_a, banks * bank_bytes / ab, [&](int64_t pad) {
      const int64_t s = pitch + pad;
      const int64_t reads = warp_degree(
          arch, threads, [&](int64_t l) { return std::min(l / tx_n, ty_n - 1) * c.thread_m * s * ab; }, ab);
      return std::pair{reads, stores(pitch, s, c.vector_a, ab)};
    });
  }
  {
    const int64_t bb = m.b_bytes, pitch = detail::tile_pitch(c.block_n, m.out_c);
    const int64_t frag = std::min(c.thread_n, arch.memory.max_vector_bytes / bb);
    c.pad_b = detail::choose_pad(std::max(c.vector_b, frag), banks * bank_bytes / bb, [&](int64_t pad) {
      const int64_t reads = warp_degree(
          arch, threads, [&](int64_t l) { return (l % tx_n) * c.thread_n * bb; }, frag * bb);
      return std::pair{reads, stores(pitch, pitch + pad, c.vector_b, bb)};
    });
  }
}

/// The vectors and pads of the tiling in `c` (see fit_conv2d_layout).
void fit_layout(const ConvMatch &m, const Arch &arch, Conv2dConfig &c) {
  const int64_t max_vec = arch.memory.max_vector_bytes;
  // Vectors: the padding block's if_then_else keeps the input fetch scalar.
  // The config's widths cap them (a policy narrows one to free its pad).
  // An implicit-GEMM vector runs along the fused K, so it must also stay
  // within one window tap's channels (divide in_channels).
  auto cap = [](int64_t lanes, int64_t wanted) { return wanted >= 1 ? std::min(lanes, wanted) : lanes; };
  const int64_t a_lanes = cap(max_vec / m.a_bytes, c.vector_a);
  c.vector_a = !m.prologue.empty() || !m.in_inner_is_c ? 1
               : c.implicit_gemm() ? detail::widest_vector(a_lanes, {m.in_contig, m.in_c, c.block_k})
                                   : detail::widest_vector(a_lanes, {m.in_contig, c.block_k});
  c.vector_b = m.w_inner_is_n
                   ? detail::widest_vector(cap(max_vec / m.b_bytes, c.vector_b), {m.w_contig, c.block_n})
                   : 1;
  c.vector_c = m.out_inner_is_n
                   ? detail::widest_vector(cap(std::min(c.thread_n, max_vec / m.out_bytes), c.vector_c),
                                           {m.out_contig, c.thread_n})
                   : 1;
  if (c.implicit_gemm()) {
    fit_implicit_pads(m, arch, c);
    return;
  }
  // Pad the input tile's pixels when a warp's distinct pixel rows share banks.
  if (m.in_inner_is_c) {
    const int64_t banks = arch.memory.smem_banks, ab = m.a_bytes;
    const int64_t tx_n = c.block_n / c.thread_n, tw_n = c.block_w / c.thread_w;
    const int64_t threads = tx_n * tw_n * (c.block_h / c.thread_h);
    const int64_t pitch = detail::tile_pitch(c.block_k, m.in_c);
    c.pad_a = detail::choose_pad(c.vector_a, banks * arch.memory.smem_bank_bytes / ab, [&](int64_t pad) {
      const int64_t s = pitch + pad;
      const int64_t reads = warp_degree(
          arch, threads,
          [&](int64_t l) {
            const int64_t ty = l / tx_n, yt = ty / tw_n, xt = ty % tw_n;
            return ((yt * c.thread_h * m.h.stride) * c.halo_w() + xt * c.thread_w * m.w.stride) * s * ab;
          },
          ab);
      const int64_t stores = warp_degree(
          arch, threads,
          [&](int64_t l) {
            const int64_t e = l * c.vector_a;
            return ((e / pitch) * s + e % pitch) * ab;
          },
          c.vector_a * ab);
      return std::pair{reads, stores};
    });
  }
}

class Conv2dRule final : public Rule {
 public:
  const char *name() const override { return "conv2d"; }

  analysis::MatchResult<MatchPtr> match(const ir::PrimFunc &f, const Arch &) const override {
    using R = analysis::MatchResult<MatchPtr>;
    FuncInfo info = analysis::analyze(f);
    if (info.is_scheduled) return R::fail("the function is already scheduled");
    if (info.has_opaque_structure) return R::fail("it has statements outside blocks");
    std::vector<int> reds = info.reduction_blocks();
    if (reds.size() != 1)
      return R::fail(reds.empty() ? "it has no reduction block"
                                  : "it has " + std::to_string(reds.size()) +
                                        " reduction blocks; a convolution has one");
    const int r = reds[0];
    const BlockInfo &blk = info.blocks[r];
    const std::string q = "block '" + blk.name + "'";
    if (blk.combiner != analysis::Combiner::Sum) return R::fail(q + " does not sum");
    const auto *mul = blk.reduce_value.as<ir::Binary>();
    if (!mul || mul->op != ir::BinaryOp::Mul || !analysis::strip_casts(mul->a) || !analysis::strip_casts(mul->b))
      return R::fail(q + " does not add a product of two (possibly cast) loads");
    if (blk.reads.size() != 2)
      return R::fail(q + " reads " + std::to_string(blk.reads.size()) + " buffers, not 2");
    if (!blk.trivial_binding) return R::fail(q + " is not bound one-to-one to loops from 0");
    if (blk.is_guarded) return R::fail(q + " is under a condition");
    const Access &out = blk.writes[0];
    if (!out.is_simple) return R::fail(q + " writes '" + out.buffer.name() + "' at computed indices");
    if (blk.reads[0].is_simple == blk.reads[1].is_simple)
      return R::fail(blk.reads[0].is_simple
                         ? q + " has no convolution window: both operands are read at plain iters"
                         : q + " reads both operands at computed indices");
    const Access &in = blk.reads[0].is_simple ? blk.reads[1] : blk.reads[0];
    const Access &wt = blk.reads[0].is_simple ? blk.reads[0] : blk.reads[1];
    auto m = std::make_shared<ConvMatch>();
    // The windows of the input.
    std::vector<Window> windows;
    for (size_t d = 0; d < in.indices.size(); ++d) {
      const auto &its = in.dim_iters[d];
      if (its.size() == 1 && in.indices[d].as<ir::VarNode>()) continue;
      const std::string dim = "dimension " + std::to_string(d) + " of '" + in.buffer.name() + "'";
      if (its.size() != 2) return R::fail(q + ": " + dim + " is neither a plain iter nor a window");
      int sp = its[0], rd = its[1];
      if (blk.iters[sp].kind == ir::IterKind::Reduce) std::swap(sp, rd);
      if (blk.iters[sp].kind != ir::IterKind::Spatial || blk.iters[rd].kind != ir::IterKind::Reduce)
        return R::fail(q + ": " + dim + " does not combine an output iter with a window iter");
      Window win;
      if (std::string why = read_window(blk, in.indices[d], sp, rd, win); !why.empty())
        return R::fail(q + ": " + dim + " is not a window: " + why);
      windows.push_back(win);
    }
    if (windows.size() != 2)
      return R::fail(q + " reads '" + in.buffer.name() + "' through " + std::to_string(windows.size()) +
                     " windows; the conv2d rule handles 2");
    m->h = windows[0], m->w = windows[1];
    if (m->h.spatial == m->w.spatial || m->h.reduce == m->w.reduce)
      return R::fail(q + ": both windows of '" + in.buffer.name() + "' use iter '" +
                     blk.iters[m->h.spatial == m->w.spatial ? m->h.spatial : m->h.reduce].var.name() + "'");
    // Roles.
    for (size_t i = 0; i < blk.iters.size(); ++i) {
      int it = static_cast<int>(i);
      bool ui = uses(in, it), uw = uses(wt, it), uo = uses(out, it);
      bool window = it == m->h.spatial || it == m->w.spatial || it == m->h.reduce || it == m->w.reduce;
      const std::string name = "iter '" + blk.iters[i].var.name() + "'";
      if (blk.iters[i].kind == ir::IterKind::Reduce) {
        if (!ui || !uw) return R::fail(q + ": the reduce " + name + " is not used by both operands");
        if (window) continue;
        if (m->c >= 0) return R::fail(q + " reduces over several input-channel iters");
        m->c = it;
      } else if (ui && uw && uo) {
        m->batch.push_back(it);
      } else if (ui && uo && !uw) {
        if (!window) m->m_other.push_back(it);
      } else if (uw && uo && !ui) {
        if (m->n >= 0) return R::fail(q + " has several output-channel iters");
        m->n = it;
      } else {
        return R::fail(q + ": the spatial " + name + " is not an output pixel, channel or group iter");
      }
    }
    if (m->n < 0) return R::fail(q + " has no output-channel iter");
    if (m->c < 0) return R::fail(q + " has no input-channel iter");
    m->kernel_h = extent_of(blk.iters[m->h.reduce].dom.extent);
    m->kernel_w = extent_of(blk.iters[m->w.reduce].dom.extent);
    if (m->kernel_h < 1 || m->kernel_w < 1) return R::fail(q + " has a window of symbolic size");
    if (in.buffer.dtype().bits() < 8 || wt.buffer.dtype().bits() < 8)
      return R::fail(q + " multiplies sub-byte operands");
    if (std::string why = detail::find_prologue_epilogue(info, r, m->prologue, m->epilogue); !why.empty())
      return R::fail(why);
    m->block = blk.name;
    m->in_buffer = in.buffer.name();
    m->w_buffer = wt.buffer.name();
    m->a_bytes = in.buffer.dtype().bytes();
    m->b_bytes = wt.buffer.dtype().bytes();
    m->acc_bytes = out.buffer.dtype().bytes();
    m->out_h = extent_of(blk.iters[m->h.spatial].dom.extent);
    m->out_w = extent_of(blk.iters[m->w.spatial].dom.extent);
    m->out_c = extent_of(blk.iters[m->n].dom.extent);
    m->in_c = extent_of(blk.iters[m->c].dom.extent);
    for (const std::vector<int> *its : {&m->batch, &m->m_other})
      for (int it : *its) {
        int64_t e = extent_of(blk.iters[it].dom.extent);
        m->images = e < 0 || m->images < 0 ? -1 : m->images * e;
      }
    m->in_inner_is_c = in.inner_iter() == m->c;
    m->w_inner_is_n = wt.inner_iter() == m->n;
    m->out_inner_is_n = out.inner_iter() == m->n;
    m->in_contig = extent_of(in.buffer.shape().back());
    m->w_contig = extent_of(wt.buffer.shape().back());
    const BlockInfo &last = m->epilogue.empty() ? blk : info.blocks[info.find(m->epilogue.back())];
    m->out_bytes = last.writes[0].buffer.dtype().bytes();
    m->out_contig = extent_of(last.writes[0].buffer.shape().back());
    return R(MatchPtr(m));
  }

  std::unique_ptr<Config> default_config(const Match &mm, const Arch &arch) const override;

  std::unique_ptr<Config> config_from_json(const Json &j) const override {
    return std::make_unique<Conv2dConfig>(Conv2dConfig::from_json(j));
  }

  schedule::Schedule build_schedule(const ir::PrimFunc &f, const Match &mm, const Config &config) const override;
};

std::unique_ptr<Config> Conv2dRule::default_config(const Match &mm, const Arch &arch) const {
  const auto &m = static_cast<const ConvMatch &>(mm);
  auto c = std::make_unique<Conv2dConfig>();
  // The direct form by default: its input tile is fetched once per K step
  // (the implicit GEMM's A tile re-reads each input pixel once per window tap
  // covering it, kernel_h x kernel_w times for stride 1, and computes each
  // address with divisions), it needs no constant extents, and no device
  // measurement has shown the implicit GEMM faster yet. A policy may still
  // propose "implicit_gemm" (e.g. for 1 x 1 or strided windows, where the
  // halo saves little).
  c->form = Conv2dConfig::kDirect;
  c->a_bytes = m.a_bytes, c->b_bytes = m.b_bytes, c->acc_bytes = m.acc_bytes;
  c->kernel_h = m.kernel_h, c->kernel_w = m.kernel_w;
  c->stride_h = m.h.stride, c->stride_w = m.w.stride, c->dilation_h = m.h.dilation,
  c->dilation_w = m.w.dilation;
  const int64_t warp = arch.compute.warp_size, max_vec = arch.memory.max_vector_bytes;
  const int64_t eb = std::max(m.a_bytes, m.b_bytes);
  // As the matmul: 4 output channels per thread along threadIdx.x (up to a
  // warp of them), 2 x 4 pixels per thread, about 256 threads.
  c->thread_n = std::clamp<int64_t>(max_vec / std::max<int64_t>(eb, 1), 1, 4);
  c->block_n = warp * c->thread_n;
  if (m.out_c > 0)
    while (c->block_n / 2 >= c->thread_n && m.out_c <= c->block_n / 2) c->block_n /= 2;
  // The pixel tile: power-of-two thread counts over rows and columns, with
  // 128 to 256 threads in all, covering the output with the least overhang
  // (no masked tail when the tile divides it), then the most threads, then
  // the widest (rows of the input tile are contiguous).
  c->thread_h = 2, c->thread_w = 4;
  const int64_t threads_n = c->block_n / c->thread_n;
  const int64_t target = std::max<int64_t>(1, 256 / threads_n);
  auto overhang = [](int64_t tile, int64_t extent) {
    return extent > 0 ? static_cast<double>((extent + tile - 1) / tile * tile) / static_cast<double>(extent)
                      : 1.0;
  };
  double best = 0;
  for (int64_t th = 1; th <= target; th *= 2)
    for (int64_t tw = 1; th * tw <= target; tw *= 2) {
      if (th * tw * 2 < target) continue;
      int64_t bh = th * c->thread_h, bw = tw * c->thread_w;
      double score = overhang(bh, m.out_h) * overhang(bw, m.out_w);
      bool better = best == 0 || score < best - 1e-9 ||
                    (score < best + 1e-9 && (bh * bw > c->block_h * c->block_w ||
                                             (bh * bw == c->block_h * c->block_w && bw > c->block_w)));
      if (better) best = score, c->block_h = bh, c->block_w = bw;
    }
  c->block_k = std::max<int64_t>(4, arch.memory.sector_bytes / eb);
  if (m.in_c > 0)
    while (c->block_k / 2 >= 1 && m.in_c <= c->block_k / 2) c->block_k /= 2;
  while (c->shared_bytes() > arch.max_smem_per_block() && c->block_k > 1) c->block_k /= 2;
  c->vector_a = c->vector_b = c->vector_c = 0;  // the widest
  fit_layout(m, arch, *c);
  return c;
}

/// The position of `buffer` (by name) among the reads of block `block`.
int64_t read_position(const schedule::Schedule &sch, const schedule::BlockRef &block,
                      const std::string &buffer) {
  const auto &reads = sch.get(block).as<ir::Block>()->reads;
  for (size_t i = 0; i < reads.size(); ++i)
    if (reads[i].buffer.name() == buffer) return static_cast<int64_t>(i);
  TESSERA_ICHECK(false) << "block '" << block.name << "' does not read '" << buffer << "'";
  return -1;
}

/// The iters (positions) an access uses, in iter order: the dimensions of
/// the buffer reindex makes for it.
std::vector<int> iters_used(const Access &a) {
  std::set<int> used;
  for (const auto &d : a.dim_iters) used.insert(d.begin(), d.end());
  return {used.begin(), used.end()};
}

/// The conv block re-laid out as a GEMM (see the header): its operands and
/// output as buffers over the iters, [M, K], [K, N], [M, N], every block
/// over the fused iters [batch.., M, N, K], the epilogue folded into the
/// output's copy. Names the copies it made.
struct GemmForm {
  schedule::Schedule sch;
  std::string in_copy, w_copy, out_copy;
  int64_t k_extent = 1;
};

GemmForm reindex_as_gemm(const ir::PrimFunc &f, const ConvMatch &m) {
  FuncInfo info = analysis::analyze(f);
  const BlockInfo &blk = info.blocks[info.find(m.block)];
  std::vector<int> m_iters = m.m_other, k_iters{m.h.reduce, m.w.reduce, m.c};
  m_iters.push_back(m.h.spatial);
  m_iters.push_back(m.w.spatial);
  // One variable per iter for the index maps; the fused strides need constant extents.
  std::vector<ir::Var> v;
  std::vector<int64_t> extent;
  for (const analysis::IterInfo &it : blk.iters) {
    v.emplace_back(it.var.name(), it.var.dtype());
    extent.push_back(extent_of(it.dom.extent));
  }
  for (const auto *group : {&m_iters, &k_iters})
    for (int it : *group)
      if (extent[it] <= 0)
        throw ConfigError("conv2d config: form = \"implicit_gemm\" needs constant extents to fuse; iter '" +
                          blk.iters[it].var.name() + "' of block '" + m.block + "' has a symbolic one");
  auto fused = [&](const std::vector<int> &its) {
    ir::Expr e;
    int64_t stride = 1;
    for (size_t i = its.size(); i-- > 0;) {
      ir::Expr term =
          stride == 1 ? ir::Expr(v[its[i]]) : ir::mul(v[its[i]], ir::make_int(v[its[i]].dtype(), stride));
      e = e.defined() ? ir::add(term, e) : term;
      stride *= extent[its[i]];
    }
    return e;
  };
  auto map_of = [&](const std::vector<int> &dims, const std::vector<ir::Expr> &tail) {
    schedule::IndexMap im;
    for (int it : dims) im.src.push_back(v[it]);
    for (int it : m.batch) im.dst.push_back(v[it]);
    im.dst.insert(im.dst.end(), tail.begin(), tail.end());
    return im;
  };
  std::vector<int> all(blk.iters.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  const ir::Expr fm = fused(m_iters), fk = fused(k_iters);
  const Access &in = *std::find_if(blk.reads.begin(), blk.reads.end(),
                                   [&](const Access &a) { return a.buffer.name() == m.in_buffer; });
  const Access &wt = *std::find_if(blk.reads.begin(), blk.reads.end(),
                                   [&](const Access &a) { return a.buffer.name() == m.w_buffer; });
  schedule::IndexMap in_map = map_of(iters_used(in), {fm, fk}), w_map = map_of(iters_used(wt), {fk, v[m.n]}),
                     out_map = map_of(iters_used(blk.writes[0]), {fm, v[m.n]}),
                     conv_map = map_of(all, {fm, v[m.n], fk});

  // Operands and output as buffers over the iters, laid out [M, K], [K, N],
  // [M, N]; the epilogue folded into the output's copy; every block over
  // the fused iters.
  GemmForm out{schedule::Schedule(f), "", "", ""};
  schedule::Schedule &sch = out.sch;
  schedule::BlockRef conv = sch.get_block(m.block);
  schedule::BlockRef in_copy = sch.reindex(conv, read_position(sch, conv, m.in_buffer), false);
  schedule::BlockRef w_copy = sch.reindex(conv, read_position(sch, conv, m.w_buffer), false);
  schedule::BlockRef out_copy = sch.reindex(conv, 0, true);
  for (const std::string &name : m.epilogue) sch.reverse_compute_inline(sch.get_block(name));
  sch.transform_layout(in_copy, 0, true, in_map);
  sch.transform_layout(w_copy, 0, true, w_map);
  sch.transform_layout(conv, 0, true, out_map);
  sch.transform_block_layout(in_copy, in_map);
  sch.transform_block_layout(w_copy, w_map);
  sch.transform_block_layout(out_copy, out_map);
  sch.transform_block_layout(conv, conv_map);
  out.in_copy = in_copy.name, out.w_copy = w_copy.name, out.out_copy = out_copy.name;
  for (int it : k_iters) out.k_extent *= extent[it];
  return out;
}

/// The implicit-GEMM form: reindex_as_gemm, then the matmul schedule on iters
/// [batch.., M, N, K]; the padding and the operand copies inlined into the
/// shared fetches, the output copy (with the epilogue) into the write-back.
schedule::Schedule apply_implicit_gemm(const ir::PrimFunc &f, const ConvMatch &m, const Conv2dConfig &c) {
  GemmForm g = reindex_as_gemm(f, m);
  schedule::Schedule &sch = g.sch;
  schedule::BlockRef in_copy = sch.get_block(g.in_copy), w_copy = sch.get_block(g.w_copy),
                     out_copy = sch.get_block(g.out_copy);
  auto written = [&](const schedule::BlockRef &b) {
    return sch.get(b).as<ir::Block>()->writes[0].buffer.name();
  };
  const int nb = static_cast<int>(m.batch.size());
  const int64_t k_extent = g.k_extent;
  detail::GemmPlan p;
  p.block = m.block;
  for (int i = 0; i < nb; ++i) p.batch.push_back(i);
  p.m = {{nb, c.block_m, c.block_m / c.thread_m}};
  p.n = {{nb + 1, c.block_n, c.block_n / c.thread_n}};
  p.k = {{nb + 2, c.block_k, 1}};
  p.prologue = m.prologue;
  p.prologue.push_back(in_copy.name);
  p.prologue.push_back(w_copy.name);
  p.epilogue = {out_copy.name};
  p.a.buffer = written(in_copy);
  p.a.vector = c.vector_a;
  p.a.pad = c.pad_a;
  p.a.pitch = detail::tile_pitch(c.block_k, k_extent);
  p.b.buffer = written(w_copy);
  p.b.vector = c.vector_b;
  p.b.pad = c.pad_b;
  p.b.fragment = true;
  p.b.pitch = detail::tile_pitch(c.block_n, m.out_c);
  p.vector_c = m.out_inner_is_n ? c.vector_c : 1;
  p.unroll = c.unroll;
  p.stages = c.stages;
  detail::schedule_gemm(sch, p);
  return sch;
}

schedule::Schedule Conv2dRule::build_schedule(const ir::PrimFunc &f, const Match &mm, const Config &config) const {
  const auto &m = static_cast<const ConvMatch &>(mm);
  const auto *c = dynamic_cast<const Conv2dConfig *>(&config);
  if (!c) throw ConfigError(std::string("the conv2d rule got a config for '") + config.rule() + "'");
  for (auto [field, got, want] : {std::tuple{"a_bytes", c->a_bytes, m.a_bytes},
                                  {"b_bytes", c->b_bytes, m.b_bytes},
                                  {"acc_bytes", c->acc_bytes, m.acc_bytes},
                                  {"kernel_h", c->kernel_h, m.kernel_h},
                                  {"kernel_w", c->kernel_w, m.kernel_w},
                                  {"stride_h", c->stride_h, m.h.stride},
                                  {"stride_w", c->stride_w, m.w.stride},
                                  {"dilation_h", c->dilation_h, m.h.dilation},
                                  {"dilation_w", c->dilation_w, m.w.dilation}})
    require(got == want, "conv2d", field, got,
            "does not describe this workload (" + std::to_string(want) + ")");
  if (!m.out_inner_is_n)
    require(c->vector_c == 1, "conv2d", "vector_c", c->vector_c, "needs the output channels innermost");
  if (c->implicit_gemm()) return apply_implicit_gemm(f, m, *c);
  if (!m.in_inner_is_c)
    require(c->pad_a == 0, "conv2d", "pad_a", c->pad_a, "needs the input channels innermost");
  detail::GemmPlan p;
  p.block = m.block;
  p.batch = m.batch;
  for (int it : m.m_other) p.m.push_back({it, 1, 1});
  p.m.push_back({m.h.spatial, c->block_h, c->block_h / c->thread_h});
  p.m.push_back({m.w.spatial, c->block_w, c->block_w / c->thread_w});
  p.n = {{m.n, c->block_n, c->block_n / c->thread_n}};
  // The whole window per K step, the channels split by block_k (last: the
  // one K loop always split, so that the fetches sit at its outer piece).
  p.k = {{m.h.reduce, m.kernel_h, 1}, {m.w.reduce, m.kernel_w, 1}, {m.c, c->block_k, 1}};
  p.prologue = m.prologue;
  p.epilogue = m.epilogue;
  p.a.buffer = m.in_buffer;
  p.a.vector = c->vector_a;
  p.a.pad = c->pad_a;
  p.a.pitch = detail::tile_pitch(c->block_k, m.in_c);
  p.b.buffer = m.w_buffer;
  p.b.vector = c->vector_b;
  p.b.pad = c->pad_b;
  p.b.fragment = m.w_inner_is_n;
  p.b.pitch = detail::tile_pitch(c->block_n, m.out_c);
  p.vector_c = m.out_inner_is_n ? c->vector_c : 1;
  p.unroll = c->unroll;
  p.stages = c->stages;
  return detail::schedule_gemm(f, p);
}

/// `m` as the conv2d rule's match, or ConfigError naming `what`.
const ConvMatch &conv_match(const Match &m, const char *what) {
  const auto *cm = dynamic_cast<const ConvMatch *>(&m);
  if (!cm) throw ConfigError(std::string(what) + ": the match is not the conv2d rule's");
  return *cm;
}

}  // namespace

Conv2dProblem conv2d_problem(const Match &m) {
  const ConvMatch &cm = conv_match(m, "conv2d_problem");
  return {cm.images,        cm.out_h,        cm.out_w,          cm.out_c,    cm.in_c, !cm.prologue.empty(),
          cm.in_inner_is_c, cm.w_inner_is_n, cm.out_inner_is_n, cm.out_bytes};
}

void fit_conv2d_layout(const Match &m, const Arch &arch, Conv2dConfig &c) {
  fit_layout(conv_match(m, "fit_conv2d_layout"), arch, c);
}

const Rule &conv2d_rule() {
  static const Conv2dRule rule;
  return rule;
}

std::optional<ir::PrimFunc> conv2d_as_gemm(const ir::PrimFunc &f, const Arch &arch) {
  auto m = conv2d_rule().match(f, arch);
  if (!m) return std::nullopt;
  try {
    return reindex_as_gemm(f, conv_match(**m, "conv2d_as_gemm")).sch.func();
  } catch (const UserError &) {  // symbolic extents (ConfigError), a primitive's refusal
    return std::nullopt;
  }
}

}  // namespace tessera::rules
