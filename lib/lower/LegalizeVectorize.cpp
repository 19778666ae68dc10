//===- lib/lower/LegalizeVectorize.cpp - Vector accesses or a scalar unroll -===//
//
// A vectorized loop whose lanes do the same straight-line work on consecutive,
// aligned elements becomes vector moves around an unrolled lane-wise loop:
//
//   for v in T.vectorized(4):              for v in T.vectorized(4):        # one float4 load
//     B[base + v] = A[base + v] * 2   ->     A_vec[v] = A[base + v]
//                                          for v in T.unroll(4):
//                                            B_vec[v] = A_vec[v] * 2
//                                          for v in T.vectorized(4):        # one float4 store
//                                            B[base + v] = B_vec[v]
//
// A body that is already one copy (`B[b1 + v] = A[b2 + v]`) is one move, with
// no registers in between. Wider moves are split into 16-byte pieces under an
// unrolled loop. Every other vectorized loop becomes the unrolled scalar loop
// it always was, annotated with why (`vectorize_fallback`).
//
// Why the rewrite keeps the loop's meaning: the registers are filled before
// any lane runs and written back after all lanes ran, so it must not matter
// when global and shared memory is read or written within the loop. Buffers
// are assumed not to alias (kernel parameters are __restrict__); a buffer the
// loop writes is accessed at exactly one index `base + v`, so each lane reads
// and writes only its own element, through its own register. Local buffers
// are registers already and keep their scalar accesses in the lane-wise loop,
// in the original order; so do loads of memory the loop does not write that
// are no aligned run (a strided or misaligned read, a transpose's column
// read feeding a vector store). A load under `T.if_then_else` may be out of bounds
// when unguarded, so such a body stays scalar.
//
// Alignment: `base` must be a provable multiple of the lanes of one move
// (Analyzer, with the ranges of the enclosing loops and launch variables),
// since every buffer starts 16-byte aligned (see CodegenCUDA.h).
//
// Vector loads in a loop that cannot be vectorized: a serial or unrolled loop
// annotated `vector_loads` (ir::kVectorLoadsAnnotation; the reduction rules put it
// on the innermost piece of a reduce loop, which a reduction carries from lane
// to lane through a register) gets the same rewrite: its runs in global and
// shared memory move in and out through registers, and the lanes run in
// order, so a register that one lane writes and the next reads (a partial
// sum) keeps its serial meaning. A body `if c: S` whose condition does not
// depend on the lane (a tail predicate over whole vectors) is rewritten as
// `if c: <S rewritten>`. When the rewrite does not apply the loop stays as it
// was, with the reason in `vector_loads_fallback`: always correct, scalar.
//
// Versions tested at run time: a loop refused only because a tail predicate
// masks some lanes (`if base + v < n`) or because a run is not provably
// aligned (a row of symbolic length `n`) gets both forms, the vector one for
// the vectors whose lanes all pass and whose runs are aligned, the scalar
// one (with its reason) for the rest:
//
//   if base + 3 < n and base % 4 == 0: <vector form>  else: <scalar loop>
//
// so a kernel for every row length still loads whole aligned vectors.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <memory>
#include <optional>
#include <unordered_map>

#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/lower/Passes.h"
#include "VarUses.h"
#include "tessera/script/Printer.h"

namespace tessera::lower {

namespace {

using namespace tessera::ir;
using detail::mentions;

constexpr int64_t kMaxMoveBytes = 16;

bool is_register(const Buffer &b) { return b.scope() == "local"; }

/// True for `v` and for `v` converted to another integer type.
bool is_loop_var(const Expr &e, const Var &v) {
  if (const auto *c = e.as<Cast>()) return c->value.same_as(v);
  return e.same_as(v);
}

/// Lanes per move of `lanes` consecutive elements of `t`: all of them when they
/// span 2, 4, 8 or 16 bytes, 16 bytes' worth when they span a multiple of 16
/// bytes, else 0 (no vector access fits).
int64_t lanes_per_move(DataType t, int64_t lanes) {
  if (t.is_bool() || t.is_handle() || t.lanes() != 1) return 0;
  int64_t bytes = lanes * t.bytes();
  if (bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16) return lanes;
  if (bytes % kMaxMoveBytes == 0) return kMaxMoveBytes / t.bytes();
  return 0;
}

/// One load or store of the loop body.
struct Access {
  const void *node;  // the Load or Store node
  Buffer buffer;
  Expr index;
  bool is_store;
};

/// Collects the accesses of a straight-line body, or says why it is not one.
class BodyScanner : public IRVisitor {
 public:
  std::vector<Access> accesses;
  std::string why_not;

 protected:
  void visit_(const For *) override { fail("the body has a loop"); }
  void visit_(const IfThenElse *) override { fail("the body has a branch"); }
  void visit_(const LetStmt *) override { fail("the body binds a variable"); }
  void visit_(const Evaluate *) override { fail("the body evaluates a call"); }
  void visit_(const Store *op) override {
    IRVisitor::visit_(op);  // the loads first, in the order they run
    accesses.push_back({op, op->buffer, op->indices[0], true});
  }
  void visit_(const Load *op) override {
    accesses.push_back({op, op->buffer, op->indices[0], false});
    IRVisitor::visit_(op);
  }
  void visit_(const Call *op) override {
    if (op->op == Intrinsic::IfThenElse)
      for (size_t i = 1; i < op->args.size(); ++i)
        pre_order_visit(Evaluate::make(op->args[i]), [&](const Expr &e) {
          if (e.is<Load>()) fail("a load is guarded by T.if_then_else");
        }, nullptr);
    IRVisitor::visit_(op);
  }

 private:
  void fail(const std::string &why) {
    if (why_not.empty()) why_not = why;
  }
};

/// A run of `lanes` consecutive elements of one buffer starting at `base`, and
/// the register array that holds it while the lanes run.
struct VectorGroup {
  Buffer buffer;
  Expr base;
  Buffer reg;
  bool read = false, written = false;
};

/// Replaces the grouped accesses by accesses of their registers.
class RegisterRewriter : public IRMutator {
 public:
  RegisterRewriter(const std::unordered_map<const void *, const VectorGroup *> &group_of, Var lane)
      : group_of_(group_of), lane_(std::move(lane)) {}

 protected:
  Expr visit_(const Load *op, const Expr &self) override {
    auto it = group_of_.find(op);
    if (it == group_of_.end()) return IRMutator::visit_(op, self);
    return Load::make(it->second->reg, {lane()});
  }
  Stmt visit_(const Store *op, const Stmt &self) override {
    auto it = group_of_.find(op);
    if (it == group_of_.end()) return IRMutator::visit_(op, self);
    return Store::make(it->second->reg, mutate(op->value), {lane()});
  }

 private:
  Expr lane() const { return cast(DataType::int32(), lane_); }
  const std::unordered_map<const void *, const VectorGroup *> &group_of_;
  Var lane_;
};

class VectorizeLegalizer : public IRMutator {
 public:
  explicit VectorizeLegalizer(const LaunchConfig &launch) {
    for (int a = 0; a < 3; ++a) {
      if (const Var &v = launch.block_vars[a]; v.defined())
        ana_.bind(v, Range::from_extent(cast(v.dtype(), launch.grid[a])));
      if (const Var &v = launch.thread_vars[a]; v.defined())
        ana_.bind(v, Range::from_extent(cast(v.dtype(), launch.block[a])));
    }
  }

  /// The register arrays the vectorized loops use, in creation order.
  std::vector<Buffer> registers;

 protected:
  Stmt visit_(const For *op, const Stmt &self) override {
    arith::Analyzer::Scope scope(ana_);
    ana_.bind(op->loop_var, Range{op->min, op->extent});
    Stmt s = IRMutator::visit_(op, self);
    const auto *loop = s.as<For>();
    bool vector_loads = op->annotations.count(kVectorLoadsAnnotation) > 0 &&
                        (op->for_kind == ForKind::Serial || op->for_kind == ForKind::Unrolled);
    if (op->for_kind != ForKind::Vectorized && !vector_loads) return s;
    std::string why_not;
    if (std::optional<Stmt> v = vectorize_guarded(*loop, why_not)) return *v;
    Annotations ann = loop->annotations;
    Stmt scalar;
    if (vector_loads) {
      ann[std::string(kVectorLoadsAnnotation) + "_fallback"] = why_not;
      scalar = For::make(loop->loop_var, loop->min, loop->extent, loop->for_kind, loop->body, "", ann);
    } else {
      ann["vectorize_fallback"] = why_not;
      scalar = For::make(loop->loop_var, loop->min, loop->extent, ForKind::Unrolled, loop->body, "", ann);
    }
    if (std::optional<Stmt> v = versioned(*loop, scalar)) return *v;
    return scalar;
  }

  Stmt visit_(const LetStmt *op, const Stmt &self) override {
    arith::Analyzer::Scope scope(ana_);
    if (op->value.dtype().is_integer()) ana_.bind_value(op->var, op->value);
    return IRMutator::visit_(op, self);
  }

 private:
  /// A loop vectorize() refused only for what a run-time test can settle:
  /// a tail predicate that masks lanes (`for v: if base + v < n: S`), or runs
  /// not provably aligned (a symbolic row length). The vector form of S
  /// serves the vectors whose lanes all pass and whose runs are aligned;
  /// `scalar` (the loop as it was, with its reason) serves the rest:
  ///
  ///   if base + (lanes - 1) < n and (run0 % 8 == 0) and ...: <S as vectors>
  ///   else: <the scalar loop>
  ///
  /// nullopt where S has no vector form even then.
  std::optional<Stmt> versioned(const For &loop, const Stmt &scalar) {
    const Var &v = loop.loop_var;
    auto lanes = as_const_int(loop.extent);
    if (!is_const_int(loop.min, 0) || !lanes || *lanes < 2) return std::nullopt;
    // Step 1. Every lane passes the predicate where the last one does: each
    // lane-dependent clause is `base + v < e` or `base + v <= e`.
    Stmt body = loop.body;
    std::vector<Expr> tests;
    if (const auto *branch = body.as<IfThenElse>(); branch && !branch->else_case && !has_load(branch->cond)) {
      for (const Expr &c : split_conjunction(branch->cond)) {
        if (!mentions(c, v)) {
          tests.push_back(c);
          continue;
        }
        const auto *cmp = c.as<Binary>();
        if (!cmp || (cmp->op != BinaryOp::LT && cmp->op != BinaryOp::LE) || mentions(cmp->b, v) ||
            !contiguous_base(cmp->a, v).defined())
          return std::nullopt;
        tests.push_back(substitute(c, {{v, make_int(v.dtype(), *lanes - 1)}}));
      }
      body = branch->then_case;
    }
    // Step 2. The vector form, each run not provably aligned tested instead.
    std::string why_not;
    assumed_aligned_.emplace();
    std::optional<Stmt> fast =
        vectorize(*For::make(v, loop.min, loop.extent, loop.for_kind, body, "", loop.annotations).as<For>(), why_not);
    std::vector<std::pair<Expr, int64_t>> aligned = std::move(*assumed_aligned_);
    assumed_aligned_.reset();
    if (!fast || (tests.empty() && aligned.empty())) return std::nullopt;
    for (const auto &[base, n] : aligned)
      tests.push_back(eq(floormod(base, make_int(base.dtype(), n)), make_int(base.dtype(), 0)));
    return IfThenElse::make(ana_.simplify(conjunction(tests)), *fast, scalar);
  }

  /// vectorize(), after taking a lane-invariant `if` (no else, no load in
  /// its condition) out of the loop: `for v: if c: S` is `if c: for v: S`.
  std::optional<Stmt> vectorize_guarded(const For &loop, std::string &why_not) {
    const auto *branch = loop.body.as<IfThenElse>();
    if (!branch || branch->else_case || mentions(branch->cond, loop.loop_var) || has_load(branch->cond))
      return vectorize(loop, why_not);
    Stmt inner = For::make(loop.loop_var, loop.min, loop.extent, loop.for_kind, branch->then_case, "",
                           loop.annotations);
    std::optional<Stmt> v = vectorize_guarded(*inner.as<For>(), why_not);
    if (!v) return std::nullopt;
    return IfThenElse::make(branch->cond, *v);
  }

  static bool has_load(const Expr &e) {
    bool found = false;
    pre_order_visit(Evaluate::make(e), [&](const Expr &x) { found = found || x.is<Load>(); }, nullptr);
    return found;
  }

  /// The loop as vector moves and a lane-wise loop, or nullopt with `why_not` set.
  std::optional<Stmt> vectorize(const For &loop, std::string &why_not) {
    const Var &v = loop.loop_var;
    auto lanes = as_const_int(loop.extent);
    if (!is_const_int(loop.min, 0) || !lanes || *lanes < 2) {
      why_not = "the loop does not start at 0 with a constant extent of at least 2";
      return std::nullopt;
    }
    BodyScanner scan;
    scan.visit(loop.body);
    if (!scan.why_not.empty()) {
      why_not = scan.why_not;
      return std::nullopt;
    }
    // Step 1. Classify every access: a run `base + v` (aligned), invariant in
    // v, or (registers only) anything else.
    std::vector<Expr> bases(scan.accesses.size());  // aligned runs: vector accesses
    std::vector<Expr> runs(scan.accesses.size());   // every run `base + v`, aligned or not
    std::string scalar_access;  // the first memory access left scalar, and why
    for (size_t i = 0; i < scan.accesses.size(); ++i) {
      const Access &a = scan.accesses[i];
      if (!mentions(a.index, v)) continue;
      Expr base = contiguous_base(a.index, v);
      DataType t = a.buffer.dtype();
      int64_t per_move = lanes_per_move(t, *lanes);
      std::string problem;
      if (!base.defined()) {
        problem = " is not contiguous in '" + v.name() + "'";
      } else if (t.is_bool()) {
        problem = " is of dtype bool, which has no vector access";
      } else if (per_move == 0) {
        problem = " spans " + std::to_string(*lanes) + " x " + t.str() + " = " +
                  std::to_string(*lanes * t.bytes()) + " bytes, not 2, 4, 8, 16 or a multiple of 16";
      } else if (!is_multiple(base, per_move)) {
        problem = " is not aligned: its first element " + script::print(base) +
                  " is not a provable multiple of " + std::to_string(per_move);
      }
      if (problem.empty()) bases[i] = base;
      if (base.defined()) runs[i] = base;
      if (problem.empty() || is_register(a.buffer)) continue;
      // Scalar in the lane-wise loop: a load of memory the loop does not
      // write (a transpose's column read feeding a vector store), and a run
      // that is no vector (misaligned: a transpose's padded shared rows),
      // whose lanes each touch their own element (Step 2).
      if ((!a.is_store && !writes(scan.accesses, a.buffer)) || (base.defined() && !t.is_bool())) {
        if (scalar_access.empty()) scalar_access = describe(a) + problem;
        continue;
      }
      why_not = describe(a) + problem;
      return std::nullopt;
    }
    // Step 2. A buffer in memory that the loop writes is accessed at its one
    // run only: each lane touches its own element.
    for (size_t w = 0; w < scan.accesses.size(); ++w) {
      const Access &st = scan.accesses[w];
      if (!st.is_store || is_register(st.buffer)) continue;
      if (!runs[w].defined()) {
        why_not = describe(st) + " writes the same element from every lane";
        return std::nullopt;
      }
      for (size_t i = 0; i < scan.accesses.size(); ++i) {
        const Access &a = scan.accesses[i];
        if (!a.buffer.same_as(st.buffer) || (runs[i].defined() && ana_.can_prove_equal(runs[i], runs[w])))
          continue;
        why_not = describe(a) + " and " + describe(st) + " may touch another lane's element";
        return std::nullopt;
      }
    }
    // Step 3. A copy from one run to another is one move.
    if (const auto *st = loop.body.as<Store>(); st && st->value.is<Load>() && scan.accesses.size() == 2 &&
                                                bases[0].defined() && bases[1].defined()) {
      return move(st->buffer, bases[1], st->value.as<Load>()->buffer, bases[0], *lanes, v);
    }
    // Step 4. Registers for the runs in global and shared memory; the rest stays scalar.
    std::vector<std::unique_ptr<VectorGroup>> groups;
    std::unordered_map<const void *, const VectorGroup *> group_of;
    for (size_t i = 0; i < scan.accesses.size(); ++i) {
      const Access &a = scan.accesses[i];
      if (is_register(a.buffer) || !bases[i].defined()) continue;
      VectorGroup *g = nullptr;
      for (auto &x : groups)
        if (x->buffer.same_as(a.buffer) && ana_.can_prove_equal(x->base, bases[i])) g = x.get();
      if (!g) {
        groups.push_back(std::make_unique<VectorGroup>());
        g = groups.back().get();
        g->buffer = a.buffer;
        g->base = bases[i];
        g->reg = Buffer::make(a.buffer.name() + "_vec", a.buffer.dtype(), {i32(*lanes)}, "local");
        registers.push_back(g->reg);
      }
      (a.is_store ? g->written : g->read) = true;
      group_of[a.node] = g;
    }
    if (groups.empty()) {
      why_not = !scalar_access.empty() ? scalar_access
                                     : "no access to global or shared memory is contiguous in '" + v.name() + "'";
      return std::nullopt;
    }
    std::vector<Stmt> seq;
    Expr zero = i32(0);
    for (auto &g : groups)
      if (g->read) seq.push_back(move(g->reg, zero, g->buffer, g->base, *lanes, v));
    Stmt body = RegisterRewriter(group_of, v).mutate(loop.body);
    seq.push_back(For::make(v, loop.min, loop.extent, ForKind::Unrolled, body, "", loop.annotations));
    for (auto &g : groups)
      if (g->written) seq.push_back(move(g->buffer, g->base, g->reg, zero, *lanes, v));
    return Seq::make(seq);
  }

  static bool writes(const std::vector<Access> &accesses, const Buffer &b) {
    return std::any_of(accesses.begin(), accesses.end(),
                       [&](const Access &a) { return a.is_store && a.buffer.same_as(b); });
  }

  /// `e` with narrowing integer casts moved onto the leaves where no value
  /// changes (every part within the narrow type's range) and a widening
  /// cast under a narrowing one dropped: int64 programs (what TVM prints for
  /// relax) flatten to `(int)(k_o * 32LL + tx * 4LL + v)`, whose runs in `v`
  /// only show once the cast is inside.
  Expr narrow_casts(const Expr &e) const {
    if (const auto *c = e.as<Cast>(); c && c->dtype.is_int() && c->value.dtype().is_int()) {
      const Expr &x = c->value;
      if (const auto *inner = x.as<Cast>(); inner && inner->value.dtype() == c->dtype &&
                                             inner->dtype.is_int() && inner->dtype.bits() >= c->dtype.bits())
        return narrow_casts(inner->value);
      if (auto k = as_const_int(x); k && arith::IntBound::of_dtype(c->dtype).contains(*k))
        return make_int(c->dtype, *k);
      const auto *b = x.as<Binary>();
      arith::IntBound range = arith::IntBound::of_dtype(c->dtype);
      auto fits = [&](const Expr &part) {
        arith::IntBound pb = ana_.const_bound(part);
        return range.contains(pb.min) && range.contains(pb.max);
      };
      if (b && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub || b->op == BinaryOp::Mul) && fits(x) &&
          fits(b->a) && fits(b->b))
        return Binary::make(b->op, narrow_casts(Cast::make(c->dtype, b->a)), narrow_casts(Cast::make(c->dtype, b->b)));
      return e;
    }
    if (const auto *b = e.as<Binary>(); b && e.dtype().is_int())
      return Binary::make(b->op, narrow_casts(b->a), narrow_casts(b->b));
    return e;
  }

  /// `base` when `index` is `base + v` (v from 0), else undefined.
  Expr contiguous_base(const Expr &raw_index, const Var &v) {
    Expr index = narrow_casts(raw_index);
    Expr base = ana_.simplify(substitute(index, {{v, make_int(v.dtype(), 0)}}));
    if (mentions(base, v) || !is_loop_var(ana_.simplify(sub(index, base)), v)) return Expr();
    return base;
  }

  /// Whether `e` is provably a multiple of `n`; while versioned() builds its
  /// vector form, one that is not is recorded there (tested at run time).
  bool is_multiple(const Expr &e, int64_t n) {
    if (ana_.can_prove(eq(floormod(e, make_int(e.dtype(), n)), make_int(e.dtype(), 0)))) return true;
    if (!assumed_aligned_) return false;
    for (const auto &[base, m] : *assumed_aligned_)
      if (m % n == 0 && ana_.can_prove_equal(base, e)) return true;
    assumed_aligned_->emplace_back(e, n);
    return true;
  }

  /// dst[dst_base + v] = src[src_base + v] for v in [0, lanes), as vectorized
  /// loops of at most 16 bytes (several under an unrolled loop).
  static Stmt move(const Buffer &dst, const Expr &dst_base, const Buffer &src, const Expr &src_base,
                   int64_t lanes, const Var &like) {
    TESSERA_ICHECK(dst.dtype() == src.dtype()) << "a move from " << src.name() << " to " << dst.name()
                                               << " converts";
    int64_t per_move = lanes_per_move(dst.dtype(), lanes);
    Var lane(like.name(), DataType::int32());
    auto at = [&](const Expr &base, const Expr &offset) {
      return arith::simplify(add(base, cast(base.dtype(), offset)));
    };
    if (per_move == lanes) {
      Stmt copy = Store::make(dst, Load::make(src, {at(src_base, lane)}), {at(dst_base, lane)});
      return For::make(lane, i32(0), i32(lanes), ForKind::Vectorized, copy);
    }
    Var piece(like.name() + "_piece", DataType::int32());
    // base + piece * per_move + lane, each term converted on its own, so that
    // the index less its lane-0 value is the lane again (codegen's address()).
    auto at_piece = [&](const Expr &base) {
      return arith::simplify(
          add(add(base, cast(base.dtype(), mul(piece, i32(per_move)))), cast(base.dtype(), Expr(lane))));
    };
    Stmt copy = Store::make(dst, Load::make(src, {at_piece(src_base)}), {at_piece(dst_base)});
    Stmt inner = For::make(lane, i32(0), i32(per_move), ForKind::Vectorized, copy);
    return For::make(piece, i32(0), i32(lanes / per_move), ForKind::Unrolled, inner);
  }

  static std::string describe(const Access &a) {
    return (a.is_store ? "the store to " : "the load of ") + a.buffer.name() + "[" + script::print(a.index) +
           "]";
  }

  arith::Analyzer ana_;
  /// While versioned() runs: the runs it tests for alignment, and by what.
  std::optional<std::vector<std::pair<Expr, int64_t>>> assumed_aligned_;
};

}  // namespace

LoweredFunc legalize_vectorize(const LoweredFunc &f) {
  VectorizeLegalizer x(f.launch);
  LoweredFunc out = f;
  out.body = x.mutate(f.body);
  out.allocs.insert(out.allocs.end(), x.registers.begin(), x.registers.end());
  return out;
}

}  // namespace tessera::lower
