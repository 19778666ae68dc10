//===- policies/Policy.cpp - The policy registry and the contract ----------===//
#include "tessera/policies/Policy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "Policies.h"

#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"

namespace tessera::policies {

const std::vector<const Policy *> &all_policies() {
  static const std::vector<const Policy *> list = {
      // POLICY-REGISTRY (one line per policy; the tensor-core policy goes first)
      &tensor_core_policy(),  // matmul_tensor_core
      &gemm_policy(),         // matmul, conv2d
      &elementwise_policy(),  // elementwise, fallback
      &reduction_policy(),    // reduction, general_reduction
      &gemv_policy(),
  };
  return list;
}

int64_t sized_extent(const ir::Expr &extent, const ProposeOptions &options) {
  if (auto c = ir::as_const_int(extent)) return std::max<int64_t>(*c, 1);
  std::vector<std::pair<ir::Var, ir::Expr>> at;
  ir::pre_order_visit(
      ir::Evaluate::make(extent),
      [&](const ir::Expr &e) {
        if (!e.as<ir::VarNode>()) return;
        ir::Var v = ir::Var::from(e);
        for (const auto &[w, _] : at)
          if (w.same_as(v)) return;
        at.push_back({v, ir::make_int(v.dtype(), options.size_of(v.name()))});
      },
      nullptr);
  auto c = ir::as_const_int(arith::simplify(ir::substitute(extent, at)));
  return c ? std::max<int64_t>(*c, 1) : options.symbolic_hint;
}

const Policy *find_policy(const std::string &rule) {
  for (const Policy *p : all_policies())
    if (p->handles(rule)) return p;
  return nullptr;
}

std::vector<double> estimate(const ir::PrimFunc &f, const rules::Rule &rule, const rules::Match &m, const Arch &arch,
                             const std::vector<const rules::Config *> &configs, const ProposeOptions &options) {
  std::vector<double> out(configs.size(), std::numeric_limits<double>::quiet_NaN());
  const Policy *p = find_policy(rule.name());
  if (!p || configs.empty()) return out;
  ProposeOptions o = options;
  o.score_only = &configs;
  std::vector<Candidate> scored = p->propose(f, rule, m, arch, o);
  bool hooked = scored.size() == configs.size() &&
                std::all_of(scored.begin(), scored.end(), [](const Candidate &c) { return !c.config; });
  if (hooked) {
    for (size_t i = 0; i < configs.size(); ++i) out[i] = scored[i].score;
    return out;
  }
  // No hook: the proposal at these sizes, by text.
  o.score_only = nullptr;
  o.topk = std::numeric_limits<int64_t>::max();
  std::map<std::string, double> by_text;
  for (const Candidate &c : p->propose(f, rule, m, arch, o))
    if (c.config) by_text.emplace(c.config->str(), c.score);
  for (size_t i = 0; i < configs.size(); ++i)
    if (auto it = by_text.find(configs[i]->str()); it != by_text.end()) out[i] = it->second;
  return out;
}

Proposal propose(const ir::PrimFunc &f, const rules::Rule &rule, const rules::Match &m, const Arch &arch,
                 const ProposeOptions &options) {
  Proposal out;
  std::vector<Candidate> raw;
  if (const Policy *p = find_policy(rule.name())) raw = p->propose(f, rule, m, arch, options);
  if (raw.empty()) raw.push_back({rule.default_config(m, arch), 0, "the rule's default config (no policy)"});
  std::set<std::string> seen;
  for (Candidate &c : raw) {
    std::string text = c.config->str();
    try {
      c.config->validate(arch);
    } catch (const rules::ConfigError &e) {
      out.dropped.push_back(text + ": " + e.what());
      continue;
    }
    if (!seen.insert(text).second) {
      out.dropped.push_back(text + ": a duplicate");
      continue;
    }
    if (int64_t(out.candidates.size()) < options.topk) out.candidates.push_back(std::move(c));
  }
  return out;
}

}  // namespace tessera::policies
