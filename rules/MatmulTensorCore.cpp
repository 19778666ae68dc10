//===- rules/MatmulTensorCore.cpp - GEMM on tensor cores: config, match, rule ===//
//
// The kernel itself is built in TensorCoreKernel.cpp from the match made here.
//
//===----------------------------------------------------------------------===//
#include "tessera/rules/MatmulTensorCore.h"

#include <algorithm>

#include "ConfigJson.h"
#include "GemmSchedule.h"
#include "TensorCoreMatch.h"

#include "tessera/analysis/BlockInfo.h"
#include "tessera/analysis/MatmulView.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/rules/Conv2d.h"

namespace tessera::rules {

using analysis::Access;
using analysis::BlockInfo;
using analysis::FuncInfo;
using analysis::MatmulRole;
using namespace ir;

//===----------------------------------------------------------------------===//
// Config
//===----------------------------------------------------------------------===//

Json TensorCoreConfig::to_json() const {
  Json j{{"rule", rule()},     {"block_m", block_m}, {"block_n", block_n}, {"block_k", block_k},
              {"warps_m", warps_m}, {"warps_n", warps_n}, {"stages", stages},   {"pad", pad},
              {"swizzle", swizzle},  {"raster", raster},   {"in_bytes", in_bytes}, {"acc_bytes", acc_bytes},
              {"a_elementwise", a_elementwise}, {"b_elementwise", b_elementwise}};
  if (wgmma) j["wgmma"] = true;  // absent for mma.sync: the configs stored before wgmma read the same
  if (tma) j["tma"] = true;
  if (warp_specialized) j["warp_specialized"] = true;
  if (persistent > 0) j["persistent"] = persistent;
  if (tma_store) j["tma_store"] = true;
  return j;
}

TensorCoreConfig TensorCoreConfig::from_json(const Json &j) {
  ConfigReader r(j, "matmul_tensor_core");
  TensorCoreConfig c;
  c.block_m = r.integer("block_m");
  c.block_n = r.integer("block_n");
  c.block_k = r.integer("block_k");
  c.warps_m = r.integer("warps_m");
  c.warps_n = r.integer("warps_n");
  c.stages = r.integer("stages");
  c.pad = r.integer("pad");
  c.swizzle = r.boolean("swizzle");
  c.raster = r.integer("raster");
  c.in_bytes = r.integer("in_bytes");
  c.acc_bytes = r.integer_or("acc_bytes", 4);
  c.a_elementwise = r.boolean("a_elementwise");
  c.b_elementwise = r.boolean("b_elementwise");
  c.wgmma = r.boolean_or("wgmma", false);
  c.tma = r.boolean_or("tma", false);
  c.warp_specialized = r.boolean_or("warp_specialized", false);
  c.persistent = r.integer_or("persistent", 0);
  c.tma_store = r.boolean_or("tma_store", false);
  r.finish();
  return c;
}

int64_t tensor_core_mma_k(int64_t in_bytes) { return in_bytes == 1 ? 32 : in_bytes == 2 ? 16 : 8; }

int64_t TensorCoreConfig::mma_k() const { return tensor_core_mma_k(in_bytes); }

int64_t TensorCoreConfig::shared_bytes() const {
  const int64_t outer_pad = in_bytes == 4 ? 2 * pad : pad;
  auto tile = [&](int64_t rows) { return std::max(rows * (block_k + pad), block_k * (rows + outer_pad)); };
  return stages * (tile(block_m) + tile(block_n)) * in_bytes + store_slot_bytes();
}

int64_t TensorCoreConfig::registers() const {
  int64_t acc = warp_m() / 16 * (warp_n() / 8) * 4 * acc_bytes / 4;
  // One K slice's fragments: four A and two B registers per tile at any
  // width (tf32's 16 x 8 A tile is four 32-bit elements).
  // (wgmma reads both operands from shared memory: no fragments.)
  int64_t frags = wgmma ? 0 : warp_m() / 16 * 4 + warp_n() / 8 * 2;
  // tf32 fragments are loaded and rounded element by element: their
  // addresses and rounded values stay live across the unrolled slices (sm_80:
  // 64 x 64 warp tiles spill 48 to 80 bytes; this keeps them out).
  if (in_bytes == 4) frags += frags * 3 / 2;
  int64_t copies = ((a_elementwise ? block_m : 0) + (b_elementwise ? block_n : 0)) * block_k / threads();
  return acc + frags + 48 + copies * 5 / 2;
}

int64_t TensorCoreConfig::launch_registers() const {
  if (!warp_specialized) return registers();
  return std::min(registers(), kRegisterFile / threads() / 8 * 8);
}

void TensorCoreConfig::validate(const Arch &arch) const {
  const char *r = rule();
  for (auto [name, v] : {std::pair{"block_m", block_m}, {"block_n", block_n}, {"block_k", block_k},
                         {"warps_m", warps_m}, {"warps_n", warps_n}})
    require(v >= 1, r, name, v, "must be at least 1");
  require(block_m % (16 * warps_m) == 0, r, "block_m", block_m,
          "is not a multiple of 16 x warps_m = " + std::to_string(16 * warps_m) + " (m16 tiles per warp)");
  require(block_n % (16 * warps_n) == 0, r, "block_n", block_n,
          "is not a multiple of 16 x warps_n = " + std::to_string(16 * warps_n) +
              " (pairs of n8 tiles per warp, one ldmatrix.x4 each)");
  require(in_bytes == 1 || in_bytes == 2 || in_bytes == 4, r, "in_bytes", in_bytes,
          "must be 2 (float16 or bfloat16 operands), 1 (int8) or 4 (tf32)");
  require(acc_bytes == 4 || (acc_bytes == 2 && in_bytes == 2), r, "acc_bytes", acc_bytes,
          "must be 4 (float32 or int32 accumulators) or, for 16-bit operands, 2 (float16)");
  require(block_k % mma_k() == 0, r, "block_k", block_k,
          "is not a multiple of " + std::to_string(mma_k()) + " (the mma K for " + std::to_string(in_bytes) +
              "-byte operands)");
  require(stages >= 2 && stages <= 6, r, "stages", stages, "must be 2 to 6 (cp.async tiles in flight)");
  require(pad == 0 || pad * in_bytes == 16, r, "pad", pad,
          "must be 0 or " + std::to_string(16 / in_bytes) + " elements (16 bytes keep rows aligned)");
  require(raster >= 0 && raster <= 64, r, "raster", raster,
          "must be 0 (row-major tiles) or a panel of 1 to 64 tile rows");
  if (swizzle) {
    require(in_bytes != 4, r, "swizzle", 1,
            "is for the ldmatrix reads of 8- and 16-bit tiles; tf32 tiles are padded (pad 4)");
    require(pad == 0, r, "pad", pad, "must be 0 with swizzle (the XOR layout replaces the padding)");
    // (wgmma's tiles are K-major rows of 128 bytes, checked below.)
    for (auto [name, v] : {std::pair{"block_k", block_k}, {"block_m", block_m}, {"block_n", block_n}})
      require(wgmma || v * in_bytes % 64 == 0, r, name, v,
              "makes shared rows of " + std::to_string(v * in_bytes) +
                  " bytes; swizzle needs multiples of 64 (four 16-byte chunks or more)");
  }
  if (wgmma) {
    require(arch.tensor_cores.wgmma, r, "wgmma", 1, "needs a GPU with Hopper's wgmma (sm_90a); " + arch.name +
                                                         " has none");
    require(in_bytes == 1 || in_bytes == 2, r, "in_bytes", in_bytes,
            "must be 2 (float16, bfloat16) or 1 (int8) with wgmma");
    require(acc_bytes == 4, r, "acc_bytes", acc_bytes, "must be 4 with wgmma (float32 or int32 accumulators)");
    require(warps_n == 1 && (warps_m == 4 || warps_m == 8), r, "warps_m", warps_m,
            "must be 4 or 8 with warps_n = 1 (one or two warpgroups, each warp holding 16 rows of the whole "
            "block_n per m64 subtile)");
    require(block_m == 16 * warps_m || block_m == 32 * warps_m, r, "block_m", block_m,
            "must be 16 or 32 x warps_m = " + std::to_string(16 * warps_m) + " or " + std::to_string(32 * warps_m) +
                " (one or two m64 subtiles per warpgroup)");
    require(block_n <= 256, r, "block_n", block_n, "is more than wgmma's N of 256");
    require(block_k * in_bytes == 128, r, "block_k", block_k,
            "must make 128-byte rows (" + std::to_string(128 / in_bytes) + " elements): the 128-byte swizzled layout");
    require(swizzle && pad == 0, r, "swizzle", swizzle, "must be on, pad 0, with wgmma (its 128-byte layout)");
  }
  if (tma) {
    require(wgmma, r, "tma", 1, "feeds the wgmma kernel only (set wgmma)");
    require(arch.memory.tma, r, "tma", 1, "needs a GPU with the Tensor Memory Accelerator; " + arch.name + " has none");
    require(!a_elementwise && !b_elementwise, r, "tma", 1,
            "copies tensors as they are; an operand computed by an inlined producer is copied element by element");
  }
  if (warp_specialized) require(tma, r, "warp_specialized", 1, "needs tma (its producer warpgroup copies by TMA)");
  require(persistent >= 0 && persistent <= 65535, r, "persistent", persistent,
          "must be 0 (a block per tile) or 1 to 65535 persistent blocks");
  if (persistent > 0)
    require(warp_specialized, r, "persistent", persistent,
            "needs warp_specialized (its producer runs ahead into the next tile)");
  if (tma_store)
    require(warp_specialized, r, "tma_store", 1,
            "needs warp_specialized (the consumer warps store their boxes while the producer copies)");
  require_threads(r, "threads", threads(), arch);
  if (warp_specialized) {
    // The consumers' registers come by setmaxnreg, from the producer's.
    require(registers() <= kConsumerRegisters, r, "registers", registers(),
            "(estimated: the accumulators of a consumer thread) exceed the " + std::to_string(kConsumerRegisters) +
                " a consumer warpgroup takes by setmaxnreg");
    require(kProducerRegisters * 128 + kConsumerRegisters * (threads() - 128) <= kRegisterFile, r, "threads",
            threads(), "leave the consumers fewer than " + std::to_string(kConsumerRegisters) + " registers each");
  } else {
    require(registers() <= arch.limits.max_regs_per_thread, r, "registers", registers(),
            "(estimated: accumulators and fragments of the warp tile) exceed the " +
                std::to_string(arch.limits.max_regs_per_thread) + " registers per thread of " + arch.name);
  }
  require(shared_bytes() <= arch.max_smem_per_block(), r, "shared memory", shared_bytes(),
          "bytes (stages x the padded A and B tiles, and tma_store's slots) exceed the " + std::to_string(arch.max_smem_per_block()) +
              " bytes one block of " + arch.name + " may use");
}

//===----------------------------------------------------------------------===//
// Match
//===----------------------------------------------------------------------===//

namespace {

using detail::EpilogueStep;
using detail::OperandInfo;
using detail::Producer;
using detail::TensorCoreMatch;

using detail::extent_of;

/// Whether `arch` lists the shape the kernel uses for `in`.
bool has_mma(const Arch &arch, DataType in) {
  const MmaSupport *s = tensor_core_mma(arch, in);
  if (!s) return false;
  for (const MmaShape &sh : s->shapes)
    if (sh.m == 16 && sh.n == 8 && sh.k == tensor_core_mma_k(in.bytes())) return true;
  return false;
}

/// The load of `buf` in block `b` (the first), or nullptr.
const Access *read_of(const BlockInfo &b, const Buffer &buf) {
  for (const Access &a : b.reads)
    if (a.buffer.same_as(buf)) return &a;
  return nullptr;
}

/// Folds the spatial consumer chain of the accumulator: each block stores
/// one element computed from the previous buffer at the same point.
std::optional<std::string> match_epilogue(const FuncInfo &info, const analysis::MatmulView &v, int matmul_block,
                                          TensorCoreMatch &out, std::vector<int> &side_producers) {
  Buffer prev = v.c.buffer;
  std::vector<int> prev_iters;  // the matmul iter of each dimension of prev
  for (size_t d = 0; d < out.c.indices.size(); ++d) prev_iters.push_back(out.c.single_iter(static_cast<int>(d)));
  // The chain: the accumulator's consumer, then each intermediate's, until
  // a block writes a parameter.
  // The accumulator and each step's result, with the matmul iter of each dimension.
  std::vector<std::pair<Buffer, std::vector<int>>> earlier = {{prev, prev_iters}};
  std::vector<int> chain;
  if (!v.epilogue.empty()) {
    int e = v.epilogue[0];
    for (;;) {
      chain.push_back(e);
      const BlockInfo &b = info.blocks[e];
      if (b.writes_output) break;
      if (b.consumers.size() != 1 || chain.size() > 8)
        return "epilogue block '" + b.name + "' writes an intermediate that " +
               std::to_string(b.consumers.size()) + " blocks read (a chain ends in one output)";
      e = b.consumers[0];
    }
  }
  if (v.epilogue.size() > 1 && chain.size() < v.epilogue.size())
    return "the accumulator has " + std::to_string(v.epilogue.size()) + " consumer blocks; a chain of one each is folded";
  for (int e : chain) {
    const BlockInfo &b = info.blocks[e];
    const std::string q = "epilogue block '" + b.name + "'";
    const auto *blk = b.block.as<Block>();
    const auto *st = blk ? blk->body.as<Store>() : nullptr;
    if (!st || b.writes.size() != 1 || !b.is_spatial() || b.is_guarded || !b.trivial_binding)
      return q + " is not one spatial store";
    const Access *r = read_of(b, prev);
    if (!r) return q + " does not read '" + prev->name + "'";
    EpilogueStep step;
    step.reads = prev;
    step.store = st;
    for (const analysis::IterInfo &it : b.iters) {
      step.iters.push_back(it.var);
      step.matmul_iter.push_back(-1);
    }
    for (size_t d = 0; d < r->indices.size(); ++d) {
      int it = r->single_iter(static_cast<int>(d));
      if (it < 0 || !r->is_simple) return q + " reads '" + prev->name + "' other than at one iter per dimension";
      step.matmul_iter[it] = prev_iters[d];
    }
    for (size_t i = 0; i < step.matmul_iter.size(); ++i)
      if (step.matmul_iter[i] < 0) return q + " has an iter that does not index '" + prev->name + "'";
    // Any other read of the accumulator or an earlier step's result (SiLU's
    // x * sigmoid(x)) must be of the element this step computes.
    for (const Access &a : b.reads)
      for (const auto &[buf, iters] : earlier) {
        if (!a.buffer.same_as(buf) || buf.same_as(prev)) continue;
        bool same = a.is_simple && a.indices.size() == iters.size();
        for (size_t d = 0; same && d < a.indices.size(); ++d) {
          int it = a.single_iter(static_cast<int>(d));
          same = it >= 0 && step.matmul_iter[it] == iters[d];
        }
        if (!same) return q + " reads '" + buf->name + "' other than at the element it computes";
      }
    // The written buffer's dimensions, in matmul iters, for the next step
    // (the last may write at any index expression: a convolution's output).
    const Access &w = b.writes[0];
    prev_iters.clear();
    for (size_t d = 0; d < w.indices.size(); ++d) {
      int it = w.single_iter(static_cast<int>(d));
      if (it < 0 && e != chain.back())
        return q + " writes '" + w.buffer->name + "' other than at one iter per dimension";
      prev_iters.push_back(it < 0 ? -1 : step.matmul_iter[it]);
    }
    prev = w.buffer;
    earlier.emplace_back(prev, prev_iters);
    out.epilogue.push_back(std::move(step));
  }
  // What the chain reads besides the accumulator (a bias computed by a block
  // of its own): those blocks are inlined like the operands' producers.
  for (int e : chain)
    for (int p : info.blocks[e].producers)
      if (p != matmul_block && std::find(chain.begin(), chain.end(), p) == chain.end() &&
          std::find(side_producers.begin(), side_producers.end(), p) == side_producers.end())
        side_producers.push_back(p);
  return std::nullopt;
}

/// Every block in `todo` (the writers of what the matmul block or the
/// epilogue reads) and, transitively, what those read must be inlinable
/// where their values are read: one store at plain iters, read by exactly
/// one block, nothing but loads, arithmetic and selects.
std::optional<std::string> match_producers(const FuncInfo &info, std::vector<int> todo, TensorCoreMatch &out) {
  for (size_t n = 0; n < todo.size(); ++n) {
    const BlockInfo &b = info.blocks[todo[n]];
    const std::string q = "producer block '" + b.name + "'";
    const auto *blk = b.block.as<Block>();
    const auto *st = blk ? blk->body.as<Store>() : nullptr;
    if (!st || !b.is_inlinable() || b.writes.size() != 1 || b.consumers.size() != 1)
      return q + " cannot be inlined where its values are read (one store at plain iters, read by one block)";
    if (todo.size() > 8) return "the operands have more than 8 producer blocks";
    Producer p;
    p.store = st;
    for (size_t d = 0; d < b.writes[0].indices.size(); ++d) {
      int it = b.writes[0].single_iter(static_cast<int>(d));
      if (it < 0) return q + " writes other than one iter per dimension";
      p.dim_vars.push_back(b.iters[it].var);
    }
    if (out.producers.emplace(st->buffer.get(), p).second) out.producer_order.push_back(st->buffer.get());
    for (int q2 : b.producers) todo.push_back(q2);
  }
  return std::nullopt;
}

class TensorCoreRule final : public Rule {
 public:
  const char *name() const override { return "matmul_tensor_core"; }

  analysis::MatchResult<MatchPtr> match(const PrimFunc &f, const Arch &arch) const override {
    using R = analysis::MatchResult<MatchPtr>;
    if (!arch.memory.cp_async) return R::fail(arch.name + " has no cp.async");
    FuncInfo info = analysis::analyze(f);
    if (info.is_scheduled) return R::fail("the function is already scheduled");
    if (info.has_opaque_structure) return R::fail("it has statements outside blocks");
    std::vector<int> reds = info.reduction_blocks();
    if (reds.size() != 1) return R::fail("it has " + std::to_string(reds.size()) + " reduction blocks; a matmul has one");
    auto v = analysis::match_matmul(info, reds[0]);
    if (!v) {
      // A convolution: as the GEMM the conv2d rule's implicit_gemm form lays
      // it out (constant extents), its window gathers inlined into A's fetch.
      if (std::optional<PrimFunc> g = conv2d_as_gemm(f, arch)) {
        auto gm = match(*g, arch);
        if (!gm) return R::fail("as an implicit GEMM: " + gm.reason());
        auto tm = std::const_pointer_cast<Match>(*gm);
        static_cast<TensorCoreMatch &>(*tm).func = *g;
        return MatchPtr(tm);
      }
      return R::fail(v.reason());
    }
    const BlockInfo &blk = info.blocks[reds[0]];
    const std::string q = "block '" + blk.name + "'";
    if (!blk.trivial_binding) return R::fail(q + " is not bound one-to-one to loops from 0");
    if (blk.is_guarded) return R::fail(q + " is under a condition");
    if (v->m.size() != 1 || v->n.size() != 1 || v->k.size() != 1)
      return R::fail(q + " needs one M, one N and one K loop");
    auto m = std::make_shared<TensorCoreMatch>();
    if (auto why = match_producers(info, info.blocks[reds[0]].producers, *m)) return R::fail(*why);
    DataType in = v->a_dtype;
    const bool integer = in == DataType::int_(8), tf32 = in == DataType::float32();
    if (!(in.is_float16() || in.is_bfloat16() || integer || tf32) || v->b_dtype != in)
      return R::fail("operands are " + v->a_dtype.str() + " and " + v->b_dtype.str() +
                     "; the tensor-core rule takes float16, bfloat16, int8 or (tf32) float32 pairs");
    if (tf32 && !v->tf32)
      return R::fail("float32 operands run on tensor cores only as tf32, which the program must ask for: "
                     "round both factors with T.round_to_tf32");
    if (integer ? v->acc_dtype != DataType::int32()
                : !(v->acc_dtype == DataType::float32() || (!tf32 && v->acc_dtype == in)))
      return R::fail("the accumulator is " + v->acc_dtype.str() + "; " +
                     (integer ? std::string("int32") : tf32 ? "float32" : "float32 or the operand type") +
                     " is needed");
    if (!has_mma(arch, in))
      return R::fail(arch.name + " lists no mma.sync m16n8k" + std::to_string(tensor_core_mma_k(in.bytes())) + " for " +
                     (tf32 ? std::string("tfloat32") : in.str()));
    if (integer && (v->a.inner() != MatmulRole::K || v->b.inner() != MatmulRole::K))
      return R::fail("int8 operands must both be K-contiguous (A [M, K], B [N, K]: \"nt\"); ldmatrix cannot "
                     "transpose 8-bit elements, and this is " + v->layout());

    m->info = info;
    m->func = f;
    m->block = reds[0];
    m->batch = v->batch;
    m->m = v->m[0], m->n = v->n[0], m->k = v->k[0];
    m->in_dtype = in;
    m->acc_dtype = v->acc_dtype;
    m->layout = v->layout();
    m->c = blk.writes.at(0);
    for (size_t d = 0; d < m->c.indices.size(); ++d)
      if (m->c.single_iter(static_cast<int>(d)) < 0) return R::fail(q + " writes its output other than one iter per dimension");
    for (auto [op, mo, role] : {std::tuple{&m->a, &v->a, MatmulRole::M}, {&m->b, &v->b, MatmulRole::N}}) {
      const Access *acc = read_of(blk, mo->buffer);
      if (!acc || !acc->is_simple) return R::fail(q + " reads '" + mo->buffer->name + "' other than at its iters");
      op->buffer = mo->buffer;
      op->access = *acc;
      if (mo->inner() != MatmulRole::K && mo->inner() != role)
        return R::fail("the contiguous dimension of '" + mo->buffer->name + "' is a batch dimension");
      op->k_inner = mo->inner() == MatmulRole::K;
      op->contig = extent_of(mo->buffer.shape().back());
      const int64_t piece = std::max(4 / in.bytes(), 1);  // the narrowest cp.async (4 bytes), in elements
      op->elementwise = m->producers.count(mo->buffer.get()) > 0 || op->contig <= 0 || op->contig % piece != 0;
    }
    std::vector<int> side_producers;
    if (auto why = match_epilogue(info, *v, reds[0], *m, side_producers)) return R::fail(*why);
    if (auto why = match_producers(info, side_producers, *m)) return R::fail(*why);
    return MatchPtr(m);
  }

  std::unique_ptr<Config> default_config(const Match &mt, const Arch &arch) const override {
    // 128 x 256 x 128 bytes of K with 8 warps of 64 x 64 and 3 stages (the
    // fastest at 4096^3 on an H100; 153 KB of shared memory); smaller tiles
    // for operands copied element by element (their index arithmetic takes
    // registers) and where shared memory is short.
    const auto &m = dynamic_cast<const TensorCoreMatch &>(mt);
    // The first of these that fits (registers, shared memory) on `arch`.
    const int64_t b = m.in_dtype.bytes();
    struct Tiling {
      int64_t bm, bn, bk_bytes, wm, wn, stages;
    };
    const bool elementwise = m.a.elementwise || m.b.elementwise;
    std::vector<Tiling> order = {{128, 128, 64, 2, 4, 3}, {128, 128, 32, 2, 4, 3}, {64, 64, 64, 2, 2, 2},
                                 {64, 64, 32, 2, 2, 2}};
    // 16-bit loads in pieces: the measured winner first.
    if (!elementwise) order.insert(order.begin(), Tiling{128, 256, 128, 2, 4, 3});
    // tf32: 64 x 64 warp tiles spill (their fragments load element by
    // element); 128 x 128 with 128 bytes of K is the policy's top-1 at 4096^3.
    if (!elementwise && b == 4) order.insert(order.begin(), Tiling{128, 128, 128, 2, 4, 3});
    auto c = std::make_unique<TensorCoreConfig>();
    const int64_t acc_bytes = preferred_acc_bytes(arch, tensor_core_problem(m));
    for (const Tiling &t : order) {
      c->in_bytes = b;
      c->acc_bytes = acc_bytes;
      c->a_elementwise = m.a.elementwise, c->b_elementwise = m.b.elementwise;
      c->pad = 16 / b;
      c->block_m = t.bm, c->block_n = t.bn, c->block_k = std::max<int64_t>(t.bk_bytes / b, c->mma_k());
      c->warps_m = t.wm, c->warps_n = t.wn, c->stages = t.stages;
      try {
        c->validate(arch);
        break;
      } catch (const ConfigError &) {
      }
    }
    return c;
  }

  std::unique_ptr<Config> config_from_json(const Json &j) const override {
    return std::make_unique<TensorCoreConfig>(TensorCoreConfig::from_json(j));
  }

  schedule::Schedule build_schedule(const PrimFunc &f, const Match &mt, const Config &config) const override;
};

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

schedule::Schedule TensorCoreRule::build_schedule(const PrimFunc &f, const Match &mt, const Config &config) const {
  const auto *m = dynamic_cast<const TensorCoreMatch *>(&mt);
  const auto *c = dynamic_cast<const TensorCoreConfig *>(&config);
  if (!m || !c) throw ConfigError("matmul_tensor_core: the match or config (" + config.str() + ") is another rule's");
  if (c->a_elementwise != m->a.elementwise || c->b_elementwise != m->b.elementwise)
    throw ConfigError("matmul_tensor_core config: a_elementwise/b_elementwise (" + std::to_string(c->a_elementwise) +
                      "/" + std::to_string(c->b_elementwise) + ") do not describe this workload (" +
                      std::to_string(m->a.elementwise) + "/" + std::to_string(m->b.elementwise) + ")");
  if (c->in_bytes != m->in_dtype.bytes())
    throw ConfigError("matmul_tensor_core config: in_bytes = " + std::to_string(c->in_bytes) + " but the operands are " +
                      m->in_dtype.str() + " (" + std::to_string(m->in_dtype.bytes()) + " bytes)");
  if (c->acc_bytes == 2 && !(m->in_dtype.is_float16() && m->acc_dtype.is_float16()))
    throw ConfigError("matmul_tensor_core config: acc_bytes = 2 (float16 accumulators) but the program accumulates " +
                      m->in_dtype.str() + " products in " + m->acc_dtype.str() +
                      "; only float16 accumulated in float16 may be");
  if (c->tma)
    if (std::string why = detail::tma_refusal(*m, c); !why.empty())
      throw ConfigError("matmul_tensor_core config: tma, but " + why);
  if (c->tma_store)
    if (std::string why = detail::tma_store_refusal(*m, c); !why.empty())
      throw ConfigError("matmul_tensor_core config: tma_store, but " + why);
  Stmt kernel = detail::build_tensor_core_kernel(*m, *c);
  // The root keeps its allocations that the kernel still uses: none of the
  // accumulator and epilogue intermediates (registers now).
  const PrimFunc &src = m->func;  // f, or its convolution's GEMM form (same parameters)
  const auto *root = src.body().as<Block>();
  TESSERA_ICHECK(root) << "a function's body is its root block";
  Stmt new_root = Block::make(root->name, {}, {}, Expr(), {}, {}, {}, std::nullopt, kernel, root->annotations);
  return schedule::Schedule(src.with_body(new_root));
}

}  // namespace

const MmaSupport *tensor_core_mma(const Arch &arch, ir::DataType in, int64_t acc_bytes) {
  if (in == DataType::float32()) return arch.find_mma("tfloat32", "float32");
  return arch.find_mma(in.str(), in.is_int() ? "int32" : acc_bytes == 2 ? "float16" : "float32");
}

int64_t preferred_acc_bytes(const Arch &arch, const TensorCoreProblem &p) {
  if (!p.f16_accumulation) return 4;
  const MmaSupport *f16 = tensor_core_mma(arch, p.in, 2), *f32 = tensor_core_mma(arch, p.in, 4);
  return f16 && (!f32 || f16->peak_tops > f32->peak_tops) ? 2 : 4;
}

TensorCoreProblem tensor_core_problem(const Match &mt) {
  const auto *m = dynamic_cast<const TensorCoreMatch *>(&mt);
  if (!m) throw ConfigError("matmul_tensor_core: the match is another rule's");
  const BlockInfo &blk = m->info.blocks[m->block];
  TensorCoreProblem p;
  p.batch_extent = make_int(blk.iters[m->m].var.dtype(), 1);
  for (int b : m->batch) {
    int64_t e = extent_of(blk.iters[b].dom.extent);
    p.batch = e < 0 || p.batch < 0 ? -1 : p.batch * e;
    p.batch_extent = p.batch_extent * cast(p.batch_extent.dtype(), blk.iters[b].dom.extent);
  }
  p.m_extent = blk.iters[m->m].dom.extent;
  p.n_extent = blk.iters[m->n].dom.extent;
  p.k_extent = blk.iters[m->k].dom.extent;
  p.m = extent_of(blk.iters[m->m].dom.extent);
  p.n = extent_of(blk.iters[m->n].dom.extent);
  p.k = extent_of(blk.iters[m->k].dom.extent);
  p.in = m->in_dtype;
  p.f16_accumulation = m->in_dtype.is_float16() && m->acc_dtype.is_float16();
  p.a_elementwise = m->a.elementwise, p.b_elementwise = m->b.elementwise;
  p.k_major = m->a.k_inner && m->b.k_inner;
  p.tma_copyable = detail::tma_refusal(*m).empty();
  p.a_k_major = m->a.k_inner, p.b_k_major = m->b.k_inner;
  p.tma_storable = detail::tma_store_refusal(*m).empty();
  p.out_bytes = detail::output_buffer(*m).dtype().bytes();
  return p;
}

const Rule &matmul_tensor_core_rule() {
  static const TensorCoreRule rule;
  return rule;
}

}  // namespace tessera::rules
