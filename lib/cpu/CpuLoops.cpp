//===- lib/cpu/CpuLoops.cpp - CPU schedules of loop nests ------------------===//
#include "tessera/cpu/CpuLoops.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tessera/analysis/BlockInfo.h"
#include "tessera/ir/Annotation.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/schedule/Error.h"
#include "tessera/schedule/Schedule.h"
#include "tessera/support/Error.h"

#include "ConfigFields.h"

namespace tessera::cpu {

namespace {

/// The one block of `f` and its loops when the file comment's conditions
/// hold, else why not.
struct LoopNest {
  analysis::BlockInfo block;
  std::vector<int> spatial, reduce;  // iter positions, in loop order
  std::string why;
};

LoopNest find_nest(const ir::PrimFunc &f) {
  LoopNest out;
  analysis::FuncInfo info = analysis::analyze(f);
  if (info.is_scheduled) return out.why = "it is already scheduled", out;
  if (info.blocks.size() != 1) return out.why = fmt::format("it has {} blocks, not one", info.blocks.size()), out;
  const analysis::BlockInfo &b = info.blocks[0];
  if (!b.trivial_binding || b.is_guarded || b.loops.size() != b.iters.size())
    return out.why = "block '" + b.name + "' is not bound one iter var to one loop", out;
  // Iter positions in the order of their loops.
  for (const ir::Stmt &l : b.loops)
    for (size_t i = 0; i < b.iters.size(); ++i)
      if (b.iters[i].loop.same_as(l.as<ir::For>()->loop_var))
        (b.iters[i].kind == ir::IterKind::Reduce ? out.reduce : out.spatial).push_back(int(i));
  if (out.spatial.size() + out.reduce.size() != b.iters.size())
    return out.why = "block '" + b.name + "' has iters that are neither spatial nor reduce", out;
  out.block = b;
  return out;
}

/// The iter of the innermost dimension the block reads from (-1: none, or
/// several reads that disagree).
int read_inner_iter(const analysis::BlockInfo &b) {
  int inner = -1;
  for (const analysis::Access &a : b.reads) {
    const int i = a.inner_iter();
    if (i < 0 || (inner >= 0 && i != inner)) return -1;
    inner = i;
  }
  return inner;
}

schedule::LoopRef loop_of(const analysis::BlockInfo &b, int iter) { return {b.iters[size_t(iter)].loop}; }

/// A reduction rfactor can split into `lanes` partial results: rows (the
/// outermost loop spatial, run over the cores), one reduce iter, bound to the
/// innermost loop, whose constant extent `lanes` divides (and exceeds).
bool lanes_divide(const analysis::BlockInfo &b, int64_t lanes) {
  if (!b.is_reduction() || !b.trivial_binding || b.is_guarded || b.loops.size() < 2) return false;
  const ir::Var &outer = b.loops.front().as<ir::For>()->loop_var;
  if (std::none_of(b.iters.begin(), b.iters.end(), [&](const analysis::IterInfo &it) {
        return it.kind == ir::IterKind::Spatial && it.loop.same_as(outer);
      }))
    return false;
  int reduce = -1;
  for (size_t i = 0; i < b.iters.size(); ++i)
    if (b.iters[i].kind == ir::IterKind::Reduce) {
      if (reduce >= 0) return false;
      reduce = int(i);
    }
  const auto extent = ir::as_const_int(b.iters[size_t(reduce)].dom.extent);
  return b.loops.back().as<ir::For>()->loop_var.same_as(b.iters[size_t(reduce)].loop) && extent &&
         *extent % lanes == 0 && *extent > lanes;
}

/// The reduction's `lanes` partial results (rfactor): the name of the block
/// that computes them.
std::string split_into_lanes(schedule::Schedule &sch, const analysis::BlockInfo &b, int64_t lanes) {
  const schedule::LoopRef r = {b.loops.back().as<ir::For>()->loop_var};
  auto parts = sch.split(r, {std::nullopt, lanes});
  return sch.rfactor(parts[1], 1).name;
}

/// The partial results' block `b` (of split_into_lanes) in vectors: its
/// lanes loop innermost and vectorized, after its reduce loop; the partials
/// set before that loop, not under a test of its first iteration, so that
/// the loop updates them unconditionally and LLVM keeps them in registers.
void vectorize_lanes(schedule::Schedule &sch, const analysis::BlockInfo &b, int64_t lanes) {
  const ir::Var &outer = b.loops.front().as<ir::For>()->loop_var;
  std::optional<schedule::LoopRef> lane;
  // The reduce loops in their nest order (one, or a word-major split's two),
  // and the lanes iter: the last spatial one of extent L (rfactor appends it
  // after the reduction's own spatial iters).
  std::vector<schedule::LoopRef> reduce;
  for (const ir::Stmt &l : b.loops)
    for (const analysis::IterInfo &it : b.iters)
      if (it.kind == ir::IterKind::Reduce && it.loop.same_as(l.as<ir::For>()->loop_var)) reduce.push_back({it.loop});
  for (const analysis::IterInfo &it : b.iters)
    if (!it.loop.same_as(outer) && it.kind != ir::IterKind::Reduce && ir::is_const_int(it.dom.extent, lanes))
      lane = schedule::LoopRef{it.loop};
  TESSERA_ICHECK(!reduce.empty() && lane) << "block '" << b.name << "' is not a partial result of split_into_lanes";
  std::vector<schedule::LoopRef> order = reduce;
  order.push_back(*lane);
  sch.reorder(order);
  sch.vectorize(*lane);
  sch.decompose_reduction(sch.get_block(b.name), reduce.front());
}

/// The P of integer reads at `r // P` of the reduction's iter r (a buffer of
/// packed words: eight int4 values a uint32; the scales' `r // 128` are not
/// words), or 0 when no read is, or two disagree.
int64_t packed_words(const analysis::BlockInfo &b) {
  const analysis::IterInfo *r = nullptr;
  for (const analysis::IterInfo &it : b.iters)
    if (it.kind == ir::IterKind::Reduce) r = &it;
  if (r == nullptr) return 0;
  int64_t words = 0;
  bool disagree = false;
  ir::pre_order_visit(
      b.block.as<ir::Block>()->body,
      [&](const ir::Expr &e) {
        const auto *load = e.as<ir::Load>();
        if (load == nullptr || !load->buffer.dtype().is_integer()) return;
        for (const ir::Expr &index : load->indices) {
          const auto *d = index.as<ir::Binary>();
          if (d == nullptr || d->op != ir::BinaryOp::FloorDiv || !d->a.same_as(r->var)) continue;
          const std::optional<int64_t> p = ir::as_const_int(d->b);
          if (!p || *p < 2) continue;
          if (words != 0 && words != *p) disagree = true;
          words = *p;
        }
      },
      nullptr);
  return disagree ? 0 : words;
}

/// split_into_lanes, word-major: r = ((w * L + l) * P + s) for a reduction
/// that reads packed words at r // P. The lanes are L consecutive words and
/// the reduce loops w, then s: each lane shifts its own word by the same s,
/// where lanes over consecutive elements would each pick their word apart.
/// A read at r alone (the vector a gemv multiplies by) is copied once per
/// call into the order the lanes read it: x'[r % P, r // P].
std::string split_into_word_lanes(schedule::Schedule &sch, const analysis::BlockInfo &b, int64_t lanes,
                                  int64_t words, std::vector<std::string> &copies) {
  const schedule::LoopRef r = {b.loops.back().as<ir::For>()->loop_var};
  auto parts = sch.split(r, {std::nullopt, lanes, words});
  sch.reorder({parts[2], parts[1]});
  schedule::BlockRef partial = sch.rfactor(parts[1], 1);
  const analysis::FuncInfo info = analysis::analyze(sch.func());
  const analysis::BlockInfo *pb = nullptr;
  for (const analysis::BlockInfo &x : info.blocks)
    if (x.name == partial.name) pb = &x;
  TESSERA_ICHECK(pb != nullptr) << "the rfactor block '" << partial.name << "' is not in the function";
  // The vector read: one-dimensional, a whole function parameter, read at
  // the reduction's element index.
  const std::vector<ir::BufferRegion> &reads = pb->block.as<ir::Block>()->reads;
  const std::vector<ir::Buffer> params = sch.func().param_buffers();
  for (size_t i = 0; i < reads.size(); ++i) {
    const ir::Buffer &x = reads[i].buffer;
    const std::optional<int64_t> n = x.shape().size() == 1 ? ir::as_const_int(x.shape()[0]) : std::nullopt;
    const bool param =
        std::any_of(params.begin(), params.end(), [&](const ir::Buffer &q) { return q.same_as(x); });
    // Read along the reduction (x[r]; not a per-row value, s[i]).
    const bool along_reduction = std::any_of(pb->reads.begin(), pb->reads.end(), [&](const analysis::Access &a) {
      return a.buffer.same_as(x) && a.dim_iters.size() == 1 &&
             std::any_of(a.dim_iters[0].begin(), a.dim_iters[0].end(),
                         [&](int it) { return pb->iters[size_t(it)].kind == ir::IterKind::Reduce; });
    });
    if (!n || *n % words != 0 || !param || !along_reduction) continue;
    schedule::BlockRef copy = sch.cache_read(sch.get_block(partial.name), int64_t(i), "global");
    ir::Var j("j");
    const ir::Expr p = ir::make_int(j.dtype(), words);
    sch.transform_layout(copy, 0, /*is_write=*/true, schedule::IndexMap{{j}, {ir::floormod(j, p), ir::floordiv(j, p)}});
    copies.push_back(copy.name);
    break;
  }
  return partial.name;
}

/// A block of no reduction whose rows can run over the cores and its
/// innermost loop in vectors of `lanes`: its outermost loop bound to a
/// spatial iter, its innermost loop of a constant extent that `lanes`
/// divides (its own iter, so its lanes are independent elements).
bool rows_and_lanes(const analysis::BlockInfo &b, int64_t lanes) {
  if (b.is_reduction() || !b.trivial_binding || b.is_guarded || b.loops.size() < 2) return false;
  const ir::For *inner = b.loops.back().as<ir::For>();
  const auto extent = ir::as_const_int(inner->extent);
  return extent && *extent % lanes == 0 && ir::is_const_int(inner->min, 0);
}

/// Intermediates that one block reads, computed where it reads them
/// (compute_inline; those inlining refuses are kept).
void inline_single_consumers(schedule::Schedule &sch) {
  std::vector<std::string> kept;
  for (bool inlined = true; inlined;) {
    inlined = false;
    const analysis::FuncInfo info = analysis::analyze(sch.func());
    for (const analysis::BlockInfo &b : info.blocks) {
      if (!b.is_inlinable() || b.consumers.size() != 1 || b.writes_output ||
          std::find(kept.begin(), kept.end(), b.name) != kept.end())
        continue;
      try {
        sch.compute_inline(sch.get_block(b.name));
        inlined = true;
      } catch (const schedule::ScheduleError &) {
        kept.push_back(b.name);  // its consumer reads it in a way inlining refuses
      }
      break;
    }
  }
}

/// rows L, fused or not, word-major for words P > 0 (the file comment of
/// CpuLoops.h); `split` counts the reductions that got lanes, `word_major`
/// those of them that got word-major lanes. ScheduleError when the blocks
/// cannot be fused.
ir::PrimFunc schedule_rows(const ir::PrimFunc &f, int64_t lanes, bool fuse, int64_t words, int &split,
                           int &word_major) {
  schedule::Schedule sch(f);
  inline_single_consumers(sch);
  // Each reduction in its own loop nest, which splitting another leaves as it is.
  split = word_major = 0;
  std::vector<std::string> partials;
  std::vector<std::string> copies;  // word-major copies of a vector, once per call
  std::vector<std::string> reductions;
  for (const analysis::BlockInfo &b : analysis::analyze(sch.func()).blocks)
    if (b.is_reduction()) reductions.push_back(b.name);
  for (const std::string &name : reductions) {
    // Each split adds blocks: the reduction is found again in the function as it is now.
    const analysis::FuncInfo info = analysis::analyze(sch.func());
    const auto b = std::find_if(info.blocks.begin(), info.blocks.end(),
                                [&](const analysis::BlockInfo &x) { return x.name == name; });
    if (b == info.blocks.end()) continue;
    if (words > 0 && lanes_divide(*b, lanes * words) && packed_words(*b) == words) {
      partials.push_back(split_into_word_lanes(sch, *b, lanes, words, copies));
      ++split, ++word_major;
    } else if (lanes_divide(*b, lanes)) {
      partials.push_back(split_into_lanes(sch, *b, lanes));
      ++split;
    }
  }
  if (fuse) {
    // Every block computed under the last one's outermost loop, last to
    // first, each where its consumers need it: one row at a time through
    // all of them, its intermediates still in the caches when the next
    // block reads them.
    const analysis::FuncInfo info = analysis::analyze(sch.func());
    const std::string &last = info.blocks.back().name;
    for (size_t b = info.blocks.size() - 1; b-- > 0;)
      if (std::find(copies.begin(), copies.end(), info.blocks[b].name) == copies.end())
        sch.compute_at(sch.get_block(info.blocks[b].name), sch.get_loops(sch.get_block(last)).front());
  }
  // Rows over the cores (each outermost loop once); the partial results and
  // the element-wise blocks between the reductions (a softmax's
  // exponentials and its division) in vectors of L.
  std::vector<const ir::VarNode *> parallel;
  for (const analysis::BlockInfo &b : analysis::analyze(sch.func()).blocks) {
    const bool partial = std::find(partials.begin(), partials.end(), b.name) != partials.end();
    if (!partial && !rows_and_lanes(b, lanes)) continue;
    const ir::Var &outer = b.loops.front().as<ir::For>()->loop_var;
    if (std::find(parallel.begin(), parallel.end(), outer.get()) == parallel.end()) {
      sch.parallel(schedule::LoopRef{outer});
      parallel.push_back(outer.get());
    }
    if (partial) {
      vectorize_lanes(sch, b, lanes);
    } else {
      const schedule::LoopRef inner{b.loops.back().as<ir::For>()->loop_var};
      sch.vectorize(sch.split(inner, {std::nullopt, lanes})[1]);
    }
  }
  return sch.func();
}

}  // namespace

std::string CpuLoopConfig::str() const {
  return fmt::format("{{\"loops\":\"{}\",\"tile\":{}{}{}{}}}", kind, tile, stream ? ",\"stream\":true" : "",
                     fuse ? ",\"fuse\":true" : "", words > 0 ? fmt::format(",\"words\":{}", words) : "");
}

std::optional<CpuLoopConfig> CpuLoopConfig::parse(const std::string &text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("loops")) return std::nullopt;
  CpuLoopConfig c;
  if (!j["loops"].is_string()) throw UserError("CPU loop config: 'loops' must be tile2d, reduce_outer, rfactor or rows");
  c.kind = j["loops"].get<std::string>();
  if (c.kind != "tile2d" && c.kind != "reduce_outer" && c.kind != "rfactor" && c.kind != "rows")
    throw UserError("CPU loop config: unknown loops '" + c.kind + "' (tile2d, reduce_outer, rfactor, rows)");
  if (!j.contains("tile") || !j["tile"].is_number_integer())
    throw UserError("CPU loop config " + text + ": 'tile' must be an integer");
  c.tile = j["tile"].get<int64_t>();
  if (j.contains("stream")) {
    if (!j["stream"].is_boolean() || c.kind != "tile2d")
      throw UserError("CPU loop config " + text + ": 'stream' is true or false, and only for tile2d");
    c.stream = j["stream"].get<bool>();
  }
  if (j.contains("fuse")) {
    if (!j["fuse"].is_boolean() || c.kind != "rows")
      throw UserError("CPU loop config " + text + ": 'fuse' is true or false, and only for rows");
    c.fuse = j["fuse"].get<bool>();
  }
  if (j.contains("words")) {
    if (!j["words"].is_number_integer() || j["words"].get<int64_t>() < 2 || c.kind != "rows")
      throw UserError("CPU loop config " + text + ": 'words' is an integer of at least 2, and only for rows");
    c.words = j["words"].get<int64_t>();
  }
  detail::check_known_fields(j, {"loops", "tile", "stream", "fuse", "words"}, "CPU loop config");
  return c;
}

std::vector<CpuLoopConfig> cpu_loop_candidates(const ir::PrimFunc &f) {
  LoopNest n = find_nest(f);
  if (!n.why.empty()) {
    // Several blocks: rows, when some reduction gets lanes.
    std::vector<CpuLoopConfig> out;
    const analysis::FuncInfo info = analysis::analyze(f);
    if (info.is_scheduled || info.has_opaque_structure || info.blocks.size() < 2) return out;
    // Word-major too, where a reduction reads packed words.
    std::vector<int64_t> word_counts{0};
    schedule::Schedule inlined(f);
    inline_single_consumers(inlined);
    for (const analysis::BlockInfo &b : analysis::analyze(inlined.func()).blocks)
      if (const int64_t p = packed_words(b); p > 0 && b.is_reduction() &&
                                              std::find(word_counts.begin(), word_counts.end(), p) == word_counts.end())
        word_counts.push_back(p);
    for (int64_t words : word_counts)
      for (bool fuse : {false, true})
        for (int64_t lanes : {16, 64}) {
          int split = 0, word_major = 0;
          try {
            schedule_rows(f, lanes, fuse, words, split, word_major);
          } catch (const Error &) {
            split = word_major = 0;
          }
          if (words == 0 ? split > 0 : word_major > 0) out.push_back({"rows", lanes, false, fuse, words});
        }
    return out;
  }
  const analysis::BlockInfo &b = n.block;
  std::vector<CpuLoopConfig> out;
  if (n.reduce.empty() && n.spatial.size() >= 2) {
    // Worth it when the reads and the write are not contiguous along the
    // same loop (a transpose); an elementwise copy is already in order.
    const int write_inner = b.writes.empty() ? -1 : b.writes[0].inner_iter();
    if (read_inner_iter(b) != write_inner)
      for (bool stream : {false, true})
        for (int64_t t : {16, 64, 256}) out.push_back({"tile2d", t, stream});
  }
  if (n.spatial.size() == 1 && n.reduce.size() == 1 && b.combiner != analysis::Combiner::None &&
      b.tuple_values.empty()) {
    const int inner = read_inner_iter(b);
    if (inner == n.spatial[0] && b.loops.back().as<ir::For>()->loop_var.same_as(b.iters[size_t(n.reduce[0])].loop))
      for (int64_t t : {64, 256}) out.push_back({"reduce_outer", t});
    // rfactor needs a factor that divides the reduction (else the split's
    // predicate would leave partial sums unset).
    const auto extent = ir::as_const_int(b.iters[size_t(n.reduce[0])].dom.extent);
    if (inner == n.reduce[0] && extent)
      for (int64_t l : {16, 64})
        if (*extent % l == 0 && *extent > l) out.push_back({"rfactor", l});
  }
  return out;
}

ir::PrimFunc schedule_loops_for_cpu(const ir::PrimFunc &f, const CpuLoopConfig &c) {
  if (c.kind == "rows") {
    if (c.tile < 2) throw UserError("CPU loop schedule " + c.str() + ": rows needs at least 2 lanes");
    int split = 0, word_major = 0;
    ir::PrimFunc g = schedule_rows(f, c.tile, c.fuse, c.words, split, word_major);
    if (split == 0)
      throw UserError("CPU loop schedule " + c.str() + ": no reduction of '" + f.name() +
                      "' is over its innermost loop with a constant extent " + std::to_string(c.tile) +
                      " divides");
    if (c.words > 0 && word_major == 0)
      throw UserError("CPU loop schedule " + c.str() + ": no reduction of '" + f.name() + "' reads packed words at r // " +
                      std::to_string(c.words) + " over a constant extent " + std::to_string(c.tile * c.words) +
                      " divides");
    return g;
  }
  LoopNest n = find_nest(f);
  if (!n.why.empty()) throw UserError("CPU loop schedule " + c.str() + ": " + n.why);
  if (c.tile <= 0) throw UserError("CPU loop schedule " + c.str() + ": the tile must be positive");
  const analysis::BlockInfo &b = n.block;
  schedule::Schedule sch(f);
  schedule::BlockRef block = sch.get_block(b.name);
  if (c.kind == "tile2d" && n.reduce.empty() && n.spatial.size() >= 2) {
    const std::vector<schedule::LoopRef> loops = sch.get_loops(block);
    const size_t last = loops.size() - 1;
    // Tiles of T x T in cache, each walked in V x V tiles of registers: V
    // elements are one 512-bit vector, and the JIT transposes such a tile
    // with shuffles (runtime/llvm/CodegenTranspose.cpp).
    const int64_t bytes = std::max<int64_t>(1, b.writes.empty() ? 4 : b.writes[0].buffer.dtype().bytes());
    const int64_t v = std::min<int64_t>(c.tile, std::max<int64_t>(2, 64 / bytes));
    auto tiles = [&](const schedule::LoopRef &l) {
      if (c.tile > v && c.tile % v == 0) return sch.split(l, {std::nullopt, c.tile / v, v});
      return sch.split(l, {std::nullopt, c.tile});
    };
    const std::vector<schedule::LoopRef> a = tiles(loops[last - 1]), z = tiles(loops[last]);
    std::vector<schedule::LoopRef> order(loops.begin(), loops.end() - 2);
    for (size_t k = 0; k < a.size(); ++k) order.insert(order.end(), {a[k], z[k]});
    sch.reorder(order);
    sch.parallel(order[0]);
    sch.vectorize(z.back());
    if (c.stream) sch.annotate(block, ir::kStreamingStoresAnnotation, ir::AnnValue(int64_t(1)));
    return sch.func();
  }
  if (c.kind == "reduce_outer" && n.spatial.size() == 1 && n.reduce.size() == 1) {
    auto s = sch.split(loop_of(b, n.spatial[0]), {std::nullopt, c.tile});
    const schedule::LoopRef r = loop_of(b, n.reduce[0]);
    sch.reorder({s[0], r, s[1]});
    sch.parallel(s[0]);
    sch.decompose_reduction(block, r);
    sch.vectorize(s[1]);
    return sch.func();
  }
  if (c.kind == "rfactor" && n.spatial.size() == 1 && n.reduce.size() == 1) {
    auto r = sch.split(loop_of(b, n.reduce[0]), {std::nullopt, c.tile});
    schedule::BlockRef partial = sch.rfactor(r[1], 1);
    // The partial sums: rows over the cores, the L lanes of each vectorized.
    std::vector<schedule::LoopRef> loops = sch.get_loops(partial);
    sch.parallel(loops.front());
    sch.vectorize(loops.back());
    return sch.func();
  }
  throw UserError("CPU loop schedule " + c.str() + " does not apply to '" + b.name + "' (" +
                  std::to_string(n.spatial.size()) + " spatial and " + std::to_string(n.reduce.size()) +
                  " reduction loops)");
}

}  // namespace tessera::cpu
