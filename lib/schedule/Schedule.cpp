//===- lib/schedule/Schedule.cpp - Handles, lookups, the transaction -------===//
//
// Each public primitive is a transaction: resolve handles, run the detail::
// function on the state, record the trace entry, verify. Whatever throws on
// the way restores the function and the trace as they were (the primitives
// themselves check before they mutate; the restore also covers composites and
// the verifier), and a ScheduleError gets the function attached for its
// detailed rendering.
//
//===----------------------------------------------------------------------===//
#include "tessera/schedule/Schedule.h"

#include <unordered_set>

#include "Dump.h"
#include "Primitive.h"
#include "Dataflow.h"  // cache_read, compute_at, decompose_reduction, ...
#include "Layout.h"    // pad_einsum, reindex, transform_layout, transform_block_layout
#include "State.h"
#include "tessera/ir/Verifier.h"
#include "tessera/script/Printer.h"

namespace tessera::schedule {

using namespace ir;
using detail::quoted;

namespace {

template <typename F>
auto transact(detail::State &st, std::string_view primitive, F &&body) {
  PrimFunc saved = st.func;
  size_t trace_size = st.trace.size();
  auto restore = [&] {
    st.func = saved;
    st.trace.truncate(trace_size);
  };
  try {
    auto result = body();
    if (st.options.verify && !st.func.same_as(saved)) {
      std::vector<std::string> problems = verify(st.func);
      if (!problems.empty()) {
        std::string msg = "schedule primitive '" + std::string(primitive) +
                          "' produced ill-formed IR (this is a bug in tessera):";
        for (const std::string &p : problems) msg += "\n  " + p;
        msg += "\n" + script::print(st.func);
        restore();
        throw InternalError(msg);
      }
    }
    detail::dump_after(st, primitive, saved);  // TESSERA_DUMP=schedule
    return result;
  } catch (ScheduleError &e) {
    restore();
    e.attach(saved, st.options.error_render_level);
    detail::dump_failure(primitive, e);
    throw;
  } catch (...) {
    restore();
    throw;
  }
}

}  // namespace

ir::PrimFunc unique_block_names(const ir::PrimFunc &f) {
  std::map<std::string, std::vector<std::string>> ambiguous;
  return detail::uniquify_block_names(f, ambiguous);
}

std::string name_of(const BlockOrLoop &h) {
  if (const auto *b = std::get_if<BlockRef>(&h)) return b->name;
  return std::get<LoopRef>(h).name();
}

Schedule::Schedule(PrimFunc func, ScheduleOptions options) : state_(std::make_unique<detail::State>()) {
  TESSERA_ICHECK(func.defined()) << "Schedule of an undefined function";
  // Blocks are looked up by name: repeated and empty names (which TVM allows)
  // get distinct ones, deterministically, so a trace replays on the original.
  state_->func = detail::uniquify_loop_names(detail::uniquify_block_names(func, state_->ambiguous_block_names));
  state_->options = options;
}

Schedule::Schedule(const Schedule &o) : state_(std::make_unique<detail::State>(*o.state_)) {}
Schedule &Schedule::operator=(const Schedule &o) {
  if (this != &o) state_ = std::make_unique<detail::State>(*o.state_);
  return *this;
}
Schedule::Schedule(Schedule &&) noexcept = default;
Schedule &Schedule::operator=(Schedule &&) noexcept = default;
Schedule::~Schedule() = default;

const PrimFunc &Schedule::func() const { return state_->func; }
const Trace &Schedule::trace() const { return state_->trace; }
const ScheduleOptions &Schedule::options() const { return state_->options; }

//===----------------------------------------------------------------------===//
// Lookup
//===----------------------------------------------------------------------===//

BlockRef Schedule::get_block(const std::string &name) {
  return transact(*state_, "get_block", [&] {
    if (auto it = state_->ambiguous_block_names.find(name); it != state_->ambiguous_block_names.end()) {
      std::string names;
      for (const std::string &n : it->second) names += (names.empty() ? "" : ", ") + quoted(n);
      throw BlockNotFoundError("get_block", "several blocks are named " + quoted(name) +
                                                "; the schedule calls them " + names);
    }
    std::vector<Stmt> blocks = detail::blocks_under(state_->func.body());
    blocks.insert(blocks.begin(), state_->func.body());
    std::string names;
    for (const Stmt &s : blocks) {
      const Block *b = s.as<Block>();
      if (b->name == name) {
        state_->trace.append(Json{{"op", "get_block"}, {"name", name}, {"out", name}});
        return BlockRef{name};
      }
      names += (names.empty() ? "" : ", ") + quoted(b->name);
    }
    throw BlockNotFoundError("get_block", "no block named " + quoted(name) + " in function " +
                                              quoted(state_->func.name()) + "; the blocks are " +
                                              (names.empty() ? "none" : names));
  });
}

std::vector<LoopRef> Schedule::get_loops(const BlockRef &block) {
  return transact(*state_, "get_loops", [&] {
    detail::StmtPath p = detail::find_block(*state_, block, "get_loops");
    std::vector<LoopRef> loops;
    for (auto it = p.ancestors.rbegin(); it != p.ancestors.rend() && !it->is<Block>(); ++it)
      if (const For *f = it->as<For>()) loops.insert(loops.begin(), LoopRef{f->loop_var});
    state_->trace.append(Json{{"op", "get_loops"}, {"block", block.name}, {"out", to_json(loops)}});
    return loops;
  });
}

std::vector<BlockRef> Schedule::get_child_blocks(const BlockOrLoop &parent) {
  return transact(*state_, "get_child_blocks", [&] {
    detail::StmtPath p = detail::find(*state_, parent, "get_child_blocks");
    std::vector<BlockRef> out;
    for (const Stmt &s : detail::child_blocks(p.stmt)) out.push_back(BlockRef{s.as<Block>()->name});
    Json inst{{"op", "get_child_blocks"}};
    inst[std::holds_alternative<BlockRef>(parent) ? "block" : "loop"] = name_of(parent);
    inst["out"] = to_json(out);
    state_->trace.append(std::move(inst));
    return out;
  });
}

namespace {

bool touches(const std::vector<BufferRegion> &regions, const Buffer &b) {
  for (const BufferRegion &r : regions)
    if (r.buffer.same_as(b)) return true;
  return false;
}

/// Siblings of `block` in its scope that write what it reads (producers) or
/// read what it writes (consumers); producers come before it, consumers after.
std::vector<BlockRef> dataflow_neighbours(const detail::State &st, const BlockRef &block, bool producers,
                                          std::string_view primitive) {
  detail::StmtPath p = detail::find_block(st, block, primitive);
  const Block *self = p.block();
  std::vector<Stmt> siblings = detail::child_blocks(p.scope());
  std::vector<BlockRef> out;
  bool before = true;
  for (const Stmt &s : siblings) {
    if (s.same_as(p.stmt)) {
      before = false;
      continue;
    }
    if (before != producers) continue;
    const Block *o = s.as<Block>();
    bool related = false;
    const auto &ours = producers ? self->reads : self->writes;
    const auto &theirs = producers ? o->writes : o->reads;
    for (const BufferRegion &r : ours) related |= touches(theirs, r.buffer);
    if (related) out.push_back(BlockRef{o->name});
  }
  return out;
}

}  // namespace

std::vector<BlockRef> Schedule::get_producers(const BlockRef &block) {
  return transact(*state_, "get_producers", [&] {
    auto out = dataflow_neighbours(*state_, block, /*producers=*/true, "get_producers");
    state_->trace.append(Json{{"op", "get_producers"}, {"block", block.name}, {"out", to_json(out)}});
    return out;
  });
}

std::vector<BlockRef> Schedule::get_consumers(const BlockRef &block) {
  return transact(*state_, "get_consumers", [&] {
    auto out = dataflow_neighbours(*state_, block, /*producers=*/false, "get_consumers");
    state_->trace.append(Json{{"op", "get_consumers"}, {"block", block.name}, {"out", to_json(out)}});
    return out;
  });
}

Stmt Schedule::get(const BlockRef &block) const { return detail::find_block(*state_, block, "get").stmt; }
Stmt Schedule::get(const LoopRef &loop) const { return detail::find_loop(*state_, loop, "get").stmt; }

//===----------------------------------------------------------------------===//
// Primitives: resolve, run, record (the detail:: functions are in primitive/)
//===----------------------------------------------------------------------===//

std::vector<LoopRef> Schedule::split(const LoopRef &loop, const std::vector<std::optional<int64_t>> &factors,
                                     const std::vector<std::string> &names) {
  return transact(*state_, "split", [&] {
    auto out = detail::split(*state_, loop, factors, names);
    state_->trace.append(detail::encode_split(loop, factors, out));
    return out;
  });
}

LoopRef Schedule::fuse(const std::vector<LoopRef> &loops, const std::string &name) {
  return transact(*state_, "fuse", [&] {
    LoopRef out = detail::fuse(*state_, loops, name);
    state_->trace.append(detail::encode_fuse(loops, out));
    return out;
  });
}

void Schedule::reorder(const std::vector<LoopRef> &loops) {
  transact(*state_, "reorder", [&] {
    detail::reorder(*state_, loops);
    state_->trace.append(detail::encode_reorder(loops));
    return 0;
  });
}

std::vector<std::vector<LoopRef>> Schedule::tile(const std::vector<LoopRef> &loops,
                                                 const std::vector<std::vector<std::optional<int64_t>>> &factors,
                                                 const std::vector<std::vector<std::string>> &names) {
  return transact(*state_, "tile", [&] {
    auto out = detail::tile(*state_, loops, factors, names);
    state_->trace.append(detail::encode_tile(loops, factors, out));
    return out;
  });
}

LoopRef Schedule::add_unit_loop(const BlockOrLoop &target, const std::string &name) {
  return transact(*state_, "add_unit_loop", [&] {
    LoopRef out = detail::add_unit_loop(*state_, target, name);
    state_->trace.append(detail::encode_add_unit_loop(target, out));
    return out;
  });
}

void Schedule::bind(const LoopRef &loop, const std::string &thread) {
  transact(*state_, "bind", [&] {
    detail::bind(*state_, loop, thread);
    state_->trace.append(detail::encode_bind(loop, thread));
    return 0;
  });
}

void Schedule::parallel(const LoopRef &loop) {
  transact(*state_, "parallel", [&] {
    detail::parallel(*state_, loop);
    state_->trace.append(detail::encode_for_kind("parallel", loop));
    return 0;
  });
}

void Schedule::vectorize(const LoopRef &loop) {
  transact(*state_, "vectorize", [&] {
    detail::vectorize(*state_, loop);
    state_->trace.append(detail::encode_for_kind("vectorize", loop));
    return 0;
  });
}

void Schedule::unroll(const LoopRef &loop) {
  transact(*state_, "unroll", [&] {
    detail::unroll(*state_, loop);
    state_->trace.append(detail::encode_for_kind("unroll", loop));
    return 0;
  });
}

void Schedule::annotate(const BlockOrLoop &target, const std::string &key, const AnnValue &value) {
  transact(*state_, "annotate", [&] {
    detail::annotate(*state_, target, key, value);
    state_->trace.append(detail::encode_annotate(target, key, value));
    return 0;
  });
}

void Schedule::unannotate(const BlockOrLoop &target, const std::string &key) {
  transact(*state_, "unannotate", [&] {
    detail::unannotate(*state_, target, key);
    state_->trace.append(detail::encode_unannotate(target, key));
    return 0;
  });
}

//===----------------------------------------------------------------------===//
// Data flow: caching, compute location, reduction init (detail:: in Dataflow.h)
//===----------------------------------------------------------------------===//

BlockRef Schedule::cache_read(const BlockRef &block, int64_t read_buffer_index, const std::string &scope,
                              const std::string &name) {
  return transact(*state_, "cache_read", [&] {
    BlockRef out = detail::cache_read(*state_, block, read_buffer_index, scope, name);
    state_->trace.append(detail::encode_cache("cache_read", block, read_buffer_index, scope, out));
    return out;
  });
}

BlockRef Schedule::cache_write(const BlockRef &block, int64_t write_buffer_index, const std::string &scope,
                               const std::string &name) {
  return transact(*state_, "cache_write", [&] {
    BlockRef out = detail::cache_write(*state_, block, write_buffer_index, scope, name);
    state_->trace.append(detail::encode_cache("cache_write", block, write_buffer_index, scope, out));
    return out;
  });
}

void Schedule::set_scope(const BlockRef &block, int64_t write_buffer_index, const std::string &scope) {
  transact(*state_, "set_scope", [&] {
    detail::set_scope(*state_, block, write_buffer_index, scope);
    state_->trace.append(detail::encode_set_scope(block, write_buffer_index, scope));
    return 0;
  });
}

void Schedule::storage_align(const BlockRef &block, int64_t write_buffer_index, int64_t axis, int64_t factor,
                             int64_t offset) {
  transact(*state_, "storage_align", [&] {
    detail::storage_align(*state_, block, write_buffer_index, axis, factor, offset);
    state_->trace.append(detail::encode_storage_align(block, write_buffer_index, axis, factor, offset));
    return 0;
  });
}

void Schedule::compute_at(const BlockRef &block, const LoopRef &loop, bool preserve_unit_loops) {
  transact(*state_, "compute_at", [&] {
    detail::compute_at(*state_, block, loop, preserve_unit_loops);
    state_->trace.append(detail::encode_compute_at("compute_at", block, loop, preserve_unit_loops));
    return 0;
  });
}

void Schedule::reverse_compute_at(const BlockRef &block, const LoopRef &loop, bool preserve_unit_loops) {
  transact(*state_, "reverse_compute_at", [&] {
    detail::reverse_compute_at(*state_, block, loop, preserve_unit_loops);
    state_->trace.append(detail::encode_compute_at("reverse_compute_at", block, loop, preserve_unit_loops));
    return 0;
  });
}

void Schedule::compute_inline(const BlockRef &block) {
  transact(*state_, "compute_inline", [&] {
    detail::compute_inline(*state_, block);
    state_->trace.append(detail::encode_block_op("compute_inline", block));
    return 0;
  });
}

void Schedule::reverse_compute_inline(const BlockRef &block) {
  transact(*state_, "reverse_compute_inline", [&] {
    detail::reverse_compute_inline(*state_, block);
    state_->trace.append(detail::encode_block_op("reverse_compute_inline", block));
    return 0;
  });
}

BlockRef Schedule::decompose_reduction(const BlockRef &block, const LoopRef &loop, const std::string &name) {
  return transact(*state_, "decompose_reduction", [&] {
    BlockRef out = detail::decompose_reduction(*state_, block, loop, name);
    state_->trace.append(detail::encode_decompose_reduction(block, loop, out));
    return out;
  });
}

//===----------------------------------------------------------------------===//
// Reductions: rfactor (detail:: in primitive/RFactor.cpp)
//===----------------------------------------------------------------------===//

BlockRef Schedule::rfactor(const LoopRef &loop, int64_t factor_axis) {
  return transact(*state_, "rfactor", [&] {
    BlockRef out = detail::rfactor(*state_, loop, factor_axis);
    state_->trace.append(detail::encode_rfactor(loop, factor_axis, out));
    return out;
  });
}

//===----------------------------------------------------------------------===//
// Tensor intrinsics: blockize, tensorize (detail:: in Primitive.h)
//===----------------------------------------------------------------------===//

BlockRef Schedule::blockize(const LoopRef &loop, const std::string &name) {
  return transact(*state_, "blockize", [&] {
    BlockRef out = detail::blockize(*state_, loop, name);
    state_->trace.append(detail::encode_blockize(loop, out));
    return out;
  });
}

BlockRef Schedule::tensorize(const BlockOrLoop &target, const std::string &intrin) {
  return transact(*state_, "tensorize", [&] {
    BlockRef out = detail::tensorize(*state_, target, intrin);
    state_->trace.append(detail::encode_tensorize(target, intrin, out));
    return out;
  });
}

//===----------------------------------------------------------------------===//
// Layout: pad_einsum, reindex, transform_layout, transform_block_layout (detail:: in Layout.h)
//===----------------------------------------------------------------------===//

void Schedule::pad_einsum(const BlockRef &block, const std::vector<int64_t> &padding) {
  transact(*state_, "pad_einsum", [&] {
    detail::pad_einsum(*state_, block, padding);
    state_->trace.append(detail::encode_pad_einsum(block, padding));
    return 0;
  });
}

BlockRef Schedule::reindex(const BlockRef &block, int64_t buffer_index, bool is_write) {
  return transact(*state_, "reindex", [&] {
    BlockRef out = detail::reindex(*state_, block, buffer_index, is_write);
    state_->trace.append(detail::encode_reindex(block, buffer_index, is_write, out));
    return out;
  });
}

void Schedule::transform_layout(const BlockRef &block, int64_t buffer_index, bool is_write, const IndexMap &index_map) {
  transact(*state_, "transform_layout", [&] {
    detail::transform_layout(*state_, block, buffer_index, is_write, index_map);
    state_->trace.append(detail::encode_transform_layout(block, buffer_index, is_write, index_map));
    return 0;
  });
}

void Schedule::transform_block_layout(const BlockRef &block, const IndexMap &index_map) {
  transact(*state_, "transform_block_layout", [&] {
    detail::transform_block_layout(*state_, block, index_map);
    state_->trace.append(detail::encode_transform_block_layout(block, index_map));
    return 0;
  });
}

void Schedule::replay(std::string_view json) { Trace::from_json(json).apply(*this); }

//===----------------------------------------------------------------------===//
// Trace registration of the lookups
//===----------------------------------------------------------------------===//

namespace {

/// Binds the "out" list of names to `handles`, which must match in number.
template <typename H>
void bind_outputs(ReplayContext &ctx, const std::vector<H> &handles, std::string_view what) {
  std::vector<std::string> names = ctx.strings("out");
  if (names.size() != handles.size())
    ctx.fail("out", "lists " + std::to_string(names.size()) + " names but there are " +
                        std::to_string(handles.size()) + " " + std::string(what));
  for (size_t i = 0; i < names.size(); ++i) ctx.bind(names[i], handles[i]);
}

void replay_get_block(ReplayContext &ctx) {
  BlockRef b = ctx.sch.get_block(ctx.string("name"));
  ctx.bind(ctx.has("out") ? ctx.string("out") : b.name, b);
}
void replay_get_loops(ReplayContext &ctx) { bind_outputs(ctx, ctx.sch.get_loops(ctx.block("block")), "loops"); }
void replay_get_child_blocks(ReplayContext &ctx) {
  bind_outputs(ctx, ctx.sch.get_child_blocks(ctx.block_or_loop()), "child blocks");
}
void replay_get_producers(ReplayContext &ctx) {
  bind_outputs(ctx, ctx.sch.get_producers(ctx.block("block")), "producers");
}
void replay_get_consumers(ReplayContext &ctx) {
  bind_outputs(ctx, ctx.sch.get_consumers(ctx.block("block")), "consumers");
}

[[maybe_unused]] const bool kRegistered = register_instruction("get_block", replay_get_block) &&
                                          register_instruction("get_loops", replay_get_loops) &&
                                          register_instruction("get_child_blocks", replay_get_child_blocks) &&
                                          register_instruction("get_producers", replay_get_producers) &&
                                          register_instruction("get_consumers", replay_get_consumers);

}  // namespace

}  // namespace tessera::schedule
