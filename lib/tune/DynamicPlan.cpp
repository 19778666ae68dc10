//===- lib/tune/DynamicPlan.cpp - Kernels for ranges of symbolic sizes -----===//
#include "tessera/tune/DynamicPlan.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "tessera/policies/Policy.h"
#include "tessera/schedule/Schedule.h"
#include "tessera/support/Error.h"

namespace tessera::tuning {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
/// The ratio a cell counts while no chosen config has an estimate there: any
/// config that covers it beats every refinement elsewhere.
constexpr double kUncovered = 1e6;
/// The configs each cell contributes to the candidates (all of which are
/// then scored at every cell): a config outside every cell's best 16 is
/// no cover's pick.
constexpr int64_t kCandidatesPerCell = 16;

int64_t parse_int(const std::string &s, const std::string &text) {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used == 0 || used != s.size())
    throw UserError("range '" + text + "': '" + s + "' is not an integer (expected NAME=LO:HI, e.g. m=1:4096)");
  return v;
}

/// The smallest power of two >= v (v >= 1).
int64_t pow2_at_least(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

double ratio(double t, double best) { return std::isfinite(t) ? (best > 0 ? t / best : 1.0) : kUncovered; }

/// The size at fraction `u` of the way from lo to hi on a log scale.
int64_t log_point(const SymbolRange &r, double u) {
  const double lo = std::log(double(r.lo)), hi = std::log(double(r.hi));
  return std::clamp<int64_t>(std::llround(std::exp(lo + (hi - lo) * u)), r.lo, r.hi);
}

}  // namespace

SymbolRange SymbolRange::parse(const std::string &text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UserError("range '" + text + "': expected NAME=LO:HI (e.g. m=1:4096) or NAME=VALUE");
  SymbolRange r;
  r.name = text.substr(0, eq);
  std::string rest = text.substr(eq + 1);
  size_t colon = rest.find(':');
  r.lo = parse_int(rest.substr(0, colon), text);
  r.hi = colon == std::string::npos ? r.lo : parse_int(rest.substr(colon + 1), text);
  if (r.lo < 1 || r.hi < r.lo)
    throw UserError("range '" + text + "': need 1 <= LO <= HI, got " + std::to_string(r.lo) + ":" + std::to_string(r.hi));
  return r;
}

DynamicSpec DynamicSpec::parse(const std::vector<std::string> &ranges, const std::vector<std::string> &hot,
                               int64_t max_kernels) {
  DynamicSpec spec{.max_kernels = max_kernels};
  for (const std::string &r : ranges) spec.symbols.push_back(SymbolRange::parse(r));
  for (const std::string &h : hot) {
    SymbolRange v = SymbolRange::parse(h);
    auto it = std::find_if(spec.symbols.begin(), spec.symbols.end(), [&](const SymbolRange &s) { return s.name == v.name; });
    if (it == spec.symbols.end()) throw UserError("hot value '" + h + "': no range for '" + v.name + "'");
    it->hot.push_back(v.lo);
  }
  return spec;
}

bool Cell::contains(const std::vector<int64_t> &values) const {
  if (values.size() != bounds.size()) return false;
  for (size_t s = 0; s < bounds.size(); ++s)
    if (values[s] < bounds[s].first || values[s] > bounds[s].second) return false;
  return true;
}

std::string Cell::str(const std::vector<std::string> &symbols) const {
  std::string out;
  for (size_t s = 0; s < bounds.size(); ++s) {
    out += (s ? ", " : "") + (s < symbols.size() ? symbols[s] : "?") + " ";
    out += bounds[s].first == bounds[s].second ? std::to_string(bounds[s].first)
                                               : fmt::format("{}..{}", bounds[s].first, bounds[s].second);
  }
  return out;
}

std::vector<std::pair<int64_t, int64_t>> symbol_cells(const SymbolRange &r, const DynamicSpec &spec) {
  if (r.lo < 1 || r.hi < r.lo)
    throw UserError("symbol '" + r.name + "': the range " + std::to_string(r.lo) + ":" + std::to_string(r.hi) +
                    " is empty or below 1");
  if (r.hi > (int64_t(1) << 40)) throw UserError("symbol '" + r.name + "': " + std::to_string(r.hi) + " is too large");
  if (spec.cells_per_octave < 1) throw UserError("cells per octave must be at least 1");
  std::vector<std::pair<int64_t, int64_t>> cells;
  for (int64_t v = r.lo; v <= r.hi;) {
    int64_t end = v;
    if (v > spec.exact_up_to && v > 1) {
      // Octave (low, top] cut at low + step * i.
      const int64_t top = pow2_at_least(v), low = top / 2;
      const int64_t step = std::max<int64_t>(1, (top - low) / spec.cells_per_octave);
      end = std::min(top, low + step * ((v - low + step - 1) / step));
    }
    end = std::min(end, r.hi);
    cells.push_back({v, end});
    v = end + 1;
  }
  // Hot values: cells of their own, cut out of the cell holding them.
  for (int64_t h : r.hot) {
    if (h < r.lo || h > r.hi)
      throw UserError("symbol '" + r.name + "': the hot value " + std::to_string(h) + " is outside " +
                      std::to_string(r.lo) + ":" + std::to_string(r.hi));
    for (size_t i = 0; i < cells.size(); ++i) {
      auto [a, b] = cells[i];
      if (h < a || h > b || a == b) continue;
      std::vector<std::pair<int64_t, int64_t>> parts;
      if (a < h) parts.push_back({a, h - 1});
      parts.push_back({h, h});
      if (h < b) parts.push_back({h + 1, b});
      cells.erase(cells.begin() + static_cast<std::ptrdiff_t>(i));
      cells.insert(cells.begin() + static_cast<std::ptrdiff_t>(i), parts.begin(), parts.end());
      break;
    }
  }
  return cells;
}

double DynamicPlan::geomean_regret() const {
  if (cells.empty()) return 1;
  double s = 0;
  for (const Cell &c : cells) s += std::log(c.regret());
  return std::exp(s / double(cells.size()));
}

double DynamicPlan::max_regret() const {
  double m = 1;
  for (const Cell &c : cells) m = std::max(m, c.regret());
  return m;
}

int DynamicPlan::cell_of(const std::vector<int64_t> &values) const {
  for (size_t i = 0; i < cells.size(); ++i)
    if (cells[i].contains(values)) return static_cast<int>(i);
  return -1;
}

rules::Json DynamicPlan::to_json() const {
  rules::Json j;
  j["rule"] = rule;
  j["symbols"] = symbols;
  j["configs"] = rules::Json::array();
  for (const auto &c : configs) j["configs"].push_back(c->to_json());
  j["cells"] = rules::Json::array();
  for (const Cell &c : cells) {
    rules::Json b;
    for (size_t s = 0; s < c.bounds.size(); ++s) b[symbols[s]] = {c.bounds[s].first, c.bounds[s].second};
    rules::Json kernel_us = rules::Json::array();  // JSON has no infinity: null where there is no estimate
    for (double us : c.kernel_us) kernel_us.push_back(std::isfinite(us) ? rules::Json(us) : rules::Json());
    j["cells"].push_back({{"bounds", b},
                          {"config", c.config},
                          {"predicted_us", c.predicted_us},
                          {"best_us", c.best_us},
                          {"regret", c.regret()},
                          {"kernel_us", kernel_us}});
  }
  j["baselines"] = rules::Json::array();
  for (const PlanBaseline &b : baselines)
    j["baselines"].push_back({{"name", b.name},
                              {"kernels", b.kernels},
                              {"geomean_regret", b.geomean_regret},
                              {"max_regret", b.max_regret}});
  j["geomean_regret"] = geomean_regret();
  j["max_regret"] = max_regret();
  j["candidates"] = candidates;
  j["policy_calls"] = policy_calls;
  j["rule_applications"] = rule_applications;
  return j;
}

std::string DynamicPlan::table() const {
  std::string out = fmt::format("# plan: rule {}, {} cells, {} kernels (of {} candidates); predicted regret geomean "
                                "{:.3f}, max {:.3f}\n",
                                rule, cells.size(), configs.size(), candidates, geomean_regret(), max_regret());
  out += fmt::format("{:<28} {:>6} {:>12} {:>12} {:>7}\n", "cell", "kernel", "est.(us)", "best(us)", "regret");
  for (const Cell &c : cells)
    out += fmt::format("{:<28} {:>6} {:>12.2f} {:>12.2f} {:>7.3f}\n", c.str(symbols), c.config, c.predicted_us,
                       c.best_us, c.regret());
  for (size_t i = 0; i < configs.size(); ++i) out += fmt::format("# kernel {}: {}\n", i, configs[i]->str());
  for (const PlanBaseline &b : baselines)
    out += fmt::format("# baseline {}: {} kernels, predicted regret geomean {:.3f}, max {:.3f}\n", b.name, b.kernels,
                       b.geomean_regret, b.max_regret);
  out += fmt::format("# planned in {:.1f} ms: {} policy calls, {} rule applications\n", plan_ms, policy_calls,
                     rule_applications);
  return out;
}

namespace {

/// Greedy k-median cover: up to `k` candidates (not banned), each lowering
/// the summed ratio the most; ties to the lower index.
std::vector<int> cover(const std::vector<std::vector<double>> &t, const std::vector<double> &best,
                       const std::vector<bool> &banned, int64_t k) {
  const size_t cells = best.size();
  std::vector<double> cur(cells, kUncovered);
  std::vector<int> chosen;
  std::vector<bool> taken(t.size(), false);
  while (static_cast<int64_t>(chosen.size()) < k) {
    int pick = -1;
    double best_gain = 1e-12;
    for (size_t c = 0; c < t.size(); ++c) {
      if (taken[c] || banned[c]) continue;
      double gain = 0;
      for (size_t i = 0; i < cells; ++i) gain += std::max(0.0, cur[i] - ratio(t[c][i], best[i]));
      if (gain > best_gain) best_gain = gain, pick = static_cast<int>(c);
    }
    if (pick < 0) break;
    taken[static_cast<size_t>(pick)] = true;
    chosen.push_back(pick);
    for (size_t i = 0; i < cells; ++i) cur[i] = std::min(cur[i], ratio(t[static_cast<size_t>(pick)][i], best[i]));
  }
  return chosen;
}

}  // namespace

DynamicPlan plan_dynamic(const ir::PrimFunc &original, const DynamicSpec &spec, const Arch &arch) {
  const auto start = std::chrono::steady_clock::now();
  if (spec.max_kernels < 1) throw UserError("max kernels must be at least 1");
  ir::PrimFunc f = schedule::unique_block_names(original);
  std::set<std::string> shape_vars;
  for (const ir::Var &v : f.shape_vars()) shape_vars.insert(v.name());
  DynamicPlan plan;
  for (const SymbolRange &r : spec.symbols) {
    if (!shape_vars.count(r.name)) {
      std::string have;
      for (const std::string &v : shape_vars) have += (have.empty() ? "" : ", ") + v;
      throw UserError("function '" + f.name() + "' has no symbolic size '" + r.name + "' (it has: " +
                      (have.empty() ? "none" : have) + ")");
    }
    if (std::count(plan.symbols.begin(), plan.symbols.end(), r.name))
      throw UserError("symbol '" + r.name + "' has two ranges");
    plan.symbols.push_back(r.name);
  }
  for (const std::string &v : shape_vars)
    if (!std::count(plan.symbols.begin(), plan.symbols.end(), v))
      throw UserError("symbolic size '" + v + "' of '" + f.name() +
                      "' has no range: give one (e.g. " + v + "=1:4096), or bind it first (analysis::specialize, --dim)");

  // The rule the default schedule would use, matched once.
  rules::RuleChoice choice = rules::choose_rule(f, arch);
  if (!choice.rule) throw UserError("no rule schedules '" + f.name() + "':" + choice.why_declined());
  ++plan.rule_applications;
  const rules::Rule *rule = choice.rule;
  const rules::MatchPtr match = choice.match;
  plan.rule = rule->name();

  // Cells: the product of every symbol's.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> per_symbol;
  int64_t total = 1;
  for (const SymbolRange &r : spec.symbols) {
    per_symbol.push_back(symbol_cells(r, spec));
    total *= static_cast<int64_t>(per_symbol.back().size());
    if (total > spec.max_cells)
      throw UserError("the ranges make more than " + std::to_string(spec.max_cells) +
                      " cells; narrow them or lower the cells per octave");
  }
  for (int64_t n = 0; n < total; ++n) {
    Cell c;
    int64_t rest = n;
    for (size_t s = per_symbol.size(); s-- > 0;) {
      const auto &list = per_symbol[s];
      c.bounds.insert(c.bounds.begin(), list[static_cast<size_t>(rest % int64_t(list.size()))]);
      rest /= static_cast<int64_t>(list.size());
    }
    plan.cells.push_back(std::move(c));
  }
  const size_t ncells = plan.cells.size();

  // The candidates: each cell's best few by the policy (at its upper ends).
  std::vector<std::unique_ptr<rules::Config>> pool;
  std::map<std::string, size_t> index;
  std::vector<std::vector<double>> t;  // [config][cell]
  // The pool position of a candidate, added (unscored) when new.
  auto add_candidate = [&](std::unique_ptr<rules::Config> &config) {
    auto [it, fresh] = index.emplace(config->str(), pool.size());
    if (fresh) {
      pool.push_back(std::move(config));
      t.emplace_back(ncells, kInf);
    }
    return it->second;
  };
  // The policy's options at cell `i`: its upper ends.
  auto options_at_cell = [&](size_t i, int64_t topk) {
    policies::ProposeOptions o{.topk = topk};
    for (size_t s = 0; s < plan.symbols.size(); ++s) o.sizes[plan.symbols[s]] = plan.cells[i].bounds[s].second;
    return o;
  };
  for (size_t i = 0; i < ncells; ++i) {
    policies::Proposal p = policies::propose(f, *rule, *match, arch, options_at_cell(i, kCandidatesPerCell));
    ++plan.policy_calls;
    for (policies::Candidate &cand : p.candidates) {
      size_t c = add_candidate(cand.config);
      t[c][i] = std::min(t[c][i], cand.score);
    }
  }
  // Today's one symbolic kernel: the policy's top-1 at the hint.
  int one_kernel = -1;
  {
    policies::Proposal p = policies::propose(f, *rule, *match, arch, {.topk = 1});
    ++plan.policy_calls;
    if (!p.candidates.empty()) {
      plan.one_kernel_config = p.candidates[0].config->str();
      one_kernel = static_cast<int>(add_candidate(p.candidates[0].config));
    }
  }
  // Every candidate at every cell: those a cell's proposal did not list (a
  // tile it would not try at that size) are scored there too, so a config
  // can serve any cell the model judges it at, and the baselines are scored
  // everywhere. One call per cell: the shape is read once.
  for (size_t i = 0; i < ncells; ++i) {
    std::vector<const rules::Config *> missing;
    std::vector<size_t> rows;
    for (size_t c = 0; c < pool.size(); ++c)
      if (!std::isfinite(t[c][i])) missing.push_back(pool[c].get()), rows.push_back(c);
    if (missing.empty()) continue;
    std::vector<double> scores =
        policies::estimate(f, *rule, *match, arch, missing, options_at_cell(i, policies::ProposeOptions{}.topk));
    ++plan.policy_calls;
    for (size_t k = 0; k < rows.size(); ++k)
      if (std::isfinite(scores[k])) t[rows[k]][i] = scores[k];
  }
  plan.candidates = static_cast<int64_t>(pool.size());
  // Per cell, the best estimate of any candidate and which one it is.
  std::vector<double> best(ncells, kInf);
  std::vector<int> best_config(ncells, 0);
  for (size_t i = 0; i < ncells; ++i)
    for (size_t c = 0; c < pool.size(); ++c)
      if (t[c][i] < best[i]) best[i] = t[c][i], best_config[i] = static_cast<int>(c);

  // The cover, redone without any config the symbolic function refuses.
  std::vector<bool> banned(pool.size(), false), checked(pool.size(), false);
  std::vector<int> chosen;
  for (;;) {
    chosen = cover(t, best, banned, spec.max_kernels);
    bool redo = false;
    for (int c : chosen) {
      if (checked[static_cast<size_t>(c)]) continue;
      checked[static_cast<size_t>(c)] = true;
      ++plan.rule_applications;
      try {
        rule->apply(f, *match, *pool[static_cast<size_t>(c)]);
      } catch (const UserError &) {
        banned[static_cast<size_t>(c)] = redo = true;
      }
    }
    if (!redo) break;
  }
  if (chosen.empty()) throw UserError("no config of rule '" + plan.rule + "' serves every size of the ranges");
  for (size_t i = 0; i < ncells; ++i) {
    Cell &c = plan.cells[i];
    int pick = 0;
    for (size_t k = 1; k < chosen.size(); ++k)
      if (t[static_cast<size_t>(chosen[k])][i] < t[static_cast<size_t>(chosen[static_cast<size_t>(pick)])][i])
        pick = static_cast<int>(k);
    c.config = pick;
    c.predicted_us = t[static_cast<size_t>(chosen[static_cast<size_t>(pick)])][i];
    c.best_us = best[i];
    for (int k : chosen) c.kernel_us.push_back(t[static_cast<size_t>(k)][i]);
  }
  for (int c : chosen) plan.configs.push_back(rule->config_from_json(pool[static_cast<size_t>(c)]->to_json()));

  // Baselines, scored the same way.
  auto baseline = [&](const std::string &name, const std::vector<int> &config_of_cell) {
    PlanBaseline b;
    b.name = name;
    std::set<int> distinct(config_of_cell.begin(), config_of_cell.end());
    b.kernels = static_cast<int64_t>(distinct.size());
    double s = 0;
    for (size_t i = 0; i < ncells; ++i) {
      double r = ratio(t[static_cast<size_t>(config_of_cell[i])][i], best[i]);
      s += std::log(r);
      b.max_regret = std::max(b.max_regret, r);
    }
    b.geomean_regret = std::exp(s / double(ncells));
    plan.baselines.push_back(b);
  };
  if (one_kernel >= 0) baseline("one kernel (the policy's top-1 at the hint)", std::vector<int>(ncells, one_kernel));
  {
    // Power-of-two buckets: each the config best at its upper end (a cell
    // whose upper ends are that bucket's), else the cell's own best.
    std::map<std::vector<int64_t>, size_t> by_top;
    for (size_t i = 0; i < ncells; ++i) {
      std::vector<int64_t> top;
      for (const auto &b : plan.cells[i].bounds) top.push_back(b.second);
      by_top.emplace(top, i);
    }
    std::vector<int> of_cell(ncells);
    for (size_t i = 0; i < ncells; ++i) {
      std::vector<int64_t> top;
      for (size_t s = 0; s < plan.symbols.size(); ++s)
        top.push_back(std::min(pow2_at_least(plan.cells[i].bounds[s].second), spec.symbols[s].hi));
      auto it = by_top.find(top);
      of_cell[i] = best_config[it == by_top.end() ? i : it->second];
    }
    baseline("power-of-two buckets", of_cell);
  }
  plan.plan_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

std::vector<std::vector<int64_t>> regret_sweep(const DynamicSpec &spec) {
  std::vector<std::vector<int64_t>> out;
  auto one_symbol = [](const SymbolRange &r, bool dense) {
    std::set<int64_t> v;
    if (dense) {
      for (int64_t x = 1; x <= 64; ++x) v.insert(x);
      for (int64_t x = 72; x <= 512; x += 8) v.insert(x);
      for (int64_t top = 1024; top / 2 < r.hi; top *= 2)
        for (int i = 1; i <= 8; ++i) v.insert(top / 2 + top / 16 * i);
    } else {
      // 24 points, evenly spaced in log between lo and hi.
      for (int i = 0; i < 24; ++i) v.insert(log_point(r, i / 23.0));
    }
    for (int64_t h : r.hot) v.insert(h);
    v.insert(r.lo), v.insert(r.hi);
    std::vector<int64_t> kept;
    for (int64_t x : v)
      if (x >= r.lo && x <= r.hi) kept.push_back(x);
    return kept;
  };
  if (spec.symbols.empty()) return {{}};
  if (spec.symbols.size() == 1) {
    for (int64_t x : one_symbol(spec.symbols[0], true)) out.push_back({x});
    return out;
  }
  std::vector<std::vector<int64_t>> axes;
  for (const SymbolRange &r : spec.symbols) axes.push_back(one_symbol(r, false));
  std::vector<size_t> at(axes.size(), 0);
  for (;;) {
    std::vector<int64_t> p;
    for (size_t s = 0; s < axes.size(); ++s) p.push_back(axes[s][at[s]]);
    out.push_back(p);
    size_t s = axes.size();
    while (s-- > 0 && ++at[s] == axes[s].size()) at[s] = 0;
    if (s == size_t(-1)) break;
  }
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 200; ++i) {
    std::vector<int64_t> p;
    for (const SymbolRange &r : spec.symbols) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      p.push_back(log_point(r, double(state >> 11) / double(uint64_t(1) << 53)));
    }
    out.push_back(p);
  }
  return out;
}

RegretCurve predict_regret(const ir::PrimFunc &original, const DynamicSpec &spec, const DynamicPlan &plan,
                           const Arch &arch, const std::vector<std::vector<int64_t>> &points) {
  ir::PrimFunc f = schedule::unique_block_names(original);
  const rules::Rule *rule = rules::find_rule(plan.rule);
  if (!rule) throw InternalError("no rule '" + plan.rule + "'");
  auto match = rule->match(f, arch);
  if (!match) throw UserError("the plan's rule does not match: " + match.reason());
  // Every config the policy proposes at `sizes`, by its text, with its estimate.
  struct Proposed {
    std::map<std::string, double> score;
    std::map<std::string, std::unique_ptr<rules::Config>> config;
  };
  auto options_at = [&](const std::vector<int64_t> &sizes) {
    policies::ProposeOptions o{.topk = 1 << 20};
    for (size_t s = 0; s < plan.symbols.size(); ++s) o.sizes[plan.symbols[s]] = sizes[s];
    return o;
  };
  auto proposed_at = [&](const std::vector<int64_t> &sizes) {
    Proposed out;
    for (policies::Candidate &c : policies::propose(f, *rule, **match, arch, options_at(sizes)).candidates) {
      std::string text = c.config->str();
      out.score.emplace(text, c.score);
      out.config.emplace(text, std::move(c.config));
    }
    return out;
  };
  // The configs the series use, by text: the plan's, the one kernel's, and
  // each power-of-two bucket's (added as the buckets are met).
  std::map<std::string, std::unique_ptr<rules::Config>> used;
  for (const auto &c : plan.configs) used.emplace(c->str(), rule->config_from_json(c->to_json()));
  if (!plan.one_kernel_config.empty())
    used.emplace(plan.one_kernel_config, rule->config_from_json(rules::Json::parse(plan.one_kernel_config)));
  std::map<std::vector<int64_t>, std::string> bucket_config;  // power-of-two bucket top -> its best config
  std::set<std::string> pow2_used;
  RegretCurve curve;
  auto ratio_or_nan = [](double us, double best) { return std::isnan(us) ? us : ratio(us, best); };
  for (const std::vector<int64_t> &sizes : points) {
    Proposed at = proposed_at(sizes);
    RegretPoint p;
    p.sizes = sizes;
    p.best_us = kInf;
    for (const auto &[_, t] : at.score) p.best_us = std::min(p.best_us, t);
    int cell = plan.cell_of(sizes);
    if (cell < 0) throw UserError("a sweep point lies outside the plan's cells");
    std::vector<int64_t> top;
    for (size_t s = 0; s < sizes.size(); ++s) top.push_back(std::min(pow2_at_least(sizes[s]), spec.symbols[s].hi));
    auto it = bucket_config.find(top);
    if (it == bucket_config.end()) {
      Proposed there = proposed_at(top);
      std::string best_key;
      double best_t = kInf;
      for (const auto &[k, t] : there.score)
        if (t < best_t) best_t = t, best_key = k;
      if (!used.count(best_key)) used.emplace(best_key, std::move(there.config.at(best_key)));
      it = bucket_config.emplace(top, best_key).first;
    }
    pow2_used.insert(it->second);
    // Each series' config's estimate here, scored (one call) where the
    // proposal at this size does not list it; NaN where the policy cannot
    // score it (counted, left out of the summaries). The best is that of
    // every config scored here.
    const std::string &plan_key = plan.configs[size_t(plan.cells[size_t(cell)].config)]->str();
    std::vector<std::string> keys = {plan_key, it->second};
    if (!plan.one_kernel_config.empty()) keys.push_back(plan.one_kernel_config);
    std::map<std::string, double> unlisted;  // estimates of the series' configs the proposal lacks
    std::vector<std::string> to_score;
    for (const std::string &k : keys)
      if (!at.score.count(k) && unlisted.emplace(k, std::nan("")).second) to_score.push_back(k);
    if (!to_score.empty()) {
      std::vector<const rules::Config *> configs;
      for (const std::string &k : to_score) configs.push_back(used.at(k).get());
      std::vector<double> scored = policies::estimate(f, *rule, **match, arch, configs, options_at(sizes));
      for (size_t k = 0; k < to_score.size(); ++k)
        if (std::isfinite(scored[k])) unlisted[to_score[k]] = scored[k];
    }
    auto us_of = [&](const std::string &k) {
      auto listed = at.score.find(k);
      return listed != at.score.end() ? listed->second : unlisted.at(k);
    };
    for (const std::string &k : keys) p.best_us = std::min(p.best_us, us_of(k));
    p.plan = ratio_or_nan(us_of(plan_key), p.best_us);
    p.one_kernel = plan.one_kernel_config.empty() ? 1 : ratio_or_nan(us_of(plan.one_kernel_config), p.best_us);
    p.pow2 = ratio_or_nan(us_of(it->second), p.best_us);
    curve.points.push_back(p);
  }
  auto summarise = [&](double RegretPoint::*field) {
    std::vector<double> v;
    RegretSummary s;
    for (const RegretPoint &p : curve.points) {
      if (std::isnan(p.*field)) ++s.unestimated;
      else v.push_back(p.*field);
    }
    if (v.empty()) return s;
    double logs = 0;
    for (double x : v) logs += std::log(x);
    s.geomean = std::exp(logs / double(v.size()));
    std::sort(v.begin(), v.end());
    s.p95 = v[std::min(v.size() - 1, static_cast<size_t>(std::ceil(0.95 * double(v.size()))) - 1)];
    s.max = v.back();
    return s;
  };
  curve.plan = summarise(&RegretPoint::plan);
  curve.one_kernel = summarise(&RegretPoint::one_kernel);
  curve.pow2 = summarise(&RegretPoint::pow2);
  curve.pow2_kernels = static_cast<int64_t>(pow2_used.size());
  return curve;
}

}  // namespace tessera::tuning
