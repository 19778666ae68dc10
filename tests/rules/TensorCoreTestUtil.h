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

#include <gtest/gtest.h>

#include "RuleTestUtil.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/rules/MatmulTensorCore.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"
#include "tessera/script/Parser.h"

namespace tessera::test {

/// A matmul C[i, j] = sum_k f(A) * f(B) written as TVM prints it, with A
/// stored [M, K] or [K, M] and B [K, N] or [N, K], C of type `out`, each
/// factor `factor` + load + ")" (`factor` opens the call, "T.Cast(\"float32\", ";
/// empty: the bare load).
inline std::string matmul_text_of(const std::string &dtype, const std::string &out, const std::string &factor,
                                  bool a_k_inner, bool b_k_inner, const std::string &m, int n, int k) {
  std::string a_shape = a_k_inner ? "(" + m + ", " + std::to_string(k) + ")" : "(" + std::to_string(k) + ", " + m + ")";
  std::string b_shape = b_k_inner ? "(" + std::to_string(n) + ", " + std::to_string(k) + ")"
                                  : "(" + std::to_string(k) + ", " + std::to_string(n) + ")";
  std::string a_at = a_k_inner ? "A[vi, vk]" : "A[vk, vi]", b_at = b_k_inner ? "B[vj, vk]" : "B[vk, vj]";
  auto f = [&](const std::string &x) { return factor.empty() ? x : factor + x + ")"; };
  std::string head = m == "m" ? "    m = T.int32()\n" : "";
  return "@T.prim_func\n"
         "def main(a: T.handle, b: T.handle, c: T.handle) -> None:\n" +
         head + "    A = T.match_buffer(a, " + a_shape + ", \"" + dtype + "\")\n" +
         "    B = T.match_buffer(b, " + b_shape + ", \"" + dtype + "\")\n" +
         "    C = T.match_buffer(c, (" + m + ", " + std::to_string(n) + "), \"" + out + "\")\n" +
         "    for i, j, k in T.grid(" + m + ", " + std::to_string(n) + ", " + std::to_string(k) + "):\n" +
         "        with T.block(\"C\"):\n"
         "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
         "            with T.init():\n"
         "                C[vi, vj] = T." + out + "(0)\n"
         "            C[vi, vj] = C[vi, vj] + " + f(a_at) + " * " + f(b_at) + "\n";
}

/// float16/bfloat16 operands cast to float32, accumulated in float32.
inline std::string matmul_text(const std::string &dtype, bool a_k_inner, bool b_k_inner, const std::string &m, int n,
                               int k) {
  return matmul_text_of(dtype, "float32", "T.Cast(\"float32\", ", a_k_inner, b_k_inner, m, n, k);
}

/// float32 operands rounded to tf32 (T.round_to_tf32): the tf32 tensor cores.
inline std::string tf32_text(bool a_k_inner, bool b_k_inner, const std::string &m, int n, int k) {
  return matmul_text_of("float32", "float32", "T.round_to_tf32(", a_k_inner, b_k_inner, m, n, k);
}

/// float16 products accumulated in float16 (C float16).
inline std::string f16_accumulating_text(bool a_k_inner, bool b_k_inner, const std::string &m, int n, int k) {
  return matmul_text_of("float16", "float16", "", a_k_inner, b_k_inner, m, n, k);
}

/// A batch of three float16 products C[b] = A[b] B[b]^T into float32, M
/// symbolic (int64), N = 40, K = 96.
inline std::string batched_product_text() {
  return R"(
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle) -> None:
    m = T.int64()
    A = T.match_buffer(a, (3, m, 96), "float16")
    B = T.match_buffer(b, (3, 40, 96), "float16")
    C = T.match_buffer(c, (3, m, 40), "float32")
    for bb, i, j, k in T.grid(3, m, 40, 96):
        with T.block("C"):
            vb, vi, vj, vk = T.axis.remap("SSSR", [bb, i, j, k])
            with T.init():
                C[vb, vi, vj] = T.float32(0.0)
            C[vb, vi, vj] = C[vb, vi, vj] + T.Cast("float32", A[vb, vi, vk]) * T.Cast("float32", B[vb, vj, vk])
)";
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


/// A prefill projection as relax prints it: a unit batch axis, M symbolic
/// (T.int64), C (1, m, n) += A (1, m, k) x W (k, n), float16 in and out.
inline std::string relax_matmul_text(int n, int k) {
  std::string N = "T.int64(" + std::to_string(n) + ")", K = "T.int64(" + std::to_string(k) + ")";
  return R"(
@T.prim_func(private=True)
def matmul(var_inp0: T.handle, inp1: T.Buffer(()" + K + ", " + N + R"(), "float16"), var_matmul: T.handle):
    T.func_attr({"tir.noalias": T.bool(True)})
    m = T.int64()
    inp0 = T.match_buffer(var_inp0, (T.int64(1), m, )" + K + R"(), "float16")
    matmul = T.match_buffer(var_matmul, (T.int64(1), m, )" + N + R"(), "float16")
    # with T.block("root"):
    for i0, i1, i2, k in T.grid(T.int64(1), m, )" + N + ", " + K + R"():
        with T.block("matmul"):
            v_i0, v_i1, v_i2, v_k = T.axis.remap("SSSR", [i0, i1, i2, k])
            T.reads(inp0[v_i0, v_i1, v_k], inp1[v_k, v_i2])
            T.writes(matmul[v_i0, v_i1, v_i2])
            with T.init():
                matmul[v_i0, v_i1, v_i2] = T.float16(0.0)
            matmul[v_i0, v_i1, v_i2] = matmul[v_i0, v_i1, v_i2] + inp0[v_i0, v_i1, v_k] * inp1[v_k, v_i2]
)";
}

/// Schedules `f` with the tensor-core rule at `config` (the default when
/// null) and checks it against the float64 reference; returns the checks.
inline std::vector<runtime::OutputCheck> run_checked(const ir::PrimFunc &f, const runtime::DimBindings &dims,
                                              const rules::TensorCoreConfig *config, ir::PrimFunc *scheduled = nullptr) {
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  auto m = rule.match(f, test_arch());
  EXPECT_TRUE(m) << m.reason();
  if (!m) return {};
  std::unique_ptr<rules::Config> def = rule.default_config(**m, test_arch());
  // A given config takes the workload facts from the match, as a policy's do.
  rules::TensorCoreConfig given;
  if (config) {
    given = *config;
    const auto &d = static_cast<const rules::TensorCoreConfig &>(*def);
    given.a_elementwise = d.a_elementwise, given.b_elementwise = d.b_elementwise;
  }
  const rules::Config &c = config ? static_cast<const rules::Config &>(given) : *def;
  c.validate(test_arch());
  ir::PrimFunc s = rule.apply(f, **m, c).func();
  if (scheduled) *scheduled = s;
  std::vector<runtime::NDArray> got = runtime::make_random_args(f, dims, 3);
  runtime::Reference want = runtime::compute_reference(f, got);
  runtime::interpret(s, got);
  return runtime::check_outputs(f, got, want);
}

/// The ConfigError of validating `c` and applying the tensor-core rule at it
/// to the program `text` (which the rule must match), or "" when it applies.
inline std::string config_refusal(const std::string &text, const rules::TensorCoreConfig &c) {
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  ir::PrimFunc f = script::parse_func(text);
  auto m = rule.match(f, test_arch());
  EXPECT_TRUE(m) << m.reason();
  if (!m) return "";
  try {
    c.validate(test_arch());
    rule.apply(f, **m, c);
  } catch (const rules::ConfigError &e) {
    return e.what();
  }
  return "";
}

/// A Hopper config: `groups` warpgroups (64 rows each) by `n` columns, K
/// tiles of 128 bytes.
inline rules::TensorCoreConfig wgmma_config(int64_t in_bytes, int64_t groups, int64_t n, int64_t stages = 3) {
  rules::TensorCoreConfig c;
  c.wgmma = true;
  c.in_bytes = in_bytes;
  c.block_m = 64 * groups, c.block_n = n, c.block_k = 128 / in_bytes;
  c.warps_m = 4 * groups, c.warps_n = 1, c.stages = stages;
  c.swizzle = true, c.pad = 0;
  return c;
}

inline void expect_ok(const std::vector<runtime::OutputCheck> &checks) {
  ASSERT_FALSE(checks.empty());
  for (const runtime::OutputCheck &c : checks) EXPECT_TRUE(c.ok) << c.str();
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
