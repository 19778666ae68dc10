//===- rules/Fallback.cpp - A correct kernel for any valid program ----------===//
#include "tessera/rules/Fallback.h"

#include "ConfigJson.h"
#include "tessera/analysis/BlockInfo.h"
#include "tessera/analysis/Parallel.h"
#include "tessera/ir/Functor.h"
#include "tessera/schedule/Error.h"

namespace tessera::rules {

using namespace tessera::ir;

Json FallbackConfig::to_json() const {
  return Json{{"rule", rule()}, {"threads", threads}, {"max_local_bytes", max_local_bytes}};
}

FallbackConfig FallbackConfig::from_json(const Json &j) {
  ConfigReader r(j, "fallback");
  FallbackConfig c;
  c.threads = r.integer("threads");
  c.max_local_bytes = r.integer("max_local_bytes");
  r.finish();
  return c;
}

void FallbackConfig::validate(const Arch &arch) const {
  require(threads >= 1 && threads <= arch.limits.max_threads_per_block, rule(), "threads", threads,
          "is outside [1, " + std::to_string(arch.limits.max_threads_per_block) + "], the threads per block of " +
              arch.name);
  require(max_local_bytes >= 0, rule(), "max_local_bytes", max_local_bytes, "cannot be negative");
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

  schedule::Schedule apply(const PrimFunc &f, const Match &mm, const Config &config) const override {
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
    std::vector<Stmt> items = top_level(sch.func());
    if (items.size() == 1 && bind_parallel_prefix(sch, items[0], *c)) return sch;
    run_serially(sch, *c);
    return sch;
  }

 private:
  /// Binds the outer parallel loops of the nest `s`; false when the
  /// outermost loop is not parallel or the nest holds no block (loop handles
  /// come from get_loops of a block, so that the trace replays).
  static bool bind_parallel_prefix(schedule::Schedule &sch, const Stmt &s, const FallbackConfig &c) {
    std::string block;
    pre_order_visit(s, nullptr, [&](const Stmt &x) {
      if (const auto *b = x.as<Block>(); b && block.empty()) block = b->name;
    });
    if (block.empty()) return false;
    std::vector<const For *> chain = loop_chain(s);
    std::vector<schedule::LoopRef> loops = sch.get_loops(sch.get_block(block));
    std::vector<schedule::LoopRef> prefix;
    bool from_zero = true;
    for (size_t i = 0; i < chain.size() && i < loops.size(); ++i) {
      TESSERA_ICHECK(loops[i].var.same_as(chain[i]->loop_var)) << "get_loops disagrees with the loop nest";
      if (!analysis::why_not_parallel(sch.get(loops[i])).empty()) break;
      prefix.push_back(loops[i]);
      from_zero = from_zero && is_const_int(chain[i]->min, 0);
    }
    if (prefix.empty()) return false;
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

  /// The block writing `b` (an intermediate) puts it in thread-local memory.
  static void move_to_local(schedule::Schedule &sch, const analysis::FuncInfo &info, const Buffer &b) {
    for (const analysis::BlockInfo &bi : info.blocks) {
      const auto &writes = bi.block.as<Block>()->writes;
      for (size_t i = 0; i < writes.size(); ++i) {
        if (!writes[i].buffer.same_as(b)) continue;
        sch.set_scope(sch.get_block(bi.name), static_cast<int64_t>(i), "local");
        return;
      }
    }
  }

  /// One GPU thread runs the whole function; intermediates go to local memory.
  static void run_serially(schedule::Schedule &sch, const FallbackConfig &c) {
    analysis::FuncInfo info = analysis::analyze(sch.func());
    int64_t local_bytes = 0;
    for (const Buffer &b : sch.func().root_block().allocs) {
      int64_t n = b.dtype().bytes();
      for (const Expr &d : b.shape()) {
        auto e = as_const_int(d);
        n = e ? n * *e : -1;
        if (n < 0) break;
      }
      if (n < 0 || (local_bytes += n) > c.max_local_bytes)
        throw UserError("the fallback would run '" + sch.func().name() +
                        "' as one GPU thread, but its intermediate buffers (" + b.name() +
                        (n < 0 ? " has a symbolic size" : ", ...") + ") exceed " + std::to_string(c.max_local_bytes) +
                        " bytes of thread-local memory; such functions need one kernel per loop nest, which "
                        "tessera does not generate yet");
      if (b.scope() == "global") move_to_local(sch, info, b);
    }
    schedule::LoopRef thread = sch.add_unit_loop(sch.get_block("root"), "serial_thread");
    schedule::LoopRef block = sch.add_unit_loop(sch.get_block("root"), "serial_block");
    sch.bind(block, "blockIdx.x");
    sch.bind(thread, "threadIdx.x");
  }
};

}  // namespace

const Rule &fallback_rule() {
  static const FallbackRule rule;
  return rule;
}

}  // namespace tessera::rules
