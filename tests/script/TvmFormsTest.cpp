//===- TvmFormsTest.cpp - What TVM prints and tessera must read -------------===//
//
// Issue 12: forms that `mod.script()` prints (or a user reformats) which the
// parser refused before, each parsed, checked for its meaning, printed and
// parsed again to the same IR; and the refusals that stay, with the message
// that says exactly what and where.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "tessera/ir/StructuralEqual.h"
#include "tessera/rules/Rule.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"

using namespace tessera;

namespace {

/// Parses, prints and parses again; expects the same IR and a stable print.
ir::PrimFunc round_trip(const std::string &text) {
  ir::Module m = script::parse_module(text, "prog.py");
  std::string printed = script::print(m);
  ir::Module again = script::parse_module(printed, "printed.py");
  EXPECT_EQ(m.funcs.size(), again.funcs.size());
  for (size_t i = 0; i < m.funcs.size() && i < again.funcs.size(); ++i)
    EXPECT_TRUE(ir::structural_equal(m.funcs[i], again.funcs[i]))
        << ir::structural_diff(m.funcs[i], again.funcs[i]) << "\n" << printed;
  EXPECT_EQ(script::print(again), printed);
  return m.funcs.at(0);
}

std::string error_of(const std::string &text) {
  try {
    script::parse_module(text, "prog.py");
  } catch (const script::ParseError &e) {
    return e.what();
  }
  return "";
}

TEST(TvmForms, ImplicitLineJoiningInBlackStyle) {
  // Closing brackets below their opening line, `) -> None:`, trailing commas,
  // comments and blank lines inside brackets, a backslash continuation.
  ir::PrimFunc f = round_trip(R"(
@T.prim_func
def main(
    A: T.Buffer((8,), "float32"),
    B: T.Buffer(
        (8,),  # the output
        "float32",
    ),
) -> None:
    for i in T.serial(
        8,

    ):
        with T.block("B"):
            vi = T.axis.spatial(
                8, i
            )
            B[vi] = A[vi] + \
                T.float32(1)
)");
  EXPECT_EQ(f.params().size(), 2u);
}

TEST(TvmForms, DtypeKeywordOnCalls) {
  ir::PrimFunc f = round_trip(R"(
@T.prim_func
def main(A: T.Buffer((8,), "float16"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "int32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = T.if_then_else(vi >= 1, T.sqrt(A[vi], dtype="float32"), 0.0, dtype="float32")
            C[vi] = T.shift_left(vi, 2, dtype="int32")
)");
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {}, 1);
  args[0].set(3, 0.25);
  runtime::interpret(f, args);
  EXPECT_EQ(args[1].get(0), 0.0);
  EXPECT_NEAR(args[1].get(3), 0.5, 1e-3);
  EXPECT_EQ(args[2].get(5), 20);
  EXPECT_NE(error_of(R"(
@T.prim_func
def main(B: T.Buffer((8,), "float32")):
    B[0] = T.sqrt(B[1], type="float32")
)").find("prog.py:4:25: error: unexpected keyword argument 'type' to T.sqrt"), std::string::npos);
}

TEST(TvmForms, CastWithTheValueFirstAndLegacyBufferSubscripts) {
  ir::PrimFunc f = round_trip(R"(
@T.prim_func
def main(A: T.Buffer[(4, 4), "float32"], B: T.Buffer[(4,), "int8"]):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = T.cast(A[vi, vi] * T.float32(10), "int8")
)");
  EXPECT_EQ(f.buffer_of(f.params()[0]).shape().size(), 2u);
  EXPECT_EQ(f.buffer_of(f.params()[1]).dtype(), ir::DataType::int_(8));
  EXPECT_NE(error_of(R"(
@T.prim_func
def main(B: T.Buffer((8,), "float32")):
    B[0] = T.cast(B[1])
)").find("T.cast takes a value and a data type"), std::string::npos);
}

TEST(TvmForms, SeveralSymbolicSizesTypedLetsAndStoreConversions) {
  ir::Module m = script::parse_module(R"(
@T.prim_func
def main(var_A: T.handle, var_B: T.handle):
    n, m = T.int64(), T.int64()
    A = T.match_buffer(var_A, (n, m), "float32")
    B = T.match_buffer(var_B, (n, m), "float16")
    for i, j in T.grid(n, m):
        with T.sblock("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.sblock_attr({"hint": 1})
            x: T.let[T.float32] = A[v_i, v_j] * T.float32(2)
            y: T.float32 = x + T.float32(1)
            B[v_i, v_j] = y
)", "prog.py");
  ir::PrimFunc f = m.funcs.at(0);
  EXPECT_EQ(f.shape_vars().size(), 2u);
  // float32 into a float16 buffer: converted, with a warning at the value.
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("prog.py:13:27: warning: the float32 value is converted to float16"), std::string::npos)
      << m.warnings[0];
  round_trip(script::print(m));
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {{"n", 2}, {"m", 3}}, 1);
  runtime::interpret(f, args);
  EXPECT_NEAR(args[1].get(4), args[0].get(4) * 2 + 1, 2e-3);
  // A lossless conversion (float16 into float32) says nothing.
  ir::Module quiet = script::parse_module(R"(
@T.prim_func
def main(A: T.Buffer((4,), "float16"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = A[i]
)", "prog.py");
  EXPECT_TRUE(quiet.warnings.empty());
  EXPECT_NE(error_of(R"(
@T.prim_func
def main(A: T.Buffer((4,), "float16")):
    n, m = T.int64(), 4
)").find("a tuple assignment declares symbolic variables"), std::string::npos);
}

TEST(TvmForms, TargetAttributesAreKeptAndNonGpuTargetsAreNotScheduled) {
  ir::PrimFunc cuda = round_trip(R"(
@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    T.func_attr({"target": T.target({"kind": "cuda", "arch": "sm_80", "keys": ["cuda", "gpu"]}), "tir.noalias": True})
    for i in range(8):
        A[i] = T.float32(0)
)");
  EXPECT_EQ(rules::target_kind(cuda), "cuda");
  EXPECT_NO_THROW(rules::check_gpu_target(cuda));
  ir::PrimFunc cpu = round_trip(R"(
@T.prim_func
def main(A: T.Buffer((8,), "float32")):
    T.func_attr({"target": T.target("llvm -mcpu=skylake"), "tir.noalias": True})
    for i in range(8):
        A[i] = T.float32(0)
)");
  EXPECT_EQ(rules::target_kind(cpu), "llvm");
  try {
    rules::apply_default_schedule(cpu, Arch::by_name("h100"));
    FAIL() << "an llvm function was scheduled";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("function 'main' is for target 'llvm'"), std::string::npos) << e.what();
  }
}

}  // namespace

namespace {

const char *kOpaque = R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), n: T.int32):
    T.evaluate(T.assume(n < 16))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = T.call_extern("float32", "expf", A[vi])
    T.evaluate(T.tvm_fill_fragment(B.data, 16, 16, 16, 0, T.float32(0), dtype="handle"))
    T.call_packed("tvm.contrib.cblas.matmul", A, B)
    T.evaluate(T.ptx_legacy.ldmatrix(False, 4, ".b16", A.data, 0, B.data, 8, dtype="float16"))
    T.evaluate(T.call_extern("int32", "touch", A.access_ptr("r", "handle", 1, 0), B.access_ptr("w")))
    T.evaluate(T.tvm_access_ptr(T.type_annotation("float32"), A.data, 0, 16, 1, dtype="handle"))
)";

TEST(TvmForms, OpaqueCallsParseAndPrintButAreNeverRun) {
  ir::PrimFunc f = round_trip(kOpaque);
  std::string printed = script::print(f);
  for (const char *s : {"T.call_extern(\"float32\", \"expf\", A[vi])", "T.tvm_fill_fragment(B.data, 16, 16, 16, 0",
                        "dtype=\"handle\")", "T.call_packed(\"tvm.contrib.cblas.matmul\", A.data, B.data)",
                        "T.ptx_legacy.ldmatrix(False, 4, \".b16\", A.data, 0, B.data, 8, dtype=\"float16\")",
                        "T.evaluate(T.assume(n < 16))", "A.access_ptr(\"r\", \"handle\", 1, 0), B.access_ptr(\"w\"))",
                        "T.tvm_access_ptr(T.type_annotation(\"float32\"), A.data, 0, 16, 1, dtype=\"handle\")"})
    EXPECT_NE(printed.find(s), std::string::npos) << s << "\n" << printed;
  auto fails_with = [&](const std::function<void()> &run, const std::string &fragment) {
    try {
      run();
      ADD_FAILURE() << "no error; expected " << fragment;
    } catch (const UserError &e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  std::string what = "it calls T.call_extern(\"float32\", \"expf\", A[vi]) in block 'B', which tessera has no "
                     "semantics for (an opaque call)";
  fails_with([&] { runtime::Interpreter interp(f); }, "cannot interpret function 'main': " + what);
  fails_with([&] { rules::apply_default_schedule(f, Arch::by_name("h100")); }, "cannot schedule function 'main': " + what);
}

TEST(TvmForms, AssumeIsCheckedByTheInterpreter) {
  ir::PrimFunc f = round_trip(R"(
@T.prim_func
def main(A: T.Buffer((4,), "int32")):
    for i in range(4):
        T.evaluate(T.assume(A[i] < 100))
        A[i] = A[i] + 1
)");
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {}, 1);
  int64_t before = args[0].get_int(2);
  runtime::interpret(f, args);
  EXPECT_EQ(args[0].get_int(2), before + 1);
  args[0].set_int(3, 500);
  EXPECT_THROW(runtime::interpret(f, args), runtime::InterpretError);
}

}  // namespace

namespace {

TEST(TvmForms, LoweredBuffersAndViewsBecomePlainAccesses) {
  // T.Buffer(data=A.data), T.allocate + T.decl_buffer (twice over one
  // allocation), a decl_buffer of its own, and block-level T.match_buffer of
  // regions (a view of a view included): one buffer per piece of memory.
  ir::PrimFunc f = round_trip(R"(
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    A_flat = T.Buffer((256,), "float32", data=A.data)
    B_data = T.allocate([256], "float32", "global")
    B = T.decl_buffer((16, 16), "float32", data=B_data)
    B_flat = T.decl_buffer((256,), "float32", data=B_data)
    for i in range(256):
        B_flat[i] = A_flat[i] * T.float32(2)
    for i in range(4):
        with T.block("tile"):
            vi = T.axis.spatial(4, i)
            T.reads(B[vi * 4:vi * 4 + 4, 0:16])
            T.writes(C[vi * 4:vi * 4 + 4, 0:16])
            Bs = T.match_buffer(B[vi * 4:vi * 4 + 4, 0:16], (4, 16), offset_factor=1)
            Cs = T.match_buffer(C[vi * 4:vi * 4 + 4, 0:16], (4, 16))
            Crow = T.match_buffer(Cs[1, 0:16], (16,))
            for ii, j in T.grid(4, 16):
                Cs[ii, j] = Bs[ii, j] + T.float32(1)
            for j in range(16):
                Crow[j] = Crow[j] * T.float32(10)
    with T.decl_buffer((4,), "float32") as D:
        for i in range(4):
            D[i] = T.float32(0)
)");
  std::string printed = script::print(f);
  EXPECT_NE(printed.find("B[i // 16, i % 16] = A[i // 16, i % 16] * T.float32(2.0)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("C[vi * 4 + 1, j] = C[vi * 4 + 1, j] * T.float32(10.0)"), std::string::npos) << printed;
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {}, 3);
  runtime::NDArray a = args[0];
  runtime::interpret(f, args);
  for (int64_t r = 0; r < 16; ++r)
    for (int64_t c = 0; c < 16; ++c) {
      double want = (a.get(r * 16 + c) * 2 + 1) * (r % 4 == 1 ? 10 : 1);
      EXPECT_NEAR(args[1].get(r * 16 + c), want, 1e-5) << r << ", " << c;
    }
  EXPECT_NE(error_of(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32")):
    B_data = T.allocate([16], "int8", "global")
    B = T.decl_buffer((16,), "float32", data=B_data)
)").find("buffers of different types over one allocation are not supported"), std::string::npos);
}

}  // namespace

namespace {

TEST(TvmForms, ThreadLaunchesOfLoweredTirBecomeThreadLoops) {
  ir::Module m = script::parse_module(R"(
@T.prim_func
def main(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    bx = T.env_thread("blockIdx.x")
    tx = T.env_thread("threadIdx.x")
    T.launch_thread(bx, 2)
    T.launch_thread(tx, 128)
    with T.attr(T.int32(1), "pragma_scope", "parallel_launch_point"):
        B[bx * 128 + tx] = A[bx * 128 + tx] * T.float32(2)
)", "prog.py");
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("prog.py:8:10: warning: T.attr 'pragma_scope' is not modelled"), std::string::npos)
      << m.warnings[0];
  std::string printed = script::print(m);
  EXPECT_NE(printed.find("for bx in T.thread_binding(2, thread=\"blockIdx.x\"):\n"
                         "        for tx in T.thread_binding(128, thread=\"threadIdx.x\"):"),
            std::string::npos)
      << printed;
  ir::PrimFunc f = round_trip(printed);
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {}, 2);
  runtime::interpret(f, args);
  EXPECT_EQ(args[1].get(200), args[0].get(200) * 2);
  // The other spellings: `with ... as`, an assigned launch, T.attr thread_extent.
  round_trip(R"(
@T.prim_func
def main(A: T.Buffer((256,), "float32")):
    with T.launch_thread("threadIdx.x", 256) as threadIdx_x:
        A[threadIdx_x] = A[threadIdx_x] + T.float32(1)
    blockIdx_x = T.launch_thread("blockIdx.x", T.int64(1))
    T.attr(T.iter_var(t2, T.Range(0, 256), "ThreadIndex", "threadIdx.x"), "thread_extent", 256)
    A[t2] = A[t2] * T.float32(3)
)");
  EXPECT_NE(error_of(R"(
@T.prim_func
def main(A: T.Buffer((256,), "float32")):
    i = T.int32()
    T.launch_thread(i, 8)
)").find("'i' is not a thread variable: declare it with T.env_thread"), std::string::npos);
}

TEST(TvmForms, CallsBetweenFunctionsOfAModuleAreOpaque) {
  ir::Module m = script::parse_module(R"(
@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((16,), "float32")):
        Module.subroutine(A.data, T.int32(16))

    @T.prim_func(private=True)
    def subroutine(A_data: T.handle("float32"), n: T.int32):
        A = T.decl_buffer((16,), "float32", data=A_data)
        for i in range(n):
            A[i] = T.float32(0)
)", "prog.py");
  ASSERT_EQ(m.funcs.size(), 2u);
  EXPECT_NE(script::print(m).find("Module.subroutine(A.data, 16)"), std::string::npos) << script::print(m);
  EXPECT_NE(error_of(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32")):
    A[0] = T.float32(N)
)").find("undefined name 'N' (a Python variable of the script that wrote this function?"), std::string::npos);
}

}  // namespace

namespace {

TEST(TvmForms, LoopsWithAStep) {
  ir::PrimFunc f = round_trip(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32")):
    for i in range(1, 16, 3):
        A[i] = T.float32(1)
    for j in T.serial(0, 16, step=4):
        A[j] = A[j] + T.float32(2)
)");
  std::string printed = script::print(f);
  EXPECT_NE(printed.find("for i in range(5):\n        A[1 + i * 3] = T.float32(1.0)"), std::string::npos) << printed;
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {}, 1);
  runtime::NDArray before = args[0];
  runtime::interpret(f, args);
  for (int64_t i = 0; i < 16; ++i) {
    double want = i % 3 == 1 ? 1.0 : before.get(i);
    if (i % 4 == 0) want += 2;
    EXPECT_FLOAT_EQ(args[0].get(i), want) << i;
  }
  EXPECT_NE(error_of(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32")):
    for i in range(16, 0, -1):
        A[i] = T.float32(1)
)").find("a loop step must be a positive integer constant"), std::string::npos);
}

TEST(TvmForms, WhileBreakAndContinueAreRefusedWithTheReason) {
  EXPECT_NE(error_of(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32")):
    for i in range(16):
        if i < 3:
            continue
        A[i] = T.float32(1)
)").find("prog.py:6:13: error: 'continue' is not supported by tessera"), std::string::npos);
  EXPECT_NE(error_of(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32")):
    while A[0] < T.float32(1):
        A[0] = A[0] + T.float32(1)
)").find("'while' loops are not supported by tessera"), std::string::npos);
}

}  // namespace

TEST(TvmForms, ARelaxModulesPrimFuncsAreReadAndItsRelaxFunctionsSkipped) {
  // What `mod.script()` prints for a Relax module after LegalizeOps: module
  // attributes, a private prim_func, and Relax functions (a dataflow block,
  // `cls.add`, metadata, `R.function(pure=False)`) that tessera does not read.
  const std::string text = R"(# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    I.module_attrs({"system_lib_prefix": "lib_"})
    @T.prim_func(private=True)
    def add(x: T.Buffer((T.int64(16),), "float32"), T_add: T.Buffer((T.int64(16),), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        for ax0 in range(T.int64(16)):
            with T.block("T_add"):
                v_ax0 = T.axis.spatial(T.int64(16), ax0)
                T.reads(x[v_ax0])
                T.writes(T_add[v_ax0])
                T_add[v_ax0] = x[v_ax0] + T.float32(1.0)

    @R.function
    def main(x: R.Tensor((16,), dtype="float32")) -> R.Tensor((16,), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.add, (x,), out_sinfo=R.Tensor((16,), dtype="float32"))
            lv1: R.Tensor((16,), dtype="float32") = R.add(lv, metadata["relax.expr.Constant"][0])
            gv: R.Tensor((16,), dtype="float32") = lv1
            R.output(gv)
        return gv

    @R.function(pure=False)
    def side(x: R.Tensor(("n",), dtype="float32")):
        n = T.int64()
        R.print(x, format="{}")
        return R.tuple()

    @R.function
    def one_line(x: R.Tensor((16,), dtype="float32")) -> R.Tensor((16,), dtype="float32"): return x

# Metadata omitted. Use show_meta=True in script() method to show it.
)";
  ir::Module m = script::parse_module(text, "relax_module.py");
  ASSERT_EQ(m.funcs.size(), 1u);
  EXPECT_EQ(m.funcs[0].name(), "add");
  ASSERT_EQ(m.warnings.size(), 3u);
  EXPECT_NE(m.warnings[0].find("relax_module.py:20:5: warning: Relax function 'main' skipped"), std::string::npos)
      << m.warnings[0];
  EXPECT_NE(m.warnings[1].find("'side' skipped"), std::string::npos) << m.warnings[1];
  EXPECT_NE(m.warnings[2].find("'one_line' skipped"), std::string::npos) << m.warnings[2];
  std::vector<runtime::NDArray> args = runtime::make_random_args(m.funcs[0], {}, 1);
  runtime::interpret(m.funcs[0], args);
  for (int64_t i = 0; i < 16; ++i) EXPECT_EQ(args[1].get(i), float(args[0].get(i) + 1)) << i;

  // A module of Relax functions alone has nothing to read.
  std::string only_relax = error_of(R"(
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((16,), dtype="float32")):
        return x
)");
  EXPECT_NE(only_relax.find("ir_module class 'Module' holds no '@T.prim_func' function"), std::string::npos)
      << only_relax;
}

// Issue 39: what TVM's own tests type. `for iters in T.grid(*A.shape)` with
// `T.axis.remap("SS", iters)`, A.shape[k] as a value, iters[k], and the rest of
// TVM's float math (T.atan2, T.tan, ...), each run against std's value.
TEST(TvmForms, GridOverAShapeWithATupleOfLoopVariables) {
  ir::PrimFunc f = round_trip(R"(
# from tvm.script import tir as T

@T.prim_func
def angle(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4, 6), "float32"), C: T.Buffer((4, 6), "float32")) -> None:
    for iters in T.grid(*A.shape):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", iters)
            C[vi, vj] = T.atan2(A[vi, vj], B[vi, vj]) + T.float32(A.shape[1]) * T.float32(0)
    for i, j in T.grid(*(4, 6)):
        with T.block("D"):
            vi = T.axis.spatial(4, i)
            vj = T.axis.spatial(A.shape[-1], j)
            C[vi, vj] = C[vi, vj] + T.hypot(A[vi, vj], B[vi, vj]) * T.float32(0)
)");
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {}, 4);
  runtime::interpret(f, args);
  for (int64_t i = 0; i < 24; ++i)
    EXPECT_EQ(args[2].get(i), double(std::atan2(float(args[0].get(i)), float(args[1].get(i))))) << i;

  EXPECT_NE(error_of(R"(
@T.prim_func
def f(A: T.Buffer((4, 6), "float32")) -> None:
    for iters in T.grid(*A.shape):
        with T.block("C"):
            vi = T.axis.spatial(4, iters)
            A[vi, 0] = T.float32(0)
)").find("prog.py:6:36: error: 'iters' is a tuple of 2 loop variables; index it (iters[0]) or bind it with T.axis.remap"),
            std::string::npos);
  EXPECT_NE(error_of(R"(
@T.prim_func
def f(A: T.Buffer((4, 6), "float32")) -> None:
    for i in T.grid(*A):
        A[i, 0] = T.float32(0)
)").find("prog.py:4:22: error: '*' unpacks a buffer's shape (*A.shape), a tuple or a tuple of loop variables here"),
            std::string::npos);
  EXPECT_NE(error_of(R"(
@T.prim_func
def f(A: T.Buffer((4, 6), "float32")) -> None:
    A[0, 0] = T.float32(A.shape[2])
)").find("prog.py:4:33: error: index 2 is out of range for 'A.shape' of 2 elements"),
            std::string::npos);
}

TEST(TvmForms, TheRestOfTvmsFloatMath) {
  struct Case {
    const char *name;
    double (*fn)(double);
    double lo, hi;
  };
  for (const Case &c : {Case{"tan", [](double x) { return std::tan(x); }, -1.2, 1.2},
                        Case{"asin", [](double x) { return std::asin(x); }, -0.9, 0.9},
                        Case{"acos", [](double x) { return std::acos(x); }, -0.9, 0.9},
                        Case{"atan", [](double x) { return std::atan(x); }, -5, 5},
                        Case{"sinh", [](double x) { return std::sinh(x); }, -3, 3},
                        Case{"cosh", [](double x) { return std::cosh(x); }, -3, 3},
                        Case{"asinh", [](double x) { return std::asinh(x); }, -5, 5},
                        Case{"acosh", [](double x) { return std::acosh(x); }, 1.5, 5},
                        Case{"atanh", [](double x) { return std::atanh(x); }, -0.9, 0.9}}) {
    ir::PrimFunc f = round_trip(std::string(R"(
@T.prim_func
def main(A: T.Buffer((64,), "float64"), B: T.Buffer((64,), "float64")) -> None:
    for i in range(64):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.)") + c.name + "(A[vi])\n");
    runtime::NDArray a(ir::DataType::float64(), {64}), b(ir::DataType::float64(), {64});
    for (int64_t i = 0; i < 64; ++i) a.set(i, c.lo + (c.hi - c.lo) * double(i) / 63);
    std::vector<runtime::NDArray> args{a, b};
    runtime::interpret(f, args);
    for (int64_t i = 0; i < 64; ++i) EXPECT_EQ(args[1].get(i), c.fn(a.get(i))) << c.name << " " << i;
  }
}
