//===- analysis/LoopProperties.cpp - Checks on loops shared by primitives --===//
#include "../Primitive.h"
#include "tessera/ir/Op.h"
#include "tessera/script/Printer.h"

namespace tessera::schedule::detail {

using namespace ir;

std::string loop_name(const For &loop) { return quoted(loop.loop_var.name()); }

Expr mul_fold(const Expr &a, const Expr &b) {
  auto x = as_const_int(a), y = as_const_int(b);
  if (x && y) return make_int(a.dtype(), *x * *y);
  if (x == 1) return b;
  if (y == 1) return a;
  return mul(a, b);
}

void check_loop_serial(std::string_view primitive, const StmtPath &p) {
  const For &f = *p.loop();
  if (f.for_kind == ForKind::Serial) return;
  std::string what = f.for_kind == ForKind::ThreadBinding ? "is bound to " + f.thread_tag
                     : f.for_kind == ForKind::Unrolled ? std::string("is unrolled")
                                                       : std::string("is ") + for_kind_name(f.for_kind);
  throw LoopNotSerialError(std::string(primitive), "loop " + loop_name(f) + " " + what + ", not serial",
                           "loop {0} " + what + "; " + std::string(primitive) + " needs a serial loop", {p.stmt});
}

void check_loop_no_annotation(std::string_view primitive, const StmtPath &p) {
  const For &f = *p.loop();
  if (f.annotations.empty()) return;
  std::string keys;
  for (const auto &[k, v] : f.annotations) keys += (keys.empty() ? "" : ", ") + quoted(k);
  throw LoopHasAnnotationError(std::string(primitive),
                               "loop " + loop_name(f) + " has annotations (" + keys + ") that " +
                                   std::string(primitive) + " would drop; unannotate it first",
                               "loop {0} has annotations " + keys, {p.stmt});
}

void check_loop_start_at_zero(std::string_view primitive, const StmtPath &p) {
  const For &f = *p.loop();
  if (is_const_int(f.min, 0)) return;
  throw LoopNotStartAtZeroError(std::string(primitive),
                                "loop " + loop_name(f) + " starts at " + script::print(f.min) + ", not 0",
                                "loop {0} does not start at 0", {p.stmt});
}

std::optional<IterUse> find_non_spatial_use(const Stmt &loop) {
  const For *f = loop.as<For>();
  for (const Stmt &s : blocks_under(loop)) {
    const Block *b = s.as<Block>();
    for (size_t i = 0; i < b->iter_vars.size(); ++i)
      if (b->iter_vars[i].kind != IterKind::Spatial && uses_var(b->bindings[i], f->loop_var)) return IterUse{s, i};
  }
  return std::nullopt;
}

bool is_loop_data_parallel(const Stmt &loop) { return !find_non_spatial_use(loop); }

void check_loop_data_parallel(std::string_view primitive, const StmtPath &p, std::string_view why) {
  auto use = find_non_spatial_use(p.stmt);
  if (!use) return;
  const Block *b = use->block.as<Block>();
  const IterVar &iv = b->iter_vars[use->iter];
  std::string kind = iv.kind == IterKind::Reduce ? "reduction" : "opaque";
  std::string tail = why.empty() ? "" : " (" + std::string(why) + ")";
  throw LoopNotDataParallelError(std::string(primitive),
                                 "loop " + loop_name(*p.loop()) + " is bound to " + kind + " iter var " +
                                     quoted(iv.var.name()) + " of block " + quoted(b->name) + tail,
                                 "loop {0} is bound to " + kind + " iter var " + quoted(iv.var.name()) +
                                     " of block {1}" + tail,
                                 {p.stmt, use->block});
}

void check_loop_list(std::string_view primitive, const std::vector<LoopRef> &loops) {
  if (loops.empty()) throw InvalidLoopListError(std::string(primitive), "no loops given");
  for (size_t i = 0; i < loops.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (loops[i] == loops[j])
        throw InvalidLoopListError(std::string(primitive), "loop " + quoted(loops[i].name()) + " is listed twice");
}

}  // namespace tessera::schedule::detail
