//===- tessera/ir/Annotation.h - Annotation values on loops, blocks, funcs -===//
//
// Annotations are plain data: bool, integer, float, string, or a list of
// those. They appear as `annotations={...}` on loops, `T.block_attr({...})` on
// blocks and `T.func_attr({...})` on functions:
//
//   T.func_attr({"global_symbol": "main", "tir.noalias": True})
//   T.block_attr({"software_pipeline_stage": [0, 0, 1]})
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace tessera::ir {

/// One annotation value.
class AnnValue {
 public:
  using List = std::vector<AnnValue>;
  AnnValue() : v_(int64_t{0}) {}
  AnnValue(bool b) : v_(b) {}
  AnnValue(int v) : v_(int64_t{v}) {}
  AnnValue(int64_t v) : v_(v) {}
  AnnValue(double v) : v_(v) {}
  AnnValue(std::string s) : v_(std::move(s)) {}
  AnnValue(const char *s) : v_(std::string(s)) {}
  AnnValue(List l) : v_(std::move(l)) {}

  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_int() const { return std::holds_alternative<int64_t>(v_); }
  bool is_float() const { return std::holds_alternative<double>(v_); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_list() const { return std::holds_alternative<List>(v_); }
  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const { return std::get<int64_t>(v_); }
  double as_float() const { return std::get<double>(v_); }
  const std::string &as_string() const { return std::get<std::string>(v_); }
  const List &as_list() const { return std::get<List>(v_); }

  bool operator==(const AnnValue &o) const { return v_ == o.v_; }
  bool operator!=(const AnnValue &o) const { return !(*this == o); }

  /// Python-literal spelling as printed in TVMScript: True, 16, 0.5, "x", [0, 1].
  std::string str() const;
  size_t hash() const;

 private:
  std::variant<bool, int64_t, double, std::string, List> v_;
};

/// Annotations keyed by name, kept sorted so printing and hashing are canonical.
using Annotations = std::map<std::string, AnnValue>;

}  // namespace tessera::ir
