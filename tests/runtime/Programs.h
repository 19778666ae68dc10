//===- Programs.h - IR programs for the interpreter tests ------------------===//
//
// Small TensorIR programs built with the C++ builders (no parser needed), and
// helpers to evaluate a single expression.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/ir/Op.h"
#include "tessera/runtime/Interpreter.h"

namespace tessera::testing {

using namespace tessera::ir;

inline Var handle(const std::string &name) { return Var(name, DataType::handle()); }

inline Stmt loop(const Var &v, Expr min, Expr extent, Stmt body, ForKind kind = ForKind::Serial,
                 std::string tag = "") {
  return For::make(v, std::move(min), std::move(extent), kind, std::move(body), std::move(tag));
}
inline Stmt loop(const Var &v, int64_t extent, Stmt body) { return loop(v, i32(0), i32(extent), std::move(body)); }

inline IterVar spatial(const Var &v, Expr extent) { return {v, Range::from_extent(std::move(extent)), IterKind::Spatial}; }
inline IterVar reduce(const Var &v, Expr extent) { return {v, Range::from_extent(std::move(extent)), IterKind::Reduce}; }

/// A block without regions or allocations.
inline Stmt block(std::string name, std::vector<IterVar> ivs, std::vector<Expr> bindings, Stmt body,
                  std::optional<Stmt> init = std::nullopt, Expr predicate = Expr(), std::vector<Buffer> allocs = {}) {
  return Block::make(std::move(name), std::move(ivs), std::move(bindings), std::move(predicate), {}, {},
                     std::move(allocs), std::move(init), std::move(body));
}

/// A function whose parameters are all buffers.
inline PrimFunc func(const std::string &name, const std::vector<Buffer> &bufs, Stmt body) {
  std::vector<Var> params;
  std::vector<std::pair<Var, Buffer>> map;
  for (const Buffer &b : bufs) {
    Var h = handle(b.name());
    params.push_back(h);
    map.emplace_back(h, b);
  }
  return PrimFunc::make(name, params, map, std::move(body));
}

/// C[m, n] = sum_k A[m, k] * B[k, n]; shapes may be symbolic.
inline PrimFunc matmul(Expr m, Expr n, Expr k, DataType t, DataType acc) {
  Buffer A = Buffer::make("A", t, {m, k}), B = Buffer::make("B", t, {k, n}), C = Buffer::make("C", acc, {m, n});
  Var i("i", m.dtype()), j("j", m.dtype()), kk("k", m.dtype()), vi("vi", m.dtype()), vj("vj", m.dtype()),
      vk("vk", m.dtype());
  Expr zero = make_int(m.dtype(), 0);
  Stmt body = Store::make(C, Load::make(C, {vi, vj}) + cast(acc, Load::make(A, {vi, vk})) * cast(acc, Load::make(B, {vk, vj})), {vi, vj});
  Stmt blk = block("C", {spatial(vi, m), spatial(vj, n), reduce(vk, k)}, {i, j, kk}, body,
                   Store::make(C, make_const(acc, 0), {vi, vj}));
  return func("matmul", {A, B, C}, loop(i, zero, m, loop(j, zero, n, loop(kk, zero, k, blk))));
}

/// Runs `f` on `args` with the executor under test: the interpreter, or the
/// LLVM JIT when the environment has TESSERA_TEST_EXECUTOR=llvm (CTest runs
/// the semantics, error, numeric and schedule suites a second time so:
/// tessera_runtime_test_llvm in tests/runtime/CMakeLists.txt).
void run_program(const PrimFunc &f, std::vector<runtime::NDArray> &args);

/// Stores `e` (which may load from `inputs`) into Out[0] in block "E" and runs
/// it on `args` (one array per input, then the output is appended).
runtime::NDArray eval_expr(const Expr &e, const std::vector<Buffer> &inputs = {},
                           std::vector<runtime::NDArray> args = {});

}  // namespace tessera::testing
