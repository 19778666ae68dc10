//===- Func.cpp - PrimFunc and Module --------------------------------------===//
#include "tessera/ir/Func.h"

#include <unordered_set>

#include "tessera/ir/Functor.h"
#include "tessera/support/Error.h"

namespace tessera::ir {

static bool is_root_block(const Stmt &s) {
  const auto *b = s.as<Block>();
  return b && b->name == "root" && b->iter_vars.empty();
}

PrimFunc PrimFunc::make(std::string name, std::vector<Var> params,
                        std::vector<std::pair<Var, Buffer>> buffer_map, Stmt body, Annotations attrs) {
  TESSERA_ICHECK(body.defined()) << "function '" << name << "' without a body";
  for (const auto &[v, b] : buffer_map) {
    bool is_param = false;
    for (const Var &p : params) is_param |= p.same_as(v);
    TESSERA_ICHECK(is_param) << "function '" << name << "': buffer '" << b.name() << "' is bound to '"
                             << v.name() << "', which is not a parameter";
    TESSERA_ICHECK(v.dtype().is_handle()) << "function '" << name << "': parameter '" << v.name()
                                          << "' bound to a buffer must be a handle";
  }
  if (!is_root_block(body))
    body = Block::make("root", {}, {}, Expr(), {}, {}, {}, std::nullopt, std::move(body));
  auto n = std::make_shared<PrimFuncNode>();
  n->name = std::move(name);
  n->params = std::move(params);
  n->buffer_map = std::move(buffer_map);
  n->body = std::move(body);
  n->attrs = std::move(attrs);
  PrimFunc f;
  f.ptr_ = std::move(n);
  return f;
}

const Block &PrimFunc::root_block() const { return *ptr_->body.as<Block>(); }

Buffer PrimFunc::buffer_of(const Var &param) const {
  for (const auto &[v, b] : ptr_->buffer_map)
    if (v.same_as(param)) return b;
  return Buffer();
}

std::vector<Buffer> PrimFunc::param_buffers() const {
  std::vector<Buffer> out;
  for (const Var &p : ptr_->params)
    if (Buffer b = buffer_of(p); b.defined()) out.push_back(b);
  return out;
}

bool PrimFunc::is_param_buffer(const Buffer &b) const {
  for (const Var &p : ptr_->params)
    if (buffer_of(p).same_as(b)) return true;
  return false;
}

std::vector<Var> PrimFunc::shape_vars() const {
  std::vector<Var> out;
  std::unordered_set<const void *> seen;
  struct Collect : IRVisitor {
    std::vector<Var> *out;
    std::unordered_set<const void *> *seen;
    void visit_(const VarNode *op) override {
      if (seen->insert(op).second) out->push_back(Var::from(current));
    }
    void visit(const Expr &e) override {
      Expr saved = current;
      current = e;
      IRVisitor::visit(e);
      current = saved;
    }
    Expr current;
  } c;
  c.out = &out;
  c.seen = &seen;
  for (const Buffer &b : param_buffers()) {
    for (const Expr &e : b.shape()) c.visit(e);
    for (const Expr &e : b->strides) c.visit(e);
  }
  return out;
}

PrimFunc PrimFunc::with_body(Stmt body) const {
  if (body.same_as(ptr_->body)) return *this;
  return make(name(), params(), buffer_map(), std::move(body), attrs());
}

PrimFunc PrimFunc::with_name(std::string n) const {
  return make(std::move(n), params(), buffer_map(), body(), attrs());
}

PrimFunc Module::lookup(const std::string &name) const {
  for (const PrimFunc &f : funcs)
    if (f.name() == name) return f;
  return PrimFunc();
}

}  // namespace tessera::ir
