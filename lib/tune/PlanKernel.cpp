//===- lib/tune/PlanKernel.cpp - A scheduled function as a plan's kernel ----===//
#include "tessera/tune/PlanKernel.h"

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Op.h"
#include "tessera/lower/Lower.h"
#include "tessera/lower/TensorMaps.h"
#include "tessera/runtime/TmaEncoding.h"
#include "tessera/script/Printer.h"
#include "tessera/support/Error.h"

namespace tessera::tuning {

using dispatch::SizeProgram;

SizeProgram compile_size_program(const ir::Expr &root, const std::vector<std::string> &symbols) {
  using Op = SizeProgram::Op;
  std::vector<SizeProgram::Step> steps;
  std::function<void(const ir::Expr &)> emit = [&](const ir::Expr &e) {
    if (auto c = ir::as_const_int(e)) return steps.push_back({Op::Const, *c});
    if (const auto *v = e.as<ir::VarNode>()) {
      auto it = std::find(symbols.begin(), symbols.end(), v->name);
      if (it == symbols.end())
        throw UserError("a launch extent uses '" + v->name + "', which is not a symbol of the plan: " +
                        script::print(root));
      return steps.push_back({Op::Sym, it - symbols.begin()});
    }
    if (const auto *c = e.as<ir::Cast>(); c && c->dtype.is_integer() && c->value.dtype().is_integer())
      return emit(c->value);
    if (const auto *b = e.as<ir::Binary>()) {
      Op op;
      switch (b->op) {
        case ir::BinaryOp::Add: op = Op::Add; break;
        case ir::BinaryOp::Sub: op = Op::Sub; break;
        case ir::BinaryOp::Mul: op = Op::Mul; break;
        case ir::BinaryOp::FloorDiv: op = Op::FloorDiv; break;
        case ir::BinaryOp::FloorMod: op = Op::FloorMod; break;
        case ir::BinaryOp::Div: op = Op::Div; break;
        case ir::BinaryOp::Mod: op = Op::Mod; break;
        case ir::BinaryOp::Min: op = Op::Min; break;
        case ir::BinaryOp::Max: op = Op::Max; break;
        default:
          throw UserError(std::string("a launch extent uses ") + ir::binary_op_name(b->op) +
                          ", which a dynamic kernel cannot evaluate: " + script::print(root));
      }
      emit(b->a);
      emit(b->b);
      return steps.push_back({op, 0});
    }
    throw UserError("a launch extent is not integer arithmetic of the symbols: " + script::print(root));
  };
  emit(root);
  try {
    return SizeProgram::from_steps(std::move(steps), symbols.size());
  } catch (const UserError &e) {
    throw UserError(std::string(e.what()) + ": " + script::print(root));
  }
}

dispatch::BufferShape buffer_shape(const ir::Buffer &buffer, const std::vector<std::string> &symbols) {
  dispatch::BufferShape s{buffer.name(), {}, int64_t(buffer.dtype().bits()) * buffer.dtype().lanes()};
  for (const ir::Expr &d : buffer.shape()) s.shape.push_back(compile_size_program(d, symbols));
  return s;
}

std::vector<dispatch::Argument> plan_arguments(const ir::PrimFunc &f, const std::vector<std::string> &symbols) {
  std::vector<dispatch::Argument> out;
  const std::vector<bool> written = ir::written_params(f);
  for (size_t i = 0; i < f.params().size(); ++i)
    if (ir::Buffer b = f.buffer_of(f.params()[i]); b.defined())
      out.push_back({buffer_shape(b, symbols), b.dtype().str(), bool(written[i])});
  return out;
}

dispatch::PlanKernel plan_kernel(const ir::PrimFunc &s, const std::vector<std::string> &symbols, const std::string &sm,
                                 runtime::KernelCache *cache, std::vector<runtime::CompileJob> &jobs) {
  lower::KernelSplit split = lower::split_kernels(s);
  if (split.kernels.size() > size_t(dispatch::KernelLaunch::kMaxSteps))
    throw UserError("'" + s.name() + "' runs as " + std::to_string(split.kernels.size()) +
                    " kernels; a kernel plan launches at most " + std::to_string(dispatch::KernelLaunch::kMaxSteps));
  dispatch::PlanKernel pk;
  // Every kernel of the split takes the function's parameters, in order,
  // then one buffer per workspace buffer: each parameter's slot.
  std::unordered_map<const ir::VarNode *, std::pair<int, int>> slot;  // (buffer, workspace)
  const std::vector<ir::Var> &split_params = split.kernels[0].params();
  int buffers = 0;
  for (size_t i = 0; i < split_params.size(); ++i) {
    if (i >= s.params().size()) slot[split_params[i].get()] = {-1, int(i - s.params().size())};
    else if (s.buffer_of(s.params()[i]).defined()) slot[split_params[i].get()] = {buffers++, -1};
  }
  for (const ir::Buffer &w : split.workspace) pk.workspace.push_back(buffer_shape(w, symbols));
  // An undefined extent is an unused axis: 1.
  auto program = [&](const ir::Expr &e) {
    return e.defined() ? compile_size_program(e, symbols) : SizeProgram::constant(1);
  };
  for (const ir::PrimFunc &kf : split.kernels) {
    lower::LoweredFunc l = lower::lower(kf);
    dispatch::KernelStep st;
    // TMA copies: a tensor map per (tensor, box), encoded at bind().
    for (const lower::TensorMapParam &m : lower::tensor_map_params(l)) {
      const ir::Var &v = l.params[m.param].var;
      auto it = slot.find(v.get());
      const size_t i = size_t(std::find_if(split_params.begin(), split_params.end(),
                                           [&](const ir::Var &p) { return p.same_as(v); }) -
                              split_params.begin());
      if (it == slot.end() || it->second.first < 0 || i >= s.params().size())
        throw UserError("kernel '" + l.name + "' of '" + s.name() + "' copies '" + v.name() +
                        "' by TMA; a kernel plan encodes tensor maps of the function's buffers only");
      const ir::Buffer &b = s.buffer_of(s.params()[i]);
      st.tensor_maps.push_back({it->second.first, buffer_shape(b, symbols),
                                runtime::tensor_map_box(m.box, b.dtype(), b.name())});
    }
    st.entry = codegen::cuda_kernel_name(l);
    for (const lower::KernelParam &p : l.params) {
      if (p.is_buffer()) {
        auto it = slot.find(p.var.get());
        if (it == slot.end()) throw InternalError("kernel buffer parameter '" + p.var.name() + "' is not a parameter");
        st.params.push_back({p.buffer.name(), -1, 0, it->second.first, it->second.second});
        continue;
      }
      auto it = std::find(symbols.begin(), symbols.end(), p.var.name());
      if (it == symbols.end()) throw UserError("kernel parameter '" + p.var.name() + "' is not a symbol of the plan");
      st.params.push_back({p.var.name(), int(it - symbols.begin()), p.var.dtype().bytes()});
    }
    for (int d = 0; d < 3; ++d) st.grid[d] = program(l.launch.grid[d]), st.block[d] = program(l.launch.block[d]);
    st.dynamic_shared_bytes = l.dynamic_shared_bytes;
    st.target = codegen::cuda_target_for(sm, l.body);
    runtime::CompileOptions o{.arch = st.target, .name = l.name, .cache = cache};
    std::string source = codegen::codegen_cuda(l, codegen::CudaOptions{.arch = st.target});
    if (cache) st.cache_key = runtime::kernel_cache_key(source, o);
    jobs.push_back({std::move(source), o});
    pk.steps.push_back(std::move(st));
  }
  return pk;
}

}  // namespace tessera::tuning
