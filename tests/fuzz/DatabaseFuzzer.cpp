//===- tests/fuzz/DatabaseFuzzer.cpp - libFuzzer target: the tuning database -===//
//
// Any bytes are a tuning database file (tune/Database.h): open() reads every
// valid record and skips every other line with a warning, never throwing for
// a line's content; each line is also read alone by Record::from_json, which
// refuses with a RecordFormatError.
//
//===----------------------------------------------------------------------===//
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "FuzzCheck.h"
#include "tessera/tune/Database.h"

namespace {

/// One file per fuzzing process, rewritten for each input.
const std::string &scratch_path() {
  static const std::string path = [] {
    char pattern[] = "/tmp/tessera-db-fuzz-XXXXXX";
    int fd = ::mkstemp(pattern);
    if (fd < 0) std::abort();
    ::close(fd);
    std::atexit([] { std::remove(scratch_path().c_str()); });
    return std::string(pattern);
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::FILE *f = std::fopen(scratch_path().c_str(), "wb");
  if (!f) std::abort();
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  tessera::fuzz::only_user_errors("the database reader", [&] {
    tessera::tuning::Database db = tessera::tuning::Database::open(scratch_path());
    // Every record it kept writes out and reads back as itself.
    for (const tessera::tuning::Record &r : db.records())
      if (!(tessera::tuning::Record::from_json(r.to_json()) == r)) std::abort();
  });
  std::string_view text(reinterpret_cast<const char *>(data), size);
  for (size_t start = 0; start < text.size();) {
    size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    start = nl == std::string_view::npos ? text.size() : nl + 1;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;
    tessera::fuzz::only_user_errors("the record reader", [&] { tessera::tuning::Record::from_json(j); });
  }
  return 0;
}
