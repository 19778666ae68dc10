//===- rules/Elementwise.cpp - Injective programs: plain or tiled ----------===//
#include "tessera/rules/Elementwise.h"

#include "ConfigJson.h"
#include "TransposeTile.h"

#include "tessera/analysis/BlockInfo.h"
#include "tessera/ir/Functor.h"

namespace tessera::rules {

using analysis::BlockInfo;
using analysis::FuncInfo;

Json ElementwiseConfig::to_json() const {
  return Json{{"rule", rule()},
              {"threads", threads},
              {"vector", vector},
              {"per_thread", per_thread},
              {"unroll", unroll},
              {"transpose_tile", transpose_tile},
              {"tile_rows", tile_rows},
              {"transpose_pad", transpose_pad},
              {"staged_bytes", staged_bytes}};
}

ElementwiseConfig ElementwiseConfig::from_json(const Json &j) {
  ConfigReader r(j, "elementwise");
  ElementwiseConfig c;
  c.threads = r.integer("threads");
  c.vector = r.integer("vector");
  c.per_thread = r.integer("per_thread");
  c.unroll = r.boolean("unroll");
  c.transpose_tile = r.integer("transpose_tile");
  c.tile_rows = r.integer("tile_rows");
  c.transpose_pad = r.integer("transpose_pad");
  c.staged_bytes = r.integer("staged_bytes");
  r.finish();
  return c;
}

int64_t ElementwiseConfig::shared_bytes() const {
  return is_tiled() ? transpose_tile * (transpose_tile + transpose_pad) * staged_bytes : 0;
}

void ElementwiseConfig::validate(const Arch &arch) const {
  require_threads(rule(), "threads", threads, arch);
  require(vector >= 1 && vector <= 16 && (vector & (vector - 1)) == 0, rule(), "vector", vector,
          "is not a power of two in [1, 16]");
  require(per_thread >= 1, rule(), "per_thread", per_thread, "must be at least 1");
  require(staged_bytes >= 0, rule(), "staged_bytes", staged_bytes, "is negative");
  const int64_t t = transpose_tile;
  require(t == 0 || (t >= 8 && t <= 128 && (t & (t - 1)) == 0), rule(), "transpose_tile", t,
          "is not 0 (the plain form) or a power of two in [8, 128]");
  if (!is_tiled()) {
    require(tile_rows == 0, rule(), "tile_rows", tile_rows,
            "must be 0 in the plain form (transpose_tile = 0)");
    require(transpose_pad == 0, rule(), "transpose_pad", transpose_pad,
            "must be 0 in the plain form (transpose_tile = 0)");
    return;
  }
  const std::string tiled = " in the tiled form (transpose_tile = " + std::to_string(t) + ")";
  require(tile_rows >= 1 && t % tile_rows == 0, rule(), "tile_rows", tile_rows,
          "does not divide transpose_tile = " + std::to_string(t));
  require(transpose_pad >= 0 && transpose_pad < t, rule(), "transpose_pad", transpose_pad,
          "is outside [0, transpose_tile = " + std::to_string(t) + ")");
  require(t % vector == 0, rule(), "vector", vector, "does not divide transpose_tile = " + std::to_string(t));
  require(threads == t / vector * tile_rows, rule(), "threads", threads,
          "is not transpose_tile / vector x tile_rows = " + std::to_string(t / vector * tile_rows) + tiled);
  require(per_thread == 1, rule(), "per_thread", per_thread, "must be 1" + tiled);
  require(staged_bytes >= 1, rule(), "staged_bytes", staged_bytes,
          "must be at least 1" + tiled + " (the staged inputs' bytes per element)");
  require(shared_bytes() <= arch.max_smem_per_block(), rule(), "transpose_tile", t,
          "needs " + std::to_string(shared_bytes()) + " bytes of shared memory, more than the " +
              std::to_string(arch.max_smem_per_block()) + " per block of " + arch.name);
}

namespace {

struct ElementwiseMatch final : Match {
  std::vector<std::string> inlined;  ///< producers to inline, in program order
  std::string block;                 ///< the output block
  int64_t static_extent = -1;        ///< product of the output loop extents, -1 when symbolic
  int elem_bytes = 4;                ///< widest element the output block touches
  /// The output block's transpose-like access once the producers are inlined.
  std::optional<detail::TransposeAccess> transpose;
  std::string describe() const override {
    std::string s = "output block '" + block + "'";
    if (!inlined.empty()) s += " after inlining " + std::to_string(inlined.size()) + " producer(s)";
    s += static_extent >= 0 ? ", " + std::to_string(static_extent) + " elements" : ", symbolic size";
    if (transpose) {
      std::string names;
      for (const std::string &b : transpose->staged) names += (names.empty() ? "" : ", ") + b;
      s += ", transposed read of " + names;
    }
    return s;
  }
};

const ElementwiseMatch &as_elementwise(const Match &m) {
  const auto *e = dynamic_cast<const ElementwiseMatch *>(&m);
  if (!e) throw ConfigError("the match is not an elementwise match: " + m.describe());
  return *e;
}

/// `f` with the producers inlined, through the same primitives apply() uses.
schedule::Schedule inline_producers(const ir::PrimFunc &f, const ElementwiseMatch &m) {
  schedule::Schedule sch(f);
  for (const std::string &b : m.inlined) sch.compute_inline(sch.get_block(b));
  return sch;
}

/// The transpose-like access of the output block once the producers are
/// inlined (a chain may transpose in a producer); nullopt when there is none
/// or the inlining fails (apply() then fails the same way).
std::optional<detail::TransposeAccess> transpose_after_inlining(const ir::PrimFunc &f,
                                                                const ElementwiseMatch &m) {
  try {
    FuncInfo info = analysis::analyze(inline_producers(f, m).func());
    int out = info.find(m.block);
    if (out < 0) return std::nullopt;
    return detail::find_transpose_access(info.blocks[out]);
  } catch (const UserError &) {
    return std::nullopt;
  }
}

ElementwiseConfig plain_config(const ElementwiseMatch &m, const Arch &arch) {
  ElementwiseConfig c;
  c.threads = std::min<int64_t>(256, arch.limits.max_threads_per_block);
  // The widest vector the loads allow that divides the size (no masked tail chunk).
  int64_t v = std::max<int64_t>(1, arch.memory.max_vector_bytes / std::max(m.elem_bytes, 1));
  while (v > 1 && (m.static_extent < 0 || m.static_extent % v != 0)) v /= 2;
  c.vector = std::min<int64_t>(v, 8);
  if (m.transpose) c.staged_bytes = m.transpose->staged_bytes;
  return c;
}

/// 32 x 32 tiles (smaller when a static extent is), moved 16 bytes at a time
/// (at most a quarter of the tile: 8 lanes along it), tile_rows making 256
/// threads or the whole tile; the plain form when no tile fits the shared
/// memory.
ElementwiseConfig tiled_default(const ElementwiseMatch &m, const Arch &arch) {
  const detail::TransposeAccess &t = *m.transpose;
  for (int64_t tile = 32; tile >= 8; tile /= 2) {
    auto below = [&](int64_t extent) { return extent > 0 && extent < tile; };
    if (tile > 8 && (below(t.extent_w) || below(t.extent_r))) continue;
    int64_t vector = std::max<int64_t>(1, arch.memory.max_vector_bytes / std::max<int64_t>(t.elem_bytes, 1));
    vector = std::min(vector, std::max<int64_t>(1, tile / 4));
    int64_t lanes = tile / vector;
    int64_t rows = std::min(tile, std::max<int64_t>(1, 256 / lanes));
    while (rows > 1 && lanes * rows > arch.limits.max_threads_per_block) rows /= 2;
    ElementwiseConfig c = tiled_elementwise_config(m, tile, rows, arch, vector);
    if (c.threads <= arch.limits.max_threads_per_block && c.shared_bytes() <= arch.max_smem_per_block())
      return c;
  }
  return plain_config(m, arch);
}

class ElementwiseRule final : public Rule {
 public:
  const char *name() const override { return "elementwise"; }

  analysis::MatchResult<MatchPtr> match(const ir::PrimFunc &f, const Arch &) const override {
    using R = analysis::MatchResult<MatchPtr>;
    FuncInfo info = analysis::analyze(f);
    if (info.is_scheduled) return R::fail("the function is already scheduled");
    if (info.has_opaque_structure) return R::fail("it has statements outside blocks");
    if (info.blocks.empty()) return R::fail("it has no blocks");
    auto m = std::make_shared<ElementwiseMatch>();
    for (size_t i = 0; i + 1 < info.blocks.size(); ++i) {
      const BlockInfo &b = info.blocks[i];
      if (!b.is_inlinable())
        return R::fail("block '" + b.name + "' (" + b.dom_kind() + ") cannot be inlined");
      m->inlined.push_back(b.name);
    }
    const BlockInfo &out = info.blocks.back();
    if (!out.is_injective())
      return R::fail("block '" + out.name + "' (" + out.dom_kind() + ") is not injective");
    if (!out.trivial_binding)
      return R::fail("block '" + out.name + "' is not bound one-to-one to loops from 0");
    if (out.is_guarded) return R::fail("block '" + out.name + "' is under a condition");
    // The loops are fused into one: a loop whose range depends on an outer
    // one (a triangular nest) has no such fusion.
    for (size_t l = 1; l < out.loops.size(); ++l) {
      const auto *inner = out.loops[l].as<ir::For>();
      for (size_t o = 0; o < l; ++o) {
        const ir::Var &v = out.loops[o].as<ir::For>()->loop_var;
        if (ir::range_uses_var(*inner, v))
          return R::fail("block '" + out.name + "': the range of loop '" + inner->loop_var.name() +
                         "' depends on loop '" + v.name() + "' (the nest is not rectangular)");
      }
    }
    m->block = out.name;
    int64_t extent = 1;
    for (const ir::Stmt &l : out.loops) {
      auto e = ir::as_const_int(l.as<ir::For>()->extent);
      if (!e) {
        extent = -1;
        break;
      }
      extent *= *e;
    }
    m->static_extent = extent;
    int bytes = out.writes[0].buffer.dtype().bytes();
    for (const analysis::Access &a : out.reads) bytes = std::max(bytes, a.buffer.dtype().bytes());
    m->elem_bytes = bytes;
    m->transpose = transpose_after_inlining(f, *m);
    return R(MatchPtr(m));
  }

  std::unique_ptr<Config> default_config(const Match &mm, const Arch &arch) const override {
    const auto &m = static_cast<const ElementwiseMatch &>(mm);
    return std::make_unique<ElementwiseConfig>(m.transpose ? tiled_default(m, arch) : plain_config(m, arch));
  }

  std::unique_ptr<Config> config_from_json(const Json &j) const override {
    return std::make_unique<ElementwiseConfig>(ElementwiseConfig::from_json(j));
  }

  schedule::Schedule build_schedule(const ir::PrimFunc &f, const Match &mm, const Config &config) const override {
    const auto &m = static_cast<const ElementwiseMatch &>(mm);
    const auto *c = dynamic_cast<const ElementwiseConfig *>(&config);
    if (!c) throw ConfigError(std::string("the elementwise rule got a config for '") + config.rule() + "'");
    if (c->is_tiled()) {
      if (!m.transpose)
        throw ConfigError("elementwise config: transpose_tile = " + std::to_string(c->transpose_tile) +
                          " needs a transpose-like access, and block '" + m.block +
                          "' has none (use 0, the plain form)");
      require(c->staged_bytes == m.transpose->staged_bytes, "elementwise", "staged_bytes", c->staged_bytes,
              "does not describe this workload (" + std::to_string(m.transpose->staged_bytes) + ")");
    }
    schedule::Schedule sch = inline_producers(f, m);
    if (c->is_tiled()) {
        detail::schedule_transpose_tile(sch, m.block, *m.transpose,
                                      {c->transpose_tile, c->tile_rows, c->transpose_pad, c->unroll, c->vector});
      return sch;
    }
    schedule::BlockRef out = sch.get_block(m.block);
    std::vector<schedule::LoopRef> loops = sch.get_loops(out);
    schedule::LoopRef fused = loops.size() == 1 ? loops[0] : sch.fuse(loops);
    std::vector<std::optional<int64_t>> factors{std::nullopt};
    std::vector<std::string> names{"bx"};
    if (c->per_thread > 1) factors.push_back(c->per_thread), names.push_back("step");
    factors.push_back(c->threads), names.push_back("tx");
    if (c->vector > 1) factors.push_back(c->vector), names.push_back("vec");
    std::vector<schedule::LoopRef> parts = sch.split(fused, factors, names);
    size_t next = 0;
    sch.bind(parts[next++], "blockIdx.x");
    if (c->per_thread > 1) {
      schedule::LoopRef step = parts[next++];
      if (c->unroll) sch.unroll(step);
    }
    sch.bind(parts[next++], "threadIdx.x");
    if (c->vector > 1) sch.vectorize(parts[next++]);
    return sch;
  }
};

}  // namespace

const Rule &elementwise_rule() {
  static const ElementwiseRule rule;
  return rule;
}

std::optional<ElementwiseTranspose> elementwise_transpose(const Match &m) {
  const ElementwiseMatch &e = as_elementwise(m);
  if (!e.transpose) return std::nullopt;
  const detail::TransposeAccess &t = *e.transpose;
  return ElementwiseTranspose{t.extent_w, t.extent_r, static_cast<int64_t>(t.staged.size()), t.staged_bytes};
}

ElementwiseConfig tiled_elementwise_config(const Match &m, int64_t tile, int64_t tile_rows, const Arch &arch,
                                           int64_t vector) {
  const ElementwiseMatch &e = as_elementwise(m);
  if (!e.transpose)
    throw ConfigError("elementwise config: the tiled form needs a transpose-like access, and block '" +
                      e.block + "' has none");
  ElementwiseConfig c;
  c.transpose_tile = tile;
  c.tile_rows = tile_rows;
  c.threads = tile / std::max<int64_t>(vector, 1) * tile_rows;
  c.vector = vector;
  c.per_thread = 1;
  c.unroll = true;
  c.staged_bytes = e.transpose->staged_bytes;
  c.transpose_pad =
      tile >= 1 && tile_rows >= 1 ? detail::choose_transpose_pad(*e.transpose, tile, tile_rows, arch, vector) : 0;
  return c;
}

}  // namespace tessera::rules
