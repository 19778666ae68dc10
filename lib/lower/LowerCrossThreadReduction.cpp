//===- lib/lower/LowerCrossThreadReduction.cpp - Reductions across threads ---===//
//
// A reduction whose reduce loops include a threadIdx-bound loop has every
// thread update the same element: `B[vi] = B[vi] + A[vi, vk]` run by 128
// threads at once is a race. This pass gives such a block its parallel form,
// before lower_blocks, while iter vars and their kinds are still known:
//
//   for k_1 in T.thread_binding(128, "threadIdx.x"):
//     for k_0 in range(8):                      for k_1 in T.thread_binding(128, "threadIdx.x"):
//       with T.block("B"):                        B_partial[0] = T.float32(0)
//         vi = T.axis.spatial(4096, i)            for k_0 in range(8):
//         vk = T.axis.reduce(1024,          ->      B_partial[0] = B_partial[0] + A[i, k_0 * 128 + k_1]
//                            k_0 * 128 + k_1)     <all-reduce of B_partial over k_1 (CrossThreadAllReduce.h)>
//         with T.init():                          if k_1 == 0:
//           B[vi] = T.float32(0)                    B[i] = T.float32(0) + B_partial[0]
//         B[vi] = B[vi] + A[vi, vk]
//
// Each thread folds its share of the serial reduce loops into a register
// (iterations masked by T.where add nothing); the all-reduce combines the
// registers of the threads that differ only on the reduce thread axes; one
// thread writes `init op total` (or `B[idx] op total` without an init) — the
// serial result up to the association of the combiner. A "local" output is
// per thread, so there every thread writes its copy, as the serial program
// lets later statements of every thread read it. A tuple reduction whose
// parts are independent (TVM's layer-norm statistics: a sum and a sum of
// squares through let-bound temporaries) is one all-reduce per part; spatial
// loops inside the reduce loops move outside, one all-reduce per iteration.
//
// Partials accumulate in the output's dtype, float16 included: the
// interpreter rounds after every operation too, but in serial order, so GPU
// and interpreter agree only within a dtype-aware tolerance anyway.
//
// Thread-bound loops run "transparently" on a GPU (each thread runs the body
// with its own index), so the reduce nest may be rebuilt with its thread
// loops outermost; a thread axis the kernel uses elsewhere gets a loop here
// too, so that its threads, which also run this code, form separate groups.
// What cannot be made parallel safely is a LowerError naming the block and
// the loop: see `lower` below for the list.
//
//===----------------------------------------------------------------------===//
#include <array>
#include <map>
#include <limits>
#include <optional>
#include <unordered_set>

#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/lower/Passes.h"
#include "tessera/script/Printer.h"
#include "CrossThreadAllReduce.h"
#include "ThreadLoops.h"
#include "LoopScopedMutator.h"

namespace tessera::lower {

namespace {

using namespace tessera::ir;
using VarSet = std::unordered_set<const VarNode *>;
using VarMap = std::vector<std::pair<Var, Expr>>;

using detail::thread_axis;

/// Most partials a thread keeps for spatial loops left inside the reduce
/// loops (registers; beyond it the loops move outside the reduction).
constexpr int64_t kMaxInPlacePartials = 64;

bool is_block_axis(const For *f) {
  return f->for_kind == ForKind::ThreadBinding && f->thread_tag.rfind("blockIdx.", 0) == 0;
}

std::string loop_text(const For *f) {
  std::string s = "loop '" + f->loop_var.name() + "'";
  return f->for_kind == ForKind::ThreadBinding ? s + " bound to " + f->thread_tag : s;
}

/// The first variable of `e` (in pre-order) that is in `vars`, or nullptr.
const VarNode *first_var_in(const Expr &e, const VarSet &vars) {
  const VarNode *found = nullptr;
  pre_order_visit(Evaluate::make(e), [&](const Expr &x) {
    const auto *v = x.as<VarNode>();
    if (!found && v && vars.count(v)) found = v;
  }, nullptr);
  return found;
}

VarSet vars_of(const Expr &e) {
  VarSet out;
  pre_order_visit(Evaluate::make(e), [&](const Expr &x) {
    if (const auto *v = x.as<VarNode>()) out.insert(v);
  }, nullptr);
  return out;
}

bool reads_buffer(const Expr &e, const Buffer &b) {
  bool found = false;
  pre_order_visit(Evaluate::make(e), [&](const Expr &x) {
    if (const auto *l = x.as<Load>(); l && l->buffer.same_as(b)) found = true;
  }, nullptr);
  return found;
}

bool same_indices(const std::vector<Expr> &a, const std::vector<Expr> &b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!structural_equal(a[i], b[i])) return false;
  return true;
}

//===----------------------------------------------------------------------===//
// The update and its combiner
//===----------------------------------------------------------------------===//

bool is_combiner(BinaryOp op, DataType t) {
  if (t.lanes() != 1 || t.is_bool() || !(t.is_integer() || t.is_float())) return false;
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Mul:
    case BinaryOp::Max:
    case BinaryOp::Min: return true;
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor: return t.is_integer();
    default: return false;
  }
}

/// x op identity == x for every x of type t (floats: -inf/+inf for max/min,
/// so that infinite inputs survive).
Expr identity_of(BinaryOp op, DataType t) {
  double inf = std::numeric_limits<double>::infinity();
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor: return make_const(t, 0);
    case BinaryOp::Mul: return make_const(t, 1);
    case BinaryOp::BitAnd: return make_int(t, -1);
    case BinaryOp::Max:
    case BinaryOp::Min: {
      bool is_max = op == BinaryOp::Max;
      if (t.is_float()) return FloatImm::make(t, is_max ? -inf : inf);
      if (t.is_uint()) return make_int(t, is_max ? 0 : -1);
      if (t.bits() == 64) {
        using Limits = std::numeric_limits<int64_t>;
        return make_int(t, is_max ? Limits::min() : Limits::max());
      }
      int64_t half = int64_t{1} << (t.bits() - 1);
      return make_int(t, is_max ? -half : half - 1);
    }
    default: TESSERA_UNREACHABLE("not a combiner: " << binary_op_name(op));
  }
}

/// `out[indices] = out[indices] op value`, with `out[indices] = init_value`
/// as the block's init when it has one.
struct Update {
  Buffer out;
  std::vector<Expr> indices;
  BinaryOp op = BinaryOp::Add;
  Expr value;
  std::optional<Expr> init_value;
};

/// The stores of `s` (a Seq of Stores under LetStmts, as TVM prints a tuple
/// reduction: `v_0: T.float32 = B_0[i] + x; v_1 = ...; B_0[i] = v_0; ...`),
/// the lets substituted into their values; nullopt for anything else.
std::optional<std::vector<const Store *>> stores_of(const Stmt &s, VarMap &lets, std::vector<Stmt> &keep) {
  std::vector<const Store *> out;
  Stmt cur = s;
  while (const auto *let = cur.as<LetStmt>()) {
    lets.emplace_back(let->var, substitute(let->value, lets));
    cur = let->body;
  }
  std::vector<Stmt> seq = {cur};
  if (const auto *q = cur.as<Seq>()) seq = q->stmts;
  for (const Stmt &x : seq) {
    const auto *st = x.as<Store>();
    if (!st) return std::nullopt;
    Stmt inlined = Store::make(st->buffer, substitute(st->value, lets), st->indices);
    keep.push_back(inlined);
    out.push_back(inlined.as<Store>());
  }
  return out;
}

/// The updates of block `b`: one `B[idx] = B[idx] op value` per buffer it
/// reduces into (several for a tuple reduction whose parts are independent,
/// like a sum and a sum of squares), each value reading none of them.
std::vector<Update> match_updates(const Block *b, const std::string &what) {
  VarMap lets;
  std::vector<Stmt> keep;
  std::optional<std::vector<const Store *>> stores = stores_of(b->body, lets, keep);
  if (!stores)
    throw LowerError(what + ": its body must be updates `B[...] = B[...] op value` (after let bindings), found\n" +
                     script::print(b->body));
  std::vector<Update> us;
  for (const Store *st : *stores) {
    for (const Update &o : us)
      if (o.out.same_as(st->buffer))
        throw LowerError(what + ": it stores into '" + o.out.name() + "' twice");
    us.push_back(Update{st->buffer, st->indices});
  }
  auto reads_an_output = [&](const Expr &e) {
    for (const Update &o : us)
      if (reads_buffer(e, o.out)) return true;
    return false;
  };
  for (size_t i = 0; i < us.size(); ++i) {
    Update &u = us[i];
    auto is_self = [&](const Expr &e) {
      const auto *l = e.as<Load>();
      return l && l->buffer.same_as(u.out) && same_indices(l->indices, u.indices);
    };
    const Expr &value = (*stores)[i]->value;
    const auto *bin = value.as<Binary>();
    if (bin && is_combiner(bin->op, u.out.dtype())) {
      u.op = bin->op;
      if (is_self(bin->a) && !reads_an_output(bin->b)) u.value = bin->b;
      else if (is_self(bin->b) && !reads_an_output(bin->a)) u.value = bin->a;
    }
    if (!u.value.defined())
      throw LowerError(what + ": cannot recognise the combiner of `" + u.out.name() + "[...] = " +
                       script::print(value).substr(0, 200) +
                       "`; supported: +, *, T.max, T.min (and &, |, ^ on integers) of the element and a value "
                       "that reads none of the buffers the block reduces into");
  }
  if (!b->init) return us;
  VarMap init_lets;
  std::vector<Stmt> init_keep;
  std::optional<std::vector<const Store *>> inits = stores_of(*b->init, init_lets, init_keep);
  bool ok = inits && inits->size() == us.size();
  for (size_t i = 0; ok && i < us.size(); ++i) {
    const Store *init = (*inits)[i];
    ok = init->buffer.same_as(us[i].out) && same_indices(init->indices, us[i].indices) &&
         !reads_an_output(init->value);
    if (ok) us[i].init_value = init->value;
  }
  if (!ok)
    throw LowerError(what + ": its init must store one value into each element it reduces into, in the " +
                     "order of the updates, found\n" + script::print(*b->init));
  return us;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

class CrossThreadReductionLowerer : public detail::LoopScopedMutator {
 public:
  explicit CrossThreadReductionLowerer(const Stmt &body) {
    pre_order_visit(body, nullptr, [&](const Stmt &s) {
      const auto *f = s.as<For>();
      int a = f ? thread_axis(f) : -1;
      if (a >= 0 && !kernel_threads_[a]) kernel_threads_[a] = f;
    });
  }
  std::vector<Buffer> new_allocs;

 protected:
  using LoopScopedMutator::visit_;

  Stmt visit_(const For *op, const Stmt &self) override {
    if (std::optional<Stmt> s = try_lower(self)) return *s;
    size_t divergent = divergent_.size();
    if (depends_on_thread(op->min) || depends_on_thread(op->extent))
      divergent_.push_back(loop_text(op) + ", whose range depends on threadIdx,");
    if (thread_axis(op) >= 0) thread_dependent_.insert(op->loop_var.get());
    loops_.push_back(op);
    Stmt out = LoopScopedMutator::visit_(op, self);
    loops_.pop_back();
    thread_dependent_.erase(op->loop_var.get());
    divergent_.resize(divergent);
    // A serial reduce loop around other statements too: the partials of the
    // reductions inside it are set before it and combined after it.
    if (auto it = around_loop_.find(op); it != around_loop_.end()) {
      std::vector<Stmt> seq = it->second.before;
      seq.push_back(out);
      seq.insert(seq.end(), it->second.after.begin(), it->second.after.end());
      around_loop_.erase(it);
      return Seq::make(seq);
    }
    return out;
  }

  Stmt visit_(const Block *op, const Stmt &self) override {
    if (std::optional<Stmt> s = try_lower(self)) return *s;
    // Inner blocks see this block's iter vars: expand them to loops.
    arith::Analyzer::Scope scope(ana_);
    size_t outer = outer_bindings_.size(), divergent = divergent_.size();
    for (size_t i = 0; i < op->iter_vars.size(); ++i) {
      const IterVar &iv = op->iter_vars[i];
      Expr binding = substitute(op->bindings[i], outer_bindings_);
      outer_bindings_.emplace_back(iv.var, binding);
      if (depends_on_thread(binding)) thread_dependent_.insert(iv.var.get());
      ana_.bind(iv.var, iv.dom);
    }
    if (depends_on_thread(op->predicate)) divergent_.push_back("the predicate of block '" + op->name + "'");
    Stmt out = IRMutator::visit_(op, self);
    for (const IterVar &iv : op->iter_vars) thread_dependent_.erase(iv.var.get());
    outer_bindings_.resize(outer);
    divergent_.resize(divergent);
    return out;
  }

  Stmt visit_(const IfThenElse *op, const Stmt &self) override {
    size_t divergent = divergent_.size();
    if (depends_on_thread(op->cond)) divergent_.push_back("`if " + script::print(op->cond) + "`");
    Stmt out = IRMutator::visit_(op, self);
    divergent_.resize(divergent);
    return out;
  }

  Stmt visit_(const LetStmt *op, const Stmt &self) override {
    bool dependent = depends_on_thread(op->value);
    if (dependent) thread_dependent_.insert(op->var.get());
    Stmt out = IRMutator::visit_(op, self);
    if (dependent) thread_dependent_.erase(op->var.get());
    return out;
  }

 private:
  bool depends_on_thread(const Expr &e) const { return first_var_in(e, thread_dependent_) != nullptr; }

  /// When `s` is a perfect nest of loops around a block whose outermost
  /// reduce loop is `s` itself and some reduce loop is bound to threadIdx,
  /// its parallel form; nullopt when the nest is not such a reduction or
  /// starts further in.
  std::optional<Stmt> try_lower(const Stmt &s) {
    std::vector<const For *> chain;
    Stmt cur = s;
    while (const auto *f = cur.as<For>()) {
      chain.push_back(f);
      cur = f->body;
    }
    const auto *b = cur.as<Block>();
    if (!b) return std::nullopt;
    VarSet reduce_vars;
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
      if (b->iter_vars[i].kind != IterKind::Reduce) continue;
      VarSet vs = vars_of(substitute(b->bindings[i], outer_bindings_));
      reduce_vars.insert(vs.begin(), vs.end());
    }
    std::vector<const For *> all = loops_;
    all.insert(all.end(), chain.begin(), chain.end());
    const For *root = nullptr, *thread_loop = nullptr;
    size_t root_at = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      const For *f = all[i];
      if (!reduce_vars.count(f->loop_var.get())) continue;
      if (!root) {
        root = f;
        root_at = i;
      }
      bool single = is_const_int(arith::simplify(f->extent), 1);
      if (is_block_axis(f) && !single)
        throw LowerError("block '" + b->name + "' reduces across " + loop_text(f) +
                         ": a reduction across thread blocks is not supported");
      if (thread_axis(f) >= 0 && !single && !thread_loop) thread_loop = f;
    }
    if (!thread_loop) return std::nullopt;
    std::string what =
        "cross-thread reduction block '" + b->name + "' (reducing across " + loop_text(thread_loop) + ")";
    if (root_at > loops_.size()) return std::nullopt;
    // Reduce loops around other statements too stay where they are, and
    // nothing else in them may touch what the block reduces into, which the
    // serial program would see half-reduced. threadIdx loops: every thread
    // runs their body. A serial reduce loop (TVM's reduction whose K loop
    // also fills shared-memory tiles): the block inside folds each thread's
    // share into its partial, and the partials are set before the outermost
    // such loop (the anchor) and combined after it. The loops from the
    // anchor in must all be serial reduce loops: a threadIdx loop inside
    // would have to be left to combine, and a spatial loop would mix several
    // outputs into one partial.
    std::vector<const For *> outer(loops_.begin() + root_at, loops_.end());
    const For *anchor = nullptr;
    for (const For *f : outer) {
      const bool reduce = reduce_vars.count(f->loop_var.get()) > 0;
      if (thread_axis(f) >= 0 && !anchor) continue;
      if (anchor && thread_axis(f) >= 0) throw thread_loop_inside(what, f, anchor);
      if (!reduce)
        throw LowerError(what + ": " + loop_text(f) + " encloses other statements too and is not one of its " +
                         "reduce loops; a serial loop around other statements must be a reduce loop of the block");
      if (!anchor) anchor = f;
    }
    if (!outer.empty())
      for (const Store *st : block_stores(b)) {
        auto accesses = [&](const Stmt &x) { return count_accesses(x, st->buffer); };
        int64_t in_block = accesses(b->body) + (b->init ? accesses(*b->init) : 0);
        if (accesses(outer.front()->body) != in_block)
          throw LowerError(what + ": its reduce " + loop_text(outer.front()) + " encloses other statements " +
                           "that access '" + st->buffer.name() + "', which it reduces into");
      }
    return lower(outer, chain, b, what, anchor);
  }

  /// The stores of a block body (under its lets).
  static std::vector<const Store *> block_stores(const Block *b) {
    std::vector<const Store *> out;
    pre_order_visit(b->body, nullptr, [&](const Stmt &x) {
      if (const auto *st = x.as<Store>()) out.push_back(st);
    });
    return out;
  }

  /// Loads and stores of `buf` in `s`.
  static int64_t count_accesses(const Stmt &s, const Buffer &buf) {
    int64_t n = 0;
    pre_order_visit(s, [&](const Expr &x) {
      if (const auto *l = x.as<Load>(); l && l->buffer.same_as(buf)) ++n;
    }, [&](const Stmt &x) {
      if (const auto *st = x.as<Store>(); st && st->buffer.same_as(buf)) ++n;
    });
    return n;
  }

  /// The parallel form of block `b` under the loops `chain` (outermost is the
  /// outermost reduce loop, unless reduce loops bound to threadIdx enclose
  /// other statements too: those are `outer`, and stay where they are).
  /// LowerError, naming the block and a loop, when
  ///   - threads diverge around it (an `if`, loop range or block predicate
  ///     that depends on threadIdx): not all would reach the barriers;
  ///   - the updates are not `B[idx] = B[idx] op value` with known
  ///     combiners, values that read none of the reduced buffers (a tuple
  ///     reduction like argmax couples them), or the init does not store
  ///     into each B[idx];
  ///   - a spatial loop inside the reduce nest has a range that depends on
  ///     threadIdx or on a reduce loop (other spatial loops move outside the
  ///     reduction, each iteration an all-reduce of its own);
  ///   - a reduce loop feeds a spatial iter var, the index of B or the init;
  ///   - a thread axis around it has a symbolic extent;
  ///   - the init would not run on the first reduce iteration (serial
  ///     semantics that one write cannot reproduce).
  Stmt lower(const std::vector<const For *> &outer, const std::vector<const For *> &chain, const Block *b,
             const std::string &what, const For *anchor) {
    // Step 1. Check (may throw; IR untouched)
    if (!divergent_.empty())
      throw LowerError(what + " lies under " + divergent_.back() + " which differs between threads: " +
                       "every thread must reach the reduction's shuffles and barriers");
    std::vector<Update> us = match_updates(b, what);
    arith::Analyzer ana = ana_;
    VarSet reduce_vars;
    for (size_t i = 0; i < b->iter_vars.size(); ++i)
      if (b->iter_vars[i].kind == IterKind::Reduce) {
        VarSet vs = vars_of(b->bindings[i]);
        reduce_vars.insert(vs.begin(), vs.end());
      }
    std::vector<const For *> thread_loops, serial_loops, spatial_loops;
    VarMap unit_loops, first_iteration;
    VarSet reduce_loops;
    for (const For *f : outer) {
      reduce_loops.insert(f->loop_var.get());
      first_iteration.emplace_back(f->loop_var, f->min);
    }
    for (const For *f : chain) {
      ana.bind(f->loop_var, Range{f->min, f->extent});
      bool is_reduce = reduce_vars.count(f->loop_var.get()) > 0;
      if (is_reduce) {
        reduce_loops.insert(f->loop_var.get());
        first_iteration.emplace_back(f->loop_var, f->min);
      }
      if (f->for_kind == ForKind::ThreadBinding) {
        if (anchor) throw thread_loop_inside(what, f, anchor);
        thread_loops.push_back(f);
      } else if (is_const_int(arith::simplify(f->extent), 1)) {
        unit_loops.emplace_back(f->loop_var, f->min);
      } else if (!is_reduce) {
        // A spatial loop inside the reduce loops (dlight's decode-gemv
        // writes 8 outputs per thread so): one all-reduce per iteration.
        check_not_reduced(f->min, reduce_loops, what, "the range of " + loop_text(f));
        check_not_reduced(f->extent, reduce_loops, what, "the range of " + loop_text(f));
        if (depends_on_thread(f->min) || depends_on_thread(f->extent))
          throw LowerError(what + ": the range of " + loop_text(f) + " inside its reduce loops depends on " +
                           "threadIdx; every thread must run the same all-reduces");
        spatial_loops.push_back(f);
      } else {
        serial_loops.push_back(f);
      }
    }
    // Spatial loops inside the reduce loops stay in place when their extents
    // are small constants: each thread's partials are an array over them
    // (registers), folded in the loops' order, so a vector of outputs reads
    // a vector per step (an outer reduction's row segment); the combining
    // then runs per element. Otherwise they move outside the reduction.
    int64_t in_place_lanes = 1;
    bool in_place = !spatial_loops.empty();
    Expr lane = i32(0);  // the partial of the current spatial iteration
    for (const For *f : spatial_loops) {
      std::optional<int64_t> e = as_const_int(arith::simplify(f->extent));
      if (!e || *e < 1 || *e > kMaxInPlacePartials / in_place_lanes || !is_const_int(arith::simplify(f->min), 0)) {
        in_place = false;
        break;
      }
      in_place_lanes *= *e;
      lane = add(mul(lane, i32(*e)), cast(DataType::int32(), f->loop_var));
    }
    lane = arith::simplify(lane);
    if (anchor && !spatial_loops.empty() && !in_place)
      throw LowerError(what + ": " + loop_text(spatial_loops.front()) + " inside its reduce " + loop_text(anchor) +
                       " (which encloses other statements too) would have to move outside that loop; keep such " +
                       "spatial loops constant and small (at most " + std::to_string(kMaxInPlacePartials) +
                       " partials a thread)");
    auto local = [&](const Expr &e) { return ana.simplify(substitute(e, unit_loops)); };
    VarMap bindings;
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
      const IterVar &iv = b->iter_vars[i];
      bindings.emplace_back(iv.var, local(b->bindings[i]));
      if (iv.kind == IterKind::Spatial) check_not_reduced(bindings.back().second, reduce_loops, what,
                                                          "spatial iter var '" + iv.var.name() + "'");
    }
    auto own = [&](const Expr &e) { return local(substitute(e, bindings)); };
    struct Part {
      const Update *u;
      std::vector<Expr> indices;
      std::optional<Expr> init_value;
    };
    std::vector<Part> parts;
    for (const Update &u : us) {
      Part p{&u, {}, std::nullopt};
      for (const Expr &i : u.indices) {
        p.indices.push_back(own(i));
        check_not_reduced(p.indices.back(), reduce_loops, what, "the index of '" + u.out.name() + "' it writes");
      }
      if (u.init_value) {
        p.init_value = own(*u.init_value);
        check_not_reduced(*p.init_value, reduce_loops, what, "its init value");
      }
      parts.push_back(std::move(p));
    }
    std::array<detail::ThreadAxis, 3> axes = thread_axes(chain, reduce_loops, what);
    for (int a = 0; anchor && a < 3; ++a)
      if (axes[a].var.defined() && !kernel_loop_around(axes[a].var, chain))
        throw LowerError(what + ": the kernel's " + kernel_threads_[a]->thread_tag + " loop is not around " +
                         "its reduce " + loop_text(anchor) + ", which encloses other statements too; every " +
                         "thread axis of the kernel must enclose such a reduction");
    // The predicate: clauses on the reduce loops mask iterations; the others
    // decide whether the element is written at all. Where the first
    // iteration may be masked (a symbolic extent that may be 0, a tail), the
    // init runs only if it is not: the write is `init op total` then, and
    // `B[idx] op total` otherwise, as in the serial program.
    Expr pred = own(b->predicate);
    std::vector<Expr> on_reduce, on_spatial;
    std::vector<Expr> clauses = split_conjunction(pred);
    for (const Expr &c : clauses) (first_var_in(c, reduce_loops) ? on_reduce : on_spatial).push_back(c);
    Expr first_unmasked = ana.simplify(substitute(conjunction(on_reduce), first_iteration));
    bool has_init = b->init.has_value();
    if (has_init) {
      for (size_t i = 0; i < b->iter_vars.size(); ++i) {
        const IterVar &iv = b->iter_vars[i];
        if (iv.kind != IterKind::Reduce) continue;
        if (!ana.can_prove_equal(substitute(bindings[i].second, first_iteration), iv.dom.min))
          throw LowerError(what + ": iter var '" + iv.var.name() + "' is not at its minimum on the first " +
                           "iteration of the reduce loops, so its init would not run first");
      }
    }

    // Step 2. Fold the serial reduce loops into per-thread partials (an
    // array over the spatial loops kept in place).
    std::vector<Buffer> partials, arrays;
    std::vector<Stmt> body, folds;
    for (const Part &p : parts) {
      Var init_lane("lane", DataType::int32());  // one per loop: no variable bound twice
      DataType t = p.u->out.dtype();
      Buffer partial = Buffer::make(p.u->out.name() + "_partial", t, {i32(1)}, "local");
      partials.push_back(partial);
      Buffer acc = partial;
      if (in_place) {
        acc = Buffer::make(p.u->out.name() + "_partials", t, {i32(in_place_lanes)}, "local");
        arrays.push_back(acc);
        body.push_back(For::make(init_lane, i32(0), i32(in_place_lanes), ForKind::Unrolled,
                                 Store::make(acc, identity_of(p.u->op, t), {init_lane})));
      } else {
        body.push_back(Store::make(partial, identity_of(p.u->op, t), {i32(0)}));
      }
      Expr at = in_place ? lane : i32(0);
      folds.push_back(Store::make(acc, Binary::make(p.u->op, Load::make(acc, {at}), own(p.u->value)), {at}));
    }
    Stmt fold = Seq::make(folds);
    if (!is_const_int(pred, 1)) fold = IfThenElse::make(pred, fold);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const For *f = *it;
      bool spatial = std::find(spatial_loops.begin(), spatial_loops.end(), f) != spatial_loops.end();
      bool kept = std::find(serial_loops.begin(), serial_loops.end(), f) != serial_loops.end() || (in_place && spatial);
      // The partials array is registers only when indexed by constants: its
      // loops unrolled (a vectorized one becomes unrolled lanes in lowering).
      ForKind kind = spatial && f->for_kind != ForKind::Vectorized ? ForKind::Unrolled : f->for_kind;
      if (kept) fold = For::make(f->loop_var, f->min, f->extent, kind, fold, "", f->annotations);
    }
    body.push_back(fold);

    // Step 3. Combine across threads, part by part; one thread (every thread
    // for a local output) writes the element.
    std::vector<Stmt> combine;
    for (size_t i = 0; i < parts.size(); ++i) {
      const Part &p = parts[i];
      const Update &u = *p.u;
      Expr identity = identity_of(u.op, u.out.dtype());
      Expr partial_value = Load::make(partials[i], {i32(0)});
      bool every_thread = u.out.scope() == "local";
      if (in_place) combine.push_back(Store::make(partials[i], Load::make(arrays[i], {lane}), {i32(0)}));
      detail::AllReduce all =
          detail::build_all_reduce({partials[i], u.op, identity, axes, every_thread, u.out.name()});
      combine.insert(combine.end(), all.stmts.begin(), all.stmts.end());
      new_allocs.insert(new_allocs.end(), all.allocs.begin(), all.allocs.end());
      Expr old = Load::make(u.out, p.indices);
      Expr before = old;
      if (p.init_value) {
        before = *p.init_value;
        if (!ana.can_prove(first_unmasked)) before = if_then_else(first_unmasked, before, old);
      }
      Stmt write = Store::make(u.out, Binary::make(u.op, before, partial_value), p.indices);
      std::vector<Expr> guard = on_spatial;
      if (!every_thread) {
        guard.push_back(all.is_first_thread);
        for (const detail::ThreadAxis &a : axes)
          if (a.var.defined() && !kernel_loop_around(a.var, chain)) guard.push_back(eq(a.var, a.min));
      }
      Expr cond = arith::simplify(conjunction(guard));
      combine.push_back(is_const_int(cond, 1) ? write : IfThenElse::make(cond, write));
    }
    // The combining per spatial iteration: the loops again (fresh variables)
    // around it when they stayed in place, else around everything (Step 4).
    Stmt combined = Seq::make(combine);
    auto spatial_nest = [&](Stmt s, bool fresh) {
      VarMap renamed;
      std::vector<Var> vars;
      for (const For *f : spatial_loops) {
        vars.push_back(fresh ? Var(f->loop_var.name(), f->loop_var.dtype()) : f->loop_var);
        renamed.emplace_back(f->loop_var, vars.back());
      }
      if (fresh) s = substitute(s, renamed);
      for (size_t k = spatial_loops.size(); k-- > 0;) {
        const For *f = spatial_loops[k];
        ForKind kind = fresh || f->for_kind == ForKind::Unrolled ? ForKind::Unrolled : ForKind::Serial;
        const Var &v = vars[k];
        s = For::make(v, f->min, f->extent, kind, s, "", fresh ? Annotations{} : f->annotations);
      }
      return s;
    };
    combined = in_place ? spatial_nest(combined, true) : combined;
    new_allocs.insert(new_allocs.end(), partials.begin(), partials.end());
    new_allocs.insert(new_allocs.end(), arrays.begin(), arrays.end());
    if (anchor) {
      // The partials set before the anchor, combined after it; the fold in
      // place of the block (no thread loops to add: they are all around).
      Around &around = around_loop_[anchor];
      around.before.insert(around.before.end(), body.begin(), body.end() - 1);
      around.after.push_back(combined);
      return body.back();
    }
    body.push_back(combined);

    // Step 4. Thread loops outermost (they run transparently on the GPU).
    Stmt out = Seq::make(body);
    if (!in_place) out = spatial_nest(out, false);
    for (auto it = thread_loops.rbegin(); it != thread_loops.rend(); ++it) {
      const For *f = *it;
      out = For::make(f->loop_var, f->min, f->extent, f->for_kind, out, f->thread_tag, f->annotations);
    }
    for (int a = 2; a >= 0; --a) {
      const detail::ThreadAxis &x = axes[a];
      if (x.var.defined() && !kernel_loop_around(x.var, chain))
        out = For::make(x.var, x.min, i32(x.extent), ForKind::ThreadBinding, out,
                        kernel_threads_[a]->thread_tag);
    }
    return out;
  }

  /// The error for threadIdx loop `f` inside `anchor`, a serial reduce loop
  /// around other statements too.
  static LowerError thread_loop_inside(const std::string &what, const For *f, const For *anchor) {
    return LowerError(what + ": " + loop_text(f) + " lies inside its reduce " + loop_text(anchor) +
                      ", which encloses other statements too; the threadIdx loops of such a reduction must " +
                      "enclose its serial reduce loops");
  }

  static void check_not_reduced(const Expr &e, const VarSet &reduce_loops, const std::string &what,
                                const std::string &where) {
    if (const VarNode *v = first_var_in(e, reduce_loops))
      throw LowerError(what + ": reduce loop '" + v->name + "' also feeds " + where);
  }

  /// True when `v` is the variable of a loop around the block (in the
  /// program, not added by this pass).
  bool kernel_loop_around(const Var &v, const std::vector<const For *> &chain) const {
    for (const auto *loops : {&loops_, &chain})
      for (const For *f : *loops)
        if (f->loop_var.same_as(v)) return true;
    return false;
  }

  /// The threadIdx axes of the kernel as seen from the block: the loop
  /// around it, or a fresh variable for an axis the kernel binds elsewhere.
  std::array<detail::ThreadAxis, 3> thread_axes(const std::vector<const For *> &chain,
                                                 const VarSet &reduce_loops, const std::string &what) const {
    std::array<const For *, 3> around{};
    for (const auto *loops : {&loops_, &chain})
      for (const For *f : *loops) {
        int a = thread_axis(f);
        if (a < 0) continue;
        if (around[a])
          throw LowerError(what + ": " + loop_text(around[a]) + " and " + loop_text(f) + " are nested");
        around[a] = f;
      }
    std::array<detail::ThreadAxis, 3> axes;
    for (int a = 0; a < 3; ++a) {
      const For *f = around[a] ? around[a] : kernel_threads_[a];
      if (!f) continue;
      std::optional<int64_t> extent = as_const_int(arith::simplify(f->extent));
      if (!extent)
        throw LowerError(what + ": " + loop_text(f) + " has the symbolic extent " + script::print(f->extent) +
                         "; a cross-thread reduction needs constant thread extents");
      DataType t = f->loop_var.dtype();
      if (around[a]) axes[a] = {f->loop_var, f->min, *extent, reduce_loops.count(f->loop_var.get()) > 0};
      else if (*extent > 1) axes[a] = {Var(f->loop_var.name(), t), make_int(t, 0), *extent, false};
    }
    return axes;
  }

  /// The first loop bound to threadIdx.x/y/z anywhere in the kernel.
  std::array<const For *, 3> kernel_threads_{};
  /// What goes around a serial reduce loop that encloses other statements
  /// too (an anchor of `lower`): the partials' inits, and their combining.
  struct Around {
    std::vector<Stmt> before, after;
  };
  std::map<const For *, Around> around_loop_;
  std::vector<const For *> loops_;
  /// Enclosing constructs whose condition differs between threads.
  std::vector<std::string> divergent_;
  /// threadIdx loop variables, and the let and iter vars computed from them.
  VarSet thread_dependent_;
  /// Iter vars of enclosing blocks -> their bindings in terms of loops.
  VarMap outer_bindings_;
};

}  // namespace

LoweredFunc lower_cross_thread_reduction(const LoweredFunc &f) {
  CrossThreadReductionLowerer pass(f.body);
  LoweredFunc out = f;
  out.body = pass.mutate(f.body);
  out.allocs.insert(out.allocs.end(), pass.new_allocs.begin(), pass.new_allocs.end());
  return out;
}

}  // namespace tessera::lower
