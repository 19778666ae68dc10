//===- lib/schedule/Dump.h - TESSERA_DUMP=schedule (private) ---------------===//
//
// Observability (STYLE.md 3.7): with TESSERA_DUMP containing `schedule`
// (a comma-separated list: TESSERA_DUMP=schedule,lower), every primitive
// prints the function after it to stderr, Halide LoweringLogger style:
//
//   === schedule: after split {"op": "split", "loop": "i", "factors": [null, 32], "out": ["i_0", "i_1"]}
//   @T.prim_func
//   def main(...): ...
//
// "(unchanged)" replaces the function when the primitive left its text as it
// was, and a failed primitive prints its brief. Lookups (get_block,
// get_loops, ...) print nothing. The variable is read at every primitive, so
// tests can set it (and capture stderr).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string_view>

#include "State.h"

namespace tessera::schedule::detail {

/// True when TESSERA_DUMP lists `area` ("schedule", "lower", ...).
bool dump_enabled(std::string_view area);

/// After a successful primitive: prints the last trace instruction and the
/// function, or "(unchanged)" when it prints as `before` does.
void dump_after(const State &st, std::string_view primitive, const ir::PrimFunc &before);
/// After a failed primitive: prints its brief (the function is unchanged).
void dump_failure(std::string_view primitive, const ScheduleError &e);

}  // namespace tessera::schedule::detail
