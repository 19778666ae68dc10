//===- tests/workloads/Workloads.cpp - The workload corpus manifest ---------===//
#include "Workloads.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "tessera/script/Parser.h"
#include "tessera/support/DataPaths.h"

namespace tessera::test {

using nlohmann::json;

const std::string &workload_dir() {
  static const std::string dir = (support::data_root() / "workloads").string();
  return dir;
}

std::string Entry::path() const {
  const std::string shared = "shared:";
  if (file.starts_with(shared)) return (support::shared_root() / file.substr(shared.size())).string();
  return workload_dir() + "/" + file;
}

Sizes Entry::specialized(const Sizes &sizes) const {
  Sizes out = sizes;
  for (const std::string &v : symbolic) out.erase(v);
  return out;
}

std::ostream &operator<<(std::ostream &os, const Entry &e) {
  return os << e.name;
}

namespace {

Sizes parse_sizes(const json &j, const std::string &where) {
  if (!j.is_object()) throw std::runtime_error(where + ": expected an object {variable: size}");
  Sizes out;
  for (const auto &[var, value] : j.items()) {
    if (!value.is_number_integer()) throw std::runtime_error(where + "." + var + ": expected an integer");
    out[var] = value.get<int64_t>();
  }
  return out;
}

std::string parse_string(const json &j, const std::string &where) {
  if (!j.is_string()) throw std::runtime_error(where + ": expected a string");
  return j.get<std::string>();
}

}  // namespace

/// Reads workloads/workloads.json; a missing or malformed field throws,
/// naming the entry and the field.
std::vector<Entry> load_manifest() {
  const std::string path = workload_dir() + "/workloads.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  json doc = json::parse(in);
  if (!doc.is_array()) throw std::runtime_error(path + ": expected a list of entries");
  const std::set<std::string> fields = {"name", "file", "rule", "full", "small", "symbolic"};
  std::vector<Entry> out;
  for (size_t i = 0; i < doc.size(); ++i) {
    const json &j = doc[i];
    std::string where = "entry " + std::to_string(i);
    if (!j.is_object()) throw std::runtime_error(where + ": expected an object");
    for (const auto &[key, value] : j.items())
      if (!fields.contains(key)) throw std::runtime_error(where + ": unknown field '" + key + "'");
    for (const std::string &key : fields)
      if (!j.contains(key)) throw std::runtime_error(where + ": missing field '" + key + "'");
    Entry e;
    e.name = parse_string(j["name"], where + ".name");
    where = "entry '" + e.name + "'";
    e.file = parse_string(j["file"], where + ".file");
    e.rule = parse_string(j["rule"], where + ".rule");
    e.full = parse_sizes(j["full"], where + ".full");
    e.small = parse_sizes(j["small"], where + ".small");
    if (!j["symbolic"].is_array()) throw std::runtime_error(where + ".symbolic: expected a list");
    for (const json &v : j["symbolic"]) e.symbolic.push_back(parse_string(v, where + ".symbolic[]"));
    out.push_back(std::move(e));
  }
  return out;
}

ir::PrimFunc load_func(const Entry &e) {
  std::ifstream in(e.path());
  if (!in) throw std::runtime_error("cannot open " + e.path());
  std::stringstream text;
  text << in.rdbuf();
  return script::parse_func(text.str(), e.path());
}


/// Inputs that random [0, 16) integers would test poorly: int4 weights get
/// every nibble of their packed words random.
void prepare_inputs(const Entry &e, std::vector<runtime::NDArray> &args, std::mt19937_64 &rng) {
  if (e.name != "gemv_int4") return;
  runtime::NDArray &wq = args[0];
  for (int64_t i = 0; i < wq.numel(); ++i) wq.set_int(i, static_cast<int64_t>(rng() & 0xffffffffu));
}

const Entry &find_entry(const std::string &name) {
  static const std::vector<Entry> entries = load_manifest();
  for (const Entry &e : entries)
    if (e.name == name) return e;
  throw std::runtime_error("no workload " + name);
}

ir::PrimFunc matmul_layout_program(const std::string &layout, int m, int n, int k) {
  auto s = [](int v) { return std::to_string(v); };
  bool ta = layout[0] == 't', tb = layout[1] == 't';
  std::string a_shape = ta ? s(k) + ", " + s(m) : s(m) + ", " + s(k);
  std::string b_shape = tb ? s(n) + ", " + s(k) : s(k) + ", " + s(n);
  return script::parse_func(
      "@T.prim_func\ndef main(A: T.Buffer((" + a_shape + "), \"float32\"), B: T.Buffer((" + b_shape +
      "), \"float32\"), C: T.Buffer((" + s(m) + ", " + s(n) +
      "), \"float32\")):\n"
      "    for i, j, r in T.grid(" +
      s(m) + ", " + s(n) + ", " + s(k) +
      "):\n"
      "        with T.block(\"C\"):\n"
      "            vi, vj, vr = T.axis.remap(\"SSR\", [i, j, r])\n"
      "            with T.init():\n"
      "                C[vi, vj] = T.float32(0)\n"
      "            C[vi, vj] = C[vi, vj] + A[" +
      std::string(ta ? "vr, vi" : "vi, vr") + "] * B[" + (tb ? "vj, vr" : "vr, vj") + "]\n");
}

}  // namespace tessera::test
