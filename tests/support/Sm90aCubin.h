//===- tests/support/Sm90aCubin.h - A Hopper kernel's cubin, checked --------===//
//
// What every test of a Hopper kernel's machine code checks first: the
// function builds with NVRTC for sm_90a without the ptxas messages that say
// wgmma was serialised or fenced (C7510, C7511, C7512, C7517, C7519: a
// build with them fails anyway, runtime/NVRTC.h), into one kernel that
// spills nothing; then the SASS summary of its cubin, when a disassembler
// is installed. Callers skip themselves without NVRTC.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>

#include <optional>

#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/runtime/Sass.h"

namespace tessera::test {

struct Sm90aCubin {
  runtime::CudaFunction fn;
  /// Every function of the cubin together; nullopt without a disassembler.
  std::optional<runtime::SassSummary> sass;

  const runtime::CompileResult &compiled() const { return fn.kernels().at(0).compiled; }
  int registers() const { return compiled().kernels.at(0).registers; }
};

inline Sm90aCubin build_sm90a(const ir::PrimFunc &f) {
  Sm90aCubin out{runtime::CudaFunction::build(f, {.arch = "sm_90a"}), std::nullopt};
  const runtime::CompileResult &c = out.compiled();
  for (const char *warning : {"C7510", "C7511", "C7512", "C7517", "C7519"})
    EXPECT_EQ(c.log.find(warning), std::string::npos) << c.log;
  EXPECT_EQ(c.kernels.size(), 1u);
  if (c.kernels.size() == 1) {
    EXPECT_EQ(c.kernels[0].spill_loads + c.kernels[0].spill_stores, 0) << c.log;
  }
  std::optional<std::filesystem::path> tool = runtime::find_disassembler();
  if (!tool) return out;
  std::vector<runtime::CubinSass> sass = runtime::summarise_cubins({&c.cubin}, "sm_90a", *tool);
  EXPECT_EQ(sass.size(), 1u);
  if (sass.size() != 1 || !sass[0].error.empty()) {
    ADD_FAILURE() << (sass.empty() ? "no SASS" : sass[0].error);
    return out;
  }
  runtime::SassSummary s;
  for (const runtime::SassSummary &fs : sass[0].functions) s += fs;
  out.sass = s;
  return out;
}

}  // namespace tessera::test
