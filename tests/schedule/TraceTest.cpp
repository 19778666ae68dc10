//===- TraceTest.cpp - Trace JSON, replay, errors --------------------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

// The loop part of the issue's example trace.
const char *kIssueTrace = R"([
  {"op": "get_block", "name": "C", "out": "C"},
  {"op": "get_loops", "block": "C", "out": ["i", "j", "k"]},
  {"op": "split", "loop": "i", "factors": [null, 16], "out": ["i0", "i1"]},
  {"op": "split", "loop": "j", "factors": [null, 16], "out": ["j0", "j1"]},
  {"op": "split", "loop": "k", "factors": [null, 8], "out": ["k0", "k1"]},
  {"op": "reorder", "loops": ["i0", "j0", "k0", "i1", "j1", "k1"]},
  {"op": "bind", "loop": "i0", "thread": "blockIdx.y"},
  {"op": "bind", "loop": "j0", "thread": "blockIdx.x"}
]
)";

TEST(Trace, IssueTraceReplaysAndPrintsItself) {
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  sch.replay(kIssueTrace);
  EXPECT_EQ(sch.trace().to_json(), kIssueTrace);
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    for i0 in T.thread_binding(4, thread="blockIdx.y"):
        for j0 in T.thread_binding(5, thread="blockIdx.x"):
            for k0, i1, j1, k1 in T.grid(6, 16, 16, 8):
                with T.block("C"):
                    vi = T.axis.spatial(64, i0 * 16 + i1)
                    vj = T.axis.spatial(80, j0 * 16 + j1)
                    vk = T.axis.reduce(48, k0 * 8 + k1)
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
}

TEST(Trace, RecordedByHandMatchesReplay) {
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  tile_like_the_issue(sch, sch.get_block("C"));
  EXPECT_EQ(sch.trace().to_json(), kIssueTrace);
  Schedule again = make_schedule(f);
  again.replay(kIssueTrace);
  EXPECT_TRUE(structurally_equal_with_diff(again.func(), sch.func(), "replayed", "recorded"));
}

TEST(Trace, EveryInstructionRoundTrips) {
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  BlockRef c = sch.get_block("C");
  auto l = sch.get_loops(c);
  sch.get_child_blocks(l[0]);
  sch.get_producers(c);
  sch.get_consumers(c);
  auto t = sch.tile({l[0], l[1]}, {{nullopt, 8}, {4, nullopt}});
  LoopRef fused = sch.fuse({t[0][0], t[1][0]});
  sch.bind(fused, "blockIdx.x");
  LoopRef u = sch.add_unit_loop(c);
  sch.annotate(u, "pragma_unroll_explicit", false);
  sch.annotate(c, "stage", ir::AnnValue::List{0, ir::AnnValue("x"), 1.5});
  sch.unannotate(u, "pragma_unroll_explicit");
  sch.unroll(u);
  sch.parallel(t[0][1]);
  auto ks = sch.split(l[2], {nullopt, 16});
  sch.vectorize(t[1][1]);
  (void)ks;
  check_schedule(f, sch, nullptr);
  // JSON text -> Trace -> JSON text is the identity.
  EXPECT_EQ(Trace::from_json(sch.trace().to_json()).to_json(), sch.trace().to_json());
}

TEST(Trace, EmptyTrace) {
  Trace t = Trace::from_json("[]");
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.to_json(), "[]\n");
}

void expect_trace_error(const char *json, const std::string &fragment) {
  Schedule sch = make_schedule(parse(kMatmul));
  ir::PrimFunc before = sch.func();
  try {
    sch.replay(json);
    ADD_FAILURE() << "expected an error containing '" << fragment << "'";
  } catch (const ScheduleError &e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(TraceError, BadJson) {
  expect_trace_error("[{", "trace is not valid JSON");
  expect_trace_error(R"({"op": "split"})", "a trace must be a JSON list of instructions");
  expect_trace_error(R"([1])", "trace instruction 0 (?): an instruction must be a JSON object");
  expect_trace_error(R"([{"loop": "i"}])", "trace instruction 0 (?): 'op' must be a string");
  expect_trace_error(R"([{"op": "get_block", "name": "C", "out": "C"}, {"op": "frobnicate"}])",
                     "trace instruction 1 (frobnicate): unknown op 'frobnicate'");
}

TEST(TraceError, BadFields) {
  std::string head = R"([{"op": "get_block", "name": "C", "out": "C"},
                        {"op": "get_loops", "block": "C", "out": ["i", "j", "k"]},)";
  expect_trace_error((head + R"({"op": "split", "loop": "i", "factors": "16"}])").c_str(),
                     "trace instruction 2 (split): 'factors' must be a list of integers or null");
  expect_trace_error((head + R"({"op": "split", "loop": "i", "factors": [null, 1.5]}])").c_str(),
                     "trace instruction 2 (split): 'factors' must be a list of integers or null");
  expect_trace_error((head + R"({"op": "split", "loop": "q", "factors": [null, 2]}])").c_str(),
                     "trace instruction 2 (split): 'loop' names 'q', which no earlier instruction defines");
  expect_trace_error((head + R"({"op": "split", "loop": "C", "factors": [null, 2]}])").c_str(),
                     "'loop' names 'C', which is a block, not a loop");
  expect_trace_error((head + R"({"op": "bind", "loop": "i"}])").c_str(), "trace instruction 2 (bind): 'thread' is missing");
  expect_trace_error(R"([{"op": "get_block", "name": "C", "out": "C"},
                         {"op": "get_loops", "block": "C", "out": ["i", "j"]}])",
                     "trace instruction 1 (get_loops): 'out' lists 2 names but there are 3 loops");
  expect_trace_error((head + R"({"op": "annotate", "loop": "i", "key": "a", "value": null}])").c_str(),
                     "'value' must be a bool, number, string, list or dictionary");
}

TEST(TraceError, PrimitiveFailureNamesTheInstruction) {
  std::string json = R"([{"op": "get_block", "name": "C", "out": "C"},
                        {"op": "get_loops", "block": "C", "out": ["i", "j", "k"]},
                        {"op": "split", "loop": "i", "factors": [8, 4]}])";
  expect_trace_error(json.c_str(),
                     "trace instruction 2 (split): schedule primitive 'split' failed: split factors multiply to 32 "
                     "but loop 'i' has extent 64");
  // An op nobody registered: a clear error, before anything runs.
  expect_trace_error(R"([{"op": "cache_reed", "block": "C", "buffer_index": 0, "scope": "shared", "out": "AS"}])",
                     "trace instruction 0 (cache_reed): unknown op 'cache_reed'");
  // A handle name that no earlier instruction defined.
  expect_trace_error(R"([{"op": "cache_read", "block": "C", "buffer_index": 0, "scope": "shared", "out": "AS"}])",
                     "trace instruction 0 (cache_read): 'block' names 'C', which no earlier instruction defines");
}

}  // namespace
}  // namespace tessera::test
