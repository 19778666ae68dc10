//===- lib/lower/ExtractLaunchConfig.cpp - Thread-bound loops to a launch ---===//
//
//   for i_0 in T.thread_binding(n // 256, thread="blockIdx.x"):      grid  = (n // 256, 1, 1)
//     for i_1 in T.thread_binding(256, thread="threadIdx.x"):  ->   block = (256, 1, 1)
//       B[i_0 * 256 + i_1] = ...                                    B[bx * 256 + tx] = ...
//
// Every loop bound to a tag runs over the same index space on the GPU, so
// their extents must agree (a matmul's compute and its cooperative fetch may
// both bind threadIdx.x, with the same 256 threads). Extents are compared
// after simplification; a symbolic extent may use only kernel parameters.
//
//===----------------------------------------------------------------------===//
#include <unordered_set>

#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/lower/Passes.h"
#include "tessera/script/Printer.h"

namespace tessera::lower {

namespace {

using namespace tessera::ir;

/// (is a thread axis, axis 0..2) for "blockIdx.x" ... "threadIdx.z".
std::pair<bool, int> parse_tag(const std::string &tag, const std::string &loop) {
  static const char *kTags[2][3] = {{"blockIdx.x", "blockIdx.y", "blockIdx.z"},
                                    {"threadIdx.x", "threadIdx.y", "threadIdx.z"}};
  for (int t = 0; t < 2; ++t)
    for (int a = 0; a < 3; ++a)
      if (tag == kTags[t][a]) return {t == 1, a};
  throw LowerError("loop '" + loop + "' is bound to '" + tag +
                   "'; a CUDA kernel supports only blockIdx.x/y/z and threadIdx.x/y/z");
}

class LaunchExtractor : public IRMutator {
 public:
  explicit LaunchExtractor(const std::vector<KernelParam> &params) {
    for (const KernelParam &p : params)
      if (!p.is_buffer()) params_.insert(p.var.get());
  }
  LaunchConfig launch;

 protected:
  Stmt visit_(const For *op, const Stmt &self) override {
    if (op->for_kind != ForKind::ThreadBinding) return IRMutator::visit_(op, self);
    auto [is_thread, axis] = parse_tag(op->thread_tag, op->loop_var.name());
    Expr extent = arith::simplify(op->extent);
    check_extent_vars(op, extent);
    Expr &slot = is_thread ? launch.block[axis] : launch.grid[axis];
    Var &var = is_thread ? launch.thread_vars[axis] : launch.block_vars[axis];
    const For *&first = is_thread ? first_thread_[axis] : first_block_[axis];
    if (!slot.defined()) {
      slot = extent;
      var = Var(op->thread_tag, DataType::int32());
      first = op;
    } else if (!arith::Analyzer().can_prove_equal(cast(DataType::int64(), slot), cast(DataType::int64(), extent))) {
      throw LowerError("loops '" + first->loop_var.name() + "' and '" + op->loop_var.name() + "' are both bound to " +
                       op->thread_tag + " but have different extents " + script::print(first->extent) + " and " +
                       script::print(op->extent));
    }
    Expr value = cast(op->loop_var.dtype(), var);
    if (!is_const_int(op->min, 0)) value = add(value, op->min);
    return mutate(substitute(op->body, {{op->loop_var, value}}));
  }

 private:
  void check_extent_vars(const For *op, const Expr &extent) {
    pre_order_visit(Evaluate::make(extent), [&](const Expr &e) {
      const auto *v = e.as<VarNode>();
      if (!v || params_.count(v)) return;
      throw LowerError("loop '" + op->loop_var.name() + "' bound to " + op->thread_tag + " has extent " +
                       script::print(op->extent) + ", which depends on '" + v->name +
                       "'; a launch extent may use only kernel parameters");
    }, nullptr);
  }

  std::unordered_set<const VarNode *> params_;
  std::array<const For *, 3> first_block_{}, first_thread_{};
};

}  // namespace

int64_t LaunchConfig::threads_per_block() const {
  int64_t n = 1;
  for (const Expr &e : block) {
    if (!e.defined()) continue;
    auto c = as_const_int(e);
    if (!c) return -1;
    n *= *c;
  }
  return n;
}

LoweredFunc extract_launch_config(const LoweredFunc &f) {
  LaunchExtractor x(f.params);
  LoweredFunc out = f;
  out.body = x.mutate(f.body);
  out.launch = x.launch;
  return out;
}

}  // namespace tessera::lower
