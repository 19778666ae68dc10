//===- rules/Elementwise.cpp - Injective programs, one thread per chunk ----===//
#include "tessera/rules/Elementwise.h"

#include "ConfigJson.h"
#include "tessera/analysis/BlockInfo.h"

namespace tessera::rules {

using analysis::BlockInfo;
using analysis::FuncInfo;

Json ElementwiseConfig::to_json() const {
  return Json{{"rule", rule()}, {"threads", threads}, {"vector", vector}, {"per_thread", per_thread}, {"unroll", unroll}};
}

ElementwiseConfig ElementwiseConfig::from_json(const Json &j) {
  ConfigReader r(j, "elementwise");
  ElementwiseConfig c;
  c.threads = r.integer("threads");
  c.vector = r.integer("vector");
  c.per_thread = r.integer("per_thread");
  c.unroll = r.boolean("unroll");
  r.finish();
  return c;
}

void ElementwiseConfig::validate(const Arch &arch) const {
  require_threads(rule(), "threads", threads, arch);
  require(vector >= 1 && vector <= 16 && (vector & (vector - 1)) == 0, rule(), "vector", vector,
          "is not a power of two in [1, 16]");
  require(per_thread >= 1, rule(), "per_thread", per_thread, "must be at least 1");
}

namespace {

struct ElementwiseMatch final : Match {
  std::vector<std::string> inlined;  ///< producers to inline, in program order
  std::string block;                 ///< the output block
  int64_t static_extent = -1;        ///< product of the output loop extents, -1 when symbolic
  int elem_bytes = 4;                ///< widest element the output block touches
  std::string describe() const override {
    std::string s = "output block '" + block + "'";
    if (!inlined.empty()) s += " after inlining " + std::to_string(inlined.size()) + " producer(s)";
    return s + (static_extent >= 0 ? ", " + std::to_string(static_extent) + " elements" : ", symbolic size");
  }
};

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
      if (!b.is_inlinable()) return R::fail("block '" + b.name + "' (" + b.dom_kind() + ") cannot be inlined");
      m->inlined.push_back(b.name);
    }
    const BlockInfo &out = info.blocks.back();
    if (!out.is_injective()) return R::fail("block '" + out.name + "' (" + out.dom_kind() + ") is not injective");
    if (!out.trivial_binding) return R::fail("block '" + out.name + "' is not bound one-to-one to loops from 0");
    if (out.is_guarded) return R::fail("block '" + out.name + "' is under a condition");
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
    return R(MatchPtr(m));
  }

  std::unique_ptr<Config> default_config(const Match &mm, const Arch &arch) const override {
    const auto &m = static_cast<const ElementwiseMatch &>(mm);
    auto c = std::make_unique<ElementwiseConfig>();
    c->threads = std::min<int64_t>(256, arch.limits.max_threads_per_block);
    // The widest vector the loads allow that divides the size (no masked tail chunk).
    int64_t v = std::max<int64_t>(1, arch.memory.max_vector_bytes / std::max(m.elem_bytes, 1));
    while (v > 1 && (m.static_extent < 0 || m.static_extent % v != 0)) v /= 2;
    c->vector = std::min<int64_t>(v, 8);
    return c;
  }

  std::unique_ptr<Config> config_from_json(const Json &j) const override {
    return std::make_unique<ElementwiseConfig>(ElementwiseConfig::from_json(j));
  }

  schedule::Schedule apply(const ir::PrimFunc &f, const Match &mm, const Config &config) const override {
    const auto &m = static_cast<const ElementwiseMatch &>(mm);
    const auto *c = dynamic_cast<const ElementwiseConfig *>(&config);
    if (!c) throw ConfigError(std::string("the elementwise rule got a config for '") + config.rule() + "'");
    schedule::Schedule sch(f);
    for (const std::string &b : m.inlined) sch.compute_inline(sch.get_block(b));
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

}  // namespace tessera::rules
