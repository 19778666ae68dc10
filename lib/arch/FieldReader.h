//===- lib/arch/FieldReader.h - Validating reads of a JSON object ----------===//
//
// Private to lib/arch. A FieldReader reads the fields of one JSON object,
// checks each one's type as it goes and records a problem (with the field's
// JSON path) instead of throwing, so one pass over a document reports every
// problem at once. Reads of a failed field return a zero value; the caller
// turns the collected problems into one ArchError at the end.
//
//   FieldReader root(&j, "", problems);
//   FieldReader mem = root.object("memory");
//   int64_t l2 = mem.positive_integer("l2_bytes");
//   mem.reject_unknown_fields();   // "l2_byte: unknown field (did you mean 'l2_bytes'?)"
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/arch/Arch.h"

namespace tessera::detail {

/// "/memory/l2_bytes" from "/memory" and "l2_bytes" (RFC 6901 escaping of '~' and '/').
std::string json_path(std::string_view parent, std::string_view key);
/// "/tensor_cores/mma/3" from "/tensor_cores/mma" and 3.
std::string json_path(std::string_view parent, size_t index);
/// A short rendering of a JSON value for messages: "\"50MB\"", "300", "[...]".
std::string describe_json_value(const ArchJson &v);

class FieldReader {
 public:
  /// Reads fields of `object` (at JSON path `path`). A null `object` means the
  /// object itself was missing or mistyped (already reported): every read then
  /// returns a zero value silently.
  FieldReader(const ArchJson *object, std::string path, std::vector<ArchProblem> &problems);

  const std::string &path() const { return path_; }
  bool valid() const { return object_ != nullptr; }
  /// True when `key` is present (and marks it as known).
  bool has(std::string_view key);

  /// An integer > 0 (JSON integer, not 2.0).
  int64_t positive_integer(std::string_view key);
  /// An integer in [min, max].
  int64_t integer_in(std::string_view key, int64_t min, int64_t max);
  /// A finite number > 0 (integer or floating).
  double positive_number(std::string_view key);
  bool boolean(std::string_view key);
  /// A non-empty string (or any string when `allow_empty`).
  std::string string(std::string_view key, bool allow_empty = false);
  /// An array of non-empty strings.
  std::vector<std::string> string_list(std::string_view key);
  /// The nested object `key`; an invalid reader when missing or mistyped.
  FieldReader object(std::string_view key);
  /// The array `key`, or nullptr (reported) when missing or mistyped.
  const ArchJson *array(std::string_view key);

  /// Records a problem at this object's field `key`.
  void problem(std::string_view key, std::string message);
  /// Records a problem at element `index` of the array field `key` ("/aliases/1").
  void element_problem(std::string_view key, size_t index, std::string message);
  /// Reports every field of the object that no read asked for, suggesting the
  /// closest known name when one is near ("did you mean 'l2_bytes'?").
  void reject_unknown_fields();

 private:
  const ArchJson *field(std::string_view key, std::string_view expected);
  const ArchJson *object_;
  std::string path_;
  std::vector<ArchProblem> &problems_;
  std::set<std::string, std::less<>> known_;
};

}  // namespace tessera::detail
