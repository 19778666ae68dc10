//===- tests/codegen/TmaTest.cpp - Hopper's TMA copies and mbarriers -------===//
//
// tests/codegen/hopper/tma_wgmma_nt_f16.py (C = A B^T: 64 x 64 tiles of A and
// B copied by TMA, 128-byte swizzled, into two stages each completing on an
// mbarrier, multiplied by wgmma; at M = 100, N = 56, K = 200, so boxes run
// past every edge of the tensors) against the float64 reference of the
// plain product:
//   - the interpreter (a copy lands when a wait on its barrier needs it; the
//     destination holds poison until then) and the SIMT emulator (one
//     std::thread per GPU thread, waits that block) agree with it;
//   - the same kernel with a mistake (a wait dropped, the wrong parity, too
//     few bytes announced, a barrier never initialised, the box unswizzled)
//     fails on the CPU, with a message where there is one to give;
//   - the box and tensor rules (ir/Tma.h), the kernel's tensor-map
//     parameters (lower/TensorMaps.h) and its CUDA C for sm_90 / sm_90a.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "Hopper.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/ir/Tma.h"
#include "tessera/lower/TensorMaps.h"
#include "tessera/script/Printer.h"

namespace tessera::test {
namespace {

constexpr const char *kKernel = "tma_wgmma_nt_f16";

std::string edited(const std::string &from, const std::string &to) { return hopper_kernel_edited(kKernel, from, to); }

std::string interpret_error(const std::string &text) { return test::interpret_error(text, kKernel); }

TEST(Tma, InterpretedKernelMatchesThePlainProduct) {
  for (const runtime::OutputCheck &c : interpret_against_reference(hopper_kernel(kKernel), kKernel))
    EXPECT_TRUE(c.ok) << c.str();
}

TEST(Tma, EmulatedThreadsMatchThePlainProduct) {
  for (const runtime::OutputCheck &c : emulate_against_reference(hopper_kernel(kKernel), kKernel))
    EXPECT_TRUE(c.ok) << c.str();
  // Waiting for the wrong parity returns at once, so the refill arrives on
  // a phase still in progress.
  try {
    emulate_against_reference(edited("ko // 2 % 2))", "(ko // 2 + 1) % 2))"), kKernel);
    ADD_FAILURE() << "a wait for the wrong phase went unnoticed";
  } catch (const simt::EmulationError &e) {
    EXPECT_NE(std::string(e.what()).find("got one more before it completed"), std::string::npos) << e.what();
  }
}

TEST(Tma, TheKernelPrintsAndReadsBackTheSame) {
  ir::PrimFunc f = script::parse_func(hopper_kernel(kKernel));
  const std::string printed = script::print(f);
  EXPECT_NE(printed.find("T.tma_load(A_shared[s_1, 0], full[s_1], A.data, 128, 64, 64, by * 64, s_1 * 64)"),
            std::string::npos)
      << printed;
  EXPECT_EQ(script::print(script::parse_func(printed)), printed);
}

TEST(Tma, MistakesFailOnTheCpu) {
  // No wait: the phase never completes, so the refill is an arrival too many.
  std::string e = interpret_error(edited("T.evaluate(T.mbarrier_wait(full[ko % 2], ko // 2 % 2))", "T.evaluate(0)"));
  EXPECT_NE(e.find("one arrival more than the phase's 1"), std::string::npos) << e;
  // The wrong parity returns at once (that phase "completed" before), the same.
  e = interpret_error(edited("ko // 2 % 2))", "(ko // 2 + 1) % 2))"));
  EXPECT_NE(e.find("a wait for the wrong parity"), std::string::npos) << e;
  // Without the refills, the last two waits are for phases nothing completes.
  e = interpret_error(edited("tx_3 == 0 and ko < 2", "tx_3 == 0 and ko < 0"));
  EXPECT_NE(e.find("waits forever for phase parity 1: 1 of 1 arrivals"), std::string::npos) << e;
  // Half the bytes announced: the phase cannot complete.
  e = interpret_error(edited("T.mbarrier_arrive_expect_tx(full[s_1], 16384)", "T.mbarrier_arrive_expect_tx(full[s_1], 8192)"));
  EXPECT_NE(e.find("waits forever"), std::string::npos) << e;
  EXPECT_NE(e.find("-8192 announced bytes"), std::string::npos) << e;
  // Two arrivals expected, one made.
  e = interpret_error(edited("T.mbarrier_init(full[s], 1)", "T.mbarrier_init(full[s], 2)"));
  EXPECT_NE(e.find("1 of 2 arrivals"), std::string::npos) << e;
  // Never initialised: the shared word is still poison.
  e = interpret_error(edited("T.evaluate(T.mbarrier_init(full[s], 1))", "T.evaluate(0)"));
  EXPECT_NE(e.find("never initialised"), std::string::npos) << e;
  // A box without the swizzle the wgmma reads: the wrong product.
  EXPECT_TRUE(any_wrong(interpret_against_reference(
      edited("A_shared[s_1, 0], full[s_1], A.data, 128, 64, 64", "A_shared[s_1, 0], full[s_1], A.data, 0, 64, 64"),
      kKernel)));
  // A refill that starts one K tile late: the wrong product.
  EXPECT_TRUE(any_wrong(interpret_against_reference(edited("A.data, 128, 64, 64, by * 64, ko * 64 + 128",
                                                           "A.data, 128, 64, 64, by * 64, ko * 64 + 192"),
                                                    kKernel)));
  // Rules of the box, at the call.
  e = interpret_error(edited("A.data, 128, 64, 64, by * 64, s_1 * 64", "A.data, 64, 64, 64, by * 64, s_1 * 64"));
  EXPECT_NE(e.find("must fill the swizzle span"), std::string::npos) << e;
  e = interpret_error(edited("T.tma_load(A_shared[s_1, 0]", "T.tma_load(A_shared[s_1, 8]"));
  EXPECT_NE(e.find("not a multiple of 128"), std::string::npos) << e;
}

TEST(Tma, TheReaderSaysWhatIsWrongWithACall) {
  auto parse_error = [](const std::string &text) -> std::string {
    try {
      script::parse_func(text);
    } catch (const script::ParseError &e) {
      return e.what();
    }
    return "";
  };
  std::string e = parse_error(edited("A.data, 128, 64, 64, by * 64, s_1 * 64)", "A.data, 128, 64, by * 64, s_1 * 64)"));
  EXPECT_NE(e.find("odd count"), std::string::npos) << e;
  e = parse_error(edited("A.data, 128, 64, 64, by * 64, s_1 * 64)", "A.data, 128, 64, 64, 1, by * 64, s_1 * 64, 0)"));
  EXPECT_NE(e.find("takes 2 box extents and as many coordinates"), std::string::npos) << e;
  e = parse_error(edited("full[s_1], A.data, 128", "full[s_1], A, 128"));
  EXPECT_NE(e.find("as in A.data"), std::string::npos) << e;
}

TEST(Tma, BoxAndTensorRules) {
  ir::tma::Box box{{64, 64}, 128, 2};
  EXPECT_EQ(box.check(), "");
  EXPECT_EQ(box.bytes(), 8192);
  // Row 1, element 0 (byte 128) is chunk 0 of row 1: XORed with 1 -> byte 144.
  const int64_t r1[] = {1, 0}, r9k8[] = {9, 8};
  EXPECT_EQ(box.shared_address(0, r1), 128 + 16);
  // Row 9 (9 % 8 = 1), element 8 (chunk 1): chunk 1 ^ 1 = 0.
  EXPECT_EQ(box.shared_address(0, r9k8), 9 * 128);
  EXPECT_EQ((ir::tma::Box{{64, 32}, 128, 2}).check().find("must fill the swizzle span") != std::string::npos, true);
  EXPECT_NE((ir::tma::Box{{300, 64}, 0, 2}).check(), "");
  EXPECT_NE((ir::tma::Box{{8, 4}, 0, 2}).check(), "");  // 8-byte rows
  EXPECT_EQ((ir::tma::Box{{8, 8}, 0, 2}).check(), "");
  EXPECT_EQ(ir::tma::check_tensor({100, 200}, 2), "");
  // int8 rows of 100 bytes: not a multiple of 16.
  EXPECT_NE(ir::tma::check_tensor({100, 100}, 1).find("multiples of 16 bytes"), std::string::npos);
  EXPECT_NE(ir::tma::check_tensor({1, 2, 3, 4, 5, 16}, 1), "");
}

TEST(Tma, TheKernelTakesOneTensorMapPerTensorAndBox) {
  lower::LoweredFunc f = lower::lower(script::parse_func(hopper_kernel(kKernel)));
  std::vector<lower::TensorMapParam> maps = lower::tensor_map_params(f);
  ASSERT_EQ(maps.size(), 2u);
  EXPECT_EQ(f.params[maps[0].param].buffer.name(), "A");
  EXPECT_EQ(f.params[maps[1].param].buffer.name(), "B");
  for (const lower::TensorMapParam &m : maps) {
    EXPECT_EQ(m.box.extent, (std::vector<int64_t>{64, 64}));
    EXPECT_EQ(m.box.swizzle_bytes, 128);
  }
}

TEST(Tma, CudaHoldsTheCopiesAndBarriersAndNeedsSm90) {
  lower::LoweredFunc f = lower::lower(script::parse_func(hopper_kernel(kKernel)));
  const std::string cu = codegen::codegen_cuda(f, {.arch = "sm_90a"});
  for (const char *want : {"const __grid_constant__ tessera_tensor_map tmap_0", "tessera_tensor_map tmap_1",
                           "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
                           "(unsigned long long)&tmap_1", "mbarrier.init.shared::cta.b64",
                           "fence.mbarrier_init.release.cluster", "mbarrier.arrive.expect_tx.shared::cta.b64",
                           "mbarrier.try_wait.parity.shared::cta.b64", "__shared__ __align__(1024) half A_shared"})
    EXPECT_NE(cu.find(want), std::string::npos) << want << "\n" << cu;
  const std::string e = codegen_error(f, "sm_80");
  EXPECT_NE(e.find("needs sm_90"), std::string::npos) << "TMA for sm_80: " << e;
}

}  // namespace
}  // namespace tessera::test
