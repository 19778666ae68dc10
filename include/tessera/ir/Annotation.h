//===- tessera/ir/Annotation.h - Annotation values on loops, blocks, funcs -===//
//
// Annotations are plain data: bool, integer, float, string, a list or a
// dictionary of those, or a call TVM prints in attributes (`T.target(...)`,
// kept as written). They appear as `annotations={...}` on loops,
// `T.block_attr({...})` on blocks and `T.func_attr({...})` on functions:
//
//   T.func_attr({"global_symbol": "main", "tir.noalias": True})
//   T.func_attr({"target": T.target({"kind": "cuda", "arch": "sm_80"})})
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

class AnnValue;

/// {"key": value, ...} in the order written.
struct AnnDict {
  std::vector<std::string> keys;
  std::vector<AnnValue> values;
  bool operator==(const AnnDict &o) const;
};

/// A call kept as written: T.target("cuda") is {"T.target", {"cuda"}}.
struct AnnCall {
  std::string callee;
  std::vector<AnnValue> args;
  bool operator==(const AnnCall &o) const;
};

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
  AnnValue(AnnDict d) : v_(std::move(d)) {}
  AnnValue(AnnCall c) : v_(std::move(c)) {}

  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_int() const { return std::holds_alternative<int64_t>(v_); }
  bool is_float() const { return std::holds_alternative<double>(v_); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_list() const { return std::holds_alternative<List>(v_); }
  bool is_dict() const { return std::holds_alternative<AnnDict>(v_); }
  bool is_call() const { return std::holds_alternative<AnnCall>(v_); }
  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const { return std::get<int64_t>(v_); }
  double as_float() const { return std::get<double>(v_); }
  const std::string &as_string() const { return std::get<std::string>(v_); }
  const List &as_list() const { return std::get<List>(v_); }
  const AnnDict &as_dict() const { return std::get<AnnDict>(v_); }
  const AnnCall &as_call() const { return std::get<AnnCall>(v_); }
  /// The value of `key` in a dictionary, or null.
  const AnnValue *find(const std::string &key) const;

  bool operator==(const AnnValue &o) const { return v_ == o.v_; }
  bool operator!=(const AnnValue &o) const { return !(*this == o); }

  /// Python-literal spelling as printed in TVMScript: True, 16, 0.5, "x", [0, 1],
  /// {"a": 1}, T.target("cuda").
  std::string str() const;
  size_t hash() const;

 private:
  std::variant<bool, int64_t, double, std::string, List, AnnDict, AnnCall> v_;
};

inline bool AnnDict::operator==(const AnnDict &o) const { return keys == o.keys && values == o.values; }
inline bool AnnCall::operator==(const AnnCall &o) const { return callee == o.callee && args == o.args; }

/// Annotations keyed by name, kept sorted so printing and hashing are canonical.
using Annotations = std::map<std::string, AnnValue>;

/// Loop annotation (value 1): the loop runs its iterations in order (it may
/// carry a reduction from one to the next) but its contiguous, aligned runs
/// of global and shared memory are read and written as vector accesses
/// (lower::legalize_vectorize). The reduction rules put it on the innermost
/// piece of a reduce loop, which `vectorize` refuses.
inline constexpr const char *kVectorLoadsAnnotation = "vector_loads";

/// Block annotation (a list of names of shared buffers the block allocates):
/// their 16-byte chunks are stored XOR-permuted by row
/// (lower::swizzle_shared_buffers), against bank conflicts without padding.
inline constexpr const char *kSwizzleAnnotation = "tessera.swizzle";

/// Block annotation (value 1): the block's stores may bypass the caches
/// (non-temporal stores) where the target can; the values stored are the
/// same. For outputs larger than the caches that nothing reads soon: a
/// transpose's stores then need no read for ownership (the CPU target's
/// tile2d, runtime/llvm/CodegenTranspose.cpp).
inline constexpr const char *kStreamingStoresAnnotation = "tessera.streaming_stores";

}  // namespace tessera::ir
