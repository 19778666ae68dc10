//===- RoundTripTest.cpp - parse(print(x)) == x over the corpus ------------===//
//
// Every program in tests/corpus/*.py and the shared long-tail examples is
// parsed, printed and parsed again: the two parses must be structurally equal
// and printing must be stable (print(parse(print(f))) == print(f)). Files in
// tests/corpus/canonical/ are already in the printer's canonical form and must
// print back byte for byte.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/ir/StructuralEqual.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"

namespace tessera::script {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> python_files(const fs::path &dir) {
  std::vector<std::string> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto &entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".py") out.push_back(entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_text(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const fs::path kCorpus = fs::path(TESSERA_TEST_DATA_DIR) / "corpus";

std::vector<std::string> round_trip_files() {
  std::vector<std::string> files = python_files(kCorpus);
  for (const std::string &f : python_files(fs::path(TESSERA_LONGTAIL_DIR)))
    files.push_back(f);
  return files;
}

/// A test name from a path: "softmax" for ".../softmax.py".
std::string test_name(const testing::TestParamInfo<std::string> &info) {
  std::string stem = fs::path(info.param).stem().string();
  std::string dir = fs::path(info.param).parent_path().filename().string();
  std::string name = (dir == "corpus" ? "" : dir + "_") + stem;
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

class RoundTripTest : public testing::TestWithParam<std::string> {};

TEST_P(RoundTripTest, ParsePrintParseIsStructurallyEqualAndStable) {
  const std::string &path = GetParam();
  ir::Module first = parse_file(path);
  std::string printed = print(first);
  ir::Module second;
  try {
    second = parse_module(printed, path + " (printed)");
  } catch (const ParseError &e) {
    FAIL() << "the printed text does not parse:\n" << e.what() << "\n--- printed ---\n" << printed;
  }
  ASSERT_EQ(first.funcs.size(), second.funcs.size()) << printed;
  for (size_t i = 0; i < first.funcs.size(); ++i) {
    EXPECT_TRUE(ir::structural_equal(first.funcs[i], second.funcs[i]))
        << "function '" << first.funcs[i].name() << "' changed through print and parse: "
        << ir::structural_diff(first.funcs[i], second.funcs[i]) << "\n--- original ---\n"
        << read_text(path) << "--- printed ---\n"
        << printed << "--- printed again ---\n"
        << print(second.funcs[i]);
    EXPECT_EQ(first.funcs[i].name(), second.funcs[i].name());
  }
  EXPECT_EQ(print(second), printed) << "printing is not stable";
}

INSTANTIATE_TEST_SUITE_P(Corpus, RoundTripTest, testing::ValuesIn(round_trip_files()), test_name);

TEST(RoundTripCorpusTest, HasAtLeastFortyPrograms) {
  EXPECT_GE(python_files(kCorpus).size(), 40u) << "corpus at " << kCorpus;
  EXPECT_EQ(python_files(fs::path(TESSERA_LONGTAIL_DIR)).size(), 4u);
}

class CanonicalTest : public testing::TestWithParam<std::string> {};

TEST_P(CanonicalTest, PrintsByteIdentically) {
  std::string text = read_text(GetParam());
  EXPECT_EQ(print(parse_module(text, GetParam())), text);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CanonicalTest, testing::ValuesIn(python_files(kCorpus / "canonical")),
                         test_name);

TEST(CanonicalCorpusTest, HasFiles) { EXPECT_GE(python_files(kCorpus / "canonical").size(), 3u); }

}  // namespace
}  // namespace tessera::script
