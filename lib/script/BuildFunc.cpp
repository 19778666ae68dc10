//===- BuildFunc.cpp - Functions, modules, buffers and annotations ---------===//
//
// A file is a list of bare `@T.prim_func` functions or one `@I.ir_module`
// class of them. A function's parameters are `T.handle`s (bound later by
// T.match_buffer), `T.Buffer(...)` annotations, or scalars (`n: T.int32`).
// Function-level T.alloc_buffer goes into the root block's allocations.
//
//===----------------------------------------------------------------------===//
#include <unordered_set>

#include "Builder.h"
#include "tessera/ir/Op.h"

namespace tessera::script::detail {

using namespace tessera::ir;

namespace {

/// `a.b`, or a call of it: `@T.prim_func`, `@T.prim_func(private=True)`, `I.module_attrs({...})`.
bool is_dotted(const PyExpr &d, const char *a, const char *b) {
  const PyExpr &e = d.kind == PyExprKind::Call ? *d.base : d;
  return e.kind == PyExprKind::Attr && e.name == b && e.base->kind == PyExprKind::Name && e.base->name == a;
}

}  // namespace

ir::Module Builder::build_module(const PyBody &file) {
  ir::Module m;
  std::unordered_set<std::string> names;
  auto add = [&](const PyStmt &def) {
    if (def.skipped) {
      warn(def.pos, "Relax function " + quote(def.name) + " skipped: tessera reads the module's '@T.prim_func' functions");
      return;
    }
    if (!names.insert(def.name).second)
      src_.fail(def.pos, "duplicate function name " + quote(def.name) + " in the module");
    m.funcs.push_back(build_func(def));
  };
  bool saw_class = false;
  for (const PyStmtPtr &s : file) {
    switch (s->kind) {
      case PyStmtKind::Import:
      case PyStmtKind::Pass: continue;
      case PyStmtKind::Expr:
        if (s->value->kind == PyExprKind::Str) continue;  // a docstring
        break;
      case PyStmtKind::FuncDef: add(*s); continue;
      case PyStmtKind::ClassDef: {
        if (saw_class || !m.funcs.empty()) src_.fail(s->pos, "a file holds one ir_module class or bare functions, not both");
        saw_class = true;
        bool ok = false;
        for (const PyExprPtr &d : s->decorators)
          ok |= is_dotted(*d, "I", "ir_module") || dotted_name(d->kind == PyExprKind::Call ? *d->base : *d) == "tvm.script.ir_module";
        if (!ok) src_.fail(s->pos, "expected '@I.ir_module' before class " + quote(s->name));
        module_class_ = s->name;
        for (const PyStmtPtr &c : s->body) {
          if (c->kind == PyStmtKind::Pass || c->kind == PyStmtKind::Import) continue;
          if (c->kind == PyStmtKind::Expr && c->value->kind == PyExprKind::Str) continue;
          // I.module_attrs({...}) and I.module_global_infos({...}): the
          // module's Relax-level metadata, nothing a prim_func reads.
          if (c->kind == PyStmtKind::Expr && c->value->kind == PyExprKind::Call &&
              (is_dotted(*c->value, "I", "module_attrs") || is_dotted(*c->value, "I", "module_global_infos")))
            continue;
          if (c->kind != PyStmtKind::FuncDef)
            src_.fail(c->pos, "expected a '@T.prim_func' function in ir_module class " + quote(s->name));
          add(*c);
        }
        if (m.funcs.empty()) src_.fail(s->pos, "ir_module class " + quote(s->name) + " holds no '@T.prim_func' function");
        continue;
      }
      default: break;
    }
    src_.fail(s->pos, "expected a '@T.prim_func' function or an '@I.ir_module' class at top level");
  }
  if (m.funcs.empty()) {
    Pos end{1, 1};
    src_.fail(end, "expected a '@T.prim_func' function or an '@I.ir_module' class, found " +
                       std::string(file.empty() ? "nothing" : "no function"));
  }
  m.warnings = std::move(warnings_);
  return m;
}

void Builder::check_prim_func_decorator(const PyStmt &def) {
  const PyExpr *found = nullptr;
  for (const PyExprPtr &d : def.decorators) {
    if (is_dotted(*d, "T", "prim_func")) {
      found = d.get();
      continue;
    }
    std::string n = dotted_name(d->kind == PyExprKind::Call ? *d->base : *d);
    if (n.rfind("R.", 0) == 0) src_.fail(d->pos, "Relax functions are not supported; only '@T.prim_func'");
    src_.fail(d->pos, "unknown decorator " + quote(n.empty() ? "<expression>" : n) + " on function " + quote(def.name));
  }
  if (!found) src_.fail(def.pos, "expected '@T.prim_func' before function " + quote(def.name));
  if (found->kind == PyExprKind::Call) {
    // @T.prim_func(private=True) / (check_well_formed=False): accepted, not kept.
    expect_args(*found, 0, 0, "T.prim_func");
    for (size_t k = 0; k < found->kwargs.size(); ++k) {
      const auto &[key, val] = found->kwargs[k];
      if (key != "private" && key != "check_well_formed")
        src_.fail(found->kwarg_pos[k], "unexpected keyword argument " + quote(key) + " to T.prim_func");
      if (val->kind != PyExprKind::Bool) src_.fail(val->pos, "expected True or False for " + quote(key));
    }
  }
}

ir::PrimFunc Builder::build_func(const PyStmt &def) {
  check_prim_func_decorator(def);
  FuncFrame f;
  func_ = &f;
  scopes_.clear();
  loop_ranges_.clear();
  push_scope();
  std::unordered_set<std::string> seen;
  for (const PyParam &p : def.params) {
    if (!seen.insert(p.name).second) src_.fail(p.pos, "duplicate parameter name " + quote(p.name));
    build_param(p, f);
  }
  Stmt body;
  {
    func_level_ = true;
    block_ = nullptr;
    body = build_body(def.body);
    func_level_ = false;
  }
  if (!f.root_allocs.empty())
    body = Block::make("root", {}, {}, Expr(), {}, {}, f.root_allocs, std::nullopt, body);
  pop_scope();
  func_ = nullptr;
  return PrimFunc::make(def.name, f.params, f.buffer_map, body, f.attrs);
}

void Builder::build_param(const PyParam &p, FuncFrame &f) {
  if (!p.annotation) src_.fail(p.pos, "parameter " + quote(p.name) + " needs a type annotation such as T.handle");
  const PyExpr &a = *p.annotation;
  std::string fn = dotted_name(a.kind == PyExprKind::Call || a.kind == PyExprKind::Subscript ? *a.base : a);
  if (fn == "T.handle") {
    Var v(p.name, DataType::handle());
    f.params.push_back(v);
    Binding b;
    b.kind = Binding::Kind::Handle;
    b.handle = v;
    bind(p.name, b);
    return;
  }
  if (fn == "T.Buffer" && (a.kind == PyExprKind::Call || a.kind == PyExprKind::Subscript)) {
    // T.Buffer((16, 16), "float32"), or the older T.Buffer[(16, 16), "float32"].
    Buffer buf = build_buffer(a, 0, p.name, "T.Buffer");
    Var v(p.name, DataType::handle());
    f.params.push_back(v);
    f.buffer_map.emplace_back(v, buf);
    Binding b;
    b.kind = Binding::Kind::Buffer;
    b.buffer = buf;
    bind(p.name, b);
    return;
  }
  if (a.kind == PyExprKind::Attr && fn.rfind("T.", 0) == 0) {
    auto dt = parse_scalar_type(fn.substr(2));
    if (dt && !dt->is_void()) {
      Var v(p.name, *dt);
      f.params.push_back(v);
      bind_scalar(p.name, v);
      return;
    }
  }
  src_.fail(a.pos, "expected T.handle, T.Buffer(...) or a scalar type such as T.int32 for parameter " + quote(p.name));
}

ir::DataType Builder::parse_dtype(const PyExpr &e) {
  std::string name;
  if (e.kind == PyExprKind::Str) {
    name = e.name;
  } else {
    std::string d = dotted_name(e);
    if (d.rfind("T.", 0) != 0) src_.fail(e.pos, "expected a data type such as \"float32\"");
    name = d.substr(2);
  }
  auto dt = parse_scalar_type(name);
  if (!dt || dt->is_void()) src_.fail(e.pos, "unknown data type " + quote(name));
  return *dt;
}

std::vector<Expr> Builder::build_shape(const PyExpr &e) {
  std::vector<const PyExpr *> dims;
  if (e.kind == PyExprKind::Tuple || e.kind == PyExprKind::List) {
    for (const PyExprPtr &a : e.args) dims.push_back(a.get());
  } else {
    dims.push_back(&e);
  }
  std::vector<Expr> out;
  for (const PyExpr *d : dims) out.push_back(build_int(*d, "a buffer dimension"));
  return out;
}

ir::Buffer Builder::build_buffer(const PyExpr &call, size_t first, const std::string &name, const char *what) {
  std::string fn = what;
  const PyExpr *shape = nullptr, *dtype = nullptr, *scope = nullptr, *strides = nullptr;
  // The subscript form puts (shape, dtype) in one tuple: T.Buffer[(16, 16), "float32"].
  std::vector<const PyExpr *> positional;
  for (const PyExprPtr &a : call.args) positional.push_back(a.get());
  if (call.kind == PyExprKind::Subscript && positional.size() == 1 && positional[0]->kind == PyExprKind::Tuple &&
      !positional[0]->args.empty() && positional[0]->args.back()->kind == PyExprKind::Str) {
    const PyExpr &t = *positional[0];
    positional.clear();
    if (t.args.size() == 2) positional = {t.args[0].get(), t.args[1].get()};
    else src_.fail(t.pos, fn + "[...] takes a shape and a data type");
  }
  size_t n = positional.size();
  if (n > first + 2) src_.fail(positional[first + 2]->pos, fn + " takes the shape and the data type as positional arguments, found " + std::to_string(n - first));
  if (n > first) shape = positional[first];
  if (n > first + 1) dtype = positional[first + 1];
  for (size_t k = 0; k < call.kwargs.size(); ++k) {
    const auto &[key, val] = call.kwargs[k];
    if (key == "shape" && !shape) shape = val.get();
    else if (key == "dtype" && !dtype) dtype = val.get();
    else if (key == "scope") scope = val.get();
    else if (key == "strides") strides = val.get();
    else if (key == "offset_factor" || key == "align" || key == "elem_offset" || key == "axis_separators" ||
             key == "buffer_type" || key == "data")
      continue;  // layout hints the IR does not model: accepted and dropped
    else
      src_.fail(call.kwarg_pos[k], "unexpected keyword argument " + quote(key) + " to " + fn);
  }
  if (!shape) src_.fail(call.pos, fn + " needs a shape");
  std::vector<Expr> dims = build_shape(*shape);
  DataType t = dtype ? parse_dtype(*dtype) : DataType::float32();
  if (t.is_handle()) src_.fail(dtype->pos, "buffer " + quote(name) + " cannot hold handles");
  std::string sc = scope ? expect_string(*scope, "the storage scope") : "global";
  if (sc.empty()) sc = "global";
  std::vector<Expr> st;
  if (strides && strides->kind != PyExprKind::None) st = build_shape(*strides);
  if (!st.empty() && st.size() != dims.size())
    src_.fail(strides->pos, "buffer " + quote(name) + " has " + std::to_string(dims.size()) + " dimensions but " +
                                std::to_string(st.size()) + " strides");
  return Buffer::make(name, t, std::move(dims), sc, std::move(st));
}

ir::Annotations Builder::build_annotations(const PyExpr &dict) {
  if (dict.kind != PyExprKind::Dict) src_.fail(dict.pos, "expected a dictionary of annotations");
  Annotations out;
  for (size_t k = 0; k + 1 < dict.args.size(); k += 2) {
    std::string key = expect_string(*dict.args[k], "an annotation key");
    out[key] = build_ann_value(*dict.args[k + 1]);
  }
  return out;
}

ir::AnnValue Builder::build_ann_value(const PyExpr &e) {
  switch (e.kind) {
    case PyExprKind::Bool: return AnnValue(e.int_value != 0);
    case PyExprKind::Int: return AnnValue(e.int_value);
    case PyExprKind::Float: return AnnValue(e.float_value);
    case PyExprKind::Str: return AnnValue(e.name);
    case PyExprKind::List:
    case PyExprKind::Tuple: {
      AnnValue::List l;
      for (const PyExprPtr &a : e.args) l.push_back(build_ann_value(*a));
      return AnnValue(std::move(l));
    }
    case PyExprKind::UnaryOp:
      if (e.op == "-" && e.args[0]->kind == PyExprKind::Int) return AnnValue(-e.args[0]->int_value);
      if (e.op == "-" && e.args[0]->kind == PyExprKind::Float) return AnnValue(-e.args[0]->float_value);
      break;
    case PyExprKind::Dict: {
      AnnDict d;
      for (size_t k = 0; k + 1 < e.args.size(); k += 2) {
        d.keys.push_back(expect_string(*e.args[k], "a dictionary key"));
        d.values.push_back(build_ann_value(*e.args[k + 1]));
      }
      return AnnValue(std::move(d));
    }
    case PyExprKind::Call: {
      // T.target("cuda") / T.target({...}): the function's compilation target, kept as written.
      if (dotted_name(*e.base) == "T.target") {
        reject_kwargs(e, "T.target");
        AnnCall c{"T.target", {}};
        for (const PyExprPtr &a : e.args) c.args.push_back(build_ann_value(*a));
        return AnnValue(std::move(c));
      }
      // T.bool(True), T.int32(4), T.float32(0.5): as printed by TVM.
      Operand o = build(e);
      if (const auto *i = o.e.as<IntImm>()) return o.e.dtype().is_bool() ? AnnValue(i->value != 0) : AnnValue(i->value);
      if (const auto *f = o.e.as<FloatImm>()) return AnnValue(f->value);
      break;
    }
    default: break;
  }
  src_.fail(e.pos, "expected an annotation value (bool, number, string, list, dictionary or T.target(...))");
}

}  // namespace tessera::script::detail
