//===- primitive/CacheReadWrite.cpp - cache_read and cache_write -----------===//
//
// cache_read(C, i, "shared") copies the region of C's i-th read buffer that
// the readers in C's scope touch into a new buffer of that scope, in a new
// block placed in the scope right before the first reader; every reader of
// the scope then loads from the copy:
//
//   A_shared = T.alloc_buffer((64, 48), scope="shared")
//   for ax0, ax1 in T.grid(64, 48):
//       with T.block("A_shared"):
//           v0, v1 = T.axis.remap("SS", [ax0, ax1])
//           A_shared[v0, v1] = A[v0, v1]
//   for i, j, k in T.grid(64, 80, 48):
//       with T.block("C"): ... A_shared[vi, vk] ...
//
// cache_write(C, i, "local") is the mirror: C writes (and reads back) a new
// buffer, and a new block right after C's loop nest copies the region C
// writes back to the original buffer.
//
// The region is the bounding box of the accesses seen from the scope (all
// loops between the scope and the accessing block relaxed), clamped to the
// buffer's shape. The copy's iter vars range over the whole buffer shape and
// are bound to `region min + loop`, as in TensorIR, so compute_at can later
// move the copy under a loop and shrink its loops to one tile. The new buffer
// has the original's shape and is allocated by the scope block (the root
// block unless the reader sits inside a nested block); lowering compacts it.
//
//===----------------------------------------------------------------------===//
#include "../Dataflow.h"

#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"

namespace tessera::schedule::detail {

using namespace ir;

namespace {

//===----------------------------------------------------------------------===//
// 1. Error messages and 2. checks
//===----------------------------------------------------------------------===//

/// The new buffer: the original's name, dtype and shape in `scope`.
Buffer make_cache_buffer(const PrimFunc &f, const Buffer &buf, const std::string &scope) {
  std::set<std::string> taken = buffer_names(f);
  std::string suffix = scope;
  for (char &c : suffix)
    if (c == '.') c = '_';
  return Buffer::make(fresh_name(taken, buf.name() + "_" + suffix), buf.dtype(), buf.shape(), scope);
}

/// for ax..: block name: dst[v..] = src[v..], with v_d = region[d].min + ax_d.
Stmt make_copy_nest(State &st, const std::string &name, const std::vector<Range> &region, const Buffer &src,
                    const Buffer &dst) {
  std::set<std::string> taken = loop_names(st.func);
  std::vector<Var> loops;
  std::vector<IterVar> ivs;
  std::vector<Expr> bindings, idx;
  for (size_t d = 0; d < region.size(); ++d) {
    DataType t = region[d].min.dtype();
    Var ax(fresh_name(taken, "ax" + std::to_string(d)), t);
    Var v("v" + std::to_string(d), t);
    loops.push_back(ax);
    ivs.push_back(IterVar{v, Range::from_extent(cast(t, src.shape()[d])), IterKind::Spatial});
    bindings.push_back(arith::simplify(add(region[d].min, ax)));
    idx.push_back(v);
  }
  Stmt body = Store::make(dst, Load::make(src, idx), idx);
  AccessRegions r = infer_access_regions(std::nullopt, body, {});
  Stmt nest = Block::make(name, ivs, bindings, Expr(), r.reads, r.writes, {}, std::nullopt, body);
  for (size_t d = region.size(); d-- > 0;)
    nest = For::make(loops[d], make_int(loops[d].dtype(), 0), region[d].extent, ForKind::Serial, nest);
  return nest;
}

std::vector<Range> region_from_scope(const State &st, const Stmt &block, const Buffer &buf, bool reads,
                                     const arith::Analyzer &ana) {
  const Block &b = *block.as<Block>();
  StmtPath p = find_block(st, BlockRef{b.name}, "cache");
  std::vector<Stmt> loops = loops_below(p, Stmt());
  std::vector<std::vector<Range>> regions;
  for (const BufferRegion &r : reads ? b.reads : b.writes)
    if (r.buffer.same_as(buf)) regions.push_back(region_seen_from(b, r, loops, ana));
  return arith::union_regions(regions, ana);
}

}  // namespace

//===----------------------------------------------------------------------===//
// 3. The primitives
//===----------------------------------------------------------------------===//

BlockRef cache_read(State &st, const BlockRef &block, int64_t read_buffer_index, const std::string &scope,
                    const std::string &name) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath bp = find_block(st, block, "cache_read");
  const Block &b = *bp.block();
  Buffer buf = check_buffer_index("cache_read", bp, b.reads, read_buffer_index, "read").buffer;
  check_storage_scope("cache_read", bp, scope);
  StmtPath sp = scope_path_of(bp);
  const Block &scope_block = *sp.block();
  std::vector<Stmt> readers;
  for (const Stmt &s : child_blocks(sp.stmt))
    if (reads_buffer(*s.as<Block>(), buf)) readers.push_back(s);
  TESSERA_ICHECK(!readers.empty()) << "cache_read: block '" << b.name << "' reads the buffer but is not a reader";
  bool after_first = false;
  for (const Stmt &s : child_blocks(sp.stmt)) {
    after_first |= s.same_as(readers.front());
    if (!after_first || !writes_buffer(*s.as<Block>(), buf)) continue;
    std::string who = s.same_as(bp.stmt) ? "block " + quoted(b.name) + " itself"
                                         : "block " + quoted(s.as<Block>()->name) + ", which runs after its first reader,";
    throw CachedBufferWrittenError("cache_read",
                                   "cannot cache buffer " + quoted(buf.name()) + " for reading: " + who +
                                       " writes it, so the copy would go stale",
                                   "buffer " + quoted(buf.name()) + " is written by block {0} after the cache point",
                                   {s});
  }

  // Step 2. Build the copy block and redirect the readers.
  arith::Analyzer ana = analyzer_for(sp);
  std::vector<std::vector<Range>> regions;
  for (const Stmt &r : readers) regions.push_back(region_from_scope(st, r, buf, /*reads=*/true, ana));
  std::vector<Range> region = clamp_to_shape(arith::union_regions(regions, ana), buf, ana);
  Buffer cache = make_cache_buffer(st.func, buf, scope);
  std::set<std::string> names = block_names(st.func);
  std::string block_name = fresh_name(names, name.empty() ? cache.name() : name);
  Stmt nest = make_copy_nest(st, block_name, region, buf, cache);
  std::unordered_map<const StmtNode *, Stmt> redirect;
  for (const Stmt &r : readers) redirect[r.get()] = replace_buffer(r, buf, cache);
  size_t pos = item_containing(scope_block, readers.front());
  Stmt new_scope = replace_in(sp.stmt, redirect);
  new_scope = insert_into_scope(*new_scope.as<Block>(), pos, nest);
  std::vector<Buffer> allocs = new_scope.as<Block>()->allocs;
  allocs.push_back(cache);
  new_scope = block_with_allocs(*new_scope.as<Block>(), allocs);

  // Step 3. Replace (the only mutation)
  replace(st, sp.stmt, new_scope);
  return BlockRef{block_name};
}

BlockRef cache_write(State &st, const BlockRef &block, int64_t write_buffer_index, const std::string &scope,
                     const std::string &name) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath bp = find_block(st, block, "cache_write");
  const Block &b = *bp.block();
  Buffer buf = check_buffer_index("cache_write", bp, b.writes, write_buffer_index, "write").buffer;
  check_storage_scope("cache_write", bp, scope);
  StmtPath sp = scope_path_of(bp);
  for (const Stmt &s : child_blocks(sp.stmt)) {
    if (s.same_as(bp.stmt) || !writes_buffer(*s.as<Block>(), buf)) continue;
    throw BufferHasOtherWriterError("cache_write",
                                    "cannot cache buffer " + quoted(buf.name()) + " for writing: block " +
                                        quoted(s.as<Block>()->name) + " writes it too, besides block " +
                                        quoted(b.name),
                                    "buffer " + quoted(buf.name()) + " is written by block {0} besides block {1}",
                                    {s, bp.stmt});
  }

  // Step 2. Build the write-back block and redirect the writer.
  arith::Analyzer ana = analyzer_for(sp);
  std::vector<Range> region =
      clamp_to_shape(region_from_scope(st, bp.stmt, buf, /*reads=*/false, ana), buf, ana);
  Buffer cache = make_cache_buffer(st.func, buf, scope);
  std::set<std::string> names = block_names(st.func);
  std::string block_name = fresh_name(names, name.empty() ? cache.name() : name);
  Stmt nest = make_copy_nest(st, block_name, region, cache, buf);
  size_t pos = item_containing(*sp.block(), bp.stmt);
  Stmt new_scope = replace_in(sp.stmt, {{bp.stmt.get(), replace_buffer(bp.stmt, buf, cache)}});
  new_scope = insert_into_scope(*new_scope.as<Block>(), pos + 1, nest);
  std::vector<Buffer> allocs = new_scope.as<Block>()->allocs;
  allocs.push_back(cache);
  new_scope = block_with_allocs(*new_scope.as<Block>(), allocs);

  // Step 3. Replace (the only mutation)
  replace(st, sp.stmt, new_scope);
  return BlockRef{block_name};
}

//===----------------------------------------------------------------------===//
// 4. Trace
//===----------------------------------------------------------------------===//

Json encode_cache(std::string_view op, const BlockRef &block, int64_t index, const std::string &scope,
                  const BlockRef &out) {
  return Json{{"op", op}, {"block", block.name}, {"buffer_index", index}, {"scope", scope}, {"out", out.name}};
}

namespace {

template <bool kRead>
void replay_cache(ReplayContext &ctx) {
  std::string name = ctx.has("out") ? ctx.string("out") : "";
  BlockRef b = ctx.block("block");
  int64_t index = ctx.integer("buffer_index");
  std::string scope = ctx.string("scope");
  BlockRef out = kRead ? ctx.sch.cache_read(b, index, scope, name) : ctx.sch.cache_write(b, index, scope, name);
  ctx.bind(name.empty() ? out.name : name, out);
}

[[maybe_unused]] const bool kRegistered = register_instruction("cache_read", replay_cache<true>) &&
                                          register_instruction("cache_write", replay_cache<false>);

}  // namespace

}  // namespace tessera::schedule::detail
