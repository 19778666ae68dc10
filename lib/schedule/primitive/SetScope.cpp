//===- primitive/SetScope.cpp - set_scope and storage_align ----------------===//
//
// set_scope changes where an allocated buffer lives: buffers are immutable
// values, so the buffer is replaced everywhere (allocation, loads, stores,
// regions) by a copy in the new scope.
//
// storage_align does not change the buffer: it records the request on the
// block that writes the buffer, as TVM does, in the block annotation
//   T.block_attr({"buffer_dim_align": [[buffer_index, axis, factor, offset], ...]})
// where buffer_index is the position in the block's T.writes. Lowering pads
// dimension `axis` so that its stride is `factor * k + offset` for the
// smallest fitting k (e.g. a 32x32 float tile in shared memory, factor 32,
// offset 1: rows 33 floats apart, no bank conflicts on column access). The
// interpreter ignores it: the answer never depends on padding.
//
//===----------------------------------------------------------------------===//
#include "../Dataflow.h"

namespace tessera::schedule::detail {

using namespace ir;

namespace {

constexpr const char *kDimAlign = "buffer_dim_align";

void check_align(const StmtPath &bp, const Buffer &buf, int64_t axis, int64_t factor, int64_t offset) {
  std::string why;
  if (axis < 0 || axis >= buf.ndim())
    why = "axis " + std::to_string(axis) + " is out of range for the " + std::to_string(buf.ndim()) +
          "-dimensional buffer " + quoted(buf.name());
  else if (factor <= 0)
    why = "factor " + std::to_string(factor) + " is not positive";
  else if (offset < 0 || offset >= factor)
    why = "offset " + std::to_string(offset) + " is not in [0, " + std::to_string(factor) + ")";
  if (why.empty()) return;
  throw InvalidStorageAlignError("storage_align", "invalid storage_align of block " + quoted(bp.block()->name) +
                                                      ": " + why,
                                 "invalid storage_align of block {0}: " + why, {bp.stmt});
}

}  // namespace

void set_scope(State &st, const BlockRef &block, int64_t write_buffer_index, const std::string &scope) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath bp = find_block(st, block, "set_scope");
  Buffer buf = check_buffer_index("set_scope", bp, bp.block()->writes, write_buffer_index, "write").buffer;
  check_storage_scope("set_scope", bp, scope);
  if (is_param_buffer(st.func, buf))
    throw OutputBlockError("set_scope",
                           "cannot change the scope of " + quoted(buf.name()) + ": it is a parameter of function " +
                               quoted(st.func.name()),
                           "block {0} writes the parameter buffer " + quoted(buf.name()), {bp.stmt});
  if (buf.scope() == scope) return;  // nothing to do

  // Step 2. Build: the buffer replaced everywhere by its copy in `scope`.
  Stmt body = replace_buffer(st.func.body(), buf, buf.with_scope(scope));

  // Step 3. Replace (the only mutation)
  replace(st, st.func.body(), body);
}

void storage_align(State &st, const BlockRef &block, int64_t write_buffer_index, int64_t axis, int64_t factor,
                   int64_t offset) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath bp = find_block(st, block, "storage_align");
  const Block &b = *bp.block();
  Buffer buf = check_buffer_index("storage_align", bp, b.writes, write_buffer_index, "write").buffer;
  check_align(bp, buf, axis, factor, offset);

  // Step 2. Build: the annotation with this (buffer, axis) entry replaced.
  AnnValue::List entries;
  if (auto it = b.annotations.find(kDimAlign); it != b.annotations.end() && it->second.is_list())
    for (const AnnValue &e : it->second.as_list()) {
      bool same = e.is_list() && e.as_list().size() == 4 && e.as_list()[0] == AnnValue(write_buffer_index) &&
                  e.as_list()[1] == AnnValue(axis);
      if (!same) entries.push_back(e);
    }
  entries.push_back(AnnValue(AnnValue::List{write_buffer_index, axis, factor, offset}));
  Annotations anns = b.annotations;
  anns[kDimAlign] = AnnValue(std::move(entries));

  // Step 3. Replace (the only mutation)
  replace(st, bp.stmt, block_with_annotations(b, std::move(anns)));
}

//===----------------------------------------------------------------------===//
// Trace
//===----------------------------------------------------------------------===//

Json encode_set_scope(const BlockRef &block, int64_t index, const std::string &scope) {
  return Json{{"op", "set_scope"}, {"block", block.name}, {"buffer_index", index}, {"scope", scope}};
}

Json encode_storage_align(const BlockRef &block, int64_t index, int64_t axis, int64_t factor, int64_t offset) {
  return Json{{"op", "storage_align"}, {"block", block.name}, {"buffer_index", index},
              {"axis", axis},         {"factor", factor},     {"offset", offset}};
}

namespace {

void replay_set_scope(ReplayContext &ctx) {
  ctx.sch.set_scope(ctx.block("block"), ctx.integer("buffer_index"), ctx.string("scope"));
}

void replay_storage_align(ReplayContext &ctx) {
  ctx.sch.storage_align(ctx.block("block"), ctx.integer("buffer_index"), ctx.integer("axis"), ctx.integer("factor"),
                        ctx.integer("offset"));
}

[[maybe_unused]] const bool kRegistered = register_instruction("set_scope", replay_set_scope) &&
                                          register_instruction("storage_align", replay_storage_align);

}  // namespace

}  // namespace tessera::schedule::detail
