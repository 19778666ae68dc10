//===- CodegenWarp.cpp - Warp-level and asynchronous statements ------------===//
//
// The interpreter runs a warp-wide instruction once per lane, each lane
// computing exactly its own results and reading the operands of the lanes
// that supply them by evaluating their addresses with the lane variable set
// to that lane (CompileWarp.cpp). The JIT keeps those semantics two ways:
//
//   - every such statement (ldmatrix, mma.sync, cp.async and its groups,
//     wgmma) can run the interpreter's own node: compiled against slots of
//     its own, called with the current values of what it reads
//     (tessera_jit_warp). Exact, messages included, at the interpreter's
//     speed;
//   - ldmatrix is compiled: the row offsets of the lanes that supply this
//     lane's units, checked, then 16-bit loads and stores;
//   - mma.sync, where tensor-core programs spend their time, computes the
//     fragment offsets of the lanes it reads in compiled code (a table of
//     those lanes, indexed by the lane at run time; each address evaluated
//     with the lane variable set to that lane) and the sums in the
//     interpreter's own function (MmaLane.h). Every check the interpreter
//     makes is made; when one fails, the interpreter's node runs instead and
//     reports it in its own words.
//
//===----------------------------------------------------------------------===//
#include "Gen.h"

#include <llvm/IR/GlobalVariable.h>

#include "tessera/ir/MmaFragments.h"
#include "tessera/ir/Op.h"

namespace tessera::runtime::detail {

namespace {

/// For each lane, the lanes whose A (or B) fragments its mma.sync reads
/// (first-use order), padded with its first to the most any lane reads.
std::vector<int8_t> lanes_read(const ir::mma::MmaTables &t, bool a, int &count) {
  std::vector<std::vector<int>> lanes(32);
  count = 0;
  for (int l = 0; l < 32; ++l) {
    for (int i = 0; i < ir::mma::MmaVariant::c_per_lane(); ++i)
      for (int k = 0; k < t.k; ++k) {
        const ir::mma::Element c = t.c_at[l][i];
        const int from = a ? t.a_owner[c.row][k].lane : t.b_owner[k][c.col].lane;
        if (std::find(lanes[size_t(l)].begin(), lanes[size_t(l)].end(), from) == lanes[size_t(l)].end())
          lanes[size_t(l)].push_back(from);
      }
    count = std::max(count, int(lanes[size_t(l)].size()));
  }
  std::vector<int8_t> flat;
  for (const std::vector<int> &ls : lanes)
    for (int j = 0; j < count; ++j) flat.push_back(int8_t(j < int(ls.size()) ? ls[size_t(j)] : ls[0]));
  return flat;
}

}  // namespace

Value *Gen::constant_table(const std::string &name, const std::vector<int8_t> &values) {
  auto *type = llvm::ArrayType::get(i8_, values.size());
  std::vector<llvm::Constant *> elems;
  for (int8_t v : values) elems.push_back(b_.getInt8(uint8_t(v)));
  return new llvm::GlobalVariable(*mod_, type, /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
                                  llvm::ConstantArray::get(type, elems), name);
}

Value *Gen::lane_value(const ir::Var &lane_var, Value *&ok) {
  Value *lane = to_i64(var(lane_var.get()), lane_var.dtype());
  ok = b_.CreateICmpULT(lane, b_.getInt64(32));
  // An out-of-range lane would index the tables out of range: clamped, the
  // check sends it to the interpreter.
  return b_.CreateSelect(ok, lane, b_.getInt64(0));
}

Value *Gen::table_entry(Value *table, size_t size, Value *row, int64_t width, int64_t column) {
  Value *at = b_.CreateAdd(b_.CreateMul(row, b_.getInt64(width)), b_.getInt64(column));
  auto *type = llvm::ArrayType::get(i8_, size);
  return b_.CreateSExt(b_.CreateLoad(i8_, b_.CreateGEP(type, table, {b_.getInt64(0), at})), i64_);
}

Value *Gen::fragment_offset_of_lane(const ir::Load &l, int64_t n, const ir::Var &lane_var, Value *lane, Value *&ok) {
  bind(lane_var, cast_int(lane, ir::DataType::int64(), lane_var.dtype()));
  Value *off = fragment_offset(l, n, ok);
  unbind(lane_var);
  return off;
}

Value *Gen::fragment_offset(const ir::Load &l, int64_t n, Value *&ok) {
  // Address::offset: every index within its dimension, the fragment's n
  // elements within the last one, which is contiguous.
  const Buf &buf = buffer(l.buffer);
  Value *off = b_.getInt64(0), *last = nullptr;
  for (size_t d = 0; d < l.indices.size(); ++d) {
    Value *i = to_i64(expr(l.indices[d]), l.indices[d].dtype());
    ok = b_.CreateAnd(ok, b_.CreateICmpULT(i, buf.shape[d]));
    off = b_.CreateAdd(off, b_.CreateMul(i, buf.strides[d]));
    last = i;
  }
  if (last) {
    ok = b_.CreateAnd(ok, b_.CreateICmpSLE(b_.CreateAdd(last, b_.getInt64(n)), buf.shape.back()));
    ok = b_.CreateAnd(ok, b_.CreateICmpEQ(buf.strides.back(), b_.getInt64(1)));
  }
  if (buf.storage) ok = b_.CreateAnd(ok, b_.CreateICmpSLE(b_.CreateAdd(off, b_.getInt64(n)), buf.storage));
  return off;
}

void Gen::mma_sync(const ir::Call &c, const WarpStatement &w, BasicBlock *slow) {
  const ir::mma::MmaVariant &v = w.mma;
  const auto *d = c.args[1].as<ir::Load>(), *a = c.args[2].as<ir::Load>(), *b = c.args[3].as<ir::Load>();
  const ir::Var lane_var = ir::Var::from(c.args[4]);
  Value *ok = nullptr;
  Value *l = lane_value(lane_var, ok);
  Value *d_off = fragment_offset(*d, v.c_per_lane(), ok);
  // The fragment offsets of the lanes this lane reads, by lane, each
  // evaluated with the lane variable set to that lane.
  llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  Value *offsets[2];
  const ir::Load *loads[2] = {a, b};
  const int per_lane[2] = {v.a_per_lane(), v.b_per_lane()};
  for (int o = 0; o < 2; ++o) {
    offsets[o] = entry.CreateAlloca(i64_, b_.getInt32(32), o ? "mma.b_off" : "mma.a_off");
    int count = 0;
    const std::vector<int8_t> lanes = lanes_read(v.tables(), o == 0, count);
    Value *table = constant_table(o ? "mma.b.lanes" : "mma.a.lanes", lanes);
    for (int j = 0; j < count; ++j) {
      Value *from = table_entry(table, lanes.size(), l, count, j);
      b_.CreateStore(fragment_offset_of_lane(*loads[o], per_lane[o], lane_var, from, ok),
                     b_.CreateGEP(i64_, offsets[o], from));
    }
  }
  BasicBlock *fast = BasicBlock::Create(ctx_, "mma.fast", fn_);
  b_.CreateCondBr(ok, fast, slow, llvm::MDBuilder(ctx_).createBranchWeights(1 << 20, 1));
  b_.SetInsertPoint(fast);
  Value *self = b_.CreateIntToPtr(b_.getInt64(int64_t(reinterpret_cast<uintptr_t>(&w))), ptr_);
  call("tessera_jit_mma", b_.getVoidTy(),
       {self, l, buffer(d->buffer).data, d_off, buffer(a->buffer).data, offsets[0], buffer(b->buffer).data, offsets[1]},
       /*pure=*/false);
}

void Gen::ldmatrix(const ir::Call &c, BasicBlock *slow) {
  // LdmatrixNode: for each destination unit (matrix j, half h) of this lane,
  // the tile element it receives, read from the row whose address the
  // owning lane gives (16-byte aligned); 16-bit units, two int8 each.
  const ir::mma::LdmatrixLayout layout(int(*ir::as_const_int(c.args[1])), *ir::as_const_int(c.args[0]) != 0);
  const auto *dst = c.args[2].as<ir::Load>(), *src = c.args[3].as<ir::Load>();
  const ir::Var lane_var = ir::Var::from(c.args[4]);
  const int e = src->buffer.dtype().bytes(), per_unit = 2 / e, units = 2 * layout.matrices();
  Value *ok = nullptr;
  Value *l = lane_value(lane_var, ok);
  Value *out = fragment_offset(*dst, units * per_unit, ok);
  std::vector<int8_t> from, col;
  for (int t = 0; t < 32; ++t)
    for (int j = 0; j < layout.matrices(); ++j)
      for (int h = 0; h < 2; ++h) {
        const ir::mma::Element u = layout.at(t, j, h);
        from.push_back(int8_t(layout.address_lane(j, u.row)));
        col.push_back(int8_t(u.col));
      }
  Value *from_table = constant_table("ldmatrix.lanes", from), *col_table = constant_table("ldmatrix.cols", col);
  auto entry = [&](Value *table, int unit) { return table_entry(table, from.size(), l, units, unit); };
  std::vector<Value *> rows;
  for (int unit = 0; unit < units; ++unit) {
    Value *row = fragment_offset_of_lane(*src, 8 * per_unit, lane_var, entry(from_table, unit), ok);
    ok = b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateSRem(b_.CreateMul(row, b_.getInt64(e)), b_.getInt64(16)),
                                          b_.getInt64(0)));
    rows.push_back(row);
  }
  BasicBlock *fast = BasicBlock::Create(ctx_, "ldmatrix.fast", fn_);
  b_.CreateCondBr(ok, fast, slow, llvm::MDBuilder(ctx_).createBranchWeights(1 << 20, 1));
  b_.SetInsertPoint(fast);
  Value *dst_base = buffer(dst->buffer).data, *src_base = buffer(src->buffer).data;
  for (int unit = 0; unit < units; ++unit) {
    Value *from_elem = b_.CreateAdd(rows[size_t(unit)], b_.CreateMul(entry(col_table, unit), b_.getInt64(per_unit)));
    Value *to_elem = b_.CreateAdd(out, b_.getInt64(int64_t(unit) * per_unit));
    auto *ld = b_.CreateLoad(i16_, b_.CreateGEP(i8_, src_base, b_.CreateMul(from_elem, b_.getInt64(e))));
    note_access(ld, src->buffer);
    note_access(b_.CreateStore(ld, b_.CreateGEP(i8_, dst_base, b_.CreateMul(to_elem, b_.getInt64(e)))), dst->buffer);
  }
}

void Gen::warp_statement(const ir::Call &c) {
  // The interpreter's node for the statement, compiled against a scope of
  // its own: a slot for every variable and buffer the call mentions.
  auto w = std::make_unique<WarpStatement>();
  w->scope = std::make_unique<Program>();
  w->scope->func = p_.func;
  Compiler cc(*w->scope);
  cc.set_block(block_);
  std::vector<std::pair<ir::Var, int>> vars;
  std::vector<std::pair<ir::Buffer, int>> buffers;
  bool float_var = false;
  for (const Expr &arg : c.args)
    ir::pre_order_visit(ir::Evaluate::make(arg), [&](const Expr &x) {
      if (const auto *v = x.as<ir::VarNode>()) {
        for (const auto &[seen, slot] : vars)
          if (seen.get() == v) return;
        ir::Var var = ir::Var::from(x);
        float_var = float_var || var.dtype().is_float();
        if (!var.dtype().is_float()) vars.emplace_back(var, cc.bind_var(var));
      } else if (x.as<ir::Load>() || x.as<ir::BufferPtr>()) {
        const ir::Buffer &buf = x.as<ir::Load>() ? x.as<ir::Load>()->buffer : x.as<ir::BufferPtr>()->buffer;
        for (const auto &[seen, slot] : buffers)
          if (seen.same_as(buf)) return;
        buffers.emplace_back(buf, cc.bind_buffer(buf));
      }
    }, nullptr);
  if (float_var) unsupported("T." + std::string(ir::intrinsic_name(c.op)) + " reading a float variable");
  w->node = compile_warp_statement(cc, c);
  BasicBlock *slow = BasicBlock::Create(ctx_, "warp.slow", fn_), *done = BasicBlock::Create(ctx_, "warp.done", fn_);
  if (c.op == ir::Intrinsic::MmaSync) {
    // compile_warp_statement checked the operands: the variant exists.
    std::string why;
    const auto *d = c.args[1].as<ir::Load>(), *a = c.args[2].as<ir::Load>(), *b = c.args[3].as<ir::Load>();
    w->mma = *ir::mma::find_mma_variant(c.args[0], a->buffer.dtype(), b->buffer.dtype(), d->buffer.dtype(), &why);
    mma_sync(c, *w, slow);
    b_.CreateBr(done);
  } else if (c.op == ir::Intrinsic::Ldmatrix) {
    ldmatrix(c, slow);  // compile_warp_statement checked its constants and types
    b_.CreateBr(done);
  } else {
    b_.CreateBr(slow);
  }
  // The interpreter's node, with the slots it reads: the values now in scope.
  b_.SetInsertPoint(slow);
  llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  Value *iv = entry.CreateAlloca(i64_, b_.getInt32(std::max(w->scope->num_int_slots, 1)), "warp.iv");
  auto *slots = entry.CreateAlloca(i8_, b_.getInt32(int(sizeof(BufState)) * std::max(w->scope->num_buf_slots, 1)),
                                   "warp.bufs");
  slots->setAlignment(llvm::Align(alignof(BufState)));
  for (const auto &[v, slot] : vars)
    b_.CreateStore(to_i64(var(v.get()), v.dtype()), b_.CreateConstGEP1_64(i64_, iv, slot));
  for (const auto &[buf, slot] : buffers) {
    const Buf &b = buffer(buf);
    Value *base = b_.CreateConstGEP1_64(i8_, slots, int64_t(slot) * int64_t(sizeof(BufState)));
    auto field = [&](size_t offset) { return b_.CreateConstGEP1_64(i8_, base, int64_t(offset)); };
    Value *storage = b.storage;
    if (!storage) {
      storage = b_.getInt64(1);
      for (Value *d : b.shape) storage = b_.CreateMul(storage, d);
    }
    b_.CreateStore(b.data, field(offsetof(BufState, data)));
    b_.CreateStore(storage, field(offsetof(BufState, storage)));
    b_.CreateStore(b_.getInt32(int32_t(b.shape.size())), field(offsetof(BufState, ndim)));
    for (size_t d = 0; d < b.shape.size(); ++d) {
      b_.CreateStore(b.shape[d], field(offsetof(BufState, shape) + d * sizeof(int64_t)));
      b_.CreateStore(b.strides[d], field(offsetof(BufState, strides) + d * sizeof(int64_t)));
    }
  }
  Value *node = b_.CreateIntToPtr(b_.getInt64(int64_t(reinterpret_cast<uintptr_t>(w.get()))), ptr_);
  Value *rc = call("tessera_jit_warp", i32_, {node, iv, slots, st_}, /*pure=*/false);
  b_.CreateCondBr(b_.CreateICmpEQ(rc, b_.getInt32(0)), done, fail_bb_,
                  llvm::MDBuilder(ctx_).createBranchWeights(1 << 20, 1));
  b_.SetInsertPoint(done);
  warp_.push_back(std::move(w));
}

}  // namespace tessera::runtime::detail
