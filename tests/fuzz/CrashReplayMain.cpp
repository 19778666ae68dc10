//===- tests/fuzz/CrashReplayMain.cpp - A fuzz target's inputs, replayed ----===//
//
// tessera_fuzz_replay_TARGET DIR...: every file in the folders (a missing
// folder is empty) through the target's entry point, as libFuzzer would feed
// it; an input that crashes or aborts fails the test. CTest runs it on the
// crashes a campaign found (tests/fuzz/crashes/TARGET) and the seeds.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int TESSERA_FUZZ_ENTRY(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(argv[i], ec)) files.emplace_back(argv[i]);
    else if (std::filesystem::is_directory(argv[i], ec))
      for (const auto &e : std::filesystem::recursive_directory_iterator(argv[i]))
        if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const std::filesystem::path &p : files) {
    std::ifstream in(p, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "replaying %s (%zu bytes)\n", p.c_str(), bytes.size());
    TESSERA_FUZZ_ENTRY(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  }
  std::printf("%zu inputs replayed, none crashed\n", files.size());
  return 0;
}
