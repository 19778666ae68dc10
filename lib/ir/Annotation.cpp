//===- Annotation.cpp - Annotation values ----------------------------------===//
#include "tessera/ir/Annotation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

namespace tessera::ir {

/// Shortest decimal text that reads back to the same double (Python's repr).
static std::string float_repr(double v) {
  if (std::isinf(v)) return v > 0 ? "float(\"inf\")" : "float(\"-inf\")";
  if (std::isnan(v)) return "float(\"nan\")";
  // The fewest significant digits that read back exactly, then Python's
  // layout: positional for decimal exponents in [-4, 16), else scientific.
  char buf[64];
  int prec = 1;
  for (; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*e", prec - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  int exp10 = std::atoi(std::strchr(buf, 'e') + 1);
  if (exp10 >= -4 && exp10 < 16) std::snprintf(buf, sizeof(buf), "%.*f", std::max(prec - 1 - exp10, 0), v);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string AnnValue::str() const {
  if (is_bool()) return as_bool() ? "True" : "False";
  if (is_int()) return std::to_string(as_int());
  if (is_float()) return float_repr(as_float());
  if (is_string()) {
    std::string out = "\"";
    for (char c : as_string()) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out + "\"";
  }
  if (is_dict()) {
    const AnnDict &d = as_dict();
    std::string out = "{";
    for (size_t i = 0; i < d.keys.size(); ++i) out += (i ? ", " : "") + AnnValue(d.keys[i]).str() + ": " + d.values[i].str();
    return out + "}";
  }
  if (is_call()) {
    const AnnCall &c = as_call();
    std::string out = c.callee + "(";
    for (size_t i = 0; i < c.args.size(); ++i) out += (i ? ", " : "") + c.args[i].str();
    return out + ")";
  }
  std::string out = "[";
  const List &l = as_list();
  for (size_t i = 0; i < l.size(); ++i) out += (i ? ", " : "") + l[i].str();
  return out + "]";
}

const AnnValue *AnnValue::find(const std::string &key) const {
  if (!is_dict()) return nullptr;
  const AnnDict &d = as_dict();
  for (size_t i = 0; i < d.keys.size(); ++i)
    if (d.keys[i] == key) return &d.values[i];
  return nullptr;
}

size_t AnnValue::hash() const {
  size_t h = v_.index() * 0x9e3779b97f4a7c15ull;
  auto mix = [&](size_t x) { h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  if (is_bool()) mix(as_bool());
  else if (is_int()) mix(std::hash<int64_t>()(as_int()));
  else if (is_float()) mix(std::hash<double>()(as_float()));
  else if (is_string()) mix(std::hash<std::string>()(as_string()));
  else if (is_dict()) {
    for (size_t i = 0; i < as_dict().keys.size(); ++i) {
      mix(std::hash<std::string>()(as_dict().keys[i]));
      mix(as_dict().values[i].hash());
    }
  } else if (is_call()) {
    mix(std::hash<std::string>()(as_call().callee));
    for (const AnnValue &x : as_call().args) mix(x.hash());
  } else
    for (const AnnValue &x : as_list()) mix(x.hash());
  return h;
}

}  // namespace tessera::ir
