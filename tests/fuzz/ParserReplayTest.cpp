//===- ParserReplayTest.cpp - Seeds and mutations never crash the parser ---===//
//
// Replays tests/fuzz/seeds and deterministic mutations of them (truncation,
// byte flips, inserted tokens, deleted and duplicated spans). Every input must
// parse or raise ParseError; anything else fails with the input printed.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "tessera/script/Parser.h"

namespace {

std::vector<std::pair<std::string, std::string>> load_seeds() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto &entry : std::filesystem::directory_iterator(TESSERA_FUZZ_SEEDS_DIR)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    out.emplace_back(entry.path().filename().string(), ss.str());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Parses `text`; returns "" when it parsed or raised ParseError, else a description.
std::string check(const std::string &text) {
  try {
    tessera::script::parse_module(text, "replay.py");
  } catch (const tessera::script::ParseError &e) {
    if (e.line < 1 || e.col < 1) return "ParseError without a position: " + std::string(e.what());
  } catch (const std::exception &e) {
    return std::string("unexpected exception: ") + e.what();
  }
  return "";
}

const char *const kTokens[] = {"(", ")", "[", "]", ":", ",", "\n", "    ", "\t", "\"", "'", "T.", "=", "0",
                               "-1", "1e400", "T.int64(", "with T.block(\"x\"):\n", "for i in range(", "\\",
                               "#", "**", "//", "A[", "T.float16(", "\x01", "\xff", "99999999999999999999"};

}  // namespace

TEST(ParserReplay, SeedsParseOrFailCleanly) {
  auto seeds = load_seeds();
  ASSERT_GE(seeds.size(), 5u);
  for (const auto &[name, text] : seeds) {
    EXPECT_EQ(check(text), "") << name;
    // Seeds named bad_* are deliberately malformed; the others are valid programs.
    if (name.rfind("bad_", 0) != 0) {
      EXPECT_NO_THROW(tessera::script::parse_module(text, name)) << name;
    }
  }
}

TEST(ParserReplay, MutationsParseOrFailCleanly) {
  std::mt19937 rng(20240607);
  int failures = 0;
  for (const auto &[name, text] : load_seeds()) {
    // Every truncation point on a coarse grid.
    for (size_t n = 0; n < text.size(); n += 7) {
      std::string t = text.substr(0, n);
      if (std::string why = check(t); !why.empty() && ++failures < 5) ADD_FAILURE() << why << "\ninput:\n" << t;
    }
    for (int iter = 0; iter < 300; ++iter) {
      std::string t = text;
      int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits && !t.empty(); ++e) {
        size_t pos = rng() % t.size();
        switch (rng() % 4) {
          case 0: t[pos] = static_cast<char>(rng() % 256); break;
          case 1: t.insert(pos, kTokens[rng() % std::size(kTokens)]); break;
          case 2: t.erase(pos, 1 + rng() % 12); break;
          default: {
            size_t len = std::min<size_t>(1 + rng() % 40, t.size() - pos);
            t.insert(pos, t.substr(pos, len));
          }
        }
      }
      if (std::string why = check(t); !why.empty() && ++failures < 5) ADD_FAILURE() << why << "\ninput:\n" << t;
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(ParserReplay, PathologicalInputs) {
  EXPECT_EQ(check(std::string(100000, '(')), "");
  EXPECT_EQ(check(std::string(5000, '\n')), "");
  std::string deep = "@T.prim_func\ndef main(A: T.Buffer((4,), \"float32\")):\n";
  for (int i = 0; i < 300; ++i) deep += std::string(4 * (i + 1), ' ') + "if True:\n";
  deep += std::string(4 * 301, ' ') + "A[0] = 1\n";
  EXPECT_EQ(check(deep), "");
  std::string lets = "@T.prim_func\ndef main(A: T.Buffer((4,), \"float32\")):\n";
  for (int i = 0; i < 20000; ++i) lets += "    x = " + std::to_string(i) + "\n";
  lets += "    A[0] = T.float32(x)\n";
  EXPECT_EQ(check(lets), "");
  EXPECT_EQ(check(std::string("\0\0\0", 3)), "");
}
