//===- tests/codegen/Hopper.h - The hand-scheduled Hopper kernels ----------===//
//
// tests/codegen/hopper/*.py are kernels written with Hopper's instructions
// (wgmma, TMA, mbarriers); each has its plain program under the same name
// in hopper/originals/. These helpers run one against the float64
// reference of its plain program, in the interpreter or in the SIMT
// emulator, and make the variants with a mistake the tests expect to fail.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>

#include "Kernels.h"
#include "SimtEmulator.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/lower/Lower.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"

namespace tessera::test {

inline std::string hopper_kernel(const std::string &name) {
  return read_text_file(codegen_test_dir() / "hopper" / (name + ".py"));
}

/// Kernel `name`'s text with `from` replaced by `to` (once; it must be there).
inline std::string hopper_kernel_edited(const std::string &name, const std::string &from, const std::string &to) {
  std::string s = hopper_kernel(name);
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? s : s.replace(at, from.size(), to);
}

inline ir::PrimFunc hopper_plain_program(const std::string &name) {
  return script::parse_func(read_text_file(codegen_test_dir() / "hopper" / "originals" / (name + ".py")));
}

/// Interprets `kernel` on random inputs of plain program `name`; the checks
/// against its float64 reference.
inline std::vector<runtime::OutputCheck> interpret_against_reference(const std::string &kernel,
                                                                     const std::string &name) {
  ir::PrimFunc plain = hopper_plain_program(name);
  std::vector<runtime::NDArray> args = runtime::make_random_args(plain, {}, 5);
  runtime::Reference want = runtime::compute_reference(plain, args);
  runtime::interpret(script::parse_func(kernel), args);
  return runtime::check_outputs(plain, args, want);
}

/// The same with `kernel` lowered and run by the SIMT emulator.
inline std::vector<runtime::OutputCheck> emulate_against_reference(const std::string &kernel, const std::string &name) {
  ir::PrimFunc plain = hopper_plain_program(name);
  std::vector<runtime::NDArray> args = runtime::make_random_args(plain, {}, 9);
  runtime::Reference want = runtime::compute_reference(plain, args);
  std::vector<runtime::NDArray *> ptrs;
  for (runtime::NDArray &a : args) ptrs.push_back(&a);
  simt::emulate(lower::lower(script::parse_func(kernel)), ptrs);
  return runtime::check_outputs(plain, args, want);
}

/// The InterpretError of interpreting `kernel` against plain program
/// `name`, or "" when it ran.
inline std::string interpret_error(const std::string &kernel, const std::string &name) {
  try {
    interpret_against_reference(kernel, name);
  } catch (const runtime::InterpretError &e) {
    return e.what();
  }
  return "";
}

/// The EmulationError of emulating `kernel` against plain program `name`,
/// or "" when it ran.
inline std::string emulate_error(const std::string &kernel, const std::string &name) {
  try {
    emulate_against_reference(kernel, name);
  } catch (const simt::EmulationError &e) {
    return e.what();
  }
  return "";
}

/// The CodegenError of generating `f`'s CUDA C for `arch`, or "" when it
/// generated.
inline std::string codegen_error(const lower::LoweredFunc &f, const std::string &arch) {
  try {
    codegen::codegen_cuda(f, {.arch = arch});
  } catch (const codegen::CodegenError &e) {
    return e.what();
  }
  return "";
}

/// Whether some output of `checks` is outside its bound.
inline bool any_wrong(const std::vector<runtime::OutputCheck> &checks) {
  for (const runtime::OutputCheck &c : checks)
    if (!c.ok) return true;
  return false;
}

}  // namespace tessera::test
