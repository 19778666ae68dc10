//===- rules/Fallback.cpp - A correct kernel for any valid program ----------===//
#include "tessera/rules/Fallback.h"

#include <algorithm>

#include "ConfigJson.h"
#include "tessera/analysis/BlockInfo.h"
#include "tessera/analysis/Parallel.h"
#include "tessera/ir/Functor.h"
#include "tessera/schedule/Error.h"

namespace tessera::rules {

using namespace tessera::ir;

Json FallbackConfig::to_json() const {
  return Json{{"rule", rule()}, {"threads", threads}};
}

FallbackConfig FallbackConfig::from_json(const Json &j) {
  ConfigReader r(j, "fallback");
  FallbackConfig c;
  c.threads = r.integer("threads");
  r.finish();
  return c;
}

void FallbackConfig::validate(const Arch &arch) const {
  require_threads(rule(), "threads", threads, arch);
}

namespace {

struct FallbackMatch final : Match {
  std::vector<std::string> inlinable;
  std::string describe() const override { return "any function (a correct, possibly serial, kernel)"; }
};

/// The top-level statements of the root block's body.
std::vector<Stmt> top_level(const PrimFunc &f) {
  const Stmt &body = f.root_block().body;
  if (const auto *seq = body.as<Seq>()) return seq->stmts;
  return {body};
}

/// The name of the first block under `s` ("" when there is none): the
/// handle loops are looked up from, so that traces replay.
std::string first_block_name(const Stmt &s) {
  std::string name;
  pre_order_visit(s, nullptr, [&](const Stmt &x) {
    if (const auto *b = x.as<Block>(); b && name.empty()) name = b->name;
  });
  return name;
}

/// The perfectly nested loops starting at `s`, outermost first.
std::vector<const For *> loop_chain(const Stmt &s) {
  std::vector<const For *> chain;
  for (const For *l = s.as<For>(); l; l = l->body.as<For>()) chain.push_back(l);
  return chain;
}

class FallbackRule final : public Rule {
 public:
  const char *name() const override { return "fallback"; }

  analysis::MatchResult<MatchPtr> match(const PrimFunc &f, const Arch &) const override {
    auto m = std::make_shared<FallbackMatch>();
    for (const analysis::BlockInfo &b : analysis::analyze(f).blocks)
      if (b.is_inlinable()) m->inlinable.push_back(b.name);
    return analysis::MatchResult<MatchPtr>(MatchPtr(m));
  }

  std::unique_ptr<Config> default_config(const Match &, const Arch &arch) const override {
    auto c = std::make_unique<FallbackConfig>();
    c->threads = std::min<int64_t>(256, arch.limits.max_threads_per_block);
    return c;
  }

  std::unique_ptr<Config> config_from_json(const Json &j) const override {
    return std::make_unique<FallbackConfig>(FallbackConfig::from_json(j));
  }

  schedule::Schedule build_schedule(const PrimFunc &f, const Match &mm, const Config &config) const override {
    const auto &m = static_cast<const FallbackMatch &>(mm);
    const auto *c = dynamic_cast<const FallbackConfig *>(&config);
    if (!c) throw ConfigError(std::string("the fallback rule got a config for '") + config.rule() + "'");
    schedule::Schedule sch(f);
    for (const std::string &b : m.inlinable) {
      try {
        sch.compute_inline(sch.get_block(b));
      } catch (const schedule::ScheduleError &) {
        // Not inlinable after all (e.g. read at an index the consumer cannot
        // substitute): the block stays; the schedule is unchanged.
      }
    }
    // Each top-level statement is its own kernel when they differ
    // (lower::split_kernels); schedule them one by one.
    size_t n = top_level(sch.func()).size();
    for (size_t i = 0; i < n; ++i) {
      Stmt item = top_level(sch.func())[i];
      if (!bind_parallel_prefix(sch, item, *c)) run_serially(sch, item);
    }
    return sch;
  }

 private:
  /// Binds the outer parallel loops of the nest `s`; false when the
  /// outermost loop is not parallel or the nest holds no block (loop handles
  /// come from get_loops of a block, so that the trace replays).
  static bool bind_parallel_prefix(schedule::Schedule &sch, const Stmt &s, const FallbackConfig &c) {
    std::string block = first_block_name(s);
    if (block.empty()) return false;
    std::vector<const For *> chain = loop_chain(s);
    std::vector<schedule::LoopRef> loops = sch.get_loops(sch.get_block(block));
    std::vector<schedule::LoopRef> prefix;
    bool from_zero = true;
    for (size_t i = 0; i < chain.size() && i < loops.size(); ++i) {
      TESSERA_ICHECK(loops[i].var.same_as(chain[i]->loop_var)) << "get_loops disagrees with the loop nest";
      if (!analysis::why_not_parallel(sch.get(loops[i])).empty()) break;
      // A loop a CPU schedule made parallel, unrolled or vectorized cannot be
      // fused or split again (the primitives keep kinds); it stays inside.
      if (chain[i]->for_kind != ForKind::Serial) break;
      // A loop whose range uses an outer one of the prefix (a triangular
      // nest) cannot be fused with it; it stays inside.
      if (std::any_of(chain.begin(), chain.begin() + i,
                      [&](const For *outer) { return range_uses_var(*chain[i], outer->loop_var); }))
        break;
      prefix.push_back(loops[i]);
      from_zero = from_zero && is_const_int(chain[i]->min, 0);
    }
    if (prefix.empty()) return false;
    // Loop annotations (unroll pragmas, pipeline stages) are hints for loops
    // that fuse and split replace; the naive kernel does without them.
    for (size_t i = 0; i < prefix.size(); ++i)
      for (const auto &[key, value] : chain[i]->annotations) sch.unannotate(prefix[i], key);
    if (!from_zero) {
      // split and fuse need loops from 0; bind the outermost as it is.
      auto extent = as_const_int(chain[0]->extent);
      sch.bind(prefix[0], extent && *extent <= c.threads ? "threadIdx.x" : "blockIdx.x");
      return true;
    }
    schedule::LoopRef fused = prefix.size() == 1 ? prefix[0] : sch.fuse(prefix);
    auto parts = sch.split(fused, {std::nullopt, c.threads}, {"bx", "tx"});
    sch.bind(parts[0], "blockIdx.x");
    sch.bind(parts[1], "threadIdx.x");
    return true;
  }

  /// Runs the loop nest `s` as one GPU thread (a scan, a loop-carried
  /// dependence). Statements that are not loops, or hold no block to take a
  /// loop handle from, are left as they are: the lowering runs a statement
  /// outside thread-bound loops as a kernel of one thread.
  static void run_serially(schedule::Schedule &sch, const Stmt &s) {
    const auto *loop = s.as<For>();
    if (!loop) return;
    std::string block = first_block_name(s);
    if (block.empty()) return;
    schedule::LoopRef outer = sch.get_loops(sch.get_block(block))[0];
    TESSERA_ICHECK(outer.var.same_as(loop->loop_var)) << "get_loops disagrees with the loop nest";
    schedule::LoopRef thread = sch.add_unit_loop(outer, "serial_thread");
    schedule::LoopRef grid = sch.add_unit_loop(thread, "serial_block");
    sch.bind(grid, "blockIdx.x");
    sch.bind(thread, "threadIdx.x");
  }
};

}  // namespace

const Rule &fallback_rule() {
  static const FallbackRule rule;
  return rule;
}

}  // namespace tessera::rules
