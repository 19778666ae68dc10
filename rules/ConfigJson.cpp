//===- rules/ConfigJson.cpp - Reading rule configs from JSON ---------------===//
#include "ConfigJson.h"

#include <algorithm>

namespace tessera::rules {

ConfigReader::ConfigReader(const Json &j, std::string rule) : j_(j), rule_(std::move(rule)) {
  if (!j.is_object()) throw ConfigError(rule_ + " config: expected a JSON object, got " + j.dump());
  auto it = j.find("rule");
  if (it == j.end() || !it->is_string())
    throw ConfigError(rule_ + " config: missing the field 'rule' (\"rule\": \"" + rule_ + "\")");
  if (it->get<std::string>() != rule_)
    throw ConfigError("config is for rule '" + it->get<std::string>() + "', not '" + rule_ + "'");
  read_.push_back("rule");
}

const Json &ConfigReader::field(const std::string &key) {
  auto it = j_.find(key);
  if (it == j_.end()) throw ConfigError(rule_ + " config: missing the field '" + key + "'");
  read_.push_back(key);
  return *it;
}

void ConfigReader::fail(const std::string &key, const std::string &what, const Json &got) const {
  throw ConfigError(rule_ + " config: field '" + key + "': expected " + what + ", got " + got.dump());
}

int64_t ConfigReader::integer(const std::string &key) {
  const Json &v = field(key);
  if (!v.is_number_integer()) fail(key, "an integer", v);
  return v.get<int64_t>();
}

int64_t ConfigReader::integer_or(const std::string &key, int64_t fallback) {
  if (j_.contains(key)) return integer(key);
  read_.push_back(key);  // a known field all the same (finish() lists it)
  return fallback;
}

bool ConfigReader::boolean_or(const std::string &key, bool fallback) {
  if (j_.contains(key)) return boolean(key);
  read_.push_back(key);
  return fallback;
}

bool ConfigReader::boolean(const std::string &key) {
  const Json &v = field(key);
  if (!v.is_boolean()) fail(key, "true or false", v);
  return v.get<bool>();
}

std::vector<int64_t> ConfigReader::integers(const std::string &key) {
  const Json &v = field(key);
  if (!v.is_array()) fail(key, "a list of integers", v);
  std::vector<int64_t> out;
  for (const Json &x : v) {
    if (!x.is_number_integer()) fail(key, "a list of integers", v);
    out.push_back(x.get<int64_t>());
  }
  return out;
}

std::string ConfigReader::choice(const std::string &key, const std::vector<std::string> &choices) {
  const Json &v = field(key);
  std::string what = "one of";
  for (size_t i = 0; i < choices.size(); ++i) what += (i ? ", \"" : " \"") + choices[i] + "\"";
  if (!v.is_string() || std::find(choices.begin(), choices.end(), v.get<std::string>()) == choices.end())
    fail(key, what, v);
  return v.get<std::string>();
}

void ConfigReader::finish() const {
  for (auto it = j_.begin(); it != j_.end(); ++it) {
    if (std::find(read_.begin(), read_.end(), it.key()) != read_.end()) continue;
    std::string known;
    for (const std::string &k : read_)
      if (k != "rule") known += (known.empty() ? "" : ", ") + k;
    throw ConfigError(rule_ + " config: unknown field '" + it.key() + "' (fields: " + known + ")");
  }
}

void require(bool ok, const char *rule, const std::string &field, int64_t value, const std::string &why) {
  if (!ok) throw ConfigError(std::string(rule) + " config: " + field + " = " + std::to_string(value) + " " + why);
}

void require_threads(const char *rule, const std::string &field, int64_t value, const Arch &arch) {
  require(value >= 1 && value <= arch.limits.max_threads_per_block, rule, field, value,
          "is outside [1, " + std::to_string(arch.limits.max_threads_per_block) + "], the threads per block of " +
              arch.name);
}

}  // namespace tessera::rules
