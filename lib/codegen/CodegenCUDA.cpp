//===- lib/codegen/CodegenCUDA.cpp - CUDA C for one lowered kernel ----------===//
//
// What CUDA adds to the C printer: the kernel signature, launch variables,
// __shared__ and local arrays, half/bfloat16 (arithmetic with the operators
// of cuda_fp16.h/cuda_bf16.h, conversions and unsupported math through
// float), math intrinsics per dtype and the barrier.
//
//===----------------------------------------------------------------------===//
#include "tessera/codegen/CodegenCUDA.h"

#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "PromoteBFloat16.h"
#include "tessera/arith/Analyzer.h"
#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/MmaFragments.h"
#include "tessera/ir/Op.h"
#include "tessera/ir/Wgmma.h"
#include "tessera/lower/TensorMaps.h"
#include "tessera/script/Printer.h"

namespace tessera::codegen {

using namespace tessera::ir;

namespace {

/// The buffers in which a wgmma operand tile (A or B) or a TMA box starts.
std::unordered_set<const BufferNode *> wgmma_operand_buffers(const Stmt &body) {
  struct Finder : IRVisitor {
    std::unordered_set<const BufferNode *> found;
    void visit_(const Call *op) override {
      if (op->op == Intrinsic::Wgmma)
        for (int i : {2, 3})
          if (const auto *l = op->args[i].as<Load>()) found.insert(l->buffer.get());
      // A TMA box is swizzled on the address, as wgmma reads it.
      if (op->op == Intrinsic::TmaLoad || op->op == Intrinsic::TmaStore)
        if (const auto *l = op->args[0].as<Load>()) found.insert(l->buffer.get());
      IRVisitor::visit_(op);
    }
  } finder;
  finder.visit(body);
  return std::move(finder.found);
}

bool is_half(DataType t) { return t.is_float16() || t.is_bfloat16(); }

/// Names of the math functions per dtype; nullptr where the half types have
/// none (they then go through float).
struct MathNames {
  Intrinsic op;
  const char *f32, *f64, *f16;
};
const MathNames kMath[] = {
    {Intrinsic::Exp, "expf", "exp", "hexp"},         {Intrinsic::Exp2, "exp2f", "exp2", "hexp2"},
    {Intrinsic::Exp10, "exp10f", "exp10", "hexp10"}, {Intrinsic::Log, "logf", "log", "hlog"},
    {Intrinsic::Log2, "log2f", "log2", "hlog2"},     {Intrinsic::Log10, "log10f", "log10", "hlog10"},
    {Intrinsic::Log1p, "log1pf", "log1p", nullptr},  {Intrinsic::Sqrt, "sqrtf", "sqrt", "hsqrt"},
    {Intrinsic::Rsqrt, "rsqrtf", "rsqrt", "hrsqrt"}, {Intrinsic::Tanh, "tanhf", "tanh", nullptr},
    {Intrinsic::Sin, "sinf", "sin", "hsin"},         {Intrinsic::Cos, "cosf", "cos", "hcos"},
    {Intrinsic::Erf, "erff", "erf", nullptr},        {Intrinsic::Pow, "powf", "pow", nullptr},
    {Intrinsic::Abs, "fabsf", "fabs", "__habs"},     {Intrinsic::Floor, "floorf", "floor", "hfloor"},
    {Intrinsic::Ceil, "ceilf", "ceil", "hceil"},     {Intrinsic::Round, "roundf", "round", nullptr},
    {Intrinsic::Trunc, "truncf", "trunc", "htrunc"}, {Intrinsic::NearbyInt, "nearbyintf", "nearbyint", "hrint"},
    {Intrinsic::Tan, "tanf", "tan", nullptr},        {Intrinsic::Asin, "asinf", "asin", nullptr},
    {Intrinsic::Acos, "acosf", "acos", nullptr},     {Intrinsic::Atan, "atanf", "atan", nullptr},
    {Intrinsic::Sinh, "sinhf", "sinh", nullptr},     {Intrinsic::Cosh, "coshf", "cosh", nullptr},
    {Intrinsic::Asinh, "asinhf", "asinh", nullptr},  {Intrinsic::Acosh, "acoshf", "acosh", nullptr},
    {Intrinsic::Atanh, "atanhf", "atanh", nullptr},  {Intrinsic::Atan2, "atan2f", "atan2", nullptr},
    {Intrinsic::Hypot, "hypotf", "hypot", nullptr},
};

const MathNames *math_names(Intrinsic op) {
  for (const MathNames &m : kMath)
    if (m.op == op) return &m;
  return nullptr;
}

constexpr int64_t kSharedAlignment = 16;

/// Elements of a flat, constant-size allocation.
int64_t elements_of(const Buffer &b) {
  auto n = as_const_int(b.shape()[0]);
  TESSERA_ICHECK(n) << "allocation '" << b.name() << "' of symbolic size after flattening";
  return *n;
}

int64_t align_up(int64_t bytes) {
  return (bytes + kSharedAlignment - 1) / kSharedAlignment * kSharedAlignment;
}

class CodegenCUDA : public CodegenC {
 public:
  explicit CodegenCUDA(CudaTarget arch) : arch_(std::move(arch)) {}

  std::string generate(const lower::LoweredFunc &f) {
    // Launch variables first, so that program names that clash get a suffix.
    static const char *kBlock[] = {"bx", "by", "bz"}, *kThread[] = {"tx", "ty", "tz"};
    static const char *kBlockSrc[] = {"blockIdx.x", "blockIdx.y", "blockIdx.z"};
    static const char *kThreadSrc[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z"};
    std::vector<std::string> prologue;
    for (int a = 0; a < 3; ++a) {
      if (const Var &v = f.launch.block_vars[a]; v.defined()) {
        reserve(v, kBlock[a]);
        prologue.push_back(std::string("const int ") + kBlock[a] + " = " + kBlockSrc[a] + ";");
      }
    }
    for (int a = 0; a < 3; ++a) {
      if (const Var &v = f.launch.thread_vars[a]; v.defined()) {
        reserve(v, kThread[a]);
        prologue.push_back(std::string("const int ") + kThread[a] + " = " + kThreadSrc[a] + ";");
      }
    }
    std::string kernel = lower_name(f);
    // Parameters: buffers (const when only read), then scalars.
    std::vector<std::string> params;
    for (const lower::KernelParam &p : f.params) {
      if (!p.is_buffer()) {
        params.push_back(type_name(p.var.dtype()) + " " + name_of(p.var));
        continue;
      }
      std::string c = stores_to(f.body, p.buffer) ? "" : "const ";
      params.push_back(c + type_name(p.buffer.dtype()) + "* __restrict__ " + name_of(p.buffer));
    }
    // Tensor maps (lower/TensorMaps.h): 128-byte parameters after the others.
    lowered_ = &f;
    tensor_maps_ = lower::tensor_map_params(f);
    for (size_t i = 0; i < tensor_maps_.size(); ++i)
      params.push_back("const __grid_constant__ tessera_tensor_map tmap_" + std::to_string(i));
    auto bx = f.launch.block[0].defined() ? as_const_int(f.launch.block[0]) : std::nullopt;
    lanes_are_warp_ = bx && *bx == 32;
    lanes_are_warpgroups_ = bx && *bx % wgmma::kWarpgroup == 0;
    wgmma_operands_ = wgmma_operand_buffers(f.body);
    std::vector<std::string> allocs = allocations(f, kernel);
    for (const std::string &s : prologue) line(s);
    for (const std::string &s : allocs) line(s);
    stmt(arch_.has_bfloat16_arithmetic() ? f.body : detail::promote_bfloat16_to_float(f.body));

    std::ostringstream out;
    out << "// Generated by tessera from '" << f.name << "'.\n";
    out << "// launch: grid " << dims(f.launch.grid) << ", block " << dims(f.launch.block);
    if (f.dynamic_shared_bytes > 0) out << ", dynamic shared memory " << f.dynamic_shared_bytes << " bytes";
    out << "\n";
    if (uses_fp16_) out << "#include <cuda_fp16.h>\n";
    if (uses_bf16_) out << "#include <cuda_bf16.h>\n";
    out << "\n" << helper_definitions();
    if (!tensor_maps_.empty())
      out << "// A CUtensorMap (cuda.h): opaque, 128 bytes, 64-byte aligned.\n"
             "struct __align__(64) tessera_tensor_map { unsigned long long opaque[16]; };\n\n";
    int64_t threads = f.launch.threads_per_block();
    std::string bounds = threads > 0 ? "__launch_bounds__(" + std::to_string(threads) + ") " : "";
    out << "extern \"C\" __global__ void " << bounds << kernel << "(";
    for (size_t i = 0; i < params.size(); ++i) out << (i ? ", " : "") << params[i];
    out << ") {\n" << body_.str() << "}\n";
    return out.str();
  }

 protected:
  std::string type_name(DataType t) override {
    if (t.is_float16() && t.lanes() == 1) {
      uses_fp16_ = true;
      return "half";
    }
    if (t.is_bfloat16() && t.lanes() == 1) {
      uses_bf16_ = true;
      return "__nv_bfloat16";
    }
    return CodegenC::type_name(t);
  }

  Code float_imm(DataType t, double v) override {
    if (!is_half(t)) return CodegenC::float_imm(t, v);
    return {type_name(t) + "(" + CodegenC::float_imm(DataType::float32(), v).text + ")", kAtom};
  }

  /// float -> half type; half type -> float.
  std::string to_half(DataType t, const std::string &f32) {
    type_name(t);
    return (t.is_float16() ? "__float2half(" : "__float2bfloat16(") + f32 + ")";
  }
  std::string from_half(const Expr &e) {
    type_name(e.dtype());
    return (e.dtype().is_float16() ? "__half2float(" : "__bfloat162float(") + expr(e) + ")";
  }
  /// `e` as a float expression (converted from a half type if needed).
  std::string as_float(const Expr &e) { return is_half(e.dtype()) ? from_half(e) : expr(e); }

  Code cast(DataType to, const Expr &value) override {
    DataType from = value.dtype();
    if (from == to) return print(value);
    if (is_half(to)) {
      std::string f = from == DataType::float32() ? expr(value)
                      : is_half(from)             ? from_half(value)
                                                  : "(float)" + operand(value, kUnary);
      return {to_half(to, f), kAtom};
    }
    if (is_half(from)) {
      if (to == DataType::float32()) return {from_half(value), kAtom};
      return {"(" + type_name(to) + ")" + from_half(value), kUnary};
    }
    return CodegenC::cast(to, value);
  }

  Code min_max(bool is_min, const Expr &a, const Expr &b) override {
    if (!is_half(a.dtype())) return CodegenC::min_max(is_min, a, b);
    return {std::string(is_min ? "__hmin(" : "__hmax(") + expr(a) + ", " + expr(b) + ")", kAtom};
  }

  Code call(const Call &c) override {
    DataType t = c.dtype;
    switch (c.op) {
      case Intrinsic::IfThenElse:
        return {operand(c.args[0], 4) + " ? " + operand(c.args[1], 4) + " : " + operand(c.args[2], kTernary),
                kTernary};
      case Intrinsic::MaxValue:
      case Intrinsic::MinValue: return extreme(t, c.op == Intrinsic::MaxValue);
      case Intrinsic::Reinterpret: return reinterpret(t, c.args[0]);
      case Intrinsic::SyncThreads: return {"__syncthreads()", kAtom};
      case Intrinsic::Assume: return {"__builtin_assume(" + print(c.args[0]).text + ")", kAtom};
      case Intrinsic::ShflXor: return shfl_xor(c);
      case Intrinsic::RoundToTf32: return round_to_tf32(c.args[0]);
      case Intrinsic::IsNan:
      case Intrinsic::IsInf:
      case Intrinsic::IsFinite: {
        const char *fn = c.op == Intrinsic::IsNan ? "isnan" : c.op == Intrinsic::IsInf ? "isinf" : "isfinite";
        return {std::string(fn) + "(" + as_float(c.args[0]) + ")", kAtom};
      }
      case Intrinsic::Sigmoid: {
        DataType ft = is_half(t) ? DataType::float32() : t;
        bool f64 = ft == DataType::float64();
        std::string s = std::string(f64 ? "1.0 / (1.0 + exp(-" : "1.0f / (1.0f + expf(-") +
                        (is_half(t) ? from_half(c.args[0]) : operand(c.args[0], kAtom)) + "))";
        if (is_half(t)) return {to_half(t, s), kAtom};
        return {s, 13};
      }
      default: break;
    }
    if (c.op == Intrinsic::Abs && t.is_integer()) {
      if (t.is_uint()) return print(c.args[0]);
      if (t.bits() == 64) return {"llabs(" + expr(c.args[0]) + ")", kAtom};
      if (t.bits() == 32) return {"abs(" + expr(c.args[0]) + ")", kAtom};
      return {"(" + type_name(t) + ")abs((int)" + operand(c.args[0], kUnary) + ")", kUnary};
    }
    const MathNames *m = math_names(c.op);
    if (!m || !t.is_float()) throw CodegenError(std::string("intrinsic T.") + intrinsic_name(c.op) + " of " +
                                                 t.str() + " is not supported by the CUDA code generator");
    auto args = [&](bool via_float) {
      std::string s;
      for (size_t i = 0; i < c.args.size(); ++i) s += (i ? ", " : "") + (via_float ? as_float(c.args[i]) : expr(c.args[i]));
      return s;
    };
    if (t == DataType::float32()) return {std::string(m->f32) + "(" + args(false) + ")", kAtom};
    if (t == DataType::float64()) return {std::string(m->f64) + "(" + args(false) + ")", kAtom};
    if (m->f16) {
      type_name(t);
      return {std::string(m->f16) + "(" + args(false) + ")", kAtom};
    }
    return {to_half(t, std::string(m->f32) + "(" + args(true) + ")"), kAtom};
  }

  bool vector_move(const For &f) override {
    const auto *store = f.body.as<Store>();
    const auto *load = store ? store->value.as<Load>() : nullptr;
    auto lanes = as_const_int(f.extent);
    TESSERA_ICHECK(load && lanes && is_const_int(f.min, 0))
        << "vectorized loop '" << f.loop_var.name() << "' is not a vector move (lower::legalize_vectorize)";
    DataType t = store->buffer.dtype();
    std::string vt = vector_type(t, *lanes * t.bytes());
    std::string dst = address(store->buffer, store->indices[0], f.loop_var);
    std::string src = address(load->buffer, load->indices[0], f.loop_var);
    line("*(" + vt + "*)" + dst + " = *(const " + vt + "*)" + src + ";");
    return true;
  }

  void evaluate(const Expr &e) override {
    if (const auto *c = e.as<Call>(); c && c->op == Intrinsic::SyncThreads) return line("__syncthreads();");
    if (const auto *c = e.as<Call>(); c && is_async_or_warp_statement(c->op)) return warp_statement(*c);
    CodegenC::evaluate(e);
  }

 private:
  static std::string lower_name(const lower::LoweredFunc &f) { return cuda_kernel_name(f); }

  /// Declarations of the allocations: arrays, 16-byte aligned, and pointers
  /// into the dynamic shared memory pool (laid out as
  /// lower::plan_dynamic_shared_memory says). Checks the arch's shared
  /// memory limit.
  std::vector<std::string> allocations(const lower::LoweredFunc &f, const std::string &kernel) {
    std::vector<std::string> decls;
    int64_t static_shared = 0, pool_offset = 0;
    std::string pool;
    for (const Buffer &b : f.allocs) {
      int64_t n = elements_of(b), bytes = n * b.dtype().bytes();
      std::string type = type_name(b.dtype());
      // wgmma's swizzled tiles start on 1024-byte boundaries.
      const bool wgmma_operand = wgmma_operands_.count(b.get()) > 0;
      if (b.scope() == "shared.dyn") {
        // The pool is aligned so when it holds one, and the tile's offset must be too.
        if (wgmma_operand && pool_offset % 1024 != 0)
          throw CodegenError("buffer '" + b.name() + "' is a wgmma operand at byte " + std::to_string(pool_offset) +
                             " of the dynamic shared memory; its swizzled tiles need a multiple of 1024");
        if (pool.empty()) {
          pool = fresh("dynamic_shared");
          decls.push_back(std::string("extern __shared__ __align__(") + (wgmma_operands_.empty() ? "16" : "1024") +
                          ") unsigned char " + pool + "[];");
        }
        std::string at = pool_offset == 0 ? pool : "(" + pool + " + " + std::to_string(pool_offset) + ")";
        decls.push_back(type + "* " + name_of(b) + " = (" + type + "*)" + at + ";");
        pool_offset += align_up(bytes);
        continue;
      }
      std::string decl = std::string(wgmma_operand ? "__align__(1024) " : "__align__(16) ") + type + " " +
                         name_of(b) + "[" + std::to_string(n) + "];";
      if (b.scope() == "local") {
        decls.push_back(decl);
        continue;
      }
      decls.push_back("__shared__ " + decl);
      static_shared += align_up(bytes);
    }
    TESSERA_ICHECK(static_shared <= 48 * 1024 && pool_offset == f.dynamic_shared_bytes)
        << "static shared buffers take " << static_shared << " bytes, dynamic ones " << pool_offset
        << " but the launch requests " << f.dynamic_shared_bytes << "; run lower::plan_dynamic_shared_memory";
    int64_t shared = static_shared + f.dynamic_shared_bytes;
    if (shared > arch_.max_shared_bytes_per_block)
      throw CodegenError("kernel '" + kernel + "' uses " + std::to_string(shared) +
                         " bytes of shared memory per thread block, more than the " +
                         std::to_string(arch_.max_shared_bytes_per_block) + " bytes " +
                         std::string(arch_.name) + " allows");
    return decls;
  }

  /// The CUDA type of one vector move of `bytes` bytes of `t`: the float and
  /// half vector types where they fit, else an unsigned integer of that size.
  std::string vector_type(DataType t, int64_t bytes) {
    if (t == DataType::float32() && (bytes == 8 || bytes == 16)) return bytes == 8 ? "float2" : "float4";
    if (t == DataType::float64() && bytes == 16) return "double2";
    if (is_half(t) && bytes == 4) {
      type_name(t);  // includes the header
      return t.is_float16() ? "half2" : "__nv_bfloat162";
    }
    switch (bytes) {
      case 2: return "unsigned short";
      case 4: return "unsigned int";
      case 8: return "uint2";
      case 16: return "uint4";
      default: TESSERA_UNREACHABLE("a vector move of " << bytes << " bytes");
    }
  }

  /// The address of element `index` of `b` with the move's lane at 0:
  /// `A`, `(A + tx * 8)`.
  std::string address(const Buffer &b, const Expr &index, const Var &lane) {
    Expr base = arith::simplify(substitute(index, {{lane, make_int(lane.dtype(), 0)}}));
    Expr offset = arith::simplify(sub(index, base));
    const auto *c = offset.as<Cast>();
    TESSERA_ICHECK(offset.same_as(lane) || (c && c->value.same_as(lane)))
        << "vector move index " << script::print(index) << " of '" << b.name() << "' is not base + lane";
    if (is_const_int(base, 0)) return name_of(b);
    return "(" + name_of(b) + " + " + operand(base, 13) + ")";
  }

  static std::string dims(const std::array<Expr, 3> &d) {
    std::string s = "(";
    for (int a = 0; a < 3; ++a) s += (a ? ", " : "") + (d[a].defined() ? script::print(d[a]) : std::string("1"));
    return s + ")";
  }

  Code extreme(DataType t, bool is_max) {
    if (t.is_integer() || t.is_bool()) {
      int64_t v;
      if (t.is_bool()) v = is_max;
      else if (t.is_uint()) v = is_max ? (t.bits() == 64 ? -1 : static_cast<int64_t>((uint64_t{1} << t.bits()) - 1)) : 0;
      else if (t.bits() == 64) v = is_max ? INT64_MAX : INT64_MIN;
      else v = is_max ? (int64_t{1} << (t.bits() - 1)) - 1 : -(int64_t{1} << (t.bits() - 1));
      return int_imm(t, v);
    }
    if (t == DataType::float32()) return {is_max ? "3.40282347e+38f" : "-3.40282347e+38f", is_max ? kAtom : kUnary};
    if (t == DataType::float64())
      return {is_max ? "1.7976931348623157e+308" : "-1.7976931348623157e+308", is_max ? kAtom : kUnary};
    if (t.is_float16()) {
      type_name(t);
      return {std::string("__ushort_as_half((unsigned short)") + (is_max ? "0x7bffU" : "0xfbffU") + ")", kAtom};
    }
    if (t.is_bfloat16()) {
      type_name(t);
      return {std::string("__ushort_as_bfloat16((unsigned short)") + (is_max ? "0x7f7fU" : "0xff7fU") + ")", kAtom};
    }
    throw CodegenError("T.max_value/min_value of " + t.str() + " is not supported");
  }

  /// `&A_shared[index]`: the address a warp-level statement's operand names.
  std::string address_of(const Expr &operand) {
    const auto *l = operand.as<Load>();
    TESSERA_ICHECK(l && l->indices.size() == 1) << "an address operand is a flattened buffer element";
    type_name(l->buffer.dtype());
    return "(&" + name_of(l->buffer) + "[" + expr(l->indices[0]) + "])";
  }
  /// The operand's address in the shared window (the "r" operand PTX takes).
  std::string shared_address(const Call &c, int i) {
    const Expr &operand = c.args[i];
    const auto *l = operand.as<Load>();
    const std::string &scope = l->buffer.scope();
    if (scope != "shared" && scope != "shared.dyn")
      throw CodegenError(std::string("the shared-memory operand of T.") + intrinsic_name(c.op) + " is buffer '" +
                         l->buffer.name() + "' in scope '" + scope + "'");
    return "(unsigned)__cvta_generic_to_shared(" + address_of(operand) + ")";
  }
  /// `{%0, %1, ...}` of `n` operands from `first`.
  static std::string regs(int first, int n) {
    std::string s = "{";
    for (int i = 0; i < n; ++i) s += (i ? ", %" : "%") + std::to_string(first + i);
    return s + "}";
  }

  /// ldmatrix, mma.sync, cp.async and its groups as inline PTX (the
  /// instructions ir/Intrinsics.def describes). The fragments are this
  /// thread's registers: a warp is threadIdx.x, exactly 32 lanes.
  void warp_statement(const Call &c) {
    if (needs_arch_specific_target(c.op)) return hopper_statement(c);
    if (is_tma_statement(c.op)) return tma_statement(c);
    if (c.op == Intrinsic::SyncWarp) return line("__syncwarp();");
    if (!arch_.has_ampere_tensor_cores())
      throw CodegenError(std::string("T.") + intrinsic_name(c.op) + " needs sm_80 or newer (mma.sync m16n8k16, " +
                         "ldmatrix and cp.async are Ampere instructions); the target is " + std::string(arch_.name));
    if ((c.op == Intrinsic::Ldmatrix || c.op == Intrinsic::MmaSync) && !lanes_are_warp_)
      throw CodegenError(std::string("T.") + intrinsic_name(c.op) +
                         " needs threadIdx.x to number the 32 lanes of a warp (a block of 32 x threads)");
    switch (c.op) {
      case Intrinsic::Ldmatrix: {
        auto num = as_const_int(c.args[1]);
        bool trans = as_const_int(c.args[0]).value_or(0) != 0;
        TESSERA_ICHECK(num && (*num == 1 || *num == 2 || *num == 4)) << "ldmatrix of 1, 2 or 4 matrices";
        int n = static_cast<int>(*num);
        std::string d = fresh("ldm");
        line("{");
        line("  unsigned *" + d + " = (unsigned *)" + address_of(c.args[2]) + ";");
        std::string outs;
        for (int i = 0; i < n; ++i) outs += (i ? ", \"=r\"(" : "\"=r\"(") + d + "[" + std::to_string(i) + "])";
        line(std::string("  asm volatile(\"ldmatrix.sync.aligned.m8n8.x") + std::to_string(n) +
             (trans ? ".trans" : "") + ".shared.b16 " + regs(0, n) + ", [%" + std::to_string(n) + "];\\n\" : " +
             outs + " : \"r\"(" + shared_address(c, 3) + "));");
        line("}");
        return;
      }
      case Intrinsic::MmaSync: {
        // The form ir/MmaFragments.h names: its operands as 32-bit registers
        // (float accumulators as "f", the rest as "r").
        const auto *d_buf = c.args[1].as<Load>(), *a = c.args[2].as<Load>(), *b = c.args[3].as<Load>();
        std::string why;
        auto v = mma::find_mma_variant(c.args[0], a->buffer.dtype(), b->buffer.dtype(), d_buf->buffer.dtype(), &why);
        if (!v) throw CodegenError("T.mma_sync: " + why);
        const bool float_regs = v->acc == DataType::float32();
        std::string d = fresh("acc"), fa = fresh("fa"), fb = fresh("fb");
        line("{");
        line(float_regs ? "  float *" + d + " = " + address_of(c.args[1]) + ";"
                        : "  unsigned *" + d + " = (unsigned *)" + address_of(c.args[1]) + ";");
        line("  const unsigned *" + fa + " = (const unsigned *)" + address_of(c.args[2]) + ";");
        line("  const unsigned *" + fb + " = (const unsigned *)" + address_of(c.args[3]) + ";");
        const int nd = v->c_regs(), na = v->a_regs(), nb = v->b_regs();
        auto list = [](const std::string &cons, const std::string &arr, int n) {
          std::string s;
          for (int i = 0; i < n; ++i) s += (i ? ", " : "") + cons + "(" + arr + "[" + std::to_string(i) + "])";
          return s;
        };
        line("  asm volatile(\"" + v->ptx() + " " + regs(0, nd) + ", " + regs(nd, na) + ", " + regs(nd + na, nb) +
             ", " + regs(0, nd) + ";\\n\" : " + list(float_regs ? "\"+f\"" : "\"+r\"", d, nd) + " : " +
             list("\"r\"", fa, na) + ", " + list("\"r\"", fb, nb) + ");");
        line("}");
        return;
      }
      case Intrinsic::CpAsync: {
        auto bytes = as_const_int(c.args[2]);
        if (!bytes || (*bytes != 4 && *bytes != 8 && *bytes != 16))
          throw CodegenError("T.cp_async copies a constant 4, 8 or 16 bytes; got " + script::print(c.args[2]));
        std::string cache = *bytes == 16 ? "cg" : "ca";  // .cg takes only 16 bytes
        line(std::string("asm volatile(\"cp.async.") + cache + ".shared.global [%0], [%1], " +
             std::to_string(*bytes) + ", %2;\\n\" :: \"r\"(" + shared_address(c, 0) + "), \"l\"(" +
             address_of(c.args[1]) + "), \"r\"((unsigned)(" + expr(c.args[3]) + ")));");
        return;
      }
      case Intrinsic::CpAsyncCommit: return line("asm volatile(\"cp.async.commit_group;\\n\" ::);");
      case Intrinsic::CpAsyncWait: {
        auto n = as_const_int(c.args[0]);
        if (!n || *n < 0) throw CodegenError("T.cp_async_wait_group takes a constant count >= 0");
        return line("asm volatile(\"cp.async.wait_group " + std::to_string(*n) + ";\\n\" ::);");
      }
      default: TESSERA_UNREACHABLE("not a warp-level statement");
    }
  }

  static bool is_tma_statement(Intrinsic op) {
    return op == Intrinsic::MbarrierInit || op == Intrinsic::MbarrierArrive ||
           op == Intrinsic::MbarrierArriveExpectTx || op == Intrinsic::MbarrierWait || op == Intrinsic::TmaLoad ||
           op == Intrinsic::TmaStore || op == Intrinsic::TmaStoreWait;
  }

  /// The mbarrier statements and TMA copies as inline PTX (sm_90; ir/Tma.h).
  /// A wait spins on mbarrier.try_wait.parity; a copy names its tensor map
  /// parameter by its generic address.
  void tma_statement(const Call &c) {
    if (arch_.compute_capability < 90)
      throw CodegenError(std::string("T.") + intrinsic_name(c.op) +
                         " needs sm_90 or newer (mbarrier transaction counts and TMA are Hopper features); the "
                         "target is " + std::string(arch_.name));
    auto u32 = [&](const Expr &e) { return "\"r\"((unsigned)(" + expr(e) + "))"; };
    // A TMA copy's box coordinates, after its `lead` other arguments, as the
    // operands %first.. of the asm: PTX lists them innermost first.
    struct Coordinates {
      int n = 0;
      std::string refs, operands;
    };
    auto coordinates = [&](size_t lead, int first) {
      Coordinates k;
      k.n = static_cast<int>(c.args.size() - lead) / 2;
      for (int d = 0; d < k.n; ++d) {
        k.refs += (d ? ", %" : "%") + std::to_string(first + d);
        k.operands += ", " + u32(c.args[lead + k.n + (k.n - 1 - d)]);
      }
      return k;
    };
    auto tensor_map = [&] {
      return "\"l\"((unsigned long long)&tmap_" + std::to_string(lower::tensor_map_of(tensor_maps_, *lowered_, c)) +
             ")";
    };
    // The mbarrier operand: argument 1 of T.tma_load, 0 of the barrier statements.
    auto bar = [&] { return shared_address(c, c.op == Intrinsic::TmaLoad ? 1 : 0); };
    switch (c.op) {
      case Intrinsic::TmaStore: {
        // One bulk group per store (T.tma_store_wait counts stores).
        const Coordinates k = coordinates(3, 2);
        return line("asm volatile(\"cp.async.bulk.tensor." + std::to_string(k.n) +
                    "d.global.shared::cta.bulk_group [%0, {" + k.refs + "}], [%1];\\n"
                    "cp.async.bulk.commit_group;\\n\" :: " + tensor_map() + ", \"r\"(" + shared_address(c, 0) + ")" +
                    k.operands + " : \"memory\");");
      }
      case Intrinsic::TmaStoreWait: {
        auto n = as_const_int(c.args[0]);
        if (!n || *n < 0 || *n > 63) throw CodegenError("T.tma_store_wait takes a constant count from 0 to 63");
        return line("asm volatile(\"cp.async.bulk.wait_group.read " + std::to_string(*n) +
                    ";\\n\" ::: \"memory\");");
      }
      case Intrinsic::MbarrierInit:
        line("asm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\\n\" :: \"r\"(" + bar() + "), " +
             u32(c.args[1]) + " : \"memory\");");
        // The initialised barrier, visible to the TMA unit (the async proxy).
        return line("asm volatile(\"fence.mbarrier_init.release.cluster;\\n\" ::: \"memory\");");
      case Intrinsic::MbarrierArrive:
        return line("asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\\n\" :: \"r\"(" + bar() +
                    ") : \"memory\");");
      case Intrinsic::MbarrierArriveExpectTx:
        return line("asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\\n\" :: \"r\"(" + bar() +
                    "), " + u32(c.args[1]) + " : \"memory\");");
      case Intrinsic::MbarrierWait: {
        std::string ready = fresh("ready");
        line("{");
        line("  unsigned " + ready + " = 0;");
        line("  do {");
        line("    asm volatile(\"{\\n.reg .pred p;\\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\\n"
             "selp.u32 %0, 1, 0, p;\\n}\\n\" : \"=r\"(" + ready + ") : \"r\"(" + bar() + "), " + u32(c.args[1]) +
             " : \"memory\");");
        line("  } while (!" + ready + ");");
        return line("}");
      }
      case Intrinsic::TmaLoad: {
        const Coordinates k = coordinates(4, 2);
        return line("asm volatile(\"cp.async.bulk.tensor." + std::to_string(k.n) +
                    "d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {" + k.refs + "}], [%" +
                    std::to_string(2 + k.n) + "];\\n\" :: \"r\"(" + shared_address(c, 0) + "), " + tensor_map() +
                    k.operands + ", \"r\"(" + bar() + ") : \"memory\");");
      }
      default: TESSERA_UNREACHABLE("not an mbarrier or TMA statement");
    }
  }

  /// wgmma (SS form: two shared-memory descriptors), its fence, groups and
  /// the async-proxy fence as inline PTX (ir/Wgmma.h). The descriptor's
  /// layout bits are a constant; the start address is the operand's.
  void hopper_statement(const Call &c) {
    if (!arch_.has_wgmma())
      throw CodegenError(std::string("T.") + intrinsic_name(c.op) +
                         " needs sm_90a (wgmma is a Hopper instruction of the architecture-specific target); the "
                         "target is " + std::string(arch_.name));
    switch (c.op) {
      case Intrinsic::WgmmaFence: return line("asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");");
      case Intrinsic::WgmmaCommit:
        return line("asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\");");
      case Intrinsic::SetMaxNReg: {
        auto count = as_const_int(c.args[0]), inc = as_const_int(c.args[1]);
        if (!count || !inc) throw CodegenError("T.setmaxnreg takes a constant count and direction");
        if (std::string bad = setmaxnreg_check(*count, *inc); !bad.empty())
          throw CodegenError("T.setmaxnreg: " + bad);
        return line(std::string("asm volatile(\"setmaxnreg.") + (*inc ? "inc" : "dec") + ".sync.aligned.u32 " +
                    std::to_string(*count) + ";\\n\" ::: \"memory\");");
      }
      case Intrinsic::FenceProxyAsync:
        return line("asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");");
      case Intrinsic::WgmmaWait: {
        auto n = as_const_int(c.args[0]);
        if (!n || *n < 0 || *n > 7) throw CodegenError("T.wgmma_wait_group takes a constant count from 0 to 7");
        return line("asm volatile(\"wgmma.wait_group.sync.aligned " + std::to_string(*n) +
                    ";\\n\" ::: \"memory\");");
      }
      default: break;
    }
    if (!lanes_are_warpgroups_)
      throw CodegenError("T.wgmma needs threadIdx.x to number whole warpgroups (a block of 128, 256 or 384 x threads)");
    const auto *d_buf = c.args[1].as<Load>(), *a = c.args[2].as<Load>(), *b = c.args[3].as<Load>();
    std::string why;
    auto v = wgmma::find_wgmma_variant(c.args[0], a->buffer.dtype(), b->buffer.dtype(), d_buf->buffer.dtype(), &why);
    if (!v) throw CodegenError("T.wgmma: " + why);
    auto swizzle = as_const_int(c.args[5]), lbo = as_const_int(c.args[6]), sbo = as_const_int(c.args[7]);
    if (!swizzle || !lbo || !sbo) throw CodegenError("T.wgmma's swizzle, LBO and SBO are constants");
    wgmma::SmemLayout layout{static_cast<int>(*swizzle), *lbo, *sbo};
    if (std::string bad = layout.check(); !bad.empty()) throw CodegenError("T.wgmma: " + bad);
    auto trans_a = as_const_int(c.args[8]), trans_b = as_const_int(c.args[9]);
    if (!trans_a || !trans_b) throw CodegenError("T.wgmma's trans_a and trans_b are constants");
    for (auto [operand, trans] : {std::pair{"A", *trans_a}, {"B", *trans_b}})
      if (std::string bad = wgmma::check_transpose(operand, trans, v->in); !bad.empty())
        throw CodegenError("T.wgmma: " + bad);
    char high[32];
    std::snprintf(high, sizeof high, "0x%016llxULL",
                  static_cast<unsigned long long>(wgmma::encode_descriptor(0, layout)));
    const bool float_acc = v->acc == DataType::float32();
    const int nd = v->d_per_thread();
    // RS: A's fragment in four 32-bit registers (ir/Wgmma.h), K-major.
    const bool a_in_registers = a->buffer.scope() == "warp" || a->buffer.scope() == "local";
    if (a_in_registers && *trans_a != 0)
      throw CodegenError("T.wgmma reads A from registers ('" + a->buffer.name() + "'), K-major: trans_a must be 0");
    std::string d = fresh("wacc"), da = fresh(a_in_registers ? "afrag" : "adesc"), db = fresh("bdesc");
    line("{");
    line(float_acc ? "  float *" + d + " = " + address_of(c.args[1]) + ";"
                   : "  int *" + d + " = " + address_of(c.args[1]) + ";");
    if (a_in_registers)
      line("  const unsigned *" + da + " = (const unsigned *)" + address_of(c.args[2]) + ";");
    else
      line("  const unsigned long long " + da + " = " + high + " | (unsigned long long)((" + shared_address(c, 2) +
           " & 0x3FFFF) >> 4);");
    line("  const unsigned long long " + db + " = " + high + " | (unsigned long long)((" + shared_address(c, 3) +
         " & 0x3FFFF) >> 4);");
    std::string outs;
    for (int i = 0; i < nd; ++i) outs += (i ? ", " : "") + std::string(float_acc ? "\"+f\"(" : "\"+r\"(") + d + "[" +
                                         std::to_string(i) + "])";
    // Operands after the accumulators: A's descriptor (one) or registers
    // (four), B's descriptor, the scale-d flag.
    const int na = a_in_registers ? 4 : 1;
    std::string a_operand = a_in_registers ? regs(nd, na) : "%" + std::to_string(nd);
    std::string ins;
    if (a_in_registers)
      for (int i = 0; i < na; ++i) ins += "\"r\"(" + da + "[" + std::to_string(i) + "]), ";
    else
      ins = "\"l\"(" + da + "), ";
    // scale-d = 1 (accumulate); 16-bit forms also take the A and B scales
    // (1) and transposes (1: MN-major; the RS form has B's only).
    const std::string trans = a_in_registers ? std::to_string(*trans_b)
                                             : std::to_string(*trans_a) + ", " + std::to_string(*trans_b);
    const std::string tail = v->in.bytes() == 2 ? ", p, 1, 1, " + trans + ";" : ", p;";
    line("  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" + std::to_string(nd + na + 1) + ", 0;\\n" +
         v->ptx() + " " + regs(0, nd) + ", " + a_operand + ", %" + std::to_string(nd + na) + tail +
         "\\n}\\n\" : " + outs + " : " + ins + "\"l\"(" + db + "), \"r\"(1));");
    line("}");
  }

  /// `__shfl_xor_sync(0xffffffffU, v, 16, 32)`: the member mask in hex; the
  /// half types use the overloads of cuda_fp16.h / cuda_bf16.h.
  Code shfl_xor(const Call &c) {
    std::string mask = expr(c.args[0]);
    if (auto m = as_const_int(c.args[0])) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "0x%08xU", static_cast<unsigned>(*m));
      mask = buf;
    }
    type_name(c.dtype);
    std::string args = mask + ", " + expr(c.args[1]) + ", " + expr(c.args[2]) + ", " + expr(c.args[3]);
    return {"__shfl_xor_sync(" + args + ")", kAtom};
  }

  Code reinterpret(DataType to, const Expr &x) {
    DataType from = x.dtype();
    struct R {
      DataType from, to;
      const char *fn;
    };
    const R kTable[] = {
        {DataType::int32(), DataType::float32(), "__int_as_float"},
        {DataType::uint(32), DataType::float32(), "__uint_as_float"},
        {DataType::float32(), DataType::int32(), "__float_as_int"},
        {DataType::float32(), DataType::uint(32), "__float_as_uint"},
        {DataType::int64(), DataType::float64(), "__longlong_as_double"},
        {DataType::float64(), DataType::int64(), "__double_as_longlong"},
        {DataType::int_(16), DataType::float16(), "__short_as_half"},
        {DataType::uint(16), DataType::float16(), "__ushort_as_half"},
        {DataType::float16(), DataType::int_(16), "__half_as_short"},
        {DataType::float16(), DataType::uint(16), "__half_as_ushort"},
        {DataType::int_(16), DataType::bfloat16(), "__short_as_bfloat16"},
        {DataType::uint(16), DataType::bfloat16(), "__ushort_as_bfloat16"},
        {DataType::bfloat16(), DataType::int_(16), "__bfloat16_as_short"},
        {DataType::bfloat16(), DataType::uint(16), "__bfloat16_as_ushort"},
    };
    for (const R &r : kTable) {
      if (r.from != from || r.to != to) continue;
      type_name(from);
      type_name(to);
      return {std::string(r.fn) + "(" + expr(x) + ")", kAtom};
    }
    if (from.is_integer() && to.is_integer()) return CodegenC::cast(to, x);
    throw CodegenError("T.reinterpret from " + from.str() + " to " + to.str() + " is not supported");
  }

  const CudaTarget arch_;
  bool uses_fp16_ = false, uses_bf16_ = false;
  bool lanes_are_warp_ = false;  ///< threadIdx.x has exactly 32 threads
  bool lanes_are_warpgroups_ = false;  ///< threadIdx.x has a multiple of 128 threads
  /// The shared buffers wgmma reads: aligned to 1024 bytes, where the
  /// swizzle patterns repeat (ir/Wgmma.h).
  std::unordered_set<const BufferNode *> wgmma_operands_;
  const lower::LoweredFunc *lowered_ = nullptr;
  std::vector<lower::TensorMapParam> tensor_maps_;
};

}  // namespace

std::string cuda_kernel_name(const lower::LoweredFunc &f) {
  std::string s;
  for (char c : f.name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s + "_kernel";
}

std::string codegen_cuda(const lower::LoweredFunc &f, const CudaOptions &opts) {
  return CodegenCUDA(cuda_target(opts.arch)).generate(f);
}

std::string codegen_cuda(const PrimFunc &f, const CudaOptions &opts) { return codegen_cuda(lower::lower(f), opts); }

}  // namespace tessera::codegen
