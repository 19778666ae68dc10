//===- primitive/AddUnitLoop.cpp - add_unit_loop ---------------------------===//
//
// Wraps a block or loop in `for u in range(1)`: a loop to hang later
// primitives on (bind a block that has no loops, blockize, compute_at). On
// the root block it wraps the root's body (the root must stay the root).
//
//===----------------------------------------------------------------------===//
#include "../Primitive.h"

namespace tessera::schedule::detail {

using namespace ir;

LoopRef add_unit_loop(State &st, const BlockOrLoop &target, const std::string &name) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath p = find(st, target, "add_unit_loop");
  // The root block: wrap its body.
  Stmt wrapped = p.ancestors.empty() ? p.stmt.as<Block>()->body : p.stmt;

  // Step 2. Build new loops
  std::set<std::string> taken = loop_names(st.func);
  Var u(fresh_name(taken, name.empty() ? "u" : name), DataType::int32());
  Stmt loop = For::make(u, i32(0), i32(1), ForKind::Serial, wrapped);

  // Step 3. Replace (the only mutation)
  replace(st, wrapped, loop);
  return LoopRef{u};
}

Json encode_add_unit_loop(const BlockOrLoop &target, const LoopRef &out) {
  Json j{{"op", "add_unit_loop"}};
  j[std::holds_alternative<BlockRef>(target) ? "block" : "loop"] = name_of(target);
  j["out"] = out.name();
  return j;
}

namespace {

void replay_add_unit_loop(ReplayContext &ctx) {
  std::string name = ctx.has("out") ? ctx.string("out") : "";
  LoopRef out = ctx.sch.add_unit_loop(ctx.block_or_loop(), name);
  ctx.bind(name.empty() ? out.name() : name, out);
}

[[maybe_unused]] const bool kRegistered = register_instruction("add_unit_loop", replay_add_unit_loop);

}  // namespace

}  // namespace tessera::schedule::detail
