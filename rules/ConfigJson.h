//===- rules/ConfigJson.h - Reading rule configs from JSON -----------------===//
//
// Every rule's config_from_json reads its fields through ConfigReader, so all
// of them reject the same mistakes with the same messages:
//
//   ConfigReader r(j, "elementwise");        // an object with "rule": "elementwise"
//   c.threads = r.integer("threads");        // required, an integer
//   c.form = r.choice("form", {"direct", "implicit_gemm"});  // one of these strings
//   r.finish();                              // any field not read is unknown
//
// Errors are ConfigErrors: "elementwise config: field 'threads': expected an
// integer, got \"256\"", "elementwise config: unknown field 'thread' (fields:
// threads, vector, ...)", "config is for rule 'matmul', not 'elementwise'".
//
//===----------------------------------------------------------------------===//
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tessera/rules/Rule.h"

namespace tessera::rules {

class ConfigReader {
 public:
  ConfigReader(const Json &j, std::string rule);
  int64_t integer(const std::string &key);
  /// An optional integer field: `fallback` when absent (a field added to a
  /// config after records of it were stored).
  int64_t integer_or(const std::string &key, int64_t fallback);
  bool boolean(const std::string &key);
  /// An optional boolean field: `fallback` when absent.
  bool boolean_or(const std::string &key, bool fallback);
  std::vector<int64_t> integers(const std::string &key);
  /// Required, a string among `choices`: "conv2d config: field 'form':
  /// expected one of \"direct\", \"implicit_gemm\", got \"im2col\"".
  std::string choice(const std::string &key, const std::vector<std::string> &choices);
  /// Throws for every field that was not read.
  void finish() const;

 private:
  const Json &field(const std::string &key);
  [[noreturn]] void fail(const std::string &key, const std::string &what, const Json &got) const;

  const Json &j_;
  std::string rule_;
  std::vector<std::string> read_;
};

/// Throws ConfigError("<rule> config: <field> = <value> <why>") unless `ok`.
void require(bool ok, const char *rule, const std::string &field, int64_t value, const std::string &why);
/// A thread count in [1, the arch's threads per block] (ConfigError naming `field`).
void require_threads(const char *rule, const std::string &field, int64_t value, const Arch &arch);

}  // namespace tessera::rules
