//===- CompileStmt.cpp - Statements and blocks to closures -----------------===//
//
// Scoping is resolved here, at compile time: each binding of a variable (loop,
// block iter var, let, parameter, shape variable) gets a fresh slot, and each
// buffer (parameter or alloc_buffer) a BufState slot, visible only inside the
// statement that binds it. A use outside that scope is an InterpretError when
// the program is compiled, not when it runs.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "Closures.h"
#include "tessera/analysis/ThreadBindings.h"
#include "tessera/ir/Functor.h"
#include "Scalar.h"

namespace tessera::runtime::detail {

using ir::DataType;
using ir::Expr;

void poison(uint8_t *data, size_t bytes, DataType t) {
  if (!t.is_float()) {
    std::memset(data, 0xA5, bytes);
    return;
  }
  // The pattern into the first 256 bytes, then those bytes copied over the
  // rest in doubling pieces: memcpy's speed (an element at a time, 4 MiB of
  // float32 took 1.4 ms, as long as the tiled matmul that allocates them).
  auto fill = [&](const void *pattern, size_t n) {
    size_t filled = 0;
    for (; filled + n <= bytes && filled < 256; filled += n) std::memcpy(data + filled, pattern, n);
    while (filled > 0 && filled + n <= bytes) {
      const size_t piece = std::min(filled, (bytes - filled) / n * n);
      std::memcpy(data + filled, data, piece);
      filled += piece;
    }
  };
  switch (float_kind(t)) {
    case FK::F16: {
      uint16_t p = 0x7e00;
      fill(&p, 2);
      break;
    }
    case FK::BF16: {
      uint16_t p = 0x7fc0;
      fill(&p, 2);
      break;
    }
    case FK::F32: {
      uint32_t p = 0x7fc00000u;
      fill(&p, 4);
      break;
    }
    default: {
      uint64_t p = 0x7ff8000000000000ull;
      fill(&p, 8);
    }
  }
}

namespace {

template <typename E, bool IsFloat, typename Ix>
struct StoreNode final : StmtExec {
  Ix ix;
  IntPtr ival;
  FloatPtr fval;
  explicit StoreNode(Ix &&i) : ix(std::move(i)) {}
  void exec(Frame &f) const override {
    // The value first, then the index: a failing load in the value is reported
    // before an out-of-bounds store.
    if constexpr (IsFloat) {
      double v = fval->eval(f);
      write_float<E>(f.bufs[ix.buf].data, ix.offset(f), v);
    } else {
      int64_t v = ival->eval(f);
      write_int<E>(f.bufs[ix.buf].data, ix.offset(f), v);
    }
  }
};

/// A loop; `Body` is the body's static type when it is known to be a block
/// (the common case: a direct call), else StmtExec.
template <typename Body>
struct ForNode final : StmtExec {
  int slot = 0;
  IntPtr min, extent;
  StmtPtr body;
  void exec(Frame &f) const override {
    int64_t lo = min->eval(f);
    int64_t n = extent->eval(f);  // negative: no iterations
    int64_t *v = &f.iv[slot];
    const Body *b = static_cast<const Body *>(body.get());
    for (int64_t i = 0; i < n; ++i) {
      *v = lo + i;
      b->exec(f);
    }
  }
};

struct SeqNode final : StmtExec {
  std::vector<StmtPtr> stmts;
  void exec(Frame &f) const override {
    for (const StmtPtr &s : stmts) s->exec(f);
  }
};

struct IfNode final : StmtExec {
  IntPtr cond;
  StmtPtr then_case, else_case;
  void exec(Frame &f) const override {
    if (cond->eval(f))
      then_case->exec(f);
    else if (else_case)
      else_case->exec(f);
  }
};

struct LetStmtNode final : StmtExec {
  int slot = 0;
  IntPtr ival;
  FloatPtr fval;
  StmtPtr body;
  void exec(Frame &f) const override {
    if (fval)
      f.fv[slot] = fval->eval(f);
    else
      f.iv[slot] = ival->eval(f);
    body->exec(f);
  }
};

struct EvalNode final : StmtExec {
  IntPtr ival;
  FloatPtr fval;
  void exec(Frame &f) const override {
    if (fval)
      (void)fval->eval(f);
    else
      (void)ival->eval(f);
  }
};

/// One block iter var: where its value comes from and its domain.
struct IterInfo {
  int slot = 0;
  int src_slot = -1;  // the binding is this plain variable
  IntPtr binding;
  IntPtr dom_min, dom_extent;
  bool const_dom = false;
  int64_t cmin = 0, cextent = 0;
  bool reduce = false;
  bool check = true;  // false when the binding provably stays inside the domain
  const ErrCtx *ctx = nullptr;  // what = the iter var's name
};

/// One `alloc_buffer` of a block.
struct AllocInfo {
  int slot = 0;
  int id = 0;
  DataType dtype;
  std::vector<IntPtr> shape, strides;
  const ErrCtx *ctx = nullptr;  // what = the buffer's name
};


struct BlockNode final : StmtExec {
  std::vector<IterInfo> iters;
  IntPtr predicate;  // null when constant true
  std::vector<AllocInfo> allocs;
  StmtPtr init, body;
  bool has_reduce = false;

  void exec(Frame &f) const override {
    for (const IterInfo &it : iters) f.iv[it.slot] = it.src_slot >= 0 ? f.iv[it.src_slot] : it.binding->eval(f);
    if (predicate && !predicate->eval(f)) return;
    bool first = true;
    for (const IterInfo &it : iters) {
      int64_t v = f.iv[it.slot];
      if (it.const_dom) {
        if (it.check && (v < it.cmin || v >= it.cmin + it.cextent)) [[unlikely]]
          out_of_domain(it, v, it.cmin, it.cextent);
        if (it.reduce && v != it.cmin) first = false;
        continue;
      }
      int64_t lo = it.dom_min->eval(f);
      int64_t n = it.dom_extent->eval(f);
      if (v < lo || v >= lo + n) [[unlikely]]
        out_of_domain(it, v, lo, n);
      if (it.reduce && v != lo) first = false;
    }
    for (const AllocInfo &a : allocs) allocate(f, a);
    if (init && first) init->exec(f);
    body->exec(f);
  }

  [[noreturn]] static void out_of_domain(const IterInfo &it, int64_t v, int64_t lo, int64_t n) {
    std::ostringstream os;
    os << "iter var '" << it.ctx->what << "' = " << v << " is outside its domain [" << lo << ", " << lo + n
       << ") in block '" << it.ctx->block << "'";
    throw InterpretError(os.str());
  }

  static void allocate(Frame &f, const AllocInfo &a) {
    BufState &b = f.bufs[a.slot];
    b.ndim = static_cast<int>(a.shape.size());
    int64_t numel = 1;
    for (int d = 0; d < b.ndim; ++d) {
      b.shape[d] = a.shape[d]->eval(f);
      if (b.shape[d] < 0) {
        std::ostringstream os;
        os << "alloc_buffer '" << a.ctx->what << "' has negative dimension " << d << " = " << b.shape[d]
           << " in block '" << a.ctx->block << "'";
        throw InterpretError(os.str());
      }
      if (__builtin_mul_overflow(numel, b.shape[d], &numel))
        throw InterpretError("alloc_buffer '" + a.ctx->what + "' in block '" + a.ctx->block +
                             "' has more elements than a 64-bit count holds");
    }
    if (a.strides.empty()) {
      int64_t s = 1;
      for (int d = b.ndim - 1; d >= 0; --d) {
        b.strides[d] = s;
        s *= b.shape[d];
      }
      b.storage = numel;
    } else {
      int64_t last = 0;
      for (int d = 0; d < b.ndim; ++d) {
        b.strides[d] = a.strides[d]->eval(f);
        if (b.shape[d] > 0) last += (b.shape[d] - 1) * b.strides[d];
      }
      b.storage = numel == 0 ? 0 : last + 1;
    }
    std::vector<uint8_t> &mem = (*f.alloc_storage)[a.id];
    const double bytes = double(b.storage) * a.dtype.bytes();
    if (bytes > double(mem.size())) {
      const std::string what = "alloc_buffer '" + a.ctx->what + "' in block '" + a.ctx->block + "'";
      if (bytes >= 9.2e18) throw InterpretError(what + " has more bytes than a 64-bit count holds");
      NDArray::check_fits(bytes, what);
    }
    mem.resize(static_cast<size_t>(b.storage) * a.dtype.bytes());
    poison(mem, a.dtype);
    b.data = mem.data();
  }
};

}  // namespace

int Compiler::bind_var(const ir::Var &v) {
  DataType t = v.dtype();
  if (t.lanes() != 1 || t.is_handle() || t.is_void())
    throw InterpretError("variable '" + v.name() + "' of type " + t.str() + " in block '" + block_ +
                         "' cannot be interpreted");
  bool is_float = t.is_float();
  int slot = is_float ? prog_.num_float_slots++ : prog_.num_int_slots++;
  vars_[v.get()].push_back(VarInfo{slot, is_float});
  return slot;
}

void Compiler::unbind_var(const ir::Var &v) { vars_[v.get()].pop_back(); }

int Compiler::bind_buffer(const ir::Buffer &b) {
  if (b.ndim() > kMaxDims)
    throw InterpretError("buffer '" + b.name() + "' has " + std::to_string(b.ndim()) +
                         " dimensions; the interpreter supports at most " + std::to_string(kMaxDims));
  if (b.dtype().lanes() != 1 || b.dtype().is_handle() || b.dtype().is_void())
    throw InterpretError("buffer '" + b.name() + "' of type " + b.dtype().str() + " cannot be interpreted");
  if (!b->strides.empty() && static_cast<int>(b->strides.size()) != b.ndim())
    throw InterpretError("buffer '" + b.name() + "' has " + std::to_string(b->strides.size()) + " strides for " +
                         std::to_string(b.ndim()) + " dimensions");
  int slot = prog_.num_buf_slots++;
  bufs_[b.get()].push_back(slot);
  return slot;
}

void Compiler::unbind_buffer(const ir::Buffer &b) { bufs_[b.get()].pop_back(); }

int Compiler::buffer_slot(const ir::Buffer &b, const char *use) {
  auto it = bufs_.find(b.get());
  if (it == bufs_.end() || it->second.empty())
    throw InterpretError(std::string(use) + " buffer '" + b.name() + "' in block '" + block_ +
                         "', which is neither a parameter nor allocated by an enclosing block");
  return it->second.back();
}

StmtPtr Compiler::compile_stmt(const ir::Stmt &s) {
  switch (s.kind()) {
    case ir::NodeKind::Store: {
      const auto *st = s.as<ir::Store>();
      DataType t = st->buffer.dtype();
      int slot = buffer_slot(st->buffer, "store to");
      auto build = [&]<typename E, bool IsFloat>() -> StmtPtr {
        return make_indexer(*this, st->buffer, slot, st->indices, true, [&]<typename Ix>(Ix &&ix) -> StmtPtr {
          auto n = std::make_unique<StoreNode<E, IsFloat, Ix>>(std::move(ix));
          if constexpr (IsFloat)
            n->fval = compile_float(st->value);
          else
            n->ival = compile_int(st->value);
          return n;
        });
      };
      if (t.is_float())
        return dispatch_float_storage(t, [&]<typename E>() { return build.template operator()<E, true>(); });
      return dispatch_int_storage(t, [&]<typename E>() { return build.template operator()<E, false>(); });
    }
    case ir::NodeKind::For: {
      const auto *fo = s.as<ir::For>();
      IntPtr min = compile_int(fo->min), extent = compile_int(fo->extent);
      int slot = bind_var(fo->loop_var);
      auto cmin = ir::as_const_int(fo->min), cext = ir::as_const_int(fo->extent);
      if (cmin && cext) loop_range_[slot] = {*cmin, *cext};
      StmtPtr body = compile_stmt(fo->body);
      unbind_var(fo->loop_var);
      auto make = [&]<typename Body>() -> StmtPtr {
        auto n = std::make_unique<ForNode<Body>>();
        n->slot = slot;
        n->min = std::move(min);
        n->extent = std::move(extent);
        n->body = std::move(body);
        return n;
      };
      if (dynamic_cast<const BlockNode *>(body.get())) return make.template operator()<BlockNode>();
      return make.template operator()<StmtExec>();
    }
    case ir::NodeKind::Seq: {
      auto n = std::make_unique<SeqNode>();
      for (const ir::Stmt &c : s.as<ir::Seq>()->stmts) n->stmts.push_back(compile_stmt(c));
      return n;
    }
    case ir::NodeKind::IfThenElse: {
      const auto *i = s.as<ir::IfThenElse>();
      auto n = std::make_unique<IfNode>();
      n->cond = compile_int(i->cond);
      n->then_case = compile_stmt(i->then_case);
      if (i->else_case) n->else_case = compile_stmt(*i->else_case);
      return n;
    }
    case ir::NodeKind::LetStmt: {
      const auto *l = s.as<ir::LetStmt>();
      auto n = std::make_unique<LetStmtNode>();
      compile_value(l->value, n->ival, n->fval);
      n->slot = bind_var(l->var);
      n->body = compile_stmt(l->body);
      unbind_var(l->var);
      return n;
    }
    case ir::NodeKind::Evaluate: {
      const auto *e = s.as<ir::Evaluate>();
      if (const auto *c = e->value.as<ir::Call>(); c && ir::is_async_or_warp_statement(c->op))
        return compile_warp_statement(*this, *c);
      auto n = std::make_unique<EvalNode>();
      compile_value(e->value, n->ival, n->fval);
      return n;
    }
    case ir::NodeKind::Block: return compile_block(*s.as<ir::Block>());
    default: break;
  }
  throw InterpretError(std::string("cannot interpret statement ") + ir::node_kind_name(s.kind()) + " in block '" +
                       block_ + "'");
}

StmtPtr Compiler::compile_block(const ir::Block &b) {
  auto n = std::make_unique<BlockNode>();
  std::string outer = block_;
  block_ = b.name;
  // Bindings and domains refer to the enclosing scope: compile them before
  // the iter vars come into scope.
  for (size_t i = 0; i < b.iter_vars.size(); ++i) {
    const ir::IterVar &iv = b.iter_vars[i];
    IterInfo info;
    info.src_slot = int_var_slot(b.bindings[i]);
    if (info.src_slot < 0) info.binding = compile_int(b.bindings[i]);
    auto cmin = ir::as_const_int(iv.dom.min), cext = ir::as_const_int(iv.dom.extent);
    if (cmin && cext) {
      info.const_dom = true;
      info.cmin = *cmin;
      info.cextent = *cext;
      if (auto r = loop_range_.find(info.src_slot); info.src_slot >= 0 && r != loop_range_.end()) {
        auto [lo, n] = r->second;
        info.check = n > 0 && (lo < *cmin || lo + n > *cmin + *cext);
      }
    } else {
      info.dom_min = compile_int(iv.dom.min);
      info.dom_extent = compile_int(iv.dom.extent);
    }
    info.reduce = iv.kind == ir::IterKind::Reduce;
    n->has_reduce |= info.reduce;
    info.ctx = ctx(iv.var.name());
    n->iters.push_back(std::move(info));
  }
  for (size_t i = 0; i < b.iter_vars.size(); ++i) n->iters[i].slot = bind_var(b.iter_vars[i].var);
  if (b.predicate.defined() && !ir::is_const_int(b.predicate, 1)) n->predicate = compile_int(b.predicate);
  for (const ir::Buffer &buf : b.allocs) {
    AllocInfo a;
    a.dtype = buf.dtype();
    for (const Expr &e : buf.shape()) a.shape.push_back(compile_int(e));
    for (const Expr &e : buf->strides) a.strides.push_back(compile_int(e));
    a.slot = bind_buffer(buf);
    a.id = prog_.num_allocs++;
    a.ctx = ctx(buf.name());
    n->allocs.push_back(std::move(a));
  }
  if (b.init) n->init = compile_stmt(*b.init);
  n->body = compile_stmt(b.body);
  for (const ir::Buffer &buf : b.allocs) unbind_buffer(buf);
  for (const ir::IterVar &iv : b.iter_vars) unbind_var(iv.var);
  block_ = outer;
  return n;
}

std::unique_ptr<Program> compile_program(const ir::PrimFunc &f) {
  // Thread loops run as loops: refused where that is not what the kernel
  // computes (a loop nested on its own thread axis; analysis/ThreadBindings.h).
  if (auto why = analysis::nested_thread_binding_refusal(f))
    throw InterpretError("cannot run function '" + f.name() + "' on the CPU: " + *why);
  auto p = std::make_unique<Program>();
  p->func = f;
  Compiler c(*p);
  const auto &params = f.params();
  for (size_t i = 0; i < params.size(); ++i) {
    const ir::Var &v = params[i];
    if (v.dtype().is_handle()) {
      if (!f.buffer_of(v).defined())
        throw InterpretError("parameter '" + v.name() + "' of function '" + f.name() +
                             "' is a handle without a buffer");
      continue;
    }
    ScalarParam sp;
    sp.param_index = static_cast<int>(i);
    sp.var = v;
    sp.is_float = v.dtype().is_float();
    sp.slot = c.bind_var(v);
    if (!sp.is_float) p->shape_var_names[sp.slot] = v.name();
    p->scalars.push_back(sp);
  }
  for (const ir::Var &v : f.shape_vars()) {
    if (c.int_var_slot(v) >= 0) continue;  // also a scalar parameter
    int slot = c.bind_var(v);
    p->shape_var_names[slot] = v.name();
    p->shape_var_slots.emplace_back(v, slot);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    ir::Buffer b = f.buffer_of(params[i]);
    if (!b.defined()) continue;
    ParamBuffer pb;
    pb.param_index = static_cast<int>(i);
    pb.buffer = b;
    for (const Expr &e : b.shape()) {
      pb.dims.push_back(c.compile_int(e));
      pb.dim_var_slot.push_back(c.int_var_slot(e));
      std::vector<int> slots;
      ir::pre_order_visit(ir::Evaluate::make(e), [&](const Expr &x) {
        if (!x.as<ir::VarNode>()) return;
        int s = c.int_var_slot(x);
        if (s >= 0 && std::find(slots.begin(), slots.end(), s) == slots.end()) slots.push_back(s);
      }, nullptr);
      pb.dim_slots.push_back(std::move(slots));
    }
    for (const Expr &e : b->strides) pb.strides.push_back(c.compile_int(e));
    pb.slot = c.bind_buffer(b);
    p->buffers.push_back(std::move(pb));
  }
  p->body = c.compile_stmt(f.body());
  return p;
}

}  // namespace tessera::runtime::detail
