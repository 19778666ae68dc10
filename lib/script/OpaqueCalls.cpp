//===- OpaqueCalls.cpp - The calls tessera parses without knowing them ------===//
#include "OpaqueCalls.h"

#include <array>
#include <string_view>

namespace tessera::script::detail {

namespace {

bool starts_with(const std::string &s, std::string_view p) { return s.compare(0, p.size(), p) == 0; }

}  // namespace

bool dtype_in_first_arg(const std::string &callee) {
  return callee == "T.call_extern" || callee == "T.call_pure_extern" || callee == "T.call_llvm_intrin" ||
         callee == "T.call_llvm_pure_intrin" || callee == "T.type_annotation";
}

bool is_opaque_callee(const std::string &callee) {
  // Families: extern and packed calls, the tvm_ runtime/tensor-core built-ins,
  // PTX and MMA intrinsics (T.ptx_mma, T.ptx_legacy.ldmatrix), LLVM intrinsics.
  for (std::string_view prefix : {"T.call_", "T.tvm_", "T.ptx_", "T.ptx.", "T.mma_", "T.TVMBackend", "T.llvm_"})
    if (starts_with(callee, prefix)) return true;
  static const std::array<std::string_view, 18> kNames = {
      "T.undef",     "T.ret",       "T.clz",          "T.q_multiply_shift", "T.q_multiply_shift_per_axis",
      "T.popcount",  "T.address_of",   "T.lookup_param",     "T.anylist_getitem",
      "T.start_profile_intrinsic", "T.end_profile_intrinsic", "T.isnullptr", "T.create_barriers",
      "T.get_active_lane_mask", "T.vscale", "T.trace", "T.dp4a", "T.type_annotation"};
  for (std::string_view n : kNames)
    if (callee == n) return true;
  return false;
}

ir::DataType default_opaque_dtype(const std::string &callee, const std::vector<ir::Expr> &args) {
  if (dtype_in_first_arg(callee) && !args.empty())
    if (const auto *s = args[0].as<ir::StringImm>())
      if (auto t = ir::DataType::parse(s->value)) return *t;
  if (callee == "access_ptr") return ir::DataType::handle();
  return ir::DataType::int32();
}

}  // namespace tessera::script::detail
