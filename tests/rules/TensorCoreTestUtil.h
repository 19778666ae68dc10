//===- tests/rules/TensorCoreTestUtil.h - Breaking a tensor-core pipeline ---===//
//
// For the tests that prove a wrong cp.async pipeline fails on the CPU (the
// interpreter's and the SIMT emulator's poison): the kernel with every
// T.cp_async_wait_group(n) inside a serial loop changed to n + delta, or
// dropped where that is negative.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"

namespace tessera::test {

class ShiftLoopWaits : public ir::IRMutator {
 public:
  explicit ShiftLoopWaits(int64_t delta) : delta_(delta) {}

 protected:
  ir::Stmt visit_(const ir::For *op, const ir::Stmt &self) override {
    bool outer = in_loop_;
    in_loop_ = in_loop_ || op->for_kind == ir::ForKind::Serial;
    ir::Stmt s = IRMutator::visit_(op, self);
    in_loop_ = outer;
    return s;
  }
  ir::Stmt visit_(const ir::Evaluate *op, const ir::Stmt &self) override {
    const auto *c = op->value.as<ir::Call>();
    if (!in_loop_ || !c || c->op != ir::Intrinsic::CpAsyncWait) return self;
    int64_t n = *ir::as_const_int(c->args[0]) + delta_;
    if (n < 0) return ir::Evaluate::make(ir::make_int(ir::DataType::int32(), 0));
    return ir::Evaluate::make(
        ir::Call::make(ir::DataType::int32(), ir::Intrinsic::CpAsyncWait, {ir::make_int(ir::DataType::int32(), n)}));
  }

 private:
  int64_t delta_;
  bool in_loop_ = false;
};

}  // namespace tessera::test
