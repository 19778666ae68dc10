//===- lib/bench/MarkdownCells.h - Cells of the benchmarks' Markdown tables ----===//
//
// The two reports of bench/ (WorkloadRunner.h, TuneSuite.h) render JSON rows
// as Markdown tables the same way:
//
//   number_cell(row, "gbps", "{:.0f}")            // "1834", or "–" when absent
//   number_cell(row, "flops", "{:.2f}", 1e-9, true) // "–" also for 0 (no flops)
//   text_cell(compiler_message, 160)              // one line, no '|', cut with "..."
//
//===----------------------------------------------------------------------===//
#pragma once

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <string>

namespace tessera::bench {

/// `key` of `row` times `scale`, formatted with `format`; "–" when the key is
/// absent or not a number, and with `blank_zero` when it is zero.
inline std::string number_cell(const nlohmann::json &row, const char *key, const char *format, double scale = 1,
                               bool blank_zero = false) {
  if (!row.contains(key) || !row.at(key).is_number()) return "–";
  double v = row.at(key).get<double>();
  if (blank_zero && v == 0) return "–";
  return fmt::format(fmt::runtime(format), v * scale);
}

/// Text in one table cell: newlines and '|' become spaces (compiler messages
/// must not break the table), and more than `max` characters are cut to
/// max - 3 followed by "...".
inline std::string text_cell(std::string s, size_t max) {
  for (char &c : s)
    if (c == '\n' || c == '|') c = ' ';
  return s.size() > max ? s.substr(0, max - 3) + "..." : s;
}

}  // namespace tessera::bench
