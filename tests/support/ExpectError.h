//===- tests/support/ExpectError.h - What an error says --------------------===//
//
//   EXPECT_ERROR(plan.select(sizes), "m = 4097 is outside the planned range");
// passes when the call throws a tessera::Error whose message contains the
// fragment, and fails saying what it threw (or that it threw nothing).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "tessera/support/Error.h"

namespace tessera::test {

/// The message of the tessera::Error `f` throws; "(no error)" when it throws none.
inline std::string error_of(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace tessera::test

#define EXPECT_ERROR(call, fragment)                                         \
  do {                                                                       \
    std::string what_ = ::tessera::test::error_of([&] { call; });            \
    EXPECT_NE(what_.find(fragment), std::string::npos) << what_;             \
  } while (0)
