//===- tessera/schedule/Trace.h - Recorded, replayable schedules -----------===//
//
// A Trace is the list of calls made on a Schedule, one JSON object per call.
// Inputs and outputs are named by readable names: a block by its name, a loop
// by its loop variable's name (unique within the function, see Schedule.h):
//
//   [
//     {"op": "get_block", "name": "C", "out": "C"},
//     {"op": "get_loops", "block": "C", "out": ["i", "j", "k"]},
//     {"op": "split", "loop": "i", "factors": [null, 16], "out": ["i0", "i1"]},
//     {"op": "reorder", "loops": ["i0", "j0", "k0", "i1", "j1", "k1"]},
//     {"op": "bind", "loop": "i0", "thread": "blockIdx.y"},
//     {"op": "fuse", "loops": ["i1", "j1"], "out": "f"},
//     {"op": "annotate", "loop": "k0", "key": "software_pipeline_stage", "value": [0, 0, 1]}
//   ]
//
// Replay walks the list with a table from names to handles: "out" binds names
// (rebinding a name replaces the old entry), inputs look names up. The "out"
// names of split/fuse/tile/add_unit_loop are passed to the primitive as the
// new loops' names, so a replayed trace reproduces the function exactly. An
// unknown op or a bad field is a TraceError naming the instruction and field:
//   trace instruction 3 (split): 'factors' must be a list of integers or null
// and an error raised by a primitive during replay gets the same prefix.
//
// Each primitive registers how to replay its instruction, at the end of its
// own .cpp file (register_instruction); the Schedule method that performs it
// records the JSON object.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/schedule/Schedule.h"

namespace tessera::schedule {

/// An instruction: a JSON object whose keys keep their order ("op" first).
using Json = nlohmann::ordered_json;

class Trace {
 public:
  const std::vector<Json> &instructions() const { return insts_; }
  size_t size() const { return insts_.size(); }
  bool empty() const { return insts_.empty(); }
  void append(Json inst) { insts_.push_back(std::move(inst)); }
  /// Drops the instructions after the first `n` (used to roll back).
  void truncate(size_t n) { insts_.resize(n); }

  /// The JSON text: a list with one instruction per line, in the spacing shown
  /// above (`": "` after keys, `", "` between items).
  std::string to_json() const;
  /// One instruction (or any JSON value) in that spacing, on one line.
  static std::string dump(const Json &value);

  /// Reads a trace. Requires a JSON list of objects, each with a string "op"
  /// naming a registered instruction; anything else is a TraceError.
  static Trace from_json(std::string_view text);

  /// Replays every instruction on `sch`. Errors name the instruction
  /// ("trace instruction 3 (split): ..."); the instructions before the
  /// failing one stay applied.
  void apply(Schedule &sch) const;

 private:
  std::vector<Json> insts_;
};

/// What an instruction's replay function sees: the instruction, the schedule
/// and the name table, with typed readers that raise TraceErrors naming the
/// instruction and field.
class ReplayContext {
 public:
  ReplayContext(Schedule &sch, std::map<std::string, BlockOrLoop> &names, size_t index, const Json &inst)
      : sch(sch), names_(names), index_(index), inst_(inst) {}
  Schedule &sch;
  const Json &inst() const { return inst_; }

  [[noreturn]] void fail(std::string_view field, const std::string &message) const;
  bool has(std::string_view field) const;
  const Json &field(std::string_view field) const;
  std::string string(std::string_view field) const;
  int64_t integer(std::string_view field) const;
  std::vector<std::string> strings(std::string_view field) const;
  LoopRef loop(std::string_view field) const;
  BlockRef block(std::string_view field) const;
  std::vector<LoopRef> loops(std::string_view field) const;
  /// The handle in "block" or "loop", whichever the instruction has.
  BlockOrLoop block_or_loop() const;
  /// Binds `name` to `handle` for the instructions that follow.
  void bind(const std::string &name, const BlockOrLoop &handle);

 private:
  BlockOrLoop lookup(std::string_view field, const std::string &name) const;
  std::map<std::string, BlockOrLoop> &names_;
  size_t index_;
  const Json &inst_;
};

using ReplayFn = void (*)(ReplayContext &);
/// Registers the replay of instruction `op`; returns true (for static initialisers).
bool register_instruction(std::string_view op, ReplayFn fn);
/// The replay function of `op`, or nullptr.
ReplayFn find_instruction(std::string_view op);

/// The JSON form of a handle in an instruction: its name.
Json to_json(const BlockOrLoop &h);
Json to_json(const std::vector<LoopRef> &loops);
Json to_json(const std::vector<BlockRef> &blocks);

}  // namespace tessera::schedule
