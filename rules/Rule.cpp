//===- rules/Rule.cpp - The rule list and apply_default_schedule ------------===//
#include "tessera/rules/Rule.h"

#include <optional>
#include <set>

#include "tessera/analysis/BlockInfo.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Opaque.h"
#include "tessera/rules/Conv2d.h"
#include "tessera/rules/Elementwise.h"
#include "tessera/rules/Fallback.h"
#include "tessera/rules/Gemv.h"
#include "tessera/rules/GeneralReduction.h"
#include "tessera/rules/Matmul.h"
#include "tessera/rules/MatmulTensorCore.h"
#include "tessera/rules/Reduction.h"
#include "tessera/schedule/Trace.h"

namespace tessera::rules {

const std::vector<const Rule *> &all_rules() {
  // Specific first; the fallback, which matches everything, last.
  static const std::vector<const Rule *> rules = {
      &gemv_rule(),
      &matmul_tensor_core_rule(),
      &matmul_rule(),
      &conv2d_rule(),
      &general_reduction_rule(),
      &reduction_rule(),
      &elementwise_rule(),
      &fallback_rule(),
  };
  return rules;
}

schedule::Schedule Rule::apply(const ir::PrimFunc &f, const Match &m, const Config &config) const {
  schedule::Schedule sch = build_schedule(f, m, config);
  keep_cross_kernel_buffers_global(sch);
  return sch;
}

void keep_cross_kernel_buffers_global(schedule::Schedule &sch) {
  // Held: set_scope replaces the function below.
  const ir::Stmt body = sch.func().body();
  const auto *root = body.as<ir::Block>();
  if (!root) return;
  // The function's intermediates whose scope ends with a kernel (most
  // functions have none: then nothing is walked).
  std::vector<ir::Buffer> scoped;
  for (const ir::Buffer &b : root->allocs)
    if (!b.scope().empty() && b.scope() != "global") scoped.push_back(b);
  if (scoped.empty()) return;
  // The top-level loop nests (each a kernel of its own once lowered) that
  // access each of them.
  std::vector<ir::Stmt> nests = {root->body};
  if (const auto *seq = root->body.as<ir::Seq>()) nests = seq->stmts;
  std::vector<std::set<size_t>> nests_of(scoped.size());
  for (size_t n = 0; n < nests.size(); ++n) {
    auto note = [&](const ir::Buffer &b) {
      for (size_t i = 0; i < scoped.size(); ++i)
        if (scoped[i].same_as(b)) nests_of[i].insert(n);
    };
    ir::pre_order_visit(
        nests[n], [&](const ir::Expr &e) { if (const auto *l = e.as<ir::Load>()) note(l->buffer); },
        [&](const ir::Stmt &st) { if (const auto *w = st.as<ir::Store>()) note(w->buffer); });
  }
  for (size_t i = 0; i < scoped.size(); ++i) {
    if (nests_of[i].size() < 2) continue;
    // The block that writes it (the first, in program order), by its write index.
    std::optional<std::pair<std::string, int64_t>> writer;
    const ir::Stmt now = sch.func().body();
    ir::pre_order_visit(now, nullptr, [&](const ir::Stmt &st) {
      const auto *blk = st.as<ir::Block>();
      if (writer || !blk || st.same_as(now)) return;
      for (size_t w = 0; w < blk->writes.size(); ++w)
        if (blk->writes[w].buffer.same_as(scoped[i])) writer = std::pair{blk->name, int64_t(w)};
    });
    if (writer) sch.set_scope(schedule::BlockRef{writer->first}, writer->second, "global");
  }
}

const Rule *find_rule(const std::string &name) {
  for (const Rule *r : all_rules())
    if (name == r->name()) return r;
  return nullptr;
}

std::string target_kind(const ir::PrimFunc &f) {
  auto it = f.attrs().find("target");
  if (it == f.attrs().end()) return "";
  const ir::AnnValue *v = &it->second;
  if (v->is_call() && v->as_call().args.size() == 1) v = &v->as_call().args[0];  // T.target(x)
  if (v->is_string()) {
    // "cuda -arch=sm_80", "llvm -mcpu=...": the kind is the first word.
    const std::string &s = v->as_string();
    return s.substr(0, s.find(' '));
  }
  if (const ir::AnnValue *kind = v->find("kind"); kind && kind->is_string()) return kind->as_string();
  return "unknown";
}

void check_gpu_target(const ir::PrimFunc &f) {
  ir::check_no_opaque(f, "schedule");
  std::string kind = target_kind(f);
  if (kind.empty() || kind == "cuda" || kind == "nvptx") return;
  throw UserError("function '" + f.name() + "' is for target '" + kind +
                  "' (its T.func_attr \"target\"): the rules schedule CUDA kernels; schedule it for the CPU "
                  "(--target cpu or auto), or remove the target attribute to schedule it for the GPU");
}

std::string RuleChoice::why_declined() const {
  std::string why;
  for (const auto &[rule, reason] : declined) why += "\n  " + rule + ": " + reason;
  return why;
}

RuleChoice choose_rule(const ir::PrimFunc &f, const Arch &arch) {
  RuleChoice out;
  for (const Rule *rule : all_rules()) {
    auto m = rule->match(f, arch);
    if (!m) {
      out.declined.emplace_back(rule->name(), m.reason());
      continue;
    }
    try {
      std::unique_ptr<Config> config = rule->default_config(**m, arch);
      config->validate(arch);
      out.schedule.emplace(rule->apply(f, **m, *config));
      out.rule = rule, out.match = *m, out.config = std::move(config);
      return out;
    } catch (const UserError &e) {
      // A ScheduleError or ConfigError: this rule cannot schedule the
      // function after all; the next one may.
      out.declined.emplace_back(rule->name(), std::string("matched but failed to apply: ") + e.what());
    }
  }
  return out;
}

DefaultSchedule apply_default_schedule(const ir::PrimFunc &original, const Arch &arch) {
  check_gpu_target(original);
  ir::PrimFunc f = schedule::unique_block_names(original);
  DefaultSchedule out;
  if (analysis::analyze(f).is_scheduled) {
    out.func = f;
    return out;
  }
  RuleChoice c = choose_rule(f, arch);
  out.declined = c.declined;
  if (!c.rule)
    throw InternalError("no rule scheduled function '" + f.name() + "' (the fallback must never refuse):" +
                        c.why_declined());
  out.func = c.schedule->func();
  out.rule = c.rule->name();
  out.config = c.config->to_json();
  out.trace = Json::parse(c.schedule->trace().to_json());
  return out;
}

}  // namespace tessera::rules
