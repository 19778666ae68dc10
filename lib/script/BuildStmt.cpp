//===- BuildStmt.cpp - TVMScript statements, loops and blocks to IR --------===//
//
// Statements are built in order inside a scope per statement list. A plain
// `x = value` (or `x: T.int32 = value`) becomes a LetStmt over the rest of
// its list, as in TVMScript. Declarations (T.axis.*, T.reads/T.writes,
// T.where, T.block_attr, T.alloc_buffer, T.init) fill the innermost
// BlockFrame and produce no statement; they are legal only directly inside a
// block. Reads/writes that a block does not spell out are inferred.
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "Builder.h"
#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Op.h"

namespace tessera::script::detail {

using namespace tessera::ir;

namespace {

// Restores the builder's nesting state when a nested body is done.
template <typename T>
struct Restore {
  T &ref;
  T saved;
  Restore(T &r, T v) : ref(r), saved(r) { ref = std::move(v); }
  ~Restore() { ref = std::move(saved); }
};

/// Whether a symbolic variable's declaration has no keyword argument but
/// TVM's is_size_var=True/False (a size: non-negative; tessera's symbolic
/// sizes are, when they size buffers).
bool only_size_var_kwarg(const PyExpr &call) {
  for (const auto &[key, value] : call.kwargs)
    if (key != "is_size_var" || value->kind != PyExprKind::Bool) return false;
  return true;
}

}  // namespace

Stmt Builder::build_body(const PyBody &body) {
  // Each item is a statement or a pending let that wraps the items after it.
  struct Item {
    Stmt stmt;
    Var let_var;
    Expr let_value;
    std::function<Stmt(Stmt)> wrap;
  };
  std::vector<Item> items;
  push_scope();
  for (const PyStmtPtr &s : body) {
    stmt_pos_ = s->pos;
    pending_let_.reset();
    pending_wrap_ = nullptr;
    std::optional<Stmt> st = build_stmt(*s);
    if (pending_let_) {
      items.push_back({Stmt(), pending_let_->first, pending_let_->second, nullptr});
      pending_let_.reset();
    } else if (pending_wrap_) {
      items.push_back({Stmt(), Var(), Expr(), std::move(pending_wrap_)});
      pending_wrap_ = nullptr;
    } else if (st) {
      items.push_back({*st, Var(), Expr(), nullptr});
    }
  }
  pop_scope();
  // Fold from the back so that long let chains need no recursion.
  std::vector<Stmt> tail;  // reversed
  for (auto it = items.rbegin(); it != items.rend(); ++it) {
    if (it->stmt.defined()) {
      tail.push_back(it->stmt);
      continue;
    }
    std::vector<Stmt> rest(tail.rbegin(), tail.rend());
    Stmt inner = rest.empty() ? Evaluate::make(i32(0)) : Seq::make(std::move(rest));
    tail.assign(1, it->wrap ? it->wrap(std::move(inner)) : LetStmt::make(it->let_var, it->let_value, std::move(inner)));
  }
  if (tail.empty()) return Evaluate::make(i32(0));
  return Seq::make(std::vector<Stmt>(tail.rbegin(), tail.rend()));
}

std::optional<Stmt> Builder::build_stmt(const PyStmt &s) {
  switch (s.kind) {
    case PyStmtKind::Expr: return build_expr_stmt(s);
    case PyStmtKind::Assign: return build_assign(s);
    case PyStmtKind::AugAssign: {
      Operand rhs = build(*s.value);
      if (s.target->kind == PyExprKind::Subscript) {
        Operand cur = build_load(*s.target);
        return build_store(*s.target, build_binop(s.op, cur, rhs, s.pos), s.value->pos);
      }
      if (s.target->kind != PyExprKind::Name) src_.fail(s.target->pos, "expected a name or a buffer element before " + quote(s.op + "="));
      Operand cur = build(*s.target);
      Operand v = build_binop(s.op, cur, rhs, s.pos);
      Var var(s.target->name, v.e.dtype());
      pending_let_ = {var, v.e};
      bind_scalar(s.target->name, var);
      return std::nullopt;
    }
    case PyStmtKind::AnnAssign: {
      if (s.target->kind != PyExprKind::Name) src_.fail(s.target->pos, "expected a variable name before ':'");
      // `x: T.float32 = v`, or `x: T.let[T.float32] = v` as newer TVM prints a typed let.
      const PyExpr *ann = s.annotation.get();
      if (ann->kind == PyExprKind::Subscript && (dotted_name(*ann->base) == "T.let" || dotted_name(*ann->base) == "T.Let")) {
        if (ann->args.size() != 1) src_.fail(ann->pos, "T.let[...] takes one data type");
        ann = ann->args[0].get();
      }
      DataType t = parse_dtype(*ann);
      if (!s.value) src_.fail(s.annotation->pos, "expected '=' and a value after the type of " + quote(s.target->name));
      Operand v = build(*s.value);
      Expr value = convert_to(v, t, s.value->pos, "variable " + quote(s.target->name));
      Var var(s.target->name, t);
      pending_let_ = {var, value};
      bind_scalar(s.target->name, var);
      return std::nullopt;
    }
    case PyStmtKind::For: return build_for(s);
    case PyStmtKind::With: return build_with(s);
    case PyStmtKind::If: return build_if(s);
    case PyStmtKind::Pass:
    case PyStmtKind::Import: return std::nullopt;
    case PyStmtKind::Return: src_.fail(s.pos, "'return' is not supported in a prim_func");
    case PyStmtKind::FuncDef:
    case PyStmtKind::ClassDef: src_.fail(s.pos, "nested definitions are not supported");
  }
  src_.fail(s.pos, "unsupported statement");
}

BlockFrame &Builder::block_frame(Pos p, const std::string &what) {
  if (!block_) src_.fail(p, what + " must be directly inside a 'with T.block(...)'");
  return *block_;
}

std::optional<Stmt> Builder::build_expr_stmt(const PyStmt &s) {
  const PyExpr &v = *s.value;
  if (v.kind == PyExprKind::Str) return std::nullopt;  // a docstring
  std::string fn = v.kind == PyExprKind::Call ? dotted_name(*v.base) : "";
  if (fn == "T.evaluate") {
    reject_kwargs(v, fn);
    expect_args(v, 1, 1, fn);
    Operand x = build(*v.args[0]);
    if (x.e.dtype().is_handle() && !x.e.is<OpaqueCall>()) src_.fail(v.args[0]->pos, "T.evaluate of a handle");
    return Evaluate::make(x.e);
  }
  if (fn == "T.reads" || fn == "T.writes") {
    BlockFrame &f = block_frame(v.pos, fn);
    auto &slot = fn == "T.reads" ? f.reads : f.writes;
    if (slot) src_.fail(v.pos, fn + " appears twice in block " + quote(f.name));
    slot = build_regions(v);
    return std::nullopt;
  }
  if (fn == "T.where") {
    BlockFrame &f = block_frame(v.pos, fn);
    reject_kwargs(v, fn);
    expect_args(v, 1, 1, fn);
    if (f.predicate.defined()) src_.fail(v.pos, "T.where appears twice in block " + quote(f.name));
    Operand c = build(*v.args[0]);
    DataType t = c.e.dtype();
    if (!t.is_int_like()) src_.fail(v.args[0]->pos, "T.where needs a bool condition, found " + t.str());
    f.predicate = t.is_bool() ? c.e : ne(c.e, make_int(t, 0));
    return std::nullopt;
  }
  if (fn == "T.block_attr" || fn == "T.sblock_attr") {
    BlockFrame &f = block_frame(v.pos, fn);
    reject_kwargs(v, fn);
    expect_args(v, 1, 1, fn);
    for (auto &[k, val] : build_annotations(*v.args[0])) f.annotations[k] = val;
    return std::nullopt;
  }
  if (fn == "T.func_attr") {
    if (!func_level_) src_.fail(v.pos, "T.func_attr must be at function level");
    reject_kwargs(v, fn);
    expect_args(v, 1, 1, fn);
    for (auto &[k, val] : build_annotations(*v.args[0])) func_->attrs[k] = val;
    return std::nullopt;
  }
  if (fn == "T.launch_thread") {
    pending_wrap_ = build_launch(v, "");
    return std::nullopt;
  }
  if (fn == "T.attr") {
    pending_wrap_ = build_attr(v);
    return std::nullopt;
  }
  if (fn == "T.alloc_buffer" || fn == "T.sblock_alloc_buffer" || fn == "T.match_buffer")
    src_.fail(v.pos, "the result of " + fn + " must be assigned to a name");
  if (fn.rfind("T.axis.", 0) == 0) src_.fail(v.pos, "the result of " + fn + " must be assigned to a name");
  Operand x = build(v);
  if (x.e.dtype().is_handle() && !x.e.is<OpaqueCall>()) src_.fail(v.pos, "expression statement of a handle");
  return Evaluate::make(x.e);
}

std::optional<Stmt> Builder::build_assign(const PyStmt &s) {
  const PyExpr &t = *s.target;
  const PyExpr &v = *s.value;
  if (t.kind == PyExprKind::Subscript) return build_store(t, build(v), v.pos);
  std::string fn = v.kind == PyExprKind::Call ? dotted_name(*v.base) : "";
  if (fn.rfind("T.axis.", 0) == 0) {
    build_axis(s, v);
    return std::nullopt;
  }
  if (t.kind == PyExprKind::Tuple && v.kind == PyExprKind::Tuple && t.args.size() == v.args.size()) {
    // n, m = T.int64(), T.int64(): several symbolic sizes in one statement.
    for (size_t k = 0; k < t.args.size(); ++k) {
      const PyExpr &name = *t.args[k], &call = *v.args[k];
      std::string f = call.kind == PyExprKind::Call ? dotted_name(*call.base) : "";
      auto dt = f.rfind("T.", 0) == 0 ? parse_scalar_type(f.substr(2)) : std::nullopt;
      if (name.kind != PyExprKind::Name || !dt || dt->is_handle() || dt->is_void() || !call.args.empty() ||
          !only_size_var_kwarg(call))
        src_.fail(call.pos, "a tuple assignment declares symbolic variables (n, m = T.int64(), T.int64()) or binds "
                            "iter vars (T.axis.remap)");
      bind_scalar(name.name, Var(name.name, *dt));
    }
    return std::nullopt;
  }
  if (t.kind != PyExprKind::Name) {
    if (t.kind == PyExprKind::Tuple) src_.fail(t.pos, "tuple assignment is only supported for T.axis.remap and symbolic variables (n, m = T.int64(), T.int64())");
    src_.fail(t.pos, "cannot assign to this expression; expected a name or a buffer element");
  }
  const std::string &name = t.name;
  if (fn == "T.match_buffer" && block_ && !v.args.empty() && v.args[0]->kind == PyExprKind::Subscript) {
    // Inside a block: a view of a region of another buffer (BuildBuffers.cpp).
    build_region_match(name, v);
    return std::nullopt;
  }
  if (fn == "T.allocate") {
    build_allocate(name, v);
    return std::nullopt;
  }
  if (fn == "T.env_thread") {
    build_env_thread(name, v);
    return std::nullopt;
  }
  if (fn == "T.launch_thread") {
    // blockIdx_x = T.launch_thread("blockIdx.x", 16): over the rest of the body.
    pending_wrap_ = build_launch(v, name);
    return std::nullopt;
  }
  if (fn == "T.decl_buffer" || (fn == "T.Buffer" && !func_level_) ||
      (fn == "T.Buffer" && std::any_of(v.kwargs.begin(), v.kwargs.end(), [](const auto &k) { return k.first == "data"; }))) {
    build_decl_buffer(name, v, fn);
    return std::nullopt;
  }
  if (fn == "T.match_buffer") {
    if (!func_level_) src_.fail(v.pos, "T.match_buffer must be at function level, or take a region of a buffer inside a block");
    if (v.args.size() < 2) expect_args(v, 2, 3, fn);
    const PyExpr &h = *v.args[0];
    const Binding *b = h.kind == PyExprKind::Name ? lookup(h.name) : nullptr;
    if (!b || b->kind != Binding::Kind::Handle)
      src_.fail(h.pos, "the first argument of T.match_buffer must be a T.handle parameter");
    if (!func_->matched_handles.insert(b->handle.get()).second)
      src_.fail(h.pos, "handle " + quote(h.name) + " is matched to a buffer twice");
    Var handle = b->handle;
    Buffer buf = build_buffer(v, 1, name, fn.c_str());
    func_->buffer_map.emplace_back(handle, buf);
    Binding nb;
    nb.kind = Binding::Kind::Buffer;
    nb.buffer = buf;
    bind(name, nb);
    return std::nullopt;
  }
  if (fn == "T.alloc_buffer" || fn == "T.sblock_alloc_buffer") {
    if (!block_ && !func_level_)
      src_.fail(v.pos, fn + " must be at function level or directly inside a 'with T.block(...)'");
    Buffer buf = build_buffer(v, 0, name, fn.c_str());
    (block_ ? block_->allocs : func_->root_allocs).push_back(buf);
    Binding nb;
    nb.kind = Binding::Kind::Buffer;
    nb.buffer = buf;
    bind(name, nb);
    return std::nullopt;
  }
  if (fn == "T.Buffer") src_.fail(v.pos, "T.Buffer at function level needs data=: T.Buffer(shape, dtype, data=A_handle); allocate with T.alloc_buffer");
  if (fn.rfind("T.", 0) == 0 && v.args.empty() && only_size_var_kwarg(v)) {
    // n = T.int64(), or T.int64(is_size_var=True) (known non-negative): a symbolic variable.
    auto dt = parse_scalar_type(fn.substr(2));
    if (dt && !dt->is_handle() && !dt->is_void()) {
      bind_scalar(name, Var(name, *dt));
      return std::nullopt;
    }
  }
  Operand val = build(v);
  if (val.e.dtype().is_handle()) src_.fail(v.pos, "cannot bind a handle to " + quote(name));
  Var var(name, val.e.dtype());
  pending_let_ = {var, val.e};
  bind_scalar(name, var);
  return std::nullopt;
}

Stmt Builder::build_store(const PyExpr &target, Operand value, Pos value_pos) {
  if (target.base->kind != PyExprKind::Name) src_.fail(target.pos, "expected a buffer name before '['");
  const Binding *b = lookup(target.base->name);
  if (!b) fail_undefined(target.base->pos, target.base->name);
  if (b->kind != Binding::Kind::Buffer && b->kind != Binding::Kind::Allocation)
    src_.fail(target.base->pos, "cannot store to " + quote(target.base->name) + ", which is not a buffer");
  Buffer buf = buffer_binding(*target.base).buffer;
  Operand load = build_load(target);  // checks the indices
  const auto *ld = load.e.as<Load>();
  DataType to = buf.dtype(), from = value.e.dtype();
  if (!value.is_lit() && from != to && !from.is_handle() && !to.is_handle() && from.lanes() == to.lanes()) {
    // TVM stores a value of another type converted to the buffer's (C[i] =
    // T.float16(0) into a float32 buffer); so does tessera, saying so when
    // the conversion can lose information.
    auto mantissa = [](DataType t) { return t.is_bfloat16() ? 8 : t.bits() == 16 ? 11 : t.bits() == 32 ? 24 : 53; };
    bool lossless = from.is_bool() || (from.is_float() && to.is_float() && to.bits() >= from.bits() &&
                                       !(from.is_bfloat16() != to.is_bfloat16() && to.bits() == 16)) ||
                    (from.is_integer() && to.is_integer() && from.is_uint() == to.is_uint() && to.bits() >= from.bits()) ||
                    (from.is_uint() && to.is_int() && to.bits() > from.bits()) ||
                    (from.is_integer() && to.is_float() && from.bits() < mantissa(to));
    if (!lossless)
      warn(value_pos, "the " + from.str() + " value is converted to " + to.str() + ", the type of buffer " +
                          quote(buf.name()) + " (as TVM does); the conversion can lose information");
    return Store::make(buf, cast(to, value.e), ld->indices);
  }
  Expr v = convert_to(value, to, value_pos, "buffer " + quote(buf.name()));
  return Store::make(buf, v, ld->indices);
}

Stmt Builder::build_for(const PyStmt &s) {
  const PyExpr &it = *s.value;
  std::string fn = it.kind == PyExprKind::Call ? dotted_name(*it.base) : "";
  struct Spec {
    Operand start, stop;
    Pos pos;
    int64_t step = 1;
  };
  // range(a, b, s) / T.serial(a, b, step=s): a positive constant step.
  auto step_of = [&](const PyExpr &e) -> int64_t {
    Operand st = build(e);
    auto v = as_const_int(st.e);
    if (!v || *v < 1) src_.fail(e.pos, "a loop step must be a positive integer constant");
    return *v;
  };
  std::vector<Spec> specs;
  ForKind kind = ForKind::Serial;
  std::string thread;
  Annotations ann;
  int64_t pending_step = 1;
  auto zero = [] { return Operand{i32(0), Operand::Lit::Int, 0, 0}; };
  auto take_kwargs = [&](bool allow_thread) {
    for (size_t k = 0; k < it.kwargs.size(); ++k) {
      const auto &[key, val] = it.kwargs[k];
      if (key == "annotations") ann = build_annotations(*val);
      else if (key == "thread" && allow_thread) thread = expect_string(*val, "the thread tag");
      else if (key == "step" && !allow_thread) pending_step = step_of(*val);
      else src_.fail(it.kwarg_pos[k], "unexpected keyword argument " + quote(key) + " to " + fn);
    }
  };
  if (fn == "T.grid") {
    reject_kwargs(it, fn);
    if (it.args.empty()) src_.fail(it.pos, "T.grid needs at least one extent");
    for (const PyExprPtr &a : it.args) {
      if (a->kind != PyExprKind::Starred) {
        specs.push_back({zero(), build(*a), a->pos});
        continue;
      }
      for (const Operand &o : unpack(*a)) specs.push_back({zero(), o, a->pos});
    }
    if (specs.empty()) src_.fail(it.pos, "T.grid needs at least one extent");
  } else if (fn == "range") {
    expect_args(it, 1, 3, fn);
    take_kwargs(false);
    if (it.args.size() == 1) specs.push_back({zero(), build(*it.args[0]), it.pos});
    else specs.push_back({build(*it.args[0]), build(*it.args[1]), it.pos});
    if (it.args.size() == 3) specs.back().step = step_of(*it.args[2]);
  } else if (fn == "T.serial" || fn == "T.parallel" || fn == "T.vectorized" || fn == "T.unroll") {
    kind = fn == "T.serial" ? ForKind::Serial : fn == "T.parallel" ? ForKind::Parallel
         : fn == "T.vectorized" ? ForKind::Vectorized : ForKind::Unrolled;
    expect_args(it, 1, 2, fn);
    take_kwargs(false);
    // T.serial(stop) or T.serial(start, stop), as TVMScript (not start and extent).
    if (it.args.size() == 1) specs.push_back({zero(), build(*it.args[0]), it.pos});
    else specs.push_back({build(*it.args[0]), build(*it.args[1]), it.pos});
    specs.back().step = pending_step;
  } else if (fn == "T.thread_binding") {
    kind = ForKind::ThreadBinding;
    take_kwargs(true);
    size_t n = it.args.size();
    bool thread_positional = n >= 2 && it.args[n - 1]->kind == PyExprKind::Str;
    if (thread_positional) {
      if (!thread.empty()) src_.fail(it.pos, "T.thread_binding: the thread tag is given twice");
      thread = it.args[n - 1]->name;
      --n;
    }
    if (n < 1 || n > 2) src_.fail(it.pos, "T.thread_binding takes (stop, thread) or (start, stop, thread)");
    if (thread.empty()) src_.fail(it.pos, "T.thread_binding needs a thread tag such as \"threadIdx.x\"");
    if (n == 1) specs.push_back({zero(), build(*it.args[0]), it.pos});
    else specs.push_back({build(*it.args[0]), build(*it.args[1]), it.pos});
  } else {
    src_.fail(it.pos, "expected range(...), T.grid(...), T.serial/parallel/vectorized/unroll(...) or "
                      "T.thread_binding(...) as the loop iterator");
  }

  std::vector<const PyExpr *> targets;
  if (s.target->kind == PyExprKind::Tuple) {
    for (const PyExprPtr &t : s.target->args) targets.push_back(t.get());
  } else {
    targets.push_back(s.target.get());
  }
  for (const PyExpr *t : targets)
    if (t->kind != PyExprKind::Name) src_.fail(t->pos, "expected a loop variable name");
  // `for iters in T.grid(...)`: one name for all the loop variables, which are
  // called iters_0, iters_1, ...
  std::vector<std::string> var_names;
  const bool tuple_target = targets.size() == 1 && specs.size() > 1 && s.target->kind == PyExprKind::Name;
  if (tuple_target)
    for (size_t k = 0; k < specs.size(); ++k) var_names.push_back(targets[0]->name + "_" + std::to_string(k));
  else
    for (const PyExpr *t : targets) var_names.push_back(t->name);
  if (!tuple_target && targets.size() != specs.size())
    src_.fail(s.target->pos, "the loop declares " + std::to_string(targets.size()) + " variable" +
                                 (targets.size() == 1 ? "" : "s") + " but " + fn + " gives " +
                                 std::to_string(specs.size()));

  struct Loop {
    Var var;
    Expr min, extent;
  };
  std::vector<Loop> loops;
  std::vector<Expr> elements;
  push_scope();
  for (size_t k = 0; k < specs.size(); ++k) {
    Operand a = specs[k].start, b = specs[k].stop;
    for (const Operand *o : {&a, &b})
      if (!o->e.dtype().is_integer())
        src_.fail(specs[k].pos, "loop bounds must be integers, found " + o->e.dtype().str());
    // Loop variables take the type of the bounds: literals adapt, others promote.
    DataType t = a.is_lit() && !b.is_lit() ? b.e.dtype()
               : b.is_lit() && !a.is_lit() ? a.e.dtype()
                                           : promote_types(a.e.dtype(), b.e.dtype());
    check_literal_fits(a, t);
    check_literal_fits(b, t);
    Expr lo = cast(t, a.e), hi = cast(t, b.e);
    Var v(var_names[k], t);
    if (int64_t step = specs[k].step; step != 1) {
      // A stepped loop counts its iterations from 0; its name is lo + v * step.
      auto clo = as_const_int(lo), chi = as_const_int(hi);
      Expr count = clo && chi ? make_int(t, std::max<int64_t>(0, (*chi - *clo + step - 1) / step))
                              : floordiv(add(extent_between(lo, hi), make_int(t, step - 1)), make_int(t, step));
      loop_ranges_[v.get()] = Range{make_int(t, 0), count};
      Binding b;
      b.kind = Binding::Kind::Scalar;
      b.expr = clo && *clo == 0 ? mul(v, make_int(t, step)) : add(lo, mul(v, make_int(t, step)));
      if (!tuple_target) bind(var_names[k], b);
      elements.push_back(b.expr);
      loops.push_back({v, make_int(t, 0), count});
      continue;
    }
    Expr extent = extent_between(lo, hi);
    loop_ranges_[v.get()] = Range{lo, extent};
    if (!tuple_target) bind_scalar(var_names[k], v);
    elements.push_back(v);
    loops.push_back({v, lo, extent});
  }
  if (tuple_target) {
    Binding tuple;
    tuple.kind = Binding::Kind::Tuple;
    tuple.elements = elements;
    bind(targets[0]->name, tuple);
  }
  Stmt body;
  {
    Restore<BlockFrame *> rb(block_, nullptr);
    Restore<bool> rf(func_level_, false);
    body = build_body(s.body);
  }
  pop_scope();
  for (auto it2 = loops.rbegin(); it2 != loops.rend(); ++it2) {
    loop_ranges_.erase(it2->var.get());
    bool inner = it2 == loops.rbegin();
    body = For::make(it2->var, it2->min, it2->extent, kind, body, thread,
                     inner ? ann : Annotations{});
  }
  return body;
}

std::optional<Stmt> Builder::build_with(const PyStmt &s) {
  const PyExpr &v = *s.value;
  std::string fn = v.kind == PyExprKind::Call ? dotted_name(*v.base) : "";
  if (fn == "T.LetStmt") return build_let_stmt(s, v);
  if (fn == "T.launch_thread" || fn == "T.attr") {
    // with T.launch_thread(tx, 32): / with T.launch_thread("threadIdx.x", 32) as tx: / with T.attr(...):
    if (s.target && (fn == "T.attr" || s.target->kind != PyExprKind::Name))
      src_.fail(s.target->pos, "'as' is not supported on " + fn);
    push_scope();
    auto wrap = fn == "T.attr" ? build_attr(v) : build_launch(v, s.target ? s.target->name : "");
    Stmt body = build_body(s.body);
    pop_scope();
    return wrap(body);
  }
  if ((fn == "T.decl_buffer" || fn == "T.allocate") && s.target) {
    // with T.decl_buffer(...) as X: / with T.allocate(...) as X_data: the name for the body.
    if (s.target->kind != PyExprKind::Name) src_.fail(s.target->pos, "expected a name after 'as'");
    push_scope();
    if (fn == "T.allocate") build_allocate(s.target->name, v);
    else build_decl_buffer(s.target->name, v, fn);
    Stmt body = build_body(s.body);
    pop_scope();
    return body;
  }
  if (s.target) src_.fail(s.target->pos, "'as' is not supported on " + (fn.empty() ? std::string("'with'") : fn));
  if (fn == "T.block" || fn == "T.sblock") return build_block(s, v);
  if (fn == "T.init") {
    reject_kwargs(v, fn);
    expect_args(v, 0, 0, fn);
    BlockFrame &f = block_frame(v.pos, fn);
    if (f.init) src_.fail(v.pos, "T.init appears twice in block " + quote(f.name));
    Restore<BlockFrame *> rb(block_, nullptr);
    Restore<bool> rf(func_level_, false);
    f.init = build_body(s.body);
    return std::nullopt;
  }
  src_.fail(v.pos, "expected T.block(...), T.sblock(...) or T.init() after 'with'");
}

Stmt Builder::build_let_stmt(const PyStmt &s, const PyExpr &call) {
  const std::string fn = "T.LetStmt";
  expect_args(call, 1, 1, fn);
  const PyExpr *var_arg = nullptr;
  for (size_t k = 0; k < call.kwargs.size(); ++k) {
    if (call.kwargs[k].first != "var")
      src_.fail(call.kwarg_pos[k], "unexpected keyword argument " + quote(call.kwargs[k].first) + " to " + fn);
    var_arg = call.kwargs[k].second.get();
  }
  if (var_arg && s.target) src_.fail(s.target->pos, fn + " names its variable twice ('as' and var=)");
  if (!var_arg && !s.target) src_.fail(call.pos, fn + " needs a variable: with T.LetStmt(value) as x:");
  const PyExpr &value_arg = *call.args[0];
  Operand value = build(value_arg);
  if (value.e.dtype().is_handle() || value.e.dtype().is_void())
    src_.fail(value_arg.pos, fn + " of a " + std::string(value.e.dtype().is_handle() ? "handle" : "value without a type"));
  Var var;
  Expr init = value.e;
  if (s.target) {
    // `as x`: a new variable, typed by the value, for the body only.
    if (s.target->kind != PyExprKind::Name) src_.fail(s.target->pos, "expected a variable name after 'as'");
    var = Var(s.target->name, value.e.dtype());
  } else {
    // var=x: x is a variable declared before (x = T.int32()); the value converts to its type.
    if (var_arg->kind != PyExprKind::Name) src_.fail(var_arg->pos, "expected a variable name for var= of " + fn);
    const Binding *b = lookup(var_arg->name);
    if (!b) fail_undefined(var_arg->pos, var_arg->name);
    const auto *declared = b->kind == Binding::Kind::Scalar ? b->expr.as<VarNode>() : nullptr;
    if (!declared) src_.fail(var_arg->pos, quote(var_arg->name) + " is not a scalar variable");
    var = Var::from(b->expr);
    init = convert_to(value, var.dtype(), value_arg.pos, "variable " + quote(var_arg->name));
  }
  Stmt body;
  push_scope();
  bind_scalar(var.name(), var);
  {
    Restore<BlockFrame *> rb(block_, nullptr);
    Restore<bool> rf(func_level_, false);
    body = build_body(s.body);
  }
  pop_scope();
  return LetStmt::make(var, init, body);
}

Stmt Builder::build_block(const PyStmt &s, const PyExpr &call) {
  std::string fn = dotted_name(*call.base);
  for (size_t k = 0; k < call.kwargs.size(); ++k)
    if (call.kwargs[k].first != "no_realize")
      src_.fail(call.kwarg_pos[k], "unexpected keyword argument " + quote(call.kwargs[k].first) + " to " + fn);
  expect_args(call, 0, 1, fn);
  BlockFrame f;
  // An unnamed block is named "", as in TVMScript.
  if (!call.args.empty()) f.name = expect_string(*call.args[0], "the block name");
  f.is_root = func_level_ && f.name == "root";
  Stmt body;
  {
    Restore<BlockFrame *> rb(block_, &f);
    Restore<bool> rf(func_level_, false);
    body = build_body(s.body);
  }
  // The root block has no regions of its own (TensorIR leaves them empty).
  if ((!f.reads || !f.writes) && !(f.is_root && f.iter_vars.empty())) {
    AccessRegions r = infer_access_regions(f.init, body, f.allocs);
    if (!f.reads) f.reads = std::move(r.reads);
    if (!f.writes) f.writes = std::move(r.writes);
  }
  return Block::make(f.name, f.iter_vars, f.bindings, f.predicate, f.reads.value_or(std::vector<BufferRegion>{}),
                     f.writes.value_or(std::vector<BufferRegion>{}), f.allocs, f.init, body, f.annotations);
}

Stmt Builder::build_if(const PyStmt &s) {
  Operand c = build(*s.value);
  DataType t = c.e.dtype();
  if (!t.is_int_like()) src_.fail(s.value->pos, "if condition must be bool, found " + t.str());
  Expr cond = t.is_bool() ? c.e : ne(c.e, make_int(t, 0));
  Restore<BlockFrame *> rb(block_, nullptr);
  Restore<bool> rf(func_level_, false);
  Stmt then_case = build_body(s.body);
  std::optional<Stmt> else_case;
  if (!s.orelse.empty()) else_case = build_body(s.orelse);
  return IfThenElse::make(cond, then_case, else_case);
}

void Builder::build_axis(const PyStmt &s, const PyExpr &call) {
  std::string fn = dotted_name(*call.base);
  BlockFrame &f = block_frame(call.pos, fn);
  std::vector<const PyExpr *> names;
  if (s.target->kind == PyExprKind::Tuple) {
    for (const PyExprPtr &t : s.target->args) names.push_back(t.get());
  } else {
    names.push_back(s.target.get());
  }
  for (const PyExpr *n : names)
    if (n->kind != PyExprKind::Name) src_.fail(n->pos, "expected an iter var name");
  reject_kwargs(call, fn);
  std::string sub = fn.substr(7);
  auto kind_of = [&](char c, Pos p) {
    if (c == 'S') return IterKind::Spatial;
    if (c == 'R') return IterKind::Reduce;
    if (c == 'O') return IterKind::Opaque;
    src_.fail(p, "unknown iter kind " + quote(std::string(1, c)) + " in T.axis.remap (expected 'S', 'R' or 'O')");
  };
  std::vector<IterVar> ivs;
  std::vector<Expr> binds;
  if (sub == "remap") {
    expect_args(call, 2, 2, fn);
    std::string kinds = expect_string(*call.args[0], "the iter kinds of T.axis.remap");
    const PyExpr &list = *call.args[1];
    // The bindings: a list or tuple of loop variables, one, or a name for
    // several (`for iters in T.grid(...)`).
    std::vector<std::pair<Operand, Pos>> vals;
    if (list.kind == PyExprKind::List || list.kind == PyExprKind::Tuple) {
      for (const PyExprPtr &a : list.args) vals.emplace_back(build(*a), a->pos);
    } else if (const Binding *tb = list.kind == PyExprKind::Name ? lookup(list.name) : nullptr;
               tb && tb->kind == Binding::Kind::Tuple) {
      for (const Expr &v : tb->elements) vals.emplace_back(Operand{v}, list.pos);
    } else {
      vals.emplace_back(build(list), list.pos);
    }
    if (kinds.size() != vals.size())
      src_.fail(call.args[0]->pos, "T.axis.remap kinds " + quote(kinds) + " have " + std::to_string(kinds.size()) +
                                       " letter" + (kinds.size() == 1 ? "" : "s") + " but " +
                                       std::to_string(vals.size()) + " binding" + (vals.size() == 1 ? " is" : "s are") + " given");
    if (names.size() != vals.size())
      src_.fail(s.target->pos, "T.axis.remap binds " + std::to_string(vals.size()) + " iter var" +
                                   (vals.size() == 1 ? "" : "s") + " but " + std::to_string(names.size()) +
                                   " name" + (names.size() == 1 ? " is" : "s are") + " assigned");
    for (size_t k = 0; k < vals.size(); ++k) {
      IterKind ik = kind_of(kinds[k], call.args[0]->pos);
      const Operand &b = vals[k].first;
      auto r = loop_ranges_.find(b.e.get());
      if (r == loop_ranges_.end())
        src_.fail(vals[k].second, "T.axis.remap binding must be a loop variable");
      ivs.push_back({Var(names[k]->name, b.e.dtype()), r->second, ik});
      binds.push_back(b.e);
    }
  } else {
    IterKind ik;
    if (sub == "spatial" || sub == "S") ik = IterKind::Spatial;
    else if (sub == "reduce" || sub == "R") ik = IterKind::Reduce;
    else if (sub == "opaque" || sub == "scan" || sub == "O") ik = IterKind::Opaque;
    else src_.fail(call.pos, "unknown function " + quote(fn));
    expect_args(call, 2, 2, fn);
    if (names.size() != 1) src_.fail(s.target->pos, fn + " declares one iter var but " + std::to_string(names.size()) + " names are assigned");
    Operand b = build(*call.args[1]);
    if (!b.e.dtype().is_integer()) src_.fail(call.args[1]->pos, "iter var binding must be an integer, found " + b.e.dtype().str());
    DataType t = b.e.dtype();
    auto to_t = [&](const PyExpr &e) {
      Operand o = build(e);
      if (!o.e.dtype().is_integer()) src_.fail(e.pos, "iter var domain must be an integer, found " + o.e.dtype().str());
      check_literal_fits(o, t);
      return cast(t, o.e);
    };
    const PyExpr &dom = *call.args[0];
    Range r;
    if (dom.kind == PyExprKind::Tuple || dom.kind == PyExprKind::List) {
      if (dom.args.size() != 2) src_.fail(dom.pos, "an iter var domain is (begin, end), found " + std::to_string(dom.args.size()) + " values");
      Expr lo = to_t(*dom.args[0]);
      r = Range{lo, extent_between(lo, to_t(*dom.args[1]))};
    } else {
      r = Range{make_int(t, 0), to_t(dom)};
    }
    ivs.push_back({Var(names[0]->name, t), r, ik});
    binds.push_back(b.e);
  }
  for (size_t k = 0; k < ivs.size(); ++k) {
    for (const IterVar &iv : f.iter_vars)
      if (iv.var.name() == ivs[k].var.name())
        src_.fail(names[k]->pos, "iter var " + quote(iv.var.name()) + " is declared twice in block " + quote(f.name));
    f.iter_vars.push_back(ivs[k]);
    f.bindings.push_back(binds[k]);
    bind_scalar(names[k]->name, ivs[k].var);
  }
}

std::vector<BufferRegion> Builder::build_regions(const PyExpr &call) {
  reject_kwargs(call, dotted_name(*call.base));
  std::vector<BufferRegion> out;
  for (const PyExprPtr &a : call.args) {
    if (a->kind == PyExprKind::List || a->kind == PyExprKind::Tuple) {
      for (const PyExprPtr &x : a->args) out.push_back(build_region(*x));
    } else {
      out.push_back(build_region(*a));
    }
  }
  return out;
}

BufferRegion Builder::build_region(const PyExpr &e) {
  if (e.kind == PyExprKind::Name) {
    const Binding &b = buffer_binding(e);
    if (!b.view) return BufferRegion::full(b.buffer);
    std::vector<Range> all;
    for (const Expr &d : b.view->shape) all.push_back(Range{make_int(d.dtype(), 0), d});
    return view_region(*b.view, b.buffer, all);
  }
  if (e.kind != PyExprKind::Subscript) src_.fail(e.pos, "expected a buffer region such as A[vi, 0:128]");
  const Binding &bb = buffer_binding(*e.base);
  // A view's region is read in the view's own shape, then mapped onto its base.
  Buffer buf = bb.view ? Buffer::make(bb.view->name, bb.buffer.dtype(), bb.view->shape) : bb.buffer;
  if (static_cast<int>(e.args.size()) != buf.ndim())
    src_.fail(e.pos, "buffer " + quote(buf.name()) + " has " + std::to_string(buf.ndim()) +
                         " dimensions but the region gives " + std::to_string(e.args.size()));
  BufferRegion r{buf, {}};
  for (size_t d = 0; d < e.args.size(); ++d) {
    const PyExpr &a = *e.args[d];
    std::string what = "region bound of buffer " + quote(buf.name());
    if (a.kind != PyExprKind::Slice) {
      Expr idx = build_int(a, what);
      r.region.push_back(Range{idx, make_int(idx.dtype(), 1)});
      continue;
    }
    if (a.args[2]) {
      Operand step = build(*a.args[2]);
      if (!is_const_int(step.e, 1)) src_.fail(a.args[2]->pos, "region slices with a step are not supported");
    }
    Operand lo = a.args[0] ? build(*a.args[0]) : Operand{make_int(buf.shape()[d].dtype(), 0)};
    Operand hi = a.args[1] ? build(*a.args[1]) : Operand{buf.shape()[d]};
    for (const Operand *o : {&lo, &hi})
      if (!o->e.dtype().is_integer()) src_.fail(a.pos, what + " must be an integer, found " + o->e.dtype().str());
    DataType t = lo.is_lit() && !hi.is_lit() ? hi.e.dtype()
               : hi.is_lit() && !lo.is_lit() ? lo.e.dtype()
                                             : promote_types(lo.e.dtype(), hi.e.dtype());
    check_literal_fits(lo, t);
    check_literal_fits(hi, t);
    Expr l = cast(t, lo.e);
    r.region.push_back(Range{l, extent_between(l, cast(t, hi.e))});
  }
  if (bb.view) return view_region(*bb.view, bb.buffer, r.region);
  return r;
}

}  // namespace tessera::script::detail
