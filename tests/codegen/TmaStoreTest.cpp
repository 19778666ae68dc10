//===- tests/codegen/TmaStoreTest.cpp - Hopper's TMA stores ----------------===//
//
// tests/codegen/hopper/tma_store_scale.py (B = 2 A, float32 40 x 72, each
// 16 x 32 box written into one of two swizzled shared slots and stored by
// T.tma_store, which clips the boxes past rows 40 and columns 72) against
// the float64 reference of the plain program:
//   - the interpreter (a store lands when the issuing run's T.tma_store_wait
//     retires it, reading the slot then) and the SIMT emulator (the same,
//     and a slot that changes between the store and that wait is an error)
//     agree with it;
//   - the kernel with a mistake (a slot rewritten before its store retired,
//     no final wait, the swizzle dropped) fails on the CPU, and T.syncwarp,
//     which orders lanes, is refused by the serial interpreter;
//   - the reader's messages, the tensor-map parameter, the CUDA C for sm_90.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "Hopper.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/lower/TensorMaps.h"
#include "tessera/script/Printer.h"

namespace tessera::test {
namespace {

constexpr const char *kKernel = "tma_store_scale";

std::string edited(const std::string &from, const std::string &to) { return hopper_kernel_edited(kKernel, from, to); }

std::string interpret_error(const std::string &text) { return test::interpret_error(text, kKernel); }
std::string emulate_error(const std::string &text) { return test::emulate_error(text, kKernel); }

TEST(TmaStore, InterpretedAndEmulatedKernelsMatchThePlainProgram) {
  for (const runtime::OutputCheck &c : interpret_against_reference(hopper_kernel(kKernel), kKernel))
    EXPECT_TRUE(c.ok) << c.str();
  for (const runtime::OutputCheck &c : emulate_against_reference(hopper_kernel(kKernel), kKernel))
    EXPECT_TRUE(c.ok) << c.str();
}

TEST(TmaStore, MistakesFailOnTheCpu) {
  // Box 2 rewrites slot 0 while box 0's store may still read it: the
  // interpreter (reading at the wait) stores box 2's values at box 0's place;
  // the emulator says the slot changed under the store.
  const std::string early = edited("T.evaluate(T.tma_store_wait(1))", "T.evaluate(T.tma_store_wait(2))");
  EXPECT_TRUE(any_wrong(interpret_against_reference(early, kKernel)));
  std::string e = emulate_error(early);
  EXPECT_NE(e.find("changed between the store and the wait that retires it"), std::string::npos) << e;
  // No final wait: the last stores never land.
  const std::string unretired = edited("T.evaluate(T.tma_store_wait(0))", "T.evaluate(0)");
  e = interpret_error(unretired);
  EXPECT_NE(e.find("TMA stores never retired"), std::string::npos) << e;
  e = emulate_error(unretired);
  EXPECT_NE(e.find("TMA stores never retired"), std::string::npos) << e;
  // The slot written unswizzled, stored as swizzled: the wrong places.
  EXPECT_TRUE(any_wrong(interpret_against_reference(
      edited("T.bitwise_xor(tx_1 // 4, r % 8) * 4 + tx_1 % 4", "tx_1"), kKernel)));
  // A box two rows short of the tile (rows 14 and 15 of every tile unstored).
  EXPECT_TRUE(any_wrong(interpret_against_reference(edited("B.data, 128, 16, 32", "B.data, 128, 14, 32"), kKernel)));
  // The serial interpreter cannot order a warp's lanes.
  e = interpret_error(edited("T.evaluate(T.fence_proxy_async())",
                             "T.evaluate(T.fence_proxy_async())\n                    T.evaluate(T.syncwarp())"));
  EXPECT_NE(e.find("T.syncwarp"), std::string::npos) << e;
  EXPECT_NE(e.find("cannot order the lanes of a warp"), std::string::npos) << e;
}

TEST(TmaStore, TheKernelPrintsAndReadsBackAndTheReaderSaysWhatIsWrong) {
  ir::PrimFunc f = script::parse_func(hopper_kernel(kKernel));
  const std::string printed = script::print(f);
  EXPECT_NE(printed.find("T.tma_store(slots[j % 2, 0, 0], B.data, 128, 16, 32, by * 16, j * 32)"), std::string::npos)
      << printed;
  EXPECT_EQ(script::print(script::parse_func(printed)), printed);
  auto parse_error = [](const std::string &text) -> std::string {
    try {
      script::parse_func(text);
    } catch (const script::ParseError &e) {
      return e.what();
    }
    return "";
  };
  std::string e = parse_error(edited("B.data, 128, 16, 32, by * 16, j * 32)", "B.data, 128, 16, by * 16, j * 32)"));
  EXPECT_NE(e.find("takes src, dst.data, swizzle, then one box extent and one coordinate"), std::string::npos) << e;
  e = parse_error(edited("slots[j % 2, 0, 0], B.data", "slots[j % 2, 0, 0], B"));
  EXPECT_NE(e.find("argument 2 of T.tma_store must be the global tensor's address, as in A.data"), std::string::npos)
      << e;
}

TEST(TmaStore, CudaHoldsTheStoresTheirWaitsAndOneTensorMap) {
  lower::LoweredFunc f = lower::lower(script::parse_func(hopper_kernel(kKernel)));
  std::vector<lower::TensorMapParam> maps = lower::tensor_map_params(f);
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_EQ(f.params[maps[0].param].buffer.name(), "B");
  EXPECT_EQ(maps[0].box.extent, (std::vector<int64_t>{16, 32}));
  // (sm_90a: the async-proxy fence is among the architecture-specific statements.)
  const std::string cu = codegen::codegen_cuda(f, {.arch = "sm_90a"});
  for (const char *want : {"const __grid_constant__ tessera_tensor_map tmap_0",
                           "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1]",
                           "cp.async.bulk.commit_group", "cp.async.bulk.wait_group.read 1",
                           "cp.async.bulk.wait_group.read 0", "fence.proxy.async.shared::cta",
                           "__align__(1024) float slots", "float* __restrict__ B"})
    EXPECT_NE(cu.find(want), std::string::npos) << want << "\n" << cu;
  const std::string e = codegen_error(f, "sm_80");
  EXPECT_NE(e.find("needs sm_90"), std::string::npos) << "a TMA store for sm_80: " << e;
}

}  // namespace
}  // namespace tessera::test
