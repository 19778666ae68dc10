//===- lib/bench/DynamicSuite.cpp - `tessera bench --suite dynamic` -----------===//
#include "tessera/bench/DynamicSuite.h"

#include <chrono>
#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "tessera/bench/BenchEnvironment.h"
#include "tessera/bench/TuneSuite.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/script/Parser.h"
#include "tessera/support/Error.h"
#include "tessera/tune/DynamicPlan.h"

namespace tessera::bench {

using json = nlohmann::json;

namespace {

json summary(const tuning::RegretSummary &s) {
  return {{"geomean", s.geomean}, {"p95", s.p95}, {"max", s.max}, {"unestimated", s.unestimated}};
}
/// NaN (no estimate) as null in the JSON.
json regret(double r) { return std::isnan(r) ? json(nullptr) : json(r); }

}  // namespace

bool is_dynamic_suite(const std::string &path) {
  json j = read_json(path);
  return j.is_object() && j.value("kind", "") == "dynamic";
}

json run_dynamic_suite(const DynamicSuiteOptions &o) {
  json suite = read_json(o.path);
  Arch arch = suite_arch(o.arch);
  json report = run_environment(o.git);
  report["suite"] = suite.value("suite", "dynamic");
  report["description"] = suite.value("description", "");
  report["arch"] = arch.fingerprint();
  report["mode"] = "predicted (the cost model's estimates; measured regret needs a device)";
  report["workloads"] = json::array();
  std::set<std::string> known;
  for (const json &w : suite.at("workloads")) {
    const std::string name = w.at("name").get<std::string>();
    known.insert(name);
    if (!o.only.empty() && !std::count(o.only.begin(), o.only.end(), name)) continue;
    json row = {{"workload", name}, {"file", w.at("file")}};
    try {
      ir::PrimFunc f = script::parse_file(source_path(w.at("file").get<std::string>())).funcs.at(0);
      std::map<std::string, int64_t> bind = w.value("dims", std::map<std::string, int64_t>{});
      if (!bind.empty()) f = analysis::specialize(f, bind);
      tuning::DynamicSpec spec = tuning::DynamicSpec::parse(w.value("ranges", std::vector<std::string>{}),
                                                        w.value("hot", std::vector<std::string>{}),
                                                        w.value("max_kernels", int64_t(8)));
      tuning::DynamicPlan plan = tuning::plan_dynamic(f, spec, arch);
      auto t0 = std::chrono::steady_clock::now();
      tuning::RegretCurve curve = tuning::predict_regret(f, spec, plan, arch, tuning::regret_sweep(spec));
      double sweep_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      row["status"] = "ok";
      row["rule"] = plan.rule;
      row["symbols"] = plan.symbols;
      row["ranges"] = w.value("ranges", json::array());
      row["cells"] = plan.cells.size();
      row["kernels"] = plan.configs.size();
      row["pow2_kernels"] = curve.pow2_kernels;
      row["plan_ms"] = plan.plan_ms;
      row["sweep_ms"] = sweep_ms;
      row["regret"] = {{"plan", summary(curve.plan)},
                       {"one_kernel", summary(curve.one_kernel)},
                       {"pow2", summary(curve.pow2)}};
      row["points"] = json::array();
      for (const tuning::RegretPoint &p : curve.points)
        row["points"].push_back(
            {{"sizes", p.sizes}, {"plan", regret(p.plan)}, {"one_kernel", regret(p.one_kernel)}, {"pow2", regret(p.pow2)}});
    } catch (const UserError &e) {
      row["status"] = "error";
      row["error"] = e.what();
    }
    report["workloads"].push_back(row);
  }
  for (const std::string &n : o.only)
    if (!known.count(n)) throw UserError("suite '" + report["suite"].get<std::string>() + "' has no workload '" + n + "'");
  return report;
}

std::string dynamic_suite_markdown(const json &r) {
  std::ostringstream md;
  md << "# tessera bench " << r.value("suite", "") << " on " << r.value("arch", "") << "\n\n"
     << r.value("description", "") << "\n\n"
     << "Mode: " << r.value("mode", "") << "; git " << r.value("git", "") << ", " << r.value("date", "") << ".\n\n"
     << "| workload | rule | ranges | cells | kernels | plan ms | regret plan (geomean / p95 / max) | one kernel | "
        "power-of-two (kernels) |\n|---|---|---|---:|---:|---:|---|---|---|\n";
  auto cell = [](const json &s) {
    std::string t = fmt::format("{:.3f} / {:.3f} / {:.3f}", s.at("geomean").get<double>(), s.at("p95").get<double>(),
                                s.at("max").get<double>());
    if (int64_t n = s.value("unestimated", int64_t(0))) t += fmt::format(" ({} sizes without an estimate)", n);
    return t;
  };
  for (const json &w : r.at("workloads")) {
    if (w.at("status") != "ok") {
      md << "| " << w.at("workload").get<std::string>() << " | error: " << w.value("error", "") << " |||||||\n";
      continue;
    }
    std::string ranges;
    for (const json &x : w.at("ranges")) ranges += (ranges.empty() ? "" : ", ") + x.get<std::string>();
    const json &g = w.at("regret");
    md << fmt::format("| {} | {} | {} | {} | {} | {:.0f} | {} | {} | {} ({}) |\n", w.at("workload").get<std::string>(),
                      w.at("rule").get<std::string>(), ranges, w.at("cells").get<int64_t>(),
                      w.at("kernels").get<int64_t>(), w.at("plan_ms").get<double>(), cell(g.at("plan")),
                      cell(g.at("one_kernel")), cell(g.at("pow2")), w.at("pow2_kernels").get<int64_t>());
  }
  return md.str();
}

std::string dynamic_suite_svg(const json &r) {
  std::vector<const json *> charts;
  for (const json &w : r.at("workloads"))
    if (w.at("status") == "ok" && w.at("symbols").size() == 1) charts.push_back(&w);
  const int W = 640, H = 200, top = 30;
  std::ostringstream svg;
  svg << fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
                     "font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
                     W, top + H * std::max<size_t>(charts.size(), 1));
  svg << fmt::format("<text x=\"10\" y=\"18\" font-size=\"13\">predicted regret on {}: plan (blue), one kernel (red), "
                     "power-of-two buckets (gray)</text>\n",
                     r.value("arch", ""));
  for (size_t c = 0; c < charts.size(); ++c) {
    const json &w = *charts[c];
    const double y0 = top + double(c) * H, x0 = 50, x1 = W - 20, y_top = y0 + 20, y_bot = y0 + H - 30;
    const double max_r = 2.0;
    std::vector<double> xs;
    for (const json &p : w.at("points")) xs.push_back(std::log2(double(p.at("sizes")[0].get<int64_t>())));
    double lo = *std::min_element(xs.begin(), xs.end()), hi = std::max(*std::max_element(xs.begin(), xs.end()), lo + 1);
    auto px = [&](double x) { return x0 + (x - lo) / (hi - lo) * (x1 - x0); };
    auto py = [&](double regret) { return y_bot - (std::min(regret, max_r) - 1.0) / (max_r - 1.0) * (y_bot - y_top); };
    svg << fmt::format("<text x=\"{}\" y=\"{}\">{} ({} kernels)</text>\n", x0, y0 + 12,
                       w.at("workload").get<std::string>(), w.at("kernels").get<int64_t>());
    svg << fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#888\"/>\n", x0, y_bot, x1);
    for (double rv : {1.0, 1.5, 2.0})
      svg << fmt::format("<text x=\"10\" y=\"{:.1f}\">{:.1f}</text>\n", py(rv) + 4, rv);
    svg << fmt::format("<text x=\"{}\" y=\"{}\">{} = {}</text><text x=\"{}\" y=\"{}\">{}</text>\n", x0, y_bot + 14,
                       w.at("symbols")[0].get<std::string>(), std::llround(std::exp2(lo)), x1 - 40, y_bot + 14,
                       std::llround(std::exp2(hi)));
    for (auto [key, color] : {std::pair{"pow2", "#999"}, {"one_kernel", "#c33"}, {"plan", "#36c"}}) {
      svg << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.5\" points=\"";
      size_t i = 0;
      for (const json &p : w.at("points")) {
        if (!p.at(key).is_null()) svg << fmt::format("{:.1f},{:.1f} ", px(xs[i]), py(p.at(key).get<double>()));
        ++i;
      }
      svg << "\"/>\n";
    }
  }
  svg << "</svg>\n";
  return svg.str();
}

std::vector<std::string> write_dynamic_suite(const json &report, const std::string &prefix) {
  return write_report(prefix, report, dynamic_suite_markdown(report), dynamic_suite_svg(report));
}

}  // namespace tessera::bench
