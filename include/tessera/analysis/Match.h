//===- tessera/analysis/Match.h - A match, or the reason there is none -----===//
//
// Pattern matches in analysis and rules never throw: they return a value or
// a sentence saying why the pattern does not apply, which `tessera schedule
// -v` prints for every rule that declined.
//
//   MatchResult<MatmulView> m = match_matmul(info, block);
//   if (!m) log(m.reason());      // "the update is C = C + A, not a product"
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "tessera/support/Error.h"

namespace tessera::analysis {

template <typename T>
class MatchResult {
 public:
  MatchResult(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose
  static MatchResult fail(std::string reason) {
    MatchResult r;
    r.reason_ = std::move(reason);
    return r;
  }

  explicit operator bool() const { return value_.has_value(); }
  const T &operator*() const {
    TESSERA_ICHECK(value_) << "no match: " << reason_;
    return *value_;
  }
  const T *operator->() const { return &**this; }
  /// Why there is no match (empty when there is one).
  const std::string &reason() const { return reason_; }

 private:
  MatchResult() = default;
  std::optional<T> value_;
  std::string reason_;
};

}  // namespace tessera::analysis
