//===- tests/fuzz/ParserFuzzer.cpp - libFuzzer target: the TVMScript parser -===//
//
// Any text either parses or is refused with a ParseError (FuzzCheck.h).
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <string_view>

#include "FuzzCheck.h"
#include "tessera/script/Parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  tessera::fuzz::only_user_errors("the parser", [&] { tessera::script::parse_module(text, "fuzz.py"); });
  return 0;
}
