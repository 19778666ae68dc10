//===- lib/tune/Record.cpp - One database line: JSON and its validation -----===//
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <ctime>

#include "tessera/tune/Database.h"

namespace tessera::tuning {

namespace {

constexpr std::array<std::pair<RecordStatus, const char *>, 5> kStatusNames = {{
    {RecordStatus::Ok, "ok"},
    {RecordStatus::CompileError, "compile_error"},
    {RecordStatus::LaunchError, "launch_error"},
    {RecordStatus::WrongAnswer, "wrong_answer"},
    {RecordStatus::Skipped, "skipped"},
}};

/// A JSON value for a message, cut to a readable length.
std::string shown(const Json &j) {
  std::string s = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

[[noreturn]] void fail(const std::string &message) {
  throw RecordFormatError(message);
}

const Json &required(const Json &object, const char *field, const std::string &where = "") {
  auto it = object.find(field);
  if (it == object.end()) fail(fmt::format("missing the field '{}{}'", where, field));
  return *it;
}

std::string string_field(const Json &object, const char *field, const std::string &where = "") {
  const Json &v = required(object, field, where);
  if (!v.is_string()) fail(fmt::format("field '{}{}': expected a string, got {}", where, field, shown(v)));
  std::string s = v.get<std::string>();
  if (s.empty()) fail(fmt::format("field '{}{}' is empty", where, field));
  return s;
}

std::string optional_string(const Json &object, const char *field) {
  auto it = object.find(field);
  if (it == object.end()) return "";
  if (!it->is_string()) fail(fmt::format("field '{}': expected a string, got {}", field, shown(*it)));
  return it->get<std::string>();
}

TuningKey key_from_json(const Json &j) {
  if (!j.is_object()) fail(fmt::format("field 'key': expected an object, got {}", shown(j)));
  TuningKey k{.workload = string_field(j, "workload", "key."),
              .arch = string_field(j, "arch", "key."),
              .nvrtc = string_field(j, "nvrtc", "key."),
              .driver = string_field(j, "driver", "key."),
              .tessera = string_field(j, "tessera", "key.")};
  bool hex = k.workload.size() == 16 && k.workload.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (!hex)
    fail(fmt::format("field 'key.workload': expected 16 lower-case hex digits, got \"{}\"", k.workload));
  return k;
}

}  // namespace

const char *to_string(RecordStatus s) {
  for (const auto &[status, name] : kStatusNames)
    if (status == s) return name;
  TESSERA_UNREACHABLE("unknown RecordStatus " << static_cast<int>(s));
}

std::optional<RecordStatus> parse_record_status(std::string_view text) {
  for (const auto &[status, name] : kStatusNames)
    if (text == name) return status;
  return std::nullopt;
}

Json Record::to_json() const {
  Json j = Json::object();
  j["key"] = key.to_json();
  if (!workload.is_null()) j["workload"] = workload;
  j["rule"] = rule;
  j["config"] = config;
  j["status"] = to_string(status);
  if (time_us) j["time_us"] = *time_us;
  if (!error.empty()) j["error"] = error;
  j["timestamp"] = timestamp;
  if (!git.empty()) j["git"] = git;
  return j;
}

Record Record::from_json(const Json &j) {
  if (!j.is_object()) fail(fmt::format("expected a JSON object, got {}", shown(j)));
  Record r;
  r.key = key_from_json(required(j, "key"));
  if (auto it = j.find("workload"); it != j.end()) {
    if (!it->is_object()) fail(fmt::format("field 'workload': expected an object, got {}", shown(*it)));
    r.workload = *it;
  }
  r.rule = string_field(j, "rule");
  r.config = required(j, "config");
  if (!r.config.is_object()) fail(fmt::format("field 'config': expected an object, got {}", shown(r.config)));

  std::string status = string_field(j, "status");
  std::optional<RecordStatus> parsed = parse_record_status(status);
  if (!parsed) {
    std::string names;
    for (const auto &entry : kStatusNames) names += (names.empty() ? "" : ", ") + std::string(entry.second);
    fail(fmt::format("field 'status': expected one of {}, got \"{}\"", names, status));
  }
  r.status = *parsed;

  auto time = j.find("time_us");
  if (r.status == RecordStatus::Ok) {
    if (time == j.end()) fail("an \"ok\" record needs the field 'time_us'");
    if (!time->is_number() || !std::isfinite(time->get<double>()) || time->get<double>() <= 0)
      fail(fmt::format("field 'time_us': expected a positive number of microseconds, got {}", shown(*time)));
    r.time_us = time->get<double>();
  } else if (time != j.end()) {
    fail(fmt::format("field 'time_us' is only for \"ok\" records, not \"{}\"", status));
  }

  r.error = optional_string(j, "error");
  r.timestamp = string_field(j, "timestamp");
  r.git = optional_string(j, "git");
  return r;
}

std::string DatabaseWarning::str(std::string_view path) const {
  return fmt::format("{}:{}: skipped: {}", path, line, reason);
}

std::string utc_timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace tessera::tuning
