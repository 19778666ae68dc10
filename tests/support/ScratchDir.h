//===- tests/support/ScratchDir.h - A directory of the running test's own ---===//
//
// scratch_dir("tessera_kernel_cache_test"): <temp>/<group>/<Suite>.<Test>,
// removed (not created), so tests that ctest runs in parallel never share
// files and each starts from nothing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace tessera::test {

inline std::filesystem::path scratch_dir(const std::string &group) {
  const ::testing::TestInfo *info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path dir = std::filesystem::temp_directory_path() / group /
                              (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace tessera::test
