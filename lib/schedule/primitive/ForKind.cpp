//===- primitive/ForKind.cpp - bind, parallel, vectorize, unroll -----------===//
//
// These change only a loop's kind (and thread tag): the loop keeps its
// variable, so its handle stays valid, and the interpreter still runs it
// serially. Which loops may change kind (TVM's rule):
//   - parallel and vectorize need a data-parallel loop: no block under it may
//     bind a reduction or opaque iter var to it, since the iterations must be
//     independent;
//   - bind to blockIdx/vthread likewise (blocks cannot cooperate on a
//     reduction); bind to threadIdx may take a reduction loop, which lowering
//     turns into a cross-thread reduction; bound inside (or around) a loop on
//     the same axis, the nest must compute serially what it computes as one
//     thread on the GPU (analysis/ThreadBindings.h: a copy, not an update);
//   - unroll takes any serial loop.
//
//===----------------------------------------------------------------------===//
#include "../Primitive.h"

#include <array>

#include "tessera/analysis/ThreadBindings.h"
#include "tessera/ir/Functor.h"

namespace tessera::schedule::detail {

using namespace ir;

namespace {

//===----------------------------------------------------------------------===//
// 1-2. Errors and checks
//===----------------------------------------------------------------------===//

constexpr std::array<std::string_view, 10> kThreadTags = {
    "blockIdx.x", "blockIdx.y",  "blockIdx.z",  "threadIdx.x", "threadIdx.y",
    "threadIdx.z", "vthread", "vthread.x", "vthread.y",   "vthread.z"};

void check_thread_tag(const StmtPath &p, const std::string &thread) {
  for (std::string_view t : kThreadTags)
    if (t == thread) return;
  std::string all;
  for (std::string_view t : kThreadTags) all += (all.empty() ? "" : ", ") + std::string(t);
  throw InvalidThreadTagError("bind",
                              "cannot bind loop " + loop_name(*p.loop()) + " to " + quoted(thread) +
                                  ": the thread axes are " + all,
                              "", {p.stmt});
}

/// Whether the loop at `p` is inside, or around, a loop bound to `thread`.
bool nests_on_axis(const StmtPath &p, const std::string &thread) {
  auto on_axis = [&](const Stmt &s) {
    const auto *f = s.as<For>();
    return f && f->for_kind == ForKind::ThreadBinding && f->thread_tag == thread;
  };
  for (const Stmt &a : p.ancestors)
    if (on_axis(a)) return true;
  bool below = false;
  pre_order_visit(p.loop()->body, nullptr, [&](const Stmt &s) { below = below || on_axis(s); });
  return below;
}

/// Step 3 of every kind change.
void set_kind(State &st, const StmtPath &p, ForKind kind, std::string thread = "") {
  replace(st, p.stmt, loop_with_kind(*p.loop(), kind, std::move(thread)));
}

}  // namespace

//===----------------------------------------------------------------------===//
// 3. The primitives
//===----------------------------------------------------------------------===//

void bind(State &st, const LoopRef &loop, const std::string &thread) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath p = find_loop(st, loop, "bind");
  check_thread_tag(p, thread);
  check_loop_serial("bind", p);
  if (thread.rfind("threadIdx", 0) != 0) check_loop_data_parallel("bind", p, "it cannot be bound to " + thread);
  // Steps 2-3. Build the loop; inside (or around) a loop bound to the same
  // axis it must mean on the GPU what it means serially (ThreadBindings.h).
  Stmt bound = loop_with_kind(*p.loop(), ForKind::ThreadBinding, thread);
  if (nests_on_axis(p, thread) && !analysis::nested_thread_binding_refusal(st.func))
    if (auto why = analysis::nested_thread_binding_refusal(
            st.func.with_body(replace_in(st.func.body(), {{p.stmt.get(), bound}}))))
      throw NestedThreadBindingError("bind", "cannot bind loop " + loop_name(*p.loop()) + " to " + quoted(thread) +
                                                 ": " + *why,
                                     "", {p.stmt});
  replace(st, p.stmt, bound);
}

void parallel(State &st, const LoopRef &loop) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath p = find_loop(st, loop, "parallel");
  check_loop_serial("parallel", p);
  check_loop_data_parallel("parallel", p);
  // Steps 2-3. Build the loop and replace it.
  set_kind(st, p, ForKind::Parallel);
}

void vectorize(State &st, const LoopRef &loop) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath p = find_loop(st, loop, "vectorize");
  check_loop_serial("vectorize", p);
  check_loop_data_parallel("vectorize", p);
  // Steps 2-3. Build the loop and replace it.
  set_kind(st, p, ForKind::Vectorized);
}

void unroll(State &st, const LoopRef &loop) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath p = find_loop(st, loop, "unroll");
  check_loop_serial("unroll", p);
  // Steps 2-3. Build the loop and replace it.
  set_kind(st, p, ForKind::Unrolled);
}

//===----------------------------------------------------------------------===//
// 4. Trace
//===----------------------------------------------------------------------===//

Json encode_bind(const LoopRef &loop, const std::string &thread) {
  return Json{{"op", "bind"}, {"loop", loop.name()}, {"thread", thread}};
}

Json encode_for_kind(std::string_view op, const LoopRef &loop) {
  return Json{{"op", std::string(op)}, {"loop", loop.name()}};
}

namespace {

void replay_bind(ReplayContext &ctx) { ctx.sch.bind(ctx.loop("loop"), ctx.string("thread")); }
void replay_parallel(ReplayContext &ctx) { ctx.sch.parallel(ctx.loop("loop")); }
void replay_vectorize(ReplayContext &ctx) { ctx.sch.vectorize(ctx.loop("loop")); }
void replay_unroll(ReplayContext &ctx) { ctx.sch.unroll(ctx.loop("loop")); }

[[maybe_unused]] const bool kRegistered =
    register_instruction("bind", replay_bind) && register_instruction("parallel", replay_parallel) &&
    register_instruction("vectorize", replay_vectorize) && register_instruction("unroll", replay_unroll);

}  // namespace

}  // namespace tessera::schedule::detail
