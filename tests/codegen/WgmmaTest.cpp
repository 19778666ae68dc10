//===- tests/codegen/WgmmaTest.cpp - Hopper's wgmma, interpreted and printed ===//
//
// tests/codegen/hopper/wgmma_nt_f16.py (C = A B^T through four m64n64k16
// wgmma on 128-byte-swizzled shared tiles, at sizes no tile divides) and
// its int8 twin wgmma_nt_s8.py (m64n64k32 into int32, exact) run by
// the interpreter with the instruction's semantics (ir/Wgmma.h) against the
// float64 reference of the plain product (hopper/originals/); the same kernel with a mistake
// (the wait dropped, the wrong swizzle, a thread past the warpgroup) fails
// on the CPU; the SIMT emulator (one std::thread per GPU thread) runs the
// lowered kernel to the same answer (lowering places the barrier between
// the shared-memory stores and the wgmma reading them itself); the CUDA C
// for sm_90a holds the instruction and the 1024-byte
// alignment, and plain sm_90 is refused with the reason. wgmma_rs_nt_f16.py
// is the RS form (A's fragments in registers, mma.sync's A map per warp):
// interpreted and emulated alike, a fragment read from the wrong column
// gives a wrong product, an MN-major A in registers is refused, and its
// CUDA C passes A as four 32-bit registers.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "Hopper.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/lower/Lower.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"
#include "tessera/support/Error.h"

namespace tessera::test {
namespace {


/// The hand-scheduled kernels of hopper/, each with its plain program in
/// hopper/originals/ under the same name.
const char *const kKernels[] = {"wgmma_nt_f16", "wgmma_nt_s8", "wgmma_rs_nt_f16"};

std::string kernel_text(const std::string &name = "wgmma_nt_f16") { return hopper_kernel(name); }

/// The float16 kernel with `from` replaced by `to` (once; it must be there).
std::string edited(const std::string &from, const std::string &to, const char *name = "wgmma_nt_f16") {
  return hopper_kernel_edited(name, from, to);
}

std::vector<runtime::OutputCheck> run_against_reference(const std::string &kernel,
                                                        const std::string &name = "wgmma_nt_f16") {
  return interpret_against_reference(kernel, name);
}

TEST(Wgmma, InterpretedKernelsMatchThePlainProduct) {
  for (const char *name : kKernels) {
    SCOPED_TRACE(name);
    for (const runtime::OutputCheck &c : run_against_reference(kernel_text(name), name)) EXPECT_TRUE(c.ok) << c.str();
  }
}

TEST(Wgmma, MistakesFailOnTheCpu) {
  // Without the wait the accumulators are poison when stored, and the
  // function ends with results in flight.
  try {
    run_against_reference(edited("T.evaluate(T.wgmma_wait_group(0))", "T.evaluate(T.wgmma_fence())"));
    ADD_FAILURE() << "a missing wgmma wait went unnoticed";
  } catch (const runtime::InterpretError &e) {
    EXPECT_NE(std::string(e.what()).find("never waited for"), std::string::npos) << e.what();
  }
  // The tiles are 128-byte swizzled; read as 64-byte ones the product is wrong.
  bool any_wrong = false;
  for (const runtime::OutputCheck &c : run_against_reference(edited("tx_2, 128, 16, 1024", "tx_2, 64, 16, 512")))
    any_wrong |= !c.ok;
  EXPECT_TRUE(any_wrong) << "the wrong swizzle still matched the reference";
  // Starting the A tile at the wrong K step is wrong too.
  any_wrong = false;
  for (const runtime::OutputCheck &c : run_against_reference(edited("A_shared[ks * 16]", "A_shared[ks * 8]")))
    any_wrong |= !c.ok;
  EXPECT_TRUE(any_wrong) << "a tile 16 bytes off still matched the reference";
  // An unknown swizzle is refused where the interpreter compiles the call.
  EXPECT_THROW(run_against_reference(edited("tx_2, 128, 16, 1024", "tx_2, 96, 16, 1024")), runtime::InterpretError);
  // The K-major B tile read as MN-major (trans_b) is the wrong product; the
  // flags written out as 0 are the same call.
  any_wrong = false;
  for (const runtime::OutputCheck &c : run_against_reference(edited("tx_2, 128, 16, 1024", "tx_2, 128, 16, 1024, 0, 1")))
    any_wrong |= !c.ok;
  EXPECT_TRUE(any_wrong) << "B read MN-major still matched the reference";
  for (const runtime::OutputCheck &c : run_against_reference(edited("tx_2, 128, 16, 1024", "tx_2, 128, 16, 1024, 0, 0")))
    EXPECT_TRUE(c.ok) << c.str();
  // int8 has no transposed form; a flag other than 0 or 1 means nothing.
  try {
    run_against_reference(edited("tx_2, 128, 16, 1024", "tx_2, 128, 16, 1024, 1, 0", "wgmma_nt_s8"), "wgmma_nt_s8");
    ADD_FAILURE() << "an MN-major int8 operand was accepted";
  } catch (const runtime::InterpretError &e) {
    EXPECT_NE(std::string(e.what()).find("K-major only"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run_against_reference(edited("tx_2, 128, 16, 1024", "tx_2, 128, 16, 1024, 2, 0")),
               runtime::InterpretError);
}

std::vector<runtime::OutputCheck> emulate(const std::string &text, const std::string &name = "wgmma_nt_f16") {
  return emulate_against_reference(text, name);
}

TEST(Wgmma, EmulatedThreadsMatchThePlainProduct) {
  for (const char *name : kKernels) {
    SCOPED_TRACE(name);
    for (const runtime::OutputCheck &c : emulate(kernel_text(name), name))
      EXPECT_TRUE(c.ok) << c.str();
  }
  // A thread that never waits ends with its results in flight.
  try {
    emulate(edited("T.evaluate(T.wgmma_wait_group(0))", "T.evaluate(T.wgmma_fence())"));
    ADD_FAILURE() << "a missing wgmma wait went unnoticed";
  } catch (const simt::EmulationError &e) {
    EXPECT_NE(std::string(e.what()).find("never waited for"), std::string::npos) << e.what();
  }
}

TEST(Wgmma, AStoreWhileTheWgmmaIsInFlightIsARace) {
  // After the commit, a barrier and a store to the A tile before the wait:
  // the wgmma may still be reading it (the emulator checks its reads again
  // when the group retires).
  const std::string racy = edited("                T.evaluate(T.wgmma_commit_group())\n",
                                  "                T.evaluate(T.wgmma_commit_group())\n"
                                  "            T.evaluate(T.syncthreads())\n"
                                  "            for tx_9 in T.thread_binding(128, thread=\"threadIdx.x\"):\n"
                                  "                A_shared[tx_9] = T.float16(0.0)\n"
                                  "            for tx_8 in T.thread_binding(128, thread=\"threadIdx.x\"):\n");
  try {
    emulate(racy);
    ADD_FAILURE() << "a store to a tile an in-flight wgmma reads went unnoticed";
  } catch (const simt::EmulationError &e) {
    EXPECT_NE(std::string(e.what()).find("race"), std::string::npos) << e.what();
  }
}

TEST(Wgmma, LoweringPutsABarrierBetweenTheSharedStoresAndTheWgmmaReadingThem) {
  // Without the program's own barrier, lowering's barrier placement sees
  // wgmma's shared-memory operands as reads: the emulator finds no race and
  // the answer is right.
  const std::string unsynced = edited("            T.evaluate(T.syncthreads())\n", "");
  for (const runtime::OutputCheck &c : emulate(unsynced)) EXPECT_TRUE(c.ok) << c.str();
  std::string cu = codegen::codegen_cuda(lower::lower(script::parse_func(unsynced)), {.arch = "sm_90a"});
  const size_t fence = cu.find("fence.proxy.async"), sync = cu.find("__syncthreads()"), mma = cu.find("wgmma.fence");
  EXPECT_TRUE(fence < sync && sync < mma) << cu;
}

TEST(Wgmma, CudaForSm90aHoldsTheInstructionAndPlainSm90IsRefused) {
  lower::LoweredFunc f = lower::lower(script::parse_func(kernel_text()));
  std::string cu = codegen::codegen_cuda(f, {.arch = "sm_90a"});
  EXPECT_NE(cu.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"), std::string::npos) << cu;
  EXPECT_NE(cu.find("wgmma.fence.sync.aligned"), std::string::npos);
  EXPECT_NE(cu.find("wgmma.commit_group.sync.aligned"), std::string::npos);
  EXPECT_NE(cu.find("wgmma.wait_group.sync.aligned 0"), std::string::npos);
  EXPECT_NE(cu.find("fence.proxy.async.shared::cta"), std::string::npos);
  EXPECT_NE(cu.find("__shared__ __align__(1024) half A_shared"), std::string::npos) << cu;
  // 128-byte swizzle (1 << 62), SBO 1024 (64 << 32), LBO 16 (1 << 16).
  EXPECT_NE(cu.find("0x4000004000010000ULL"), std::string::npos) << cu;
  // int8: the s32 form, whose operands have no scale or transpose immediates.
  std::string s8 = codegen::codegen_cuda(lower::lower(script::parse_func(kernel_text("wgmma_nt_s8"))), {.arch = "sm_90a"});
  EXPECT_NE(s8.find("wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 {%0,"), std::string::npos) << s8;
  EXPECT_NE(s8.find("%32, %33, p;"), std::string::npos) << s8;
  EXPECT_NE(s8.find("\"+r\"(wacc[31])"), std::string::npos) << s8;
  // The 16-bit form's transpose immediates come from the call's flags; int8
  // has none to set.
  EXPECT_NE(cu.find(", p, 1, 1, 0, 0;"), std::string::npos) << cu;
  std::string mn = codegen::codegen_cuda(
      lower::lower(script::parse_func(edited("tx_2, 128, 16, 1024", "tx_2, 128, 16, 1024, 1, 0"))), {.arch = "sm_90a"});
  EXPECT_NE(mn.find(", p, 1, 1, 1, 0;"), std::string::npos) << mn;
  ir::PrimFunc s8_mn = script::parse_func(edited("tx_2, 128, 16, 1024", "tx_2, 128, 16, 1024, 0, 1", "wgmma_nt_s8"));
  EXPECT_THROW(codegen::codegen_cuda(lower::lower(s8_mn), {.arch = "sm_90a"}), codegen::CodegenError);
  const std::string e = codegen_error(f, "sm_90");
  EXPECT_NE(e.find("sm_90a"), std::string::npos) << "wgmma for plain sm_90: " << e;
}

TEST(Wgmma, TheRegisterFormReadsMmaSyncsAFragmentAndPassesFourRegisters) {
  const char *rs = "wgmma_rs_nt_f16";
  // Element i of a fragment at column 2q + i % 2 + 8 (i / 4); read the
  // pair's other column (2q + 1 - i % 2) instead and the product is wrong.
  const std::string wrong = edited("(tx_5 % 4 * 2 + i_1 % 2) % 8", "(tx_5 % 4 * 2 + 1 - i_1 % 2) % 8", rs);
  EXPECT_TRUE(any_wrong(run_against_reference(wrong, rs)));
  EXPECT_TRUE(any_wrong(emulate(wrong, rs)));
  // A in registers is K-major: the transpose flag is refused where it is read.
  const std::string mn = edited("tx_2, 128, 16, 1024)", "tx_2, 128, 16, 1024, 1, 0)", rs);
  try {
    run_against_reference(mn, rs);
    ADD_FAILURE() << "an MN-major A in registers was accepted";
  } catch (const runtime::InterpretError &e) {
    EXPECT_NE(std::string(e.what()).find("trans_a must be 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(codegen::codegen_cuda(lower::lower(script::parse_func(mn)), {.arch = "sm_90a"}), codegen::CodegenError);
  // 32 accumulators, then A's four registers, B's descriptor, the scale-d
  // flag; the 16-bit form's immediates: A and B scales and B's transpose.
  std::string cu = codegen::codegen_cuda(lower::lower(script::parse_func(kernel_text(rs))), {.arch = "sm_90a"});
  EXPECT_NE(cu.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0,"), std::string::npos) << cu;
  EXPECT_NE(cu.find("%31}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;"), std::string::npos) << cu;
  EXPECT_NE(cu.find("setp.ne.b32 p, %37, 0;"), std::string::npos) << cu;
  EXPECT_NE(cu.find("const unsigned *afrag"), std::string::npos) << cu;
}

TEST(Wgmma, CodeWithWgmmaCompilesForTheArchitectureSpecificTarget) {
  ir::PrimFunc hopper = script::parse_func(kernel_text());
  ir::PrimFunc plain = hopper_plain_program("wgmma_nt_f16");
  EXPECT_EQ(codegen::cuda_target_for("sm_90", hopper.body()), "sm_90a");
  EXPECT_EQ(codegen::cuda_target_for("sm_90", plain.body()), "sm_90");
  // Only sm_90 has an "a" target with wgmma; elsewhere the code is refused
  // where it is generated, with the reason.
  EXPECT_EQ(codegen::cuda_target_for("sm_80", hopper.body()), "sm_80");
  EXPECT_EQ(codegen::cuda_target_for("sm_100", hopper.body()), "sm_100");
  EXPECT_TRUE(codegen::cuda_target("sm_90a").has_wgmma());
  EXPECT_FALSE(codegen::cuda_target("sm_90").has_wgmma());
  EXPECT_THROW(codegen::cuda_target("sm_100a"), codegen::CodegenError) << "no GPU description of compute capability 10.0";
}

}  // namespace
}  // namespace tessera::test
