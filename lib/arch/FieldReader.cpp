//===- lib/arch/FieldReader.cpp - Validating reads of a JSON object --------===//
#include "FieldReader.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessera::detail {

std::string json_path(std::string_view parent, std::string_view key) {
  std::string out(parent);
  out += '/';
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string json_path(std::string_view parent, size_t index) {
  return std::string(parent) + "/" + std::to_string(index);
}

std::string describe_json_value(const ArchJson &v) {
  if (v.is_array()) return v.empty() ? "[]" : "an array";
  if (v.is_object()) return v.empty() ? "{}" : "an object";
  std::string text = v.dump();
  constexpr size_t kMaxShown = 40;
  if (text.size() > kMaxShown) text = text.substr(0, kMaxShown) + "...";
  return text;
}

namespace {

/// Levenshtein distance, for "did you mean" suggestions on short field names.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// JSON integers only: 2.0 is refused so that a count can never be fractional
/// after a round trip through a tool that writes floats.
bool is_integer(const ArchJson &v) { return v.is_number_integer(); }

}  // namespace

FieldReader::FieldReader(const ArchJson *object, std::string path, std::vector<ArchProblem> &problems)
    : object_(object), path_(std::move(path)), problems_(problems) {}

bool FieldReader::has(std::string_view key) {
  known_.emplace(key);
  return object_ && object_->contains(key);
}

void FieldReader::problem(std::string_view key, std::string message) {
  problems_.push_back({json_path(path_, key), std::move(message)});
}

void FieldReader::element_problem(std::string_view key, size_t index, std::string message) {
  problems_.push_back({json_path(json_path(path_, key), index), std::move(message)});
}

const ArchJson *FieldReader::field(std::string_view key, std::string_view expected) {
  known_.emplace(key);
  if (!object_) return nullptr;
  auto it = object_->find(key);
  if (it == object_->end()) {
    problem(key, "missing (expected " + std::string(expected) + ")");
    return nullptr;
  }
  return &*it;
}

int64_t FieldReader::positive_integer(std::string_view key) {
  return integer_in(key, 1, std::numeric_limits<int64_t>::max());
}

// Every read below has the same shape: find the field (a missing one is
// reported by field()), check its type and range, and on failure record one
// problem naming the field's path and the offending value, then return zero.
// Zero doubles as "already reported" for check_arch's cross-field relations.

int64_t FieldReader::integer_in(std::string_view key, int64_t min, int64_t max) {
  bool positive = min == 1 && max == std::numeric_limits<int64_t>::max();
  std::string expected =
      positive ? "a positive integer" : "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  const ArchJson *v = field(key, expected);
  if (!v) return 0;
  // Integers beyond int64 arrive as unsigned; they are out of every range here.
  bool fits = is_integer(*v) && (v->is_number_unsigned() ? v->get<uint64_t>() <= uint64_t(max) : true);
  if (fits) {
    int64_t x = v->get<int64_t>();
    if (x >= min && x <= max) return x;
  }
  problem(key, "expected " + expected + ", got " + describe_json_value(*v));
  return 0;
}

double FieldReader::positive_number(std::string_view key) {
  const ArchJson *v = field(key, "a positive number");
  if (!v) return 0;
  if (v->is_number()) {
    double x = v->get<double>();
    if (std::isfinite(x) && x > 0) return x;
  }
  problem(key, "expected a positive number, got " + describe_json_value(*v));
  return 0;
}

bool FieldReader::boolean(std::string_view key) {
  const ArchJson *v = field(key, "true or false");
  if (!v) return false;
  if (v->is_boolean()) return v->get<bool>();
  problem(key, "expected true or false, got " + describe_json_value(*v));
  return false;
}

std::string FieldReader::string(std::string_view key, bool allow_empty) {
  const char *expected = allow_empty ? "a string" : "a non-empty string";
  const ArchJson *v = field(key, expected);
  if (!v) return {};
  if (v->is_string() && (allow_empty || !v->get_ref<const std::string &>().empty())) return v->get<std::string>();
  problem(key, std::string("expected ") + expected + ", got " + describe_json_value(*v));
  return {};
}

std::vector<std::string> FieldReader::string_list(std::string_view key) {
  const ArchJson *v = field(key, "an array of strings");
  if (!v) return {};
  if (!v->is_array()) {
    problem(key, "expected an array of strings, got " + describe_json_value(*v));
    return {};
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const ArchJson &item = (*v)[i];
    if (item.is_string() && !item.get_ref<const std::string &>().empty()) {
      out.push_back(item.get<std::string>());
      continue;
    }
    element_problem(key, i, "expected a non-empty string, got " + describe_json_value(item));
  }
  return out;
}

FieldReader FieldReader::object(std::string_view key) {
  const ArchJson *v = field(key, "an object");
  if (v && !v->is_object()) {
    problem(key, "expected an object, got " + describe_json_value(*v));
    v = nullptr;
  }
  return FieldReader(v, json_path(path_, key), problems_);
}

const ArchJson *FieldReader::array(std::string_view key) {
  const ArchJson *v = field(key, "an array");
  if (v && !v->is_array()) {
    problem(key, "expected an array, got " + describe_json_value(*v));
    return nullptr;
  }
  return v;
}

void FieldReader::reject_unknown_fields() {
  // Unknown fields are errors, not warnings: a misspelt optional-looking field
  // would otherwise be ignored and its preset value used without a word.
  if (!object_) return;
  for (auto it = object_->begin(); it != object_->end(); ++it) {
    const std::string &key = it.key();
    if (known_.count(key)) continue;
    std::string message = "unknown field";
    // Suggest a known name within a third of the name's length (typos, not renames).
    std::string_view best;
    size_t best_distance = key.size() / 3 + 1;
    for (const std::string &k : known_) {
      size_t d = edit_distance(key, k);
      if (d < best_distance) {
        best = k;
        best_distance = d;
      }
    }
    if (!best.empty()) message += " (did you mean '" + std::string(best) + "'?)";
    problem(key, message);
  }
}

}  // namespace tessera::detail
