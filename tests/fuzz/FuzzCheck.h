//===- tests/fuzz/FuzzCheck.h - What a fuzz target accepts from its library -===//
//
// Every fuzz target feeds bytes to one reader of the library. A UserError
// (the reader's refusal, naming what is wrong and where) is the expected
// outcome for most inputs; anything else thrown, an InternalError included,
// is a bug and aborts, so libFuzzer keeps the input. Crashes and sanitizer
// reports are bugs by themselves.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "tessera/support/Error.h"

namespace tessera::fuzz {

template <class Fn>
void only_user_errors(const char *reader, Fn &&fn) {
  try {
    fn();
  } catch (const InternalError &e) {
    std::fprintf(stderr, "%s: internal error: %s\n", reader, e.what());
    std::abort();
  } catch (const UserError &) {
    // the expected refusal
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s threw something other than a UserError: %s\n", reader, e.what());
    std::abort();
  }
}

}  // namespace tessera::fuzz
