//===- tests/fuzz/TraceFuzzer.cpp - libFuzzer target: schedule traces -------===//
//
// Any text is read as a schedule trace (schedule/Trace.h) and, when it reads,
// replayed on a small matmul with a reduction and an epilogue: a TraceError or
// a primitive's ScheduleError is the refusal; nothing else may escape.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <string_view>

#include "FuzzCheck.h"
#include "tessera/schedule/Schedule.h"
#include "tessera/schedule/Trace.h"
#include "tessera/script/Parser.h"

namespace {

const tessera::ir::PrimFunc &target_function() {
  static const tessera::ir::PrimFunc f = tessera::script::parse_func(R"(
@T.prim_func
def matmul_relu(A: T.Buffer((64, 32), "float16"), B: T.Buffer((32, 48), "float16"), D: T.Buffer((64, 48), "float16")):
    C = T.alloc_buffer((64, 48), "float32")
    for i, j, k in T.grid(64, 48, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])
    for i, j in T.grid(64, 48):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.Cast("float16", T.max(C[vi, vj], T.float32(0)))
)");
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  tessera::fuzz::only_user_errors("the trace reader", [&] {
    tessera::schedule::Trace trace = tessera::schedule::Trace::from_json(text);
    tessera::schedule::Schedule sch(target_function());
    trace.apply(sch);
  });
  return 0;
}
