//===- lib/lower/TensorMaps.cpp - The tensor maps a kernel takes -----------===//
#include "tessera/lower/TensorMaps.h"

#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"

namespace tessera::lower {

namespace {

/// The buffer parameter a T.tma_load's tensor is. Lowering flattens the
/// parameters and leaves the call's tensor as written (its dimensions are
/// the box's), so the two are matched by name.
size_t param_of(const LoweredFunc &f, const ir::Call &load) {
  const ir::Buffer &t = load.args[2].as<ir::BufferPtr>()->buffer;
  for (size_t i = 0; i < f.params.size(); ++i)
    if (f.params[i].is_buffer() && f.params[i].buffer.name() == t.name()) return i;
  throw LowerError("T.tma_load copies from '" + t.name() + "', which is not a parameter of kernel '" + f.name +
                   "' (TMA reads a global tensor the kernel is given)");
}

/// The index in `maps` of the map of `param`'s tensor with `box`, or -1.
int64_t find_map(const std::vector<TensorMapParam> &maps, size_t param, const ir::tma::Box &box) {
  for (size_t i = 0; i < maps.size(); ++i)
    if (maps[i].param == param && maps[i].box.extent == box.extent &&
        maps[i].box.swizzle_bytes == box.swizzle_bytes && maps[i].box.elem_bytes == box.elem_bytes)
      return static_cast<int64_t>(i);
  return -1;
}

}  // namespace

ir::tma::Box tma_box(const ir::Call &load) {
  TESSERA_ICHECK(load.op == ir::Intrinsic::TmaLoad) << "not a T.tma_load";
  ir::tma::Box box;
  box.elem_bytes = load.args[2].as<ir::BufferPtr>()->buffer.dtype().bytes();
  auto constant = [&](size_t i, const char *what) {
    auto v = ir::as_const_int(load.args[i]);
    if (!v) throw LowerError(std::string("T.tma_load's ") + what + " must be a constant");
    return *v;
  };
  box.swizzle_bytes = static_cast<int>(constant(3, "swizzle"));
  for (size_t d = 0; d < (load.args.size() - 4) / 2; ++d) box.extent.push_back(constant(4 + d, "box extents"));
  if (std::string bad = box.check(); !bad.empty()) throw LowerError("T.tma_load: " + bad);
  return box;
}

std::vector<TensorMapParam> tensor_map_params(const LoweredFunc &f) {
  std::vector<TensorMapParam> maps;
  ir::pre_order_visit(
      f.body,
      [&](const ir::Expr &e) {
        const auto *c = e.as<ir::Call>();
        if (!c || c->op != ir::Intrinsic::TmaLoad) return;
        TensorMapParam m{param_of(f, *c), tma_box(*c)};
        if (find_map(maps, m.param, m.box) < 0) maps.push_back(std::move(m));
      },
      nullptr);
  return maps;
}

size_t tensor_map_of(const std::vector<TensorMapParam> &maps, const LoweredFunc &f, const ir::Call &load) {
  const int64_t i = find_map(maps, param_of(f, load), tma_box(load));
  TESSERA_ICHECK(i >= 0) << "a T.tma_load whose tensor map is not among the kernel's";
  return static_cast<size_t>(i);
}

}  // namespace tessera::lower
