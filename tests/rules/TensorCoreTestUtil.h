//===- tests/rules/TensorCoreTestUtil.h - Breaking a tensor-core pipeline ---===//
//
// The tensor-core tests' programs (matmuls as TVM prints them, in every
// layout and type), and for the tests that prove a wrong cp.async pipeline
// fails on the CPU (the interpreter's and the SIMT emulator's poison): the
// kernel with every T.cp_async_wait_group(n) inside a serial loop changed to
// n + delta, or dropped where that is negative.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"

namespace tessera::test {

/// A matmul C[i, j] = sum_k A * B written as TVM prints it, with A stored
/// [M, K] or [K, M] and B [K, N] or [N, K].
inline std::string matmul_text(const std::string &dtype, bool a_k_inner, bool b_k_inner, const std::string &m, int n,
                        int k) {
  std::string a_shape = a_k_inner ? "(" + m + ", " + std::to_string(k) + ")" : "(" + std::to_string(k) + ", " + m + ")";
  std::string b_shape = b_k_inner ? "(" + std::to_string(n) + ", " + std::to_string(k) + ")"
                                  : "(" + std::to_string(k) + ", " + std::to_string(n) + ")";
  std::string a_at = a_k_inner ? "A[vi, vk]" : "A[vk, vi]", b_at = b_k_inner ? "B[vj, vk]" : "B[vk, vj]";
  std::string head = m == "m" ? "    m = T.int32()\n" : "";
  return "@T.prim_func\n"
         "def main(a: T.handle, b: T.handle, c: T.handle) -> None:\n" +
         head + "    A = T.match_buffer(a, " + a_shape + ", \"" + dtype + "\")\n" +
         "    B = T.match_buffer(b, " + b_shape + ", \"" + dtype + "\")\n" +
         "    C = T.match_buffer(c, (" + m + ", " + std::to_string(n) + "), \"float32\")\n" +
         "    for i, j, k in T.grid(" + m + ", " + std::to_string(n) + ", " + std::to_string(k) + "):\n" +
         "        with T.block(\"C\"):\n"
         "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
         "            with T.init():\n"
         "                C[vi, vj] = T.float32(0)\n"
         "            C[vi, vj] = C[vi, vj] + T.Cast(\"float32\", " +
         a_at + ") * T.Cast(\"float32\", " + b_at + ")\n";
}

/// C[i, j] = sum_k int32(A[i, k]) * int32(B[j, k]), int8 "nt" (the layout
/// the 8-bit ldmatrix reads), K as given.
inline std::string int8_text(int m, int n, int k, bool b_k_inner = true) {
  std::string b_shape = b_k_inner ? "(" + std::to_string(n) + ", " + std::to_string(k) + ")"
                                  : "(" + std::to_string(k) + ", " + std::to_string(n) + ")";
  return "@T.prim_func\n"
         "def main(A: T.Buffer((" + std::to_string(m) + ", " + std::to_string(k) + "), \"int8\"), B: T.Buffer(" +
         b_shape + ", \"int8\"), C: T.Buffer((" + std::to_string(m) + ", " + std::to_string(n) +
         "), \"int32\")) -> None:\n"
         "    for i, j, k in T.grid(" + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) + "):\n"
         "        with T.block(\"C\"):\n"
         "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
         "            with T.init():\n"
         "                C[vi, vj] = 0\n"
         "            C[vi, vj] = C[vi, vj] + T.Cast(\"int32\", A[vi, vk]) * T.Cast(\"int32\", " +
         (b_k_inner ? "B[vj, vk]" : "B[vk, vj]") + ")\n";
}


class ShiftLoopWaits : public ir::IRMutator {
 public:
  explicit ShiftLoopWaits(int64_t delta) : delta_(delta) {}

 protected:
  ir::Stmt visit_(const ir::For *op, const ir::Stmt &self) override {
    bool outer = in_loop_;
    in_loop_ = in_loop_ || op->for_kind == ir::ForKind::Serial;
    ir::Stmt s = IRMutator::visit_(op, self);
    in_loop_ = outer;
    return s;
  }
  ir::Stmt visit_(const ir::Evaluate *op, const ir::Stmt &self) override {
    const auto *c = op->value.as<ir::Call>();
    if (!in_loop_ || !c || c->op != ir::Intrinsic::CpAsyncWait) return self;
    int64_t n = *ir::as_const_int(c->args[0]) + delta_;
    if (n < 0) return ir::Evaluate::make(ir::make_int(ir::DataType::int32(), 0));
    return ir::Evaluate::make(
        ir::Call::make(ir::DataType::int32(), ir::Intrinsic::CpAsyncWait, {ir::make_int(ir::DataType::int32(), n)}));
  }

 private:
  int64_t delta_;
  bool in_loop_ = false;
};

}  // namespace tessera::test
