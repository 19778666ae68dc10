//===- Programs.cpp - Helpers for the interpreter tests --------------------===//
#include "Programs.h"

#include <cstdlib>
#include <cstring>

#include "tessera/runtime/Oracle.h"

namespace tessera::testing {

void run_program(const PrimFunc &f, std::vector<runtime::NDArray> &args) {
  const char *e = std::getenv("TESSERA_TEST_EXECUTOR");
  runtime::execute(f, args, e && std::strcmp(e, "llvm") == 0 ? runtime::Oracle::Llvm : runtime::Oracle::Interpreter);
}

runtime::NDArray eval_expr(const Expr &e, const std::vector<Buffer> &inputs, std::vector<runtime::NDArray> args) {
  Buffer out = Buffer::make("Out", e.dtype(), {i32(1)});
  std::vector<Buffer> bufs = inputs;
  bufs.push_back(out);
  PrimFunc f = func("expr", bufs, block("E", {}, {}, Store::make(out, e, {i32(0)})));
  args.emplace_back(e.dtype(), std::vector<int64_t>{1});
  run_program(f, args);
  return args.back();
}

}  // namespace tessera::testing
