//===- lib/schedule/Dump.cpp - TESSERA_DUMP=schedule -----------------------===//
//
// The environment is read on every call rather than cached: a primitive is
// far more expensive than a getenv, and tests (and long-lived tuners) can
// switch dumping on and off.
//
//===----------------------------------------------------------------------===//
#include "Dump.h"

#include <cstdlib>
#include <iostream>

#include "tessera/script/Printer.h"

namespace tessera::schedule::detail {

namespace {

std::ostream &out() {
  return std::cerr;
}

bool is_lookup(std::string_view primitive) {
  return primitive.substr(0, 4) == "get_";
}

}  // namespace

bool dump_enabled(std::string_view area) {
  const char *env = std::getenv("TESSERA_DUMP");
  if (!env) return false;
  std::string_view list(env);
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == area || item == "all") return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

void dump_after(const State &st, std::string_view primitive, const ir::PrimFunc &before) {
  if (is_lookup(primitive) || !dump_enabled("schedule")) return;
  std::ostream &os = out();
  os << "=== schedule: after " << primitive;
  if (!st.trace.empty()) os << " " << Trace::dump(st.trace.instructions().back());
  os << "\n";
  // Unchanged as text (Halide's rule): a primitive that rebuilt the same
  // loops, or one that did nothing, says so instead of repeating the function.
  std::string text = st.func.same_as(before) ? std::string() : script::print(st.func);
  if (text.empty() || text == script::print(before))
    os << "(unchanged)\n";
  else
    os << text << "\n";
  os.flush();
}

void dump_failure(std::string_view primitive, const ScheduleError &e) {
  if (is_lookup(primitive) || !dump_enabled("schedule")) return;
  out() << "=== schedule: " << primitive << " failed (unchanged): " << e.brief() << "\n";
  out().flush();
}

}  // namespace tessera::schedule::detail
