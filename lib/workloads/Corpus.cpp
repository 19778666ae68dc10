//===- lib/workloads/Corpus.cpp - The workload corpus and its manifest ----===//
#include "tessera/workloads/Corpus.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "tessera/script/Parser.h"
#include "tessera/support/DataPaths.h"

namespace tessera::workloads {

using nlohmann::json;

const std::string &workload_dir() {
  static const std::string dir = (support::data_root() / "workloads").string();
  return dir;
}

std::string Entry::path() const { return workload_dir() + "/" + file; }

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

}  // namespace tessera::workloads
