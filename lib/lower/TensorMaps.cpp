//===- lib/lower/TensorMaps.cpp - The tensor maps a kernel takes -----------===//
#include "tessera/lower/TensorMaps.h"

#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"

namespace tessera::lower {

namespace {

bool is_tma_copy(const ir::Call &c) { return c.op == ir::Intrinsic::TmaLoad || c.op == ir::Intrinsic::TmaStore; }

/// Arguments before the box extents: dst, bar, src.data, swizzle (load);
/// src, dst.data, swizzle (store).
size_t leading_args(const ir::Call &c) { return c.op == ir::Intrinsic::TmaLoad ? 4 : 3; }

/// The buffer parameter a TMA copy's tensor is. Lowering flattens the
/// parameters and leaves the call's tensor as written (its dimensions are
/// the box's), so the two are matched by name.
size_t param_of(const LoweredFunc &f, const ir::Call &copy) {
  const ir::Buffer &t = tma_tensor(copy);
  for (size_t i = 0; i < f.params.size(); ++i)
    if (f.params[i].is_buffer() && f.params[i].buffer.name() == t.name()) return i;
  throw LowerError("T." + std::string(ir::intrinsic_name(copy.op)) + " copies " +
                   (copy.op == ir::Intrinsic::TmaLoad ? "from '" : "into '") + t.name() +
                   "', which is not a parameter of kernel '" + f.name +
                   "' (TMA copies a global tensor the kernel is given)");
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

const ir::Buffer &tma_tensor(const ir::Call &copy) {
  TESSERA_ICHECK(is_tma_copy(copy)) << "not a T.tma_load or T.tma_store";
  return copy.args[leading_args(copy) - 2].as<ir::BufferPtr>()->buffer;
}

ir::tma::Box tma_box(const ir::Call &copy) {
  const std::string name = "T." + std::string(ir::intrinsic_name(copy.op));
  ir::tma::Box box;
  box.elem_bytes = tma_tensor(copy).dtype().bytes();
  const size_t lead = leading_args(copy);
  auto constant = [&](size_t i, const char *what) {
    auto v = ir::as_const_int(copy.args[i]);
    if (!v) throw LowerError(name + "'s " + what + " must be a constant");
    return *v;
  };
  box.swizzle_bytes = static_cast<int>(constant(lead - 1, "swizzle"));
  for (size_t d = 0; d < (copy.args.size() - lead) / 2; ++d) box.extent.push_back(constant(lead + d, "box extents"));
  if (std::string bad = box.check(); !bad.empty()) throw LowerError(name + ": " + bad);
  return box;
}

std::vector<TensorMapParam> tensor_map_params(const LoweredFunc &f) {
  std::vector<TensorMapParam> maps;
  ir::pre_order_visit(
      f.body,
      [&](const ir::Expr &e) {
        const auto *c = e.as<ir::Call>();
        if (!c || !is_tma_copy(*c)) return;
        TensorMapParam m{param_of(f, *c), tma_box(*c)};
        if (find_map(maps, m.param, m.box) < 0) maps.push_back(std::move(m));
      },
      nullptr);
  return maps;
}

size_t tensor_map_of(const std::vector<TensorMapParam> &maps, const LoweredFunc &f, const ir::Call &copy) {
  const int64_t i = find_map(maps, param_of(f, copy), tma_box(copy));
  TESSERA_ICHECK(i >= 0) << "a TMA copy whose tensor map is not among the kernel's";
  return static_cast<size_t>(i);
}

}  // namespace tessera::lower
