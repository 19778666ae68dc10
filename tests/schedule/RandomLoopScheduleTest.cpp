//===- RandomLoopScheduleTest.cpp - Random loop schedules keep the answer --===//
//
// Applies random sequences of split/fuse/reorder/bind/vectorize/unroll/parallel
// to a few programs. A request that is illegal must throw a ScheduleError and
// leave the schedule untouched; whatever succeeds must keep the interpreter's
// answer and replay from its trace to the same function. An InternalError (the
// verifier rejecting a result) fails the test.
//
//===----------------------------------------------------------------------===//
#include <random>

#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;

class RandomScheduler {
 public:
  RandomScheduler(Schedule &sch, uint64_t seed) : sch_(sch), rng_(seed) {}

  /// One random step; true when it changed the function.
  bool step() {
    std::vector<BlockRef> blocks = sch_.get_child_blocks(sch_.get_block("root"));
    BlockRef block = blocks[pick(blocks.size())];
    std::vector<LoopRef> loops = sch_.get_loops(block);
    if (loops.empty()) return false;
    LoopRef loop = loops[pick(loops.size())];
    ir::PrimFunc before = sch_.func();
    size_t trace = sch_.trace().size();
    try {
      switch (pick(7)) {
        case 0: sch_.split(loop, random_factors()); break;
        case 1: {
          size_t k = pick(loops.size());
          if (k + 1 >= loops.size()) return false;
          sch_.fuse({loops[k], loops[k + 1]});
          break;
        }
        case 2: {
          std::vector<LoopRef> some = loops;
          std::shuffle(some.begin(), some.end(), rng_);
          some.resize(1 + pick(some.size()));
          sch_.reorder(some);
          break;
        }
        case 3: {
          static const char *kTags[] = {"blockIdx.x", "blockIdx.y", "threadIdx.x", "threadIdx.y", "vthread"};
          sch_.bind(loop, kTags[pick(5)]);
          break;
        }
        case 4: sch_.vectorize(loop); break;
        case 5: sch_.unroll(loop); break;
        default: sch_.parallel(loop); break;
      }
      ++applied;
      return true;
    } catch (const ScheduleError &) {
      ++rejected;
      EXPECT_TRUE(sch_.func().same_as(before)) << "a failed primitive changed the function";
      EXPECT_EQ(sch_.trace().size(), trace) << "a failed primitive changed the trace";
      return false;
    }
  }

  int applied = 0, rejected = 0;

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  std::vector<std::optional<int64_t>> random_factors() {
    static const int64_t kFactors[] = {1, 2, 3, 4, 5, 7, 8, 16};
    size_t n = 2 + pick(2);
    std::vector<std::optional<int64_t>> f;
    for (size_t i = 0; i < n; ++i) f.push_back(kFactors[pick(8)]);
    f[pick(n)] = std::nullopt;
    return f;
  }

  Schedule &sch_;
  std::mt19937_64 rng_;
};

struct Program {
  const char *name;
  ir::PrimFunc func;
};

std::vector<Program> programs() {
  return {{"elementwise", parse(kElementwise)},
          {"matmul", parse(kMatmul)},
          {"row_sum", parse(kRowSum)},
          {"two_stage", parse(kTwoStage)},
          {"softmax", softmax()}};
}

TEST(RandomLoopSchedule, AnswerNeverChangesAndTraceReplays) {
  int applied = 0, rejected = 0;
  for (const Program &p : programs()) {
    for (uint64_t seed = 0; seed < 8; ++seed) {
      SCOPED_TRACE(std::string(p.name) + " seed " + std::to_string(seed));
      Schedule sch = make_schedule(p.func);
      RandomScheduler r(sch, seed * 7919 + 1);
      for (int i = 0; i < 10; ++i) r.step();
      applied += r.applied;
      rejected += r.rejected;
      RandomRuns runs = run_on_same_random_args(p.func, sch.func(), {}, seed);
      EXPECT_TRUE(all_close(runs.a, runs.b, 1e-4, 1e-5)) << script::print(sch.func());
      EXPECT_TRUE(replays(p.func, sch));
    }
  }
  // Both paths were exercised.
  EXPECT_GT(applied, 100);
  EXPECT_GT(rejected, 20);
}

}  // namespace
}  // namespace tessera::test
