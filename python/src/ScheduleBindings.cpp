//===- python/src/ScheduleBindings.cpp - tessera.Schedule ------------------===//
//
// The TensorIR schedule primitives (schedule/Schedule.h) for Python, in TVM's
// spelling:
//
//   sch = tessera.Schedule(func)
//   b = sch.get_block("C")
//   i, j, k = sch.get_loops(b)
//   i0, i1 = sch.split(i, [None, 16])
//   sch.bind(i0, "blockIdx.x"); sch.bind(i1, "threadIdx.x")
//   print(sch.script()); sch.trace()   # the JSON trace, replayable
//
// Blocks and loops are handles (Block, Loop) that the Schedule resolves by
// name and identity; a primitive that refuses raises ScheduleError with the
// function rendered and the offending loops marked, and changes nothing.
//
//===----------------------------------------------------------------------===//
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include "tessera/schedule/Schedule.h"
#include "tessera/schedule/Trace.h"
#include "tessera/script/Printer.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tessera::python {

namespace {

using schedule::BlockOrLoop;
using schedule::BlockRef;
using schedule::LoopRef;
using schedule::Schedule;

/// An annotation value from a Python bool, int, float, str or list of them.
ir::AnnValue ann_value(nb::handle v) {
  if (nb::isinstance<nb::bool_>(v)) return ir::AnnValue(nb::cast<bool>(v));
  if (nb::isinstance<nb::int_>(v)) return ir::AnnValue(nb::cast<int64_t>(v));
  if (nb::isinstance<nb::float_>(v)) return ir::AnnValue(nb::cast<double>(v));
  if (nb::isinstance<nb::str>(v)) return ir::AnnValue(nb::cast<std::string>(v));
  if (nb::isinstance<nb::list>(v) || nb::isinstance<nb::tuple>(v)) {
    ir::AnnValue::List out;
    for (nb::handle x : v) out.push_back(ann_value(x));
    return ir::AnnValue(std::move(out));
  }
  throw UserError("an annotation value is a bool, int, float, str or a list of them, not a " +
                  std::string(nb::type_name(v.type()).c_str()));
}

}  // namespace

void bind_schedule(nb::module_ &m) {
  nb::class_<BlockRef>(m, "Block", "A block of a Schedule's function, by its name.")
      .def_ro("name", &BlockRef::name)
      .def("__eq__", [](const BlockRef &a, const BlockRef &b) { return a == b; })
      .def("__repr__", [](const BlockRef &b) { return "<tessera.Block " + b.name + ">"; });
  nb::class_<LoopRef>(m, "Loop", "A loop of a Schedule's function, by its loop variable.")
      .def_prop_ro("name", [](const LoopRef &l) { return l.name(); })
      .def("__eq__", [](const LoopRef &a, const LoopRef &b) { return a == b; })
      .def("__repr__", [](const LoopRef &l) { return "<tessera.Loop " + l.name() + ">"; });

  nb::class_<Schedule>(m, "Schedule",
                       "TensorIR schedule primitives on a function (schedule/Schedule.h); every call is "
                       "checked first and recorded in a replayable trace.")
      .def(nb::init<ir::PrimFunc>(), "func"_a)
      .def_prop_ro("func", &Schedule::func, "The scheduled function.")
      .def("script", [](const Schedule &s) { return script::print(s.func()); }, "Its TVMScript.")
      .def("trace", [](const Schedule &s) { return s.trace().to_json(); }, "The calls so far, as JSON.")
      .def("replay", [](Schedule &s, const std::string &json) { s.replay(json); }, "trace"_a,
           "Replays a JSON trace (of the same function) on this schedule.")
      .def("get_block", &Schedule::get_block, "name"_a)
      .def("get_loops", &Schedule::get_loops, "block"_a)
      .def("get_child_blocks", &Schedule::get_child_blocks, "parent"_a)
      .def("get_producers", &Schedule::get_producers, "block"_a)
      .def("get_consumers", &Schedule::get_consumers, "block"_a)
      .def("split", &Schedule::split, "loop"_a, "factors"_a, "names"_a = std::vector<std::string>{},
           "Splits `loop` by `factors` (outermost first; one may be None: inferred).")
      .def("fuse",
           [](Schedule &s, nb::args loops, const std::string &name) {
             std::vector<LoopRef> refs;
             for (nb::handle l : loops) refs.push_back(nb::cast<LoopRef>(l));
             return s.fuse(refs, name);
           },
           "loops"_a, nb::kw_only(), "name"_a = "")
      .def("reorder",
           [](Schedule &s, nb::args loops) {
             std::vector<LoopRef> refs;
             for (nb::handle l : loops) refs.push_back(nb::cast<LoopRef>(l));
             s.reorder(refs);
           },
           "loops"_a)
      .def("tile", &Schedule::tile, "loops"_a, "factors"_a, "names"_a = std::vector<std::vector<std::string>>{})
      .def("add_unit_loop", &Schedule::add_unit_loop, "target"_a, "name"_a = "")
      .def("bind", &Schedule::bind, "loop"_a, "thread"_a)
      .def("parallel", &Schedule::parallel, "loop"_a)
      .def("vectorize", &Schedule::vectorize, "loop"_a)
      .def("unroll", &Schedule::unroll, "loop"_a)
      .def("annotate",
           [](Schedule &s, const BlockOrLoop &target, const std::string &key, nb::handle value) {
             s.annotate(target, key, ann_value(value));
           },
           "target"_a, "key"_a, "value"_a)
      .def("unannotate", &Schedule::unannotate, "target"_a, "key"_a)
      .def("cache_read", &Schedule::cache_read, "block"_a, "read_buffer_index"_a, "scope"_a, "name"_a = "")
      .def("cache_write", &Schedule::cache_write, "block"_a, "write_buffer_index"_a, "scope"_a, "name"_a = "")
      .def("set_scope", &Schedule::set_scope, "block"_a, "write_buffer_index"_a, "scope"_a)
      .def("storage_align", &Schedule::storage_align, "block"_a, "write_buffer_index"_a, "axis"_a, "factor"_a,
           "offset"_a)
      .def("compute_at", &Schedule::compute_at, "block"_a, "loop"_a, "preserve_unit_loops"_a = false)
      .def("reverse_compute_at", &Schedule::reverse_compute_at, "block"_a, "loop"_a, "preserve_unit_loops"_a = false)
      .def("compute_inline", &Schedule::compute_inline, "block"_a)
      .def("reverse_compute_inline", &Schedule::reverse_compute_inline, "block"_a)
      .def("decompose_reduction", &Schedule::decompose_reduction, "block"_a, "loop"_a, "name"_a = "")
      .def("rfactor", &Schedule::rfactor, "loop"_a, "factor_axis"_a)
      .def("blockize", &Schedule::blockize, "loop"_a, "name"_a = "")
      .def("tensorize", &Schedule::tensorize, "target"_a, "intrin"_a)
      .def("pad_einsum", &Schedule::pad_einsum, "block"_a, "padding"_a)
      .def("reindex", &Schedule::reindex, "block"_a, "buffer_index"_a, "is_write"_a)
      .def("transform_layout",
           [](Schedule &s, const BlockRef &block, int64_t buffer_index, bool is_write, const std::string &index_map) {
             s.transform_layout(block, buffer_index, is_write, schedule::IndexMap::parse(index_map));
           },
           "block"_a, "buffer_index"_a, "is_write"_a, "index_map"_a,
           "index_map: a TVMScript lambda, 'lambda i, j: (i // 16, j // 16, i % 16, j % 16)'.")
      .def("transform_block_layout",
           [](Schedule &s, const BlockRef &block, const std::string &index_map) {
             s.transform_block_layout(block, schedule::IndexMap::parse(index_map));
           },
           "block"_a, "index_map"_a);
}

}  // namespace tessera::python
