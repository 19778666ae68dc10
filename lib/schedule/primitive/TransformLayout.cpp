//===- primitive/TransformLayout.cpp - transform_layout --------------------===//
//
// transform_layout(B, 0, true, lambda i, j: (i // 16, j // 16, i % 16, j % 16))
// gives an allocated buffer a new layout: every load, store and region of it
// is rewritten through the map, its allocation gets the new shape:
//
//   B = T.alloc_buffer((64, 32))        B = T.alloc_buffer((4, 2, 16, 16))
//   B[vi, vj] = ...            -->      B[vi // 16, vj // 16, vi % 16, vj % 16] = ...
//
// The new shape is the extent of each map output over the old shape; the map
// must be a bijection of the old index space onto the new one (checked with
// detect_iter_map at the Bijective level), so no element is lost or shared.
// Parameters keep their layout (TVM allows it by rewriting the signature;
// here the caller owns a parameter's layout, Requires 2).
//
// The trace writes the map as a TVMScript lambda,
//   "index_map": "lambda i, j: (i // 16, j // 16, i % 16, j % 16)"
// read back by index_map_from_string below: the header is split by hand and
// the outputs are parsed by the TVMScript parser, as T.evaluate arguments of
// a small function that declares the inputs as int32 symbols.
//
//===----------------------------------------------------------------------===//
#include "../Layout.h"

#include "tessera/arith/IterMap.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"

namespace tessera::schedule {

using namespace ir;

//===----------------------------------------------------------------------===//
// IndexMap text (declared in Schedule.h)
//===----------------------------------------------------------------------===//

std::string IndexMap::str() const {
  std::string s = "lambda ";
  for (size_t i = 0; i < src.size(); ++i) s += (i ? ", " : "") + src[i].name();
  s += ": (";
  for (size_t i = 0; i < dst.size(); ++i) s += (i ? ", " : "") + script::print(dst[i]);
  return s + (dst.size() == 1 ? ",)" : ")");
}

namespace {

std::string trim(std::string_view s) {
  size_t a = s.find_first_not_of(" \t\n"), b = s.find_last_not_of(" \t\n");
  return a == std::string_view::npos ? "" : std::string(s.substr(a, b - a + 1));
}

/// `s` split at commas outside parentheses and brackets (empty pieces dropped).
std::vector<std::string> split_top(std::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    char c = i < s.size() ? s[i] : ',';
    depth += (c == '(' || c == '[') - (c == ')' || c == ']');
    if (c != ',' || depth != 0) continue;
    if (std::string t = trim(s.substr(start, i - start)); !t.empty()) out.push_back(t);
    start = i + 1;
  }
  return out;
}

}  // namespace

IndexMap IndexMap::parse(std::string_view text) {
  auto bad = [&](const std::string &why) -> UserError {
    return UserError("invalid index map '" + std::string(text) + "': " + why);
  };
  std::string t = trim(text);
  if (t.rfind("lambda", 0) != 0) throw bad("expected 'lambda'");
  size_t colon = t.find(':');
  if (colon == std::string::npos) throw bad("expected ':' after the inputs");
  std::vector<std::string> names = split_top(t.substr(6, colon - 6));
  std::string body = trim(t.substr(colon + 1));
  if (body.size() >= 2 && body.front() == '(' && body.back() == ')') body = body.substr(1, body.size() - 2);
  std::vector<std::string> outs = split_top(body);
  if (names.empty() || outs.empty()) throw bad("expected inputs and outputs");
  std::string src = "@T.prim_func\ndef main():\n";
  for (const std::string &n : names) src += "    " + n + " = T.int32()\n";
  for (const std::string &o : outs) src += "    T.evaluate(" + o + ")\n";
  PrimFunc f = script::parse_func(src, "<index map>");
  IndexMap m;
  std::vector<Var> seen;
  pre_order_visit(f.body(), [&](const Expr &e) {
    if (const VarNode *v = e.as<VarNode>())
      if (std::none_of(seen.begin(), seen.end(), [&](const Var &s) { return s.get() == v; })) seen.push_back(Var::from(e));
  }, [&](const Stmt &s) {
    if (const Evaluate *ev = s.as<Evaluate>()) m.dst.push_back(ev->value);
  });
  for (const std::string &n : names) {
    auto it = std::find_if(seen.begin(), seen.end(), [&](const Var &v) { return v.name() == n; });
    m.src.push_back(it != seen.end() ? *it : Var(n));
  }
  return m;
}

namespace detail {

//===----------------------------------------------------------------------===//
// Shared helpers (declared in Layout.h)
//===----------------------------------------------------------------------===//

std::string why_not_index_map(const IndexMap &m, size_t inputs, const std::string &what) {
  if (m.src.size() != inputs) return "it takes " + std::to_string(m.src.size()) + " indices but " + what;
  if (m.dst.empty()) return "it has no outputs";
  for (const Expr &e : m.dst) {
    if (!e.dtype().is_integer()) return "output '" + script::print(e) + "' is not an integer";
    bool free = false;
    pre_order_visit(Evaluate::make(e), [&](const Expr &x) {
      const VarNode *v = x.as<VarNode>();
      free |= v && std::none_of(m.src.begin(), m.src.end(), [&](const Var &s) { return s.get() == v; });
    }, nullptr);
    if (free) return "output '" + script::print(e) + "' uses a variable that is not an input";
  }
  return "";
}

std::vector<Expr> bijective_range(const IndexMap &m, const std::vector<std::pair<Var, Range>> &dom,
                                  std::string &why, arith::IterMapResult *iter_map) {
  arith::Analyzer ana;
  arith::IterMapResult r = arith::detect_iter_map(m.dst, dom, Expr(), arith::IterMapLevel::Bijective, ana);
  why = r.why_not;
  std::vector<Expr> shape;
  for (size_t d = 0; why.empty() && d < m.dst.size(); ++d) {
    Range range = arith::relax(m.dst[d], dom, ana);
    if (!ana.can_prove_equal(range.min, make_int(range.min.dtype(), 0)))
      why = "output '" + script::print(m.dst[d]) + "' does not start at 0";
    shape.push_back(arith::simplify(range.extent));
  }
  if (iter_map) *iter_map = std::move(r);
  return why.empty() ? shape : std::vector<Expr>{};
}

namespace {

constexpr const char *kPrim = "transform_layout";

//===----------------------------------------------------------------------===//
// 1. Error messages and 2. checks
//===----------------------------------------------------------------------===//

[[noreturn]] void invalid_map(const StmtPath &bp, const IndexMap &m, const std::string &why) {
  throw InvalidIndexMapError(kPrim, "invalid index map '" + m.str() + "': " + why,
                             "invalid index map '" + m.str() + "' for a buffer of block {0}: " + why, {bp.stmt});
}

void check_map_shape(const StmtPath &bp, const Buffer &buf, const IndexMap &m) {
  std::string why = why_not_index_map(m, static_cast<size_t>(buf.ndim()), quoted(buf.name()) + " has " +
                                                                              std::to_string(buf.ndim()) +
                                                                              " dimensions");
  if (!why.empty()) invalid_map(bp, m, why);
}

/// The new shape: each output's extent over the old shape; the map must be bijective.
std::vector<Expr> check_bijective(const StmtPath &bp, const Buffer &buf, const IndexMap &m) {
  std::vector<std::pair<Var, Range>> dom;
  for (size_t d = 0; d < m.src.size(); ++d) dom.emplace_back(m.src[d], Range::from_extent(buf.shape()[d]));
  std::string why;
  std::vector<Expr> shape = bijective_range(m, dom, why);
  if (why.empty()) return shape;
  throw NonBijectiveIndexMapError(kPrim,
                                  "index map '" + m.str() + "' is not a bijection of the shape of " +
                                      quoted(buf.name()) + ": " + why,
                                  "index map '" + m.str() + "' is not a bijection of " + quoted(buf.name()) + ": " + why,
                                  {bp.stmt});
}

/// Rewrites loads, stores, regions and the allocation of one buffer.
class LayoutRewriter : public IRMutator {
 public:
  LayoutRewriter(const Buffer &from, const Buffer &to, const IndexMap &m) : from_(from), to_(to), map_(m) {}

 protected:
  Expr visit_(const Load *op, const Expr &self) override {
    Expr e = IRMutator::visit_(op, self);
    const Load *l = e.as<Load>();
    return l->buffer.same_as(from_) ? Load::make(to_, apply(l->indices)) : e;
  }
  Stmt visit_(const Store *op, const Stmt &self) override {
    Stmt s = IRMutator::visit_(op, self);
    const Store *st = s.as<Store>();
    return st->buffer.same_as(from_) ? Store::make(to_, st->value, apply(st->indices)) : s;
  }
  Stmt visit_(const Block *op, const Stmt &self) override {
    Stmt s = IRMutator::visit_(op, self);
    const Block &b = *s.as<Block>();
    bool touched = false;
    auto fix = [&](std::vector<BufferRegion> regions) {
      for (BufferRegion &r : regions)
        if (r.buffer.same_as(from_)) {
          touched = true;
          r = BufferRegion{to_, map_region(r.region)};
        }
      return regions;
    };
    std::vector<BufferRegion> reads = fix(b.reads), writes = fix(b.writes);
    std::vector<Buffer> allocs = b.allocs;
    for (Buffer &a : allocs)
      if (a.same_as(from_)) {
        touched = true;
        a = to_;
      }
    if (!touched) return s;
    Stmt out = block_with_regions(b, std::move(reads), std::move(writes));
    return block_with_allocs(*out.as<Block>(), std::move(allocs));
  }

 private:
  std::vector<Expr> apply(const std::vector<Expr> &idx) const {
    std::vector<std::pair<Var, Expr>> sub;
    for (size_t d = 0; d < idx.size(); ++d) sub.emplace_back(map_.src[d], idx[d]);
    std::vector<Expr> out;
    for (const Expr &e : map_.dst) out.push_back(arith::simplify(substitute(e, sub)));
    return out;
  }
  /// A point region maps to a point; a box to the box around its image.
  std::vector<Range> map_region(const std::vector<Range> &region) const {
    bool point = std::all_of(region.begin(), region.end(), [](const Range &r) { return is_const_int(r.extent, 1); });
    std::vector<Range> out;
    if (point) {
      std::vector<Expr> idx;
      for (const Range &r : region) idx.push_back(r.min);
      for (const Expr &e : apply(idx)) out.push_back(Range{e, make_int(e.dtype(), 1)});
      return out;
    }
    arith::VarDomains dom;
    for (size_t d = 0; d < region.size(); ++d) dom.emplace_back(map_.src[d], region[d]);
    return arith::relax_region(map_.dst, dom, arith::Analyzer());
  }
  Buffer from_, to_;
  const IndexMap &map_;
};

}  // namespace

//===----------------------------------------------------------------------===//
// 3. The primitive
//===----------------------------------------------------------------------===//

void transform_layout(State &st, const BlockRef &block, int64_t buffer_index, bool is_write, const IndexMap &map) {
  // Step 1. Check (may throw; IR untouched)
  StmtPath bp = find_block(st, block, kPrim);
  const Block &b = *bp.block();
  Buffer buf = check_buffer_index(kPrim, bp, is_write ? b.writes : b.reads, buffer_index,
                                  is_write ? "write" : "read")
                   .buffer;
  if (is_param_buffer(st.func, buf))
    throw ParamBufferLayoutError(kPrim,
                                 "cannot change the layout of " + quoted(buf.name()) +
                                     ": it is a parameter of function " + quoted(st.func.name()),
                                 "block {0} accesses the parameter buffer " + quoted(buf.name()), {bp.stmt});
  check_map_shape(bp, buf, map);
  std::vector<Expr> shape = check_bijective(bp, buf, map);

  // Step 2. Build: the buffer with the new shape, every use rewritten.
  Buffer nb = Buffer::make(buf.name(), buf.dtype(), shape, buf.scope());
  LayoutRewriter rw(buf, nb, map);
  Stmt body = rw.mutate(st.func.body());

  // Step 3. Replace (the only mutation)
  replace(st, st.func.body(), body);
}

//===----------------------------------------------------------------------===//
// 4. Trace
//===----------------------------------------------------------------------===//

Json encode_transform_layout(const BlockRef &block, int64_t buffer_index, bool is_write, const IndexMap &map) {
  return Json{{"op", kPrim}, {"block", block.name}, {"buffer_index", buffer_index}, {"write", is_write},
              {"index_map", map.str()}};
}

namespace {

void replay_transform_layout(ReplayContext &ctx) {
  const Json &w = ctx.field("write");
  if (!w.is_boolean()) ctx.fail("write", "must be true or false");
  IndexMap m;
  try {
    m = IndexMap::parse(ctx.string("index_map"));
  } catch (const UserError &e) {
    ctx.fail("index_map", std::string("is not an index map: ") + e.what());
  }
  ctx.sch.transform_layout(ctx.block("block"), ctx.integer("buffer_index"), w.get<bool>(), m);
}

[[maybe_unused]] const bool kRegistered = register_instruction(kPrim, replay_transform_layout);

}  // namespace

}  // namespace detail

}  // namespace tessera::schedule
