//===- Programs.cpp - Helpers for the interpreter tests --------------------===//
#include "Programs.h"

namespace tessera::testing {

runtime::NDArray eval_expr(const Expr &e, const std::vector<Buffer> &inputs, std::vector<runtime::NDArray> args) {
  Buffer out = Buffer::make("Out", e.dtype(), {i32(1)});
  std::vector<Buffer> bufs = inputs;
  bufs.push_back(out);
  PrimFunc f = func("expr", bufs, block("E", {}, {}, Store::make(out, e, {i32(0)})));
  args.emplace_back(e.dtype(), std::vector<int64_t>{1});
  runtime::interpret(f, args);
  return args.back();
}

}  // namespace tessera::testing
