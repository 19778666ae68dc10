//===- lib/analysis/Specialize.cpp - Bind symbolic shapes to constants ------===//
#include "tessera/analysis/Specialize.h"

#include <unordered_map>

#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"

namespace tessera::analysis {

using namespace tessera::ir;

namespace {

class Specializer : public IRMutator {
 public:
  explicit Specializer(std::unordered_map<const VarNode *, Expr> values) : values_(std::move(values)) {}

  Buffer mutate_buffer(const Buffer &b) override {
    if (auto it = buffers_.find(b.get()); it != buffers_.end()) return it->second;
    bool changed = false;
    std::vector<Expr> shape = folded(b.shape(), changed), strides = folded(b->strides, changed);
    Buffer out = changed ? Buffer::make(b.name(), b.dtype(), shape, b.scope(), strides) : b;
    buffers_.emplace(b.get(), out);
    return out;
  }

 protected:
  Expr visit_(const VarNode *op, const Expr &self) override {
    auto it = values_.find(op);
    return it == values_.end() ? self : it->second;
  }
  Stmt visit_(const For *op, const Stmt &self) override {
    Stmt s = IRMutator::visit_(op, self);
    const auto *f = s.as<For>();
    Expr min = arith::simplify(f->min), extent = arith::simplify(f->extent);
    if (min.same_as(f->min) && extent.same_as(f->extent)) return s;
    return For::make(f->loop_var, min, extent, f->for_kind, f->body, f->thread_tag, f->annotations);
  }
  Stmt visit_(const Block *op, const Stmt &self) override {
    Stmt s = IRMutator::visit_(op, self);
    const auto *b = s.as<Block>();
    std::vector<IterVar> iters = b->iter_vars;
    for (IterVar &iv : iters) iv.dom = Range{arith::simplify(iv.dom.min), arith::simplify(iv.dom.extent)};
    return Block::make(b->name, iters, b->bindings, b->predicate, b->reads, b->writes, b->allocs, b->init, b->body,
                       b->annotations);
  }

 private:
  std::vector<Expr> folded(const std::vector<Expr> &xs, bool &changed) {
    std::vector<Expr> out;
    for (const Expr &x : xs) {
      Expr y = arith::simplify(mutate(x));
      changed = changed || !y.same_as(x);
      out.push_back(y);
    }
    return out;
  }

  std::unordered_map<const VarNode *, Expr> values_;
  std::unordered_map<const BufferNode *, Buffer> buffers_;
};

}  // namespace

PrimFunc specialize(const PrimFunc &f, const std::map<std::string, int64_t> &values) {
  std::unordered_map<const VarNode *, Expr> map;
  std::vector<Var> shape_vars = f.shape_vars();
  for (const auto &[name, value] : values) {
    const Var *found = nullptr;
    for (const Var &v : shape_vars)
      if (v.name() == name) found = &v;
    if (!found) {
      std::string names;
      for (const Var &v : shape_vars) names += (names.empty() ? "" : ", ") + v.name();
      throw UserError("specialize: '" + name + "' is not a symbolic shape variable of function '" + f.name() +
                      "' (it has: " + (names.empty() ? "none" : names) + ")");
    }
    for (const Var &p : f.params())
      if (p.same_as(*found))
        throw UserError("specialize: '" + name + "' is a scalar parameter of '" + f.name() + "', not only a shape");
    if (value < 0) throw UserError("specialize: '" + name + "' cannot be negative, got " + std::to_string(value));
    const int bits = found->dtype().bits();
    if (bits < 64 && value > (int64_t(1) << (bits - 1)) - 1)
      throw UserError("specialize: '" + name + "' is " + found->dtype().str() + " in '" + f.name() + "': " +
                      std::to_string(value) + " does not fit it (at most " +
                      std::to_string((int64_t(1) << (bits - 1)) - 1) + ")");
    map[found->get()] = make_int(found->dtype(), value);
  }
  if (map.empty()) return f;
  Specializer s(std::move(map));
  std::vector<std::pair<Var, Buffer>> buffer_map;
  for (const auto &[param, buffer] : f.buffer_map()) buffer_map.emplace_back(param, s.mutate_buffer(buffer));
  return PrimFunc::make(f.name(), f.params(), buffer_map, s.mutate(f.body()), f.attrs());
}

}  // namespace tessera::analysis
