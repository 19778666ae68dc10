//===- lib/cpu/CpuSchedule.cpp - A function scheduled for the CPU ----------===//
#include "tessera/cpu/CpuSchedule.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tessera/analysis/BlockInfo.h"
#include "tessera/analysis/MatmulView.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/schedule/Schedule.h"
#include "tessera/support/Error.h"

#include "ConfigFields.h"

namespace tessera::cpu {

namespace {

/// The matmul block the CPU target tiles, or why there is none.
struct CpuMatmul {
  std::string block;
  ir::Var m, n, k;  // the loops of its M, N and K iters
  std::vector<ir::Var> batch;
  int64_t m_extent = -1, n_extent = -1, k_extent = -1;  // -1: symbolic
  int element_bytes = 4;
  /// B and its dimensions' roles.
  ir::Buffer b;
  std::vector<analysis::MatmulRole> b_roles;
  std::string why;
};

int64_t extent_of(const ir::Expr &e) { return ir::as_const_int(e).value_or(-1); }

CpuMatmul find_matmul(const ir::PrimFunc &f) {
  CpuMatmul out;
  analysis::FuncInfo info = analysis::analyze(f);
  if (info.is_scheduled) return out.why = "it is already scheduled", out;
  std::vector<int> reds = info.reduction_blocks();
  if (reds.size() != 1) return out.why = fmt::format("it has {} reduction blocks, not one matmul", reds.size()), out;
  auto v = analysis::match_matmul(info, reds[0]);
  if (!v) return out.why = v.reason(), out;
  const analysis::BlockInfo &blk = info.blocks[size_t(reds[0])];
  if (v->m.size() != 1 || v->n.size() != 1 || v->k.size() != 1)
    return out.why = "block '" + blk.name + "' has more than one M, N or K iter", out;
  if (blk.is_guarded) return out.why = "block '" + blk.name + "' is under a condition", out;
  auto loop_of = [&](int iter) { return blk.iters[size_t(iter)].loop; };
  for (int it : v->batch) {
    if (!loop_of(it).defined()) return out.why = "a batch iter of '" + blk.name + "' is not bound to its own loop", out;
    out.batch.push_back(loop_of(it));
  }
  out.m = loop_of(v->m[0]), out.n = loop_of(v->n[0]), out.k = loop_of(v->k[0]);
  if (!out.m.defined() || !out.n.defined() || !out.k.defined())
    return out.why = "the M, N and K iters of '" + blk.name + "' are not each bound to a loop of their own", out;
  out.block = blk.name;
  out.m_extent = extent_of(blk.iters[size_t(v->m[0])].dom.extent);
  out.n_extent = extent_of(blk.iters[size_t(v->n[0])].dom.extent);
  out.k_extent = extent_of(blk.iters[size_t(v->k[0])].dom.extent);
  out.element_bytes = std::max(1, v->acc_dtype.bytes());
  out.b = v->b.buffer;
  out.b_roles = v->b.dims;
  return out;
}

/// The position of `buffer` among the reads of block `name` in `f`.
int64_t read_index(const ir::PrimFunc &f, const std::string &name, const ir::Buffer &buffer) {
  int64_t index = -1;
  ir::pre_order_visit(f.body(), nullptr, [&](const ir::Stmt &s) {
    if (const auto *b = s.as<ir::Block>(); b && b->name == name)
      for (size_t r = 0; r < b->reads.size(); ++r)
        if (b->reads[r].buffer.same_as(buffer)) index = int64_t(r);
  });
  if (index < 0) throw InternalError("block '" + name + "' does not read '" + buffer.name() + "'");
  return index;
}

schedule::LoopRef loop_ref(schedule::Schedule &sch, const schedule::BlockRef &block, const ir::Var &var) {
  for (const schedule::LoopRef &l : sch.get_loops(block))
    if (l.var.same_as(var)) return l;
  throw InternalError("the loop '" + var.name() + "' is not around its block");
}

/// Whether B can be packed in panels of tile_n columns: a 2-d B (K x N or
/// N x K) with N a constant multiple of tile_n.
bool can_pack_b(const CpuMatmul &mm, int64_t tile_n) {
  return mm.b.defined() && mm.b_roles.size() == 2 && mm.n_extent > 0 && mm.n_extent % tile_n == 0;
}

/// B copied once per call into panels of tile_n columns, each panel's K
/// rows contiguous: Bp[n // tile_n, k, n % tile_n]. The inner loop then
/// reads B in order instead of rows a whole row of B apart.
void pack_b_panels(schedule::Schedule &sch, const schedule::BlockRef &block, const CpuMatmul &mm,
                   const CpuMatmulConfig &c) {
  schedule::BlockRef pack = sch.cache_read(block, read_index(sch.func(), mm.block, mm.b), "global");
  ir::Var x("x"), y("y");
  const bool k_first = mm.b_roles[0] == analysis::MatmulRole::K;
  const ir::Expr kk = k_first ? ir::Expr(x) : ir::Expr(y), nn = k_first ? ir::Expr(y) : ir::Expr(x);
  const ir::Expr t = ir::make_int(nn.dtype(), c.tile_n);
  sch.transform_layout(pack, 0, /*is_write=*/true,
                       schedule::IndexMap{{x, y}, {ir::floordiv(nn, t), kk, ir::floormod(nn, t)}});
}

}  // namespace

std::string CpuMatmulConfig::str() const {
  std::string s = fmt::format("{{\"tile_m\":{},\"tile_n\":{},\"tile_k\":{}", tile_m, tile_n, tile_k);
  if (pack_b) s += ",\"pack_b\":true";
  if (tile_mc > 0) s += fmt::format(",\"tile_mc\":{}", tile_mc);
  return s + "}";
}

CpuMatmulConfig CpuMatmulConfig::parse(const std::string &text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception &e) {
    throw UserError(std::string("CPU matmul config is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw UserError("CPU matmul config: expected an object like " + CpuMatmulConfig{}.str());
  CpuMatmulConfig c;
  for (auto [key, field] :
       {std::pair{"tile_m", &c.tile_m}, {"tile_n", &c.tile_n}, {"tile_k", &c.tile_k}, {"tile_mc", &c.tile_mc}}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_number_integer()) throw UserError(std::string("CPU matmul config: '") + key + "' must be an integer");
    *field = j[key].get<int64_t>();
  }
  if (j.contains("pack_b")) {
    if (!j["pack_b"].is_boolean()) throw UserError("CPU matmul config: 'pack_b' must be true or false");
    c.pack_b = j["pack_b"].get<bool>();
  }
  detail::check_known_fields(j, {"tile_m", "tile_n", "tile_k", "pack_b", "tile_mc"}, "CPU matmul config");
  return c;
}

namespace {

/// cpu_matmul_candidates of an analysed matmul.
std::vector<CpuMatmulConfig> candidates_for(const CpuMatmul &mm, const CpuArch &arch) {
  const int64_t lanes = std::max(1, arch.lanes(mm.element_bytes));
  // A C tile the registers hold (tile_m x tile_n accumulators, 32 vector
  // registers on AVX-512, 16 on AVX2, a few left for A and B), and K steps
  // that keep a tile_k x tile_n panel of B in L2 with the A rows in L1.
  const int64_t registers = arch.vector_bits >= 512 ? 32 : 16;
  std::vector<CpuMatmulConfig> out;
  std::vector<int64_t> k_steps{0};
  if (mm.k_extent < 0 || mm.k_extent > 256) k_steps.push_back(256);
  for (int64_t vectors : {int64_t(2), int64_t(1), int64_t(4)})
    for (int64_t rows : {int64_t(8), int64_t(4), int64_t(2), int64_t(1)}) {
      if (rows * vectors > registers - 4) continue;
      const int64_t tile_n = vectors * lanes;
      if (mm.n_extent > 0 && tile_n > std::max(lanes, mm.n_extent)) continue;
      if (mm.m_extent > 0 && rows > mm.m_extent) continue;
      for (int64_t k : k_steps) {
        if (can_pack_b(mm, tile_n)) out.push_back({rows, tile_n, k, true});
        out.push_back({rows, tile_n, k});
      }
    }
  // Goto's order for the larger register tiles: blocks of rows per core, K
  // steps outside the tiles.
  if (mm.batch.empty() && mm.m_extent > 0 && k_steps.size() > 1)
    for (int64_t mc : {int64_t(64), int64_t(128)})
      for (int64_t rows : {int64_t(8), int64_t(4)}) {
        const int64_t tile_n = 2 * lanes;
        if (mm.m_extent % mc != 0 || mm.m_extent <= mc || (mm.n_extent > 0 && tile_n > mm.n_extent)) continue;
        out.push_back({rows, tile_n, k_steps.back(), can_pack_b(mm, tile_n), mc});
      }
  return out;
}

}  // namespace

std::vector<CpuMatmulConfig> cpu_matmul_candidates(const ir::PrimFunc &f, const CpuArch &arch) {
  CpuMatmul mm = find_matmul(f);
  return mm.block.empty() ? std::vector<CpuMatmulConfig>{} : candidates_for(mm, arch);
}

CpuSchedule schedule_for_cpu(const ir::PrimFunc &f, const CpuArch &arch, const std::optional<CpuMatmulConfig> &config) {
  CpuMatmul mm = find_matmul(f);
  if (mm.block.empty()) return {f, "plain", "no matmul to tile: " + mm.why, std::nullopt};
  CpuMatmulConfig c = config ? *config : candidates_for(mm, arch).at(0);
  if (c.tile_m <= 0 || c.tile_n <= 0 || c.tile_k < 0)
    throw UserError("CPU matmul config " + c.str() + ": tile_m and tile_n must be positive and tile_k at least 0");
  if (c.pack_b && !can_pack_b(mm, c.tile_n))
    throw UserError("CPU matmul config " + c.str() + ": pack_b needs a 2-d B whose N extent (" +
                    (mm.n_extent < 0 ? std::string("symbolic") : std::to_string(mm.n_extent)) +
                    ") is a constant multiple of tile_n");
  if (c.tile_mc < 0 || (c.tile_mc > 0 && (c.tile_mc % c.tile_m != 0 || !mm.batch.empty())))
    throw UserError("CPU matmul config " + c.str() +
                    ": tile_mc must be a multiple of tile_m, for a matmul without batch dimensions");
  schedule::Schedule sch(f);
  schedule::BlockRef block = sch.get_block(mm.block);
  // M in tiles of tile_m rows (within blocks of tile_mc rows: the header's
  // second order), N in tiles of tile_n, K in steps of tile_k.
  std::vector<std::optional<int64_t>> m_factors{std::nullopt, c.tile_m};
  if (c.tile_mc > 0) m_factors = {std::nullopt, c.tile_mc / c.tile_m, c.tile_m};
  auto m = sch.split(loop_ref(sch, block, mm.m), m_factors);
  auto n = sch.split(loop_ref(sch, block, mm.n), {std::nullopt, c.tile_n});
  std::vector<schedule::LoopRef> k{loop_ref(sch, block, mm.k)};
  if (c.tile_k > 0 && (mm.k_extent < 0 || c.tile_k < mm.k_extent)) k = sch.split(k[0], {std::nullopt, c.tile_k});
  std::vector<schedule::LoopRef> order;
  if (c.tile_mc > 0) {
    // Blocks of rows over the cores, K steps outside the tiles.
    order.push_back(m[0]);
    if (k.size() > 1) order.push_back(k[0]);
    order.insert(order.end(), {n[0], m[1], k.back(), m[2], n[1]});
    sch.reorder(order);
    sch.parallel(m[0]);
    sch.decompose_reduction(block, order[1]);
  } else {
    for (const ir::Var &b : mm.batch) order.push_back(loop_ref(sch, block, b));
    order.push_back(m[0]);
    order.push_back(n[0]);
    for (const schedule::LoopRef &l : k) order.push_back(l);
    order.push_back(m[1]);
    order.push_back(n[1]);
    sch.reorder(order);
    // Rows of C over the cores: the batch and the row tiles, fused.
    std::vector<schedule::LoopRef> outer;
    for (size_t i = 0; i <= mm.batch.size(); ++i) outer.push_back(order[i]);
    schedule::LoopRef rows = outer.size() == 1 ? outer[0] : sch.fuse(outer);
    sch.parallel(rows);
    sch.decompose_reduction(block, k[0]);
  }
  sch.unroll(m.back());
  sch.vectorize(n[1]);
  if (c.pack_b) pack_b_panels(sch, block, mm, c);
  return {sch.func(), "matmul", "", c};
}

}  // namespace tessera::cpu
