//===- python/src/Bindings.cpp - tessera's facade for Python (nanobind) ----===//
//
// The extension module `tessera._tessera`: a thin layer over tessera/tessera.h.
// Arrays cross through DLPack (nb::ndarray): NumPy arrays and PyTorch tensors,
// host or device, reach the kernels without copies (a GPU kernel given host
// arrays copies them to the device and back, as Kernel::run does). The GIL
// is released while tessera works; a progress callback, called on this
// thread, takes it back and checks for Ctrl-C, which stops the tune after the
// candidates in flight. C++ errors become the Python exceptions of
// tessera/__init__.py's hierarchy (ParseError with file, line and col).
//
//===----------------------------------------------------------------------===//
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <optional>

#include "tessera/ir/DataType.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/schedule/Error.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/tessera.h"
#include "tessera/tune/FastTune.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tessera::python {

/// tessera.Schedule and its handles (ScheduleBindings.cpp).
void bind_schedule(nb::module_ &m);

namespace {

/// The Python exception types, made once by the module.
struct Exceptions {
  nb::object base, user, internal, parse, schedule, tune, compile, interpret, device;
};
Exceptions &exceptions() {
  static Exceptions e;
  return e;
}

void set_error(const nb::object &type, const char *what) { PyErr_SetString(type.ptr(), what); }

/// The TVMScript name of a DLPack element type ("float16", "int32", "bool").
std::string dtype_name(nb::dlpack::dtype t) {
  using C = nb::dlpack::dtype_code;
  std::string s;
  switch (C(t.code)) {
    case C::Int: s = "int" + std::to_string(t.bits); break;
    case C::UInt: s = "uint" + std::to_string(t.bits); break;
    case C::Float: s = "float" + std::to_string(t.bits); break;
    case C::Bfloat: s = "bfloat" + std::to_string(t.bits); break;
    case C::Bool: s = "bool"; break;
    default: throw UserError("an array of DLPack type code " + std::to_string(t.code) + ": tessera has no such type");
  }
  return t.lanes > 1 ? s + "x" + std::to_string(t.lanes) : s;
}

/// What the arguments of one call are: DLPack tensors over the arrays' memory.
struct CallArgs {
  std::vector<nb::ndarray<>> arrays;  ///< keeps the exporters alive during the call
  std::vector<DLTensor> tensors;
  std::vector<std::vector<int64_t>> strides;
  bool all_host = true, all_device = true;

  explicit CallArgs(const nb::args &args) {
    for (nb::handle a : args) {
      nb::ndarray<> array;
      if (!nb::try_cast(a, array, false))
        throw UserError("argument " + std::to_string(arrays.size()) + " is a " +
                        std::string(nb::type_name(a.type()).c_str()) +
                        ": a kernel takes arrays (NumPy, PyTorch, anything with __dlpack__)");
      arrays.push_back(array);
    }
    tensors.resize(arrays.size());
    strides.resize(arrays.size());
    for (size_t i = 0; i < arrays.size(); ++i) {
      const nb::ndarray<> &x = arrays[i];
      DLTensor &t = tensors[i];
      t.data = x.data_handle();
      t.byte_offset = x.byte_offset();
      t.device = {DLDeviceType(x.device_type()), x.device_id()};
      t.ndim = int(x.ndim());
      t.dtype = {x.dtype().code, x.dtype().bits, x.dtype().lanes};
      t.shape = const_cast<int64_t *>(x.shape_ptr());
      if (x.stride_ptr()) {
        strides[i].assign(x.stride_ptr(), x.stride_ptr() + x.ndim());
        t.strides = strides[i].data();
      }
      const bool host = x.device_type() == kDLCPU || x.device_type() == kDLCUDAHost;
      all_host &= host;
      all_device &= x.device_type() == kDLCUDA;
    }
  }
  std::vector<DLTensor *> pointers() {
    std::vector<DLTensor *> out;
    for (DLTensor &t : tensors) out.push_back(&t);
    return out;
  }
};

/// Runs `k` on the arguments: where they live when they can be used there
/// (host arrays on the CPU, device tensors on a GPU), else host arrays on a
/// GPU through copies.
void call(const Kernel &k, const nb::args &args, uintptr_t stream) {
  CallArgs a(args);
  if (k.target().is_cpu() || a.all_device) {
    std::vector<DLTensor *> tensors = a.pointers();
    nb::gil_scoped_release release;
    k.run(tensors, reinterpret_cast<void *>(stream));
    return;
  }
  if (!a.all_host) throw UserError("the arguments are partly on the GPU and partly on the host: give one kind");
  // Host arrays on a GPU target: arrays over their memory, copied there and back.
  std::vector<runtime::NDArray> views;
  for (size_t i = 0; i < a.arrays.size(); ++i) {
    std::optional<ir::DataType> dtype = ir::DataType::parse(dtype_name(a.arrays[i].dtype()));
    if (!dtype) throw UserError("argument " + std::to_string(i) + " is of a type tessera cannot hold");
    if (a.tensors[i].strides) {
      int64_t expect = 1;
      for (int d = a.tensors[i].ndim; d-- > 0;) {
        if (a.tensors[i].shape[d] != 1 && a.tensors[i].strides[d] != expect)
          throw UserError("argument " + std::to_string(i) + " is not compact row-major (make it contiguous first)");
        expect *= a.tensors[i].shape[d];
      }
    }
    views.push_back(runtime::NDArray::wrap(
        *dtype, std::vector<int64_t>(a.tensors[i].shape, a.tensors[i].shape + a.tensors[i].ndim),
        static_cast<uint8_t *>(a.tensors[i].data) + a.tensors[i].byte_offset));
  }
  nb::gil_scoped_release release;
  k.run(views);
}

/// A progress callback for tessera (called on this thread, without the
/// GIL): takes the GIL, raises KeyboardInterrupt's C++ twin on Ctrl-C, and
/// calls `report` when one was given.
std::function<void(const std::string &, int, int)> progress_of(std::optional<nb::callable> report) {
  return [report](const std::string &phase, int done, int total) {
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
    if (report) (*report)(phase, done, total);
  };
}

nb::dict candidate_dict(const Candidate &c) {
  nb::dict d;
  d["origin"] = c.origin;
  d["config"] = c.config;
  d["status"] = c.status;
  d["error"] = c.error;
  d["measured"] = c.measured;
  d["time_us"] = c.time_us;
  d["estimate_us"] = c.estimate_us;
  return d;
}

}  // namespace

NB_MODULE(_tessera, m) {
  m.doc() = "tessera's C++ facade (tessera/tessera.h); use the `tessera` package, which wraps it.";

  // Errors: the most general first; nanobind tries the latest registered first.
  Exceptions &e = exceptions();
  e.base = nb::exception<Error>(m, "Error");
  e.internal = nb::exception<InternalError>(m, "InternalError", e.base);
  e.user = nb::exception<UserError>(m, "UserError", e.base);
  e.device = nb::exception<runtime::RuntimeError>(m, "DeviceError", e.base);
  e.schedule = nb::exception<schedule::ScheduleError>(m, "ScheduleError", e.user);
  e.tune = nb::exception<tuning::TuneError>(m, "TuneError", e.user);
  e.compile = nb::exception<runtime::CompileError>(m, "CompileError", e.user);
  e.interpret = nb::exception<runtime::InterpretError>(m, "InterpretError", e.user);
  e.parse = nb::exception<script::ParseError>(m, "ParseError", e.user);
  // A ParseError carries where: file, line, col and the message alone.
  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const script::ParseError &err) {
      nb::object exc = exceptions().parse(err.what());
      exc.attr("file") = err.file;
      exc.attr("line") = err.line;
      exc.attr("col") = err.col;
      exc.attr("message") = err.message;
      PyErr_SetObject(exceptions().parse.ptr(), exc.ptr());
    }
  });

  nb::class_<ir::PrimFunc>(m, "Function", "A TensorIR function (a PrimFunc).")
      .def_prop_ro("name", [](const ir::PrimFunc &f) { return f.name(); })
      .def_prop_ro("symbols",
                   [](const ir::PrimFunc &f) {
                     std::vector<std::string> out;
                     for (const ir::Var &v : f.shape_vars()) out.push_back(v.name());
                     return out;
                   },
                   "The symbolic sizes of its buffers, in order.")
      .def("script", [](const ir::PrimFunc &f) { return script::print(f); }, "Its canonical TVMScript.")
      .def("__repr__", [](const ir::PrimFunc &f) { return "<tessera.Function " + f.name() + ">"; });

  nb::class_<ir::Module>(m, "Module", "The functions of a TVMScript text, in order.")
      .def_prop_ro("funcs", [](const ir::Module &mod) { return mod.funcs; })
      .def_prop_ro("warnings", [](const ir::Module &mod) { return mod.warnings; })
      .def("__getitem__",
           [](const ir::Module &mod, const std::string &name) {
             if (ir::PrimFunc f = mod.lookup(name); f.defined()) return f;
             throw nb::key_error(("no function named '" + name + "'").c_str());
           })
      .def("__len__", [](const ir::Module &mod) { return mod.funcs.size(); })
      .def("script",
           [](const ir::Module &mod) {
             std::string out;
             for (const ir::PrimFunc &f : mod.funcs) out += (out.empty() ? "" : "\n") + script::print(f);
             return out;
           },
           "Every function's canonical TVMScript.");

  m.def("parse", &tessera::parse, "text"_a, "file"_a = "<text>",
        "Parses TVMScript into its functions; ParseError with FILE:LINE:COL on bad input.");

  nb::class_<Target>(m, "Target", "Where a kernel runs: a GPU (an Arch) or this CPU.")
      .def_static("detect", &Target::detect, "The GPU here, else this CPU.")
      .def_static("detect_gpu", &Target::detect_gpu, "fallback"_a = "h100",
                  "The GPU here, else the preset `fallback` (compile-only).")
      .def_static("gpu", nb::overload_cast<std::string_view>(&Target::gpu), "name"_a,
                  "A GPU preset by name or alias (h100, a100, ...) or an arch .json file.")
      .def_static("cpu", &Target::cpu, "This machine's CPU.")
      .def_static("parse", &Target::parse, "name"_a, "'cpu', 'auto' or a GPU name.")
      .def_prop_ro("is_cpu", &Target::is_cpu)
      .def_prop_ro("is_gpu", &Target::is_gpu)
      .def_prop_ro("arch_name", [](const Target &t) { return t.is_cpu() ? std::string("cpu") : t.arch().name; })
      .def_prop_ro("note", &Target::note)
      .def("__str__", &Target::str)
      .def("__repr__", [](const Target &t) { return "<tessera.Target " + t.str() + ">"; });

  nb::class_<Report>(m, "Report", "What a tune did: the candidates ranked, the winner first.")
      .def_ro("target", &Report::target)
      .def_ro("rule", &Report::rule)
      .def_ro("measured", &Report::measured)
      .def_ro("why_unmeasured", &Report::why_unmeasured)
      .def_ro("reference", &Report::reference)
      .def_ro("from_database", &Report::from_database)
      .def_ro("database_note", &Report::database_note, "Why the database was not used ('' when it was, or none).")
      .def_ro("tune_ms", &Report::tune_ms)
      .def_ro("json", &Report::json, "Everything the tuner recorded, as JSON text.")
      .def_prop_ro("candidates",
                   [](const Report &r) {
                     nb::list out;
                     for (const Candidate &c : r.ranked) out.append(candidate_dict(c));
                     return out;
                   },
                   "The candidates ranked: dicts of origin, config, status, error, measured, time_us, estimate_us.")
      .def("table", &Report::table, "The ranked candidates as a text table.")
      .def("__str__", &Report::table);

  nb::class_<Parameter>(m, "Parameter", "A buffer parameter of a kernel's function.")
      .def_ro("name", &Parameter::name)
      .def_ro("dtype", &Parameter::dtype)
      .def_ro("written", &Parameter::written, "An output (or updated in place).")
      .def("__repr__", [](const Parameter &p) {
        return "<tessera.Parameter " + p.name + ": " + p.dtype + (p.written ? ", written>" : ">");
      });

  nb::class_<Kernel>(m, "Kernel", "A tuned function, ready to run.")
      .def_prop_ro("target", &Kernel::target)
      .def_prop_ro("name", &Kernel::name)
      .def_prop_ro("script", &Kernel::script, "The winner as scheduled TVMScript.")
      .def_prop_ro("cuda_source", &Kernel::cuda_source, "Its CUDA C ('' on the CPU).")
      .def_prop_ro("symbols", &Kernel::symbols, "Its symbolic sizes, read from the arguments' shapes.")
      .def("parameters", &Kernel::parameters, "Its buffer parameters, in the order a call takes them.")
      .def("report", &Kernel::report, nb::rv_policy::copy, "What the tune did (Report).")
      .def("__call__", [](const Kernel &k, nb::args args, uintptr_t stream) { call(k, args, stream); },
           "args"_a, nb::kw_only(), "stream"_a = 0,
           "Runs on arrays, one per buffer parameter, outputs written in place: where they live (host arrays "
           "on the CPU, device tensors on the GPU, on `stream`) without copies, or host arrays copied to the "
           "GPU and back.")
      .def("save", [](const Kernel &k, const std::string &path) {
        nb::gil_scoped_release release;
        k.save(path);
      }, "path"_a, "Writes the kernel package (tessera.load reads it back).");

  nb::class_<DynamicKernel, Kernel>(m, "DynamicKernel", "A function's kernels for ranges of its sizes.")
      .def_prop_ro("warm", &DynamicKernel::warm, "Whether this start read everything from the kernel cache.")
      .def("counters", [](const DynamicKernel &k) { return k.counters().str(); }, "What the start did, one line.")
      .def("plan", &DynamicKernel::plan, "The plan as JSON text.")
      .def("kernel_for", &DynamicKernel::kernel_for, "sizes"_a, "Which kernel serves these sizes.")
      .def("measure", [](DynamicKernel &k, double budget_ms) {
        nb::gil_scoped_release release;
        return k.measure(budget_ms);
      }, "budget_ms"_a = 5000.0, "On a GPU: times the cells' kernels and keeps the fastest.");

  m.def(
      "tune",
      [](nb::object func, const Target &target, const std::map<std::string, int64_t> &dims, int64_t topk,
         const std::string &rule, unsigned threads, bool measure, const std::string &database,
         const std::string &kernel_cache, const std::string &name, const std::string &file,
         std::optional<nb::callable> progress) {
        TuneOptions o{.dims = dims, .func = name, .topk = topk, .rule = rule, .threads = threads, .measure = measure,
                      .database = database, .kernel_cache = kernel_cache, .progress = progress_of(progress)};
        if (nb::isinstance<nb::str>(func)) {
          std::string text = nb::cast<std::string>(func);
          nb::gil_scoped_release release;
          return tessera::tune(std::string_view(text), target, o, file);
        }
        ir::PrimFunc f = nb::cast<ir::PrimFunc>(func);
        nb::gil_scoped_release release;
        return tessera::tune(f, target, o);
      },
      "func"_a, "target"_a, "dims"_a = std::map<std::string, int64_t>{}, "topk"_a = 20, "rule"_a = "",
      "threads"_a = 0, "measure"_a = true, "database"_a = "", "kernel_cache"_a = "", "name"_a = "",
      "file"_a = "<text>", "progress"_a = nb::none());

  m.def(
      "dynamic",
      [](const ir::PrimFunc &f, const Target &target, const std::map<std::string, SizeRange> &ranges,
         int64_t max_kernels, const std::map<std::string, int64_t> &dims, unsigned threads,
         const std::string &kernel_cache, const std::string &database) {
        DynamicOptions o{.max_kernels = max_kernels, .dims = dims, .threads = threads, .kernel_cache = kernel_cache,
                         .database = database};
        nb::gil_scoped_release release;
        return tessera::dynamic(f, target, ranges, o);
      },
      "func"_a, "target"_a, "ranges"_a, "max_kernels"_a = 16, "dims"_a = std::map<std::string, int64_t>{},
      "threads"_a = 0, "kernel_cache"_a = "default", "database"_a = "");

  nb::class_<SizeRange>(m, "SizeRange", "The range of one symbolic size, inclusive, and its hot sizes.")
      .def(nb::init<>())
      .def("__init__",
           [](SizeRange *r, int64_t lo, int64_t hi, std::vector<int64_t> hot) { new (r) SizeRange{lo, hi, hot}; },
           "lo"_a, "hi"_a, "hot"_a = std::vector<int64_t>{})
      .def_rw("lo", &SizeRange::lo)
      .def_rw("hi", &SizeRange::hi)
      .def_rw("hot", &SizeRange::hot);

  m.def(
      "load",
      [](const std::string &path) {
        nb::gil_scoped_release release;
        return tessera::load(path);
      },
      "path"_a, "A saved kernel package, ready to run.");

  bind_schedule(m);

  m.def("version", [] { return std::string(TESSERA_PYTHON_VERSION); });
  m.def("cuda_device", [] { return runtime::driver_status() == runtime::DriverStatus::Ok; },
        "Whether a usable CUDA device is here.");
  m.def("nvrtc_available", &runtime::nvrtc_available, "Whether this tessera compiles CUDA (NVRTC).");
  m.def("llvm_available", &runtime::llvm_jit_available, "Whether this tessera has the CPU target (the LLVM JIT).");
}

}  // namespace tessera::python
