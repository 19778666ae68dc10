//===- ParserFuzzer.cpp - libFuzzer target for the TVMScript parser --------===//
//
// Any input must either parse or raise ParseError: another exception, a crash
// or a sanitizer report is a bug.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "tessera/script/Parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  try {
    tessera::script::parse_module(text, "fuzz.py");
  } catch (const tessera::script::ParseError &) {
    // the expected outcome for most inputs
  } catch (const std::exception &e) {
    std::fprintf(stderr, "parser threw something other than ParseError: %s\n", e.what());
    std::abort();
  }
  return 0;
}
