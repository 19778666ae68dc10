//===- BuildBuffers.cpp - Lowered-TIR buffers and buffer views -------------===//
//
// What TVM prints for buffers beyond parameters and T.alloc_buffer:
//   X_data = T.allocate([n], "float32", "global")     memory ...
//   X = T.decl_buffer((n,), "float32", data=X_data)    ... and the buffer over it
//   Y = T.decl_buffer((16,), "float32")                a buffer with its own memory
//   Z = T.Buffer((4, 4), "float32", data=Y.data)       another shape over Y's elements
//   S = T.match_buffer(A[vi, 0:16], (16,))             a block's view of a region
// An allocation becomes the allocation of the first buffer declared over it
// (at the innermost block, else the function's root); every other buffer
// over existing memory is a View: its loads, stores and regions are rewritten
// onto the base buffer, so the IR (and the printed text) has one buffer per
// piece of memory and every analysis sees plain accesses.
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "Builder.h"
#include "tessera/ir/Op.h"

namespace tessera::script::detail {

using namespace tessera::ir;

namespace {

/// The keyword arguments of a buffer declaration beyond shape and dtype.
struct DeclArgs {
  const PyExpr *shape = nullptr, *dtype = nullptr, *data = nullptr, *scope = nullptr;
};

/// a + b in a's type, without the `0 +` a view's origin at zero would add.
Expr plus(const Expr &a, const Expr &b) {
  Expr bb = cast(a.dtype(), b);
  if (is_const_int(a, 0)) return bb;
  if (is_const_int(bb, 0)) return a;
  return add(a, bb);
}

}  // namespace

const Binding &Builder::buffer_binding(const PyExpr &e) {
  if (e.kind != PyExprKind::Name) src_.fail(e.pos, "expected a buffer name before '['");
  const Binding *b = lookup(e.name);
  if (!b) fail_undefined(e.pos, e.name);
  if (b->kind == Binding::Kind::Allocation)
    src_.fail(e.pos, quote(e.name) + " is an allocation; declare a buffer over it with T.decl_buffer(..., data=" +
                         e.name + ")");
  if (b->kind != Binding::Kind::Buffer) src_.fail(e.pos, quote(e.name) + " is not a buffer and cannot be indexed");
  return *b;
}

void Builder::allocate_here(const Buffer &b, Pos p, const std::string &fn) {
  if (block_) {
    block_->allocs.push_back(b);
    return;
  }
  if (!func_) src_.fail(p, fn + " outside a function");
  // Lowered TIR declares buffers inside loops; the allocation lives at the
  // root, which is the same program when nothing is read before it is written.
  func_->root_allocs.push_back(b);
}

void Builder::build_allocate(const std::string &name, const PyExpr &call) {
  // T.allocate(extents, dtype, scope="global", condition=True, annotations={})
  const std::string fn = "T.allocate";
  const PyExpr *extents = call.args.size() > 0 ? call.args[0].get() : nullptr;
  const PyExpr *dtype = call.args.size() > 1 ? call.args[1].get() : nullptr;
  const PyExpr *scope = call.args.size() > 2 ? call.args[2].get() : nullptr;
  if (call.args.size() > 4) src_.fail(call.args[4]->pos, fn + " takes extents, dtype, scope and a condition");
  for (size_t k = 0; k < call.kwargs.size(); ++k) {
    const auto &[key, val] = call.kwargs[k];
    if (key == "extents") extents = val.get();
    else if (key == "dtype") dtype = val.get();
    else if (key == "scope") scope = val.get();
    else if (key != "condition" && key != "annotations")
      src_.fail(call.kwarg_pos[k], "unexpected keyword argument " + quote(key) + " to " + fn);
  }
  if (!extents || !dtype) src_.fail(call.pos, fn + " needs extents and a data type: T.allocate([16], \"float32\")");
  Binding b;
  b.kind = Binding::Kind::Allocation;
  b.alloc_shape = build_shape(*extents);
  b.alloc_dtype = parse_dtype(*dtype);
  b.alloc_scope = scope ? expect_string(*scope, "the storage scope") : "global";
  if (b.alloc_scope.empty()) b.alloc_scope = "global";
  bind(name, b);
}

void Builder::build_decl_buffer(const std::string &name, const PyExpr &call, const std::string &fn) {
  DeclArgs a;
  if (call.args.size() > 0) a.shape = call.args[0].get();
  if (call.args.size() > 1) a.dtype = call.args[1].get();
  if (call.args.size() > 2) a.data = call.args[2].get();
  for (size_t k = 0; k < call.kwargs.size(); ++k) {
    const auto &[key, val] = call.kwargs[k];
    if (key == "shape") a.shape = val.get();
    else if (key == "dtype") a.dtype = val.get();
    else if (key == "data") a.data = val.get();
    else if (key == "scope") a.scope = val.get();
    else if (key != "strides" && key != "elem_offset" && key != "offset_factor" && key != "align" &&
             key != "axis_separators" && key != "buffer_type")
      src_.fail(call.kwarg_pos[k], "unexpected keyword argument " + quote(key) + " to " + fn);
  }
  if (!a.shape) src_.fail(call.pos, fn + " needs a shape");
  std::vector<Expr> shape = build_shape(*a.shape);
  DataType t = a.dtype ? parse_dtype(*a.dtype) : DataType::float32();
  std::string scope = a.scope ? expect_string(*a.scope, "the storage scope") : "";

  auto as_view_of = [&](const Binding &base_binding, Pos p) {
    // Another shape over memory that already has a buffer.
    const Buffer &base = base_binding.buffer;
    if (base.dtype() != t)
      src_.fail(p, fn + " " + quote(name) + " of " + t.str() + " over the " + base.dtype().str() + " memory of " +
                       quote(base.name()) + ": buffers of different types over one allocation are not supported");
    View v;
    v.kind = View::Kind::Reshape;
    v.name = name;
    v.shape = shape;
    if (base_binding.view) {
      if (base_binding.view->kind != View::Kind::Reshape)
        src_.fail(p, fn + " over " + quote(base.name()) + ", itself a region of a matched buffer, is not supported");
    }
    Binding nb;
    nb.kind = Binding::Kind::Buffer;
    nb.buffer = base;
    nb.view = v;
    bind(name, nb);
  };

  if (!a.data) {
    // Its own memory: an allocation.
    Buffer buf = Buffer::make(name, t, shape, scope.empty() ? "global" : scope);
    allocate_here(buf, call.pos, fn);
    Binding nb;
    nb.kind = Binding::Kind::Buffer;
    nb.buffer = buf;
    bind(name, nb);
    return;
  }
  const PyExpr &d = *a.data;
  // data=X_data (an allocation or a handle parameter), or data=A.data (a buffer's memory).
  std::string src_name;
  if (d.kind == PyExprKind::Name) src_name = d.name;
  else if (d.kind == PyExprKind::Attr && d.name == "data" && d.base->kind == PyExprKind::Name) src_name = d.base->name;
  else src_.fail(d.pos, "expected an allocation, a T.handle parameter or A.data for data= of " + fn);
  Binding *src = nullptr;
  for (auto it = scopes_.rbegin(); it != scopes_.rend() && !src; ++it)
    if (auto f = it->find(src_name); f != it->end()) src = &f->second;
  if (!src) fail_undefined(d.pos, src_name);
  if (src->kind == Binding::Kind::Buffer) return as_view_of(*src, d.pos);
  if (src->kind == Binding::Kind::Allocation) {
    if (src->buffer.defined()) {
      Binding base;
      base.kind = Binding::Kind::Buffer;
      base.buffer = src->buffer;
      return as_view_of(base, d.pos);
    }
    if (src->alloc_dtype != t)
      src_.fail(d.pos, fn + " " + quote(name) + " of " + t.str() + " over an allocation of " +
                           src->alloc_dtype.str() + ": buffers of different types over one allocation are not supported");
    Buffer buf = Buffer::make(name, t, shape, scope.empty() ? src->alloc_scope : scope);
    allocate_here(buf, call.pos, fn);
    src->buffer = buf;  // later declarations over the same allocation are views of this one
    Binding nb;
    nb.kind = Binding::Kind::Buffer;
    nb.buffer = buf;
    bind(name, nb);
    return;
  }
  if (src->kind == Binding::Kind::Handle) {
    // A T.handle parameter's memory: the parameter's buffer, as T.match_buffer would bind it.
    if (!func_level_) src_.fail(d.pos, fn + " over the parameter " + quote(src_name) + " must be at function level");
    if (!func_->matched_handles.insert(src->handle.get()).second)
      src_.fail(d.pos, "handle " + quote(src_name) + " already has a buffer");
    Buffer buf = Buffer::make(name, t, shape, scope.empty() ? "global" : scope);
    func_->buffer_map.emplace_back(src->handle, buf);
    Binding nb;
    nb.kind = Binding::Kind::Buffer;
    nb.buffer = buf;
    bind(name, nb);
    return;
  }
  src_.fail(d.pos, quote(src_name) + " is not memory: expected an allocation, a T.handle parameter or A.data");
}

void Builder::build_region_match(const std::string &name, const PyExpr &call) {
  // T.match_buffer(A[v0:v0 + 4, 0:16], (4, 16), dtype?, offset_factor=1, scope=...)
  const std::string fn = "T.match_buffer";
  if (call.args.empty()) expect_args(call, 2, 3, fn);
  const PyExpr &src = *call.args[0];
  if (src.kind != PyExprKind::Subscript && src.kind != PyExprKind::Name)
    src_.fail(src.pos, fn + " in a block takes a buffer region such as A[vi, 0:16]");
  const Binding &base = buffer_binding(src.kind == PyExprKind::Name ? src : *src.base);
  BufferRegion r = build_region(src);  // on the base buffer, a view's region already mapped
  const PyExpr *shape_e = call.args.size() > 1 ? call.args[1].get() : nullptr;
  const PyExpr *dtype_e = call.args.size() > 2 ? call.args[2].get() : nullptr;
  for (size_t k = 0; k < call.kwargs.size(); ++k) {
    const auto &[key, val] = call.kwargs[k];
    if (key == "shape") shape_e = val.get();
    else if (key == "dtype") dtype_e = val.get();
    else if (key != "strides" && key != "elem_offset" && key != "offset_factor" && key != "align" &&
             key != "scope" && key != "axis_separators" && key != "buffer_type")
      src_.fail(call.kwarg_pos[k], "unexpected keyword argument " + quote(key) + " to " + fn);
  }
  if (!shape_e) src_.fail(call.pos, fn + " needs the matched buffer's shape");
  std::vector<Expr> shape = build_shape(*shape_e);
  DataType t = dtype_e ? parse_dtype(*dtype_e) : base.buffer.dtype();
  if (t != base.buffer.dtype())
    src_.fail(dtype_e->pos, fn + " of " + t.str() + " over " + quote(base.buffer.name()) + " of " +
                                base.buffer.dtype().str());
  View v;
  v.kind = View::Kind::Region;
  v.name = name;
  v.shape = shape;
  for (const Range &rg : r.region) v.offsets.push_back(rg.min);
  // Each view dimension lies along a base dimension of the region; unit
  // dimensions of the region may be dropped (A[vi, 0:16] as (16,)).
  size_t n = shape.size(), m = r.region.size();
  if (n == m) {
    for (size_t d = 0; d < n; ++d) v.dims.push_back(int(d));
  } else {
    for (size_t d = 0; d < m; ++d)
      if (!is_const_int(r.region[d].extent, 1)) v.dims.push_back(int(d));
    while (v.dims.size() < n) {
      // More view dimensions than non-unit region extents: unit view dimensions.
      size_t d = 0;
      while (d < m && std::find(v.dims.begin(), v.dims.end(), int(d)) != v.dims.end()) ++d;
      if (d == m) break;
      v.dims.push_back(int(d));
      std::sort(v.dims.begin(), v.dims.end());
    }
    if (v.dims.size() != n)
      src_.fail(call.pos, fn + ": a buffer of " + std::to_string(n) + " dimensions does not match a region of " +
                              std::to_string(v.dims.size()) + " non-unit dimensions of " + quote(base.buffer.name()));
  }
  if (base.view) {
    // A view of a view: compose onto the base, whose region build_region already gave.
    if (base.view->kind != View::Kind::Region)
      src_.fail(src.pos, fn + " of a region of " + quote(base.view->name) + ", itself over another buffer's memory, is not supported");
  }
  Binding nb;
  nb.kind = Binding::Kind::Buffer;
  nb.buffer = base.buffer;
  nb.view = v;
  bind(name, nb);
}

std::vector<Expr> Builder::view_indices(const View &v, const Buffer &base, std::vector<Expr> idx) {
  if (v.kind == View::Kind::Region) {
    std::vector<Expr> out = v.offsets;
    for (size_t k = 0; k < idx.size(); ++k) {
      Expr &o = out[size_t(v.dims[k])];
      o = plus(o, idx[k]);
    }
    return out;
  }
  // Reshape: the row-major position in the view, then the base's indices
  // (in int64 when any size is, else int32).
  DataType t = DataType::int32();
  for (const Expr &e : idx) t = e.dtype().bits() > t.bits() ? e.dtype() : t;
  for (const Expr &e : v.shape) t = e.dtype().bits() > t.bits() ? e.dtype() : t;
  for (const Expr &e : base.shape()) t = e.dtype().bits() > t.bits() ? e.dtype() : t;
  Expr flat;
  for (size_t k = 0; k < idx.size(); ++k) {
    Expr i = cast(t, idx[k]);
    flat = !flat.defined() ? i : add(mul(flat, cast(t, v.shape[k])), i);
  }
  if (!flat.defined()) flat = make_int(t, 0);
  std::vector<Expr> out(base.ndim());
  for (int d = base.ndim() - 1; d >= 0; --d) {
    Expr extent = cast(t, base.shape()[size_t(d)]);
    DataType bt = base.shape()[size_t(d)].dtype();
    out[size_t(d)] = cast(bt, d == 0 ? flat : floormod(flat, extent));
    flat = floordiv(flat, extent);
  }
  return out;
}

BufferRegion Builder::view_region(const View &v, const Buffer &base, const std::vector<Range> &region) {
  if (v.kind == View::Kind::Reshape) return BufferRegion::full(base);
  BufferRegion r{base, {}};
  for (const Expr &o : v.offsets) r.region.push_back(Range{o, make_int(o.dtype(), 1)});
  for (size_t k = 0; k < region.size(); ++k) {
    Range &rg = r.region[size_t(v.dims[k])];
    rg = Range{plus(rg.min, region[k].min), cast(rg.min.dtype(), region[k].extent)};
  }
  return r;
}

}  // namespace tessera::script::detail
