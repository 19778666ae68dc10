//===- KernelCacheTest.cpp - Compiled cubins kept on disk (label nvrtc) ----===//
//
// runtime/KernelCache.h through compile_cuda: a second compile reads what the
// first stored; anything that decides the cubin changes the key; an entry
// that does not read back whole is rejected and rebuilt; compiles racing on
// one directory leave every entry valid.
//
//===----------------------------------------------------------------------===//
#include "tessera/runtime/KernelCache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "../support/ScratchDir.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/support/Error.h"

namespace tessera::runtime {
namespace {

namespace fs = std::filesystem;

std::string saxpy(int variant) {
  return "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {\n"
         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) y[i] = a * x[i] + y[i] + " +
         std::to_string(variant) + ".0f;\n}\n";
}

/// A directory of this test's own, not there yet.
fs::path fresh_dir() { return test::scratch_dir("tessera_kernel_cache_test"); }

/// The one entry of `arch` in `dir` with extension `ext`.
fs::path only_entry(const fs::path &dir, const std::string &arch, const std::string &ext) {
  std::vector<fs::path> found;
  for (const auto &e : fs::directory_iterator(dir / arch))
    if (e.path().extension() == ext) found.push_back(e.path());
  EXPECT_EQ(found.size(), 1u);
  return found.empty() ? fs::path() : found[0];
}

TEST(KernelCache, ASecondCompileReadsTheFirst) {
  if (!nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  KernelCache cache(fresh_dir());
  CompileOptions o{.arch = "sm_80", .name = "saxpy", .cache = &cache};
  CompileResult first = compile_cuda(saxpy(1), o);
  EXPECT_FALSE(first.from_cache);
  EXPECT_GT(first.compile_ms, 0);
  CompileResult again = compile_cuda(saxpy(1), o);
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(again.cubin, first.cubin);
  EXPECT_EQ(again.log, first.log);
  ASSERT_EQ(again.kernels.size(), 1u);
  EXPECT_EQ(again.kernels[0].registers, first.kernels[0].registers);
  EXPECT_EQ(again.arch, "sm_80");
  KernelCache::Counters c = cache.counters();
  EXPECT_EQ(c.hits, 1);
  EXPECT_EQ(c.misses, 1);
  EXPECT_EQ(c.stores, 1);
  EXPECT_EQ(c.rejected, 0);
  // Another process (a new cache object on the same directory) reads it too.
  KernelCache other(cache.dir());
  EXPECT_TRUE(compile_cuda(saxpy(1), {.arch = "sm_80", .name = "renamed", .cache = &other}).from_cache);
}

TEST(KernelCache, WhatDecidesTheCubinDecidesTheKey) {
  if (!nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  KernelCache cache(fresh_dir());
  compile_cuda(saxpy(1), {.arch = "sm_80", .cache = &cache});
  // The source, the target and the options each make a new entry.
  EXPECT_FALSE(compile_cuda(saxpy(2), {.arch = "sm_80", .cache = &cache}).from_cache);
  EXPECT_FALSE(compile_cuda(saxpy(1), {.arch = "sm_90", .cache = &cache}).from_cache);
  EXPECT_FALSE(
      compile_cuda(saxpy(1), {.arch = "sm_80", .extra_options = {"--use_fast_math"}, .cache = &cache}).from_cache);
  // A cubin-only entry cannot answer a request for PTX.
  CompileResult ptx = compile_cuda(saxpy(1), {.arch = "sm_80", .want_ptx = true, .cache = &cache});
  EXPECT_FALSE(ptx.from_cache);
  EXPECT_NE(ptx.ptx.find(".entry saxpy"), std::string::npos);
  CompileResult ptx_again = compile_cuda(saxpy(1), {.arch = "sm_80", .want_ptx = true, .cache = &cache});
  EXPECT_TRUE(ptx_again.from_cache);
  EXPECT_EQ(ptx_again.ptx, ptx.ptx);
  EXPECT_EQ(cache.counters().stores, 5);
}

TEST(KernelCache, AnEntryThatDoesNotReadBackWholeIsRebuilt) {
  if (!nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  KernelCache cache(fresh_dir());
  CompileOptions o{.arch = "sm_80", .cache = &cache};
  const CompileResult good = compile_cuda(saxpy(3), o);
  const fs::path cubin = only_entry(cache.dir(), "sm_80", ".cubin"), side = only_entry(cache.dir(), "sm_80", ".json");
  auto damage = [&](const fs::path &p, auto &&edit) {
    std::ifstream in(p, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    edit(bytes);
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
  };
  int64_t rejected = 0;
  auto expect_rebuilt = [&](const char *what) {
    SCOPED_TRACE(what);
    CompileResult r = compile_cuda(saxpy(3), o);
    EXPECT_FALSE(r.from_cache) << "a damaged entry was trusted";
    EXPECT_EQ(r.cubin, good.cubin);
    EXPECT_EQ(cache.counters().rejected, ++rejected);
    EXPECT_TRUE(compile_cuda(saxpy(3), o).from_cache) << "rewritten whole";
  };
  damage(cubin, [](std::string &b) { b[b.size() / 2] ^= 0x40; });
  expect_rebuilt("one flipped bit in the cubin");
  damage(cubin, [](std::string &b) { b.resize(b.size() - 16); });
  expect_rebuilt("a truncated cubin");
  damage(side, [](std::string &b) { b.resize(b.size() / 2); });
  expect_rebuilt("a truncated sidecar");
  damage(side, [](std::string &b) { b = "[1, 2, 3]"; });
  expect_rebuilt("a sidecar of another shape");
  fs::remove(cubin);
  expect_rebuilt("a sidecar without its cubin");
  // The sidecar of another compile under this name: its key is not this one's.
  CompileOptions other_arch{.arch = "sm_80", .cache = &cache};
  compile_cuda(saxpy(4), other_arch);
  for (const auto &e : fs::directory_iterator(cache.dir() / "sm_80"))
    if (e.path().extension() == ".json" && e.path() != side) fs::copy_file(e.path(), side, fs::copy_options::overwrite_existing);
  expect_rebuilt("the sidecar of another key");
}

TEST(KernelCache, CompilesRacingOnOneDirectoryLeaveItValid) {
  if (!nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  const fs::path dir = fresh_dir();
  // Four "processes" (caches of their own), each compiling the same six
  // kernels in its own order, all at once.
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w)
    workers.emplace_back([&, w] {
      KernelCache cache(dir);
      for (int i = 0; i < 6; ++i) compile_cuda(saxpy((i + w) % 6), {.arch = "sm_80", .cache = &cache});
    });
  for (std::thread &t : workers) t.join();
  KernelCache after(dir);
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(compile_cuda(saxpy(i), {.arch = "sm_80", .cache = &after}).from_cache) << i;
  EXPECT_EQ(after.counters().rejected, 0);
  for (const auto &e : fs::directory_iterator(dir / "sm_80"))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << "a temporary file was left: " << e.path();
}

TEST(KernelCache, ADirectoryThatCannotBeOneIsAClearError) {
  const fs::path dir = fresh_dir();
  fs::create_directories(dir);
  std::ofstream(dir / "file") << "x";
  try {
    KernelCache cache(dir / "file");
    FAIL() << "a file accepted as the cache directory";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("cannot use"), std::string::npos) << e.what();
  }
}

TEST(KernelCache, TheDefaultDirectoryFollowsTheEnvironment) {
  setenv("TESSERA_CACHE", "/tmp/some/cache", 1);
  EXPECT_EQ(KernelCache::default_dir(), fs::path("/tmp/some/cache"));
  unsetenv("TESSERA_CACHE");
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(KernelCache::default_dir(), fs::path("/tmp/xdg/tessera/kernels"));
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(KernelCache::digest("a"), KernelCache::digest("a"));
  EXPECT_NE(KernelCache::digest("a"), KernelCache::digest("b"));
  EXPECT_EQ(KernelCache::digest("").size(), 32u);
}

}  // namespace
}  // namespace tessera::runtime
