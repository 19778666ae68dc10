//===- lib/lower/FlattenBuffers.cpp - Multi-dimensional to 1-D buffers -----===//
//
//   A: T.Buffer((1024, 512))   A[i, j]   ->   A: T.Buffer((524288,))   A[i * 512 + j]
//
// The index type is chosen per buffer: int32 when the element count provably
// fits in int32, else int64. Each dimension's index is converted before it is
// multiplied by its stride, so the products are computed in the wide type
// (`(long long)i * 524288` rather than an int32 product that may overflow).
//
//===----------------------------------------------------------------------===//
#include <climits>
#include <unordered_map>

#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/lower/Passes.h"

namespace tessera::lower {

namespace {

using namespace tessera::ir;

struct Flat {
  Buffer buffer;
  std::vector<Expr> strides;  // in index_type, one per original dimension
  DataType index_type;
};

class BufferFlattener : public IRMutator {
 public:
  const Flat &flat(const Buffer &b) {
    auto it = flat_.find(b.get());
    if (it != flat_.end()) return it->second;
    return flat_.emplace(b.get(), make_flat(b)).first->second;
  }

 protected:
  Expr visit_(const Load *op, const Expr &self) override {
    bool changed = false;
    std::vector<Expr> idx = mutate_list(op->indices, changed);
    const Flat &f = flat(op->buffer);
    return Load::make(f.buffer, {flat_index(f, idx)});
  }

  Stmt visit_(const Store *op, const Stmt &self) override {
    bool changed = false;
    std::vector<Expr> idx = mutate_list(op->indices, changed);
    const Flat &f = flat(op->buffer);
    return Store::make(f.buffer, mutate(op->value), {flat_index(f, idx)});
  }

 private:
  static Expr flat_index(const Flat &f, const std::vector<Expr> &idx) {
    Expr sum = make_int(f.index_type, 0);
    for (size_t i = 0; i < idx.size(); ++i) sum = add(sum, mul(cast(f.index_type, idx[i]), f.strides[i]));
    return arith::simplify(sum);
  }

  static Flat make_flat(const Buffer &b) {
    const DataType i64 = DataType::int64();
    int n = b.ndim();
    // Strides and the element count, in int64 first.
    std::vector<Expr> strides(n);
    Expr size = make_int(i64, 1);
    if (!b->strides.empty()) {
      size = make_int(i64, 1);
      for (int i = 0; i < n; ++i) {
        strides[i] = cast(i64, b->strides[i]);
        size = add(size, mul(sub(cast(i64, b.shape()[i]), make_int(i64, 1)), strides[i]));
      }
    } else {
      for (int i = n - 1; i >= 0; --i) {
        strides[i] = size;
        size = mul(size, cast(i64, b.shape()[i]));
      }
    }
    size = arith::simplify(size);
    if (b.scope() != "global" && !as_const_int(size))
      throw LowerError("buffer '" + b.name() + "' in scope '" + b.scope() +
                       "' has a symbolic size; only global buffers may have symbolic shapes");
    arith::IntBound bound = arith::Analyzer().const_bound(size);
    DataType index_type = bound.max <= INT32_MAX ? DataType::int32() : i64;
    Flat f;
    f.index_type = index_type;
    for (Expr &s : strides) f.strides.push_back(arith::simplify(cast(index_type, s)));
    f.buffer = Buffer::make(b.name(), b.dtype(), {arith::simplify(cast(index_type, size))}, b.scope());
    return f;
  }

  std::unordered_map<const BufferNode *, Flat> flat_;
};

}  // namespace

LoweredFunc flatten_buffers(const LoweredFunc &f) {
  BufferFlattener x;
  LoweredFunc out = f;
  for (KernelParam &p : out.params)
    if (p.is_buffer()) p.buffer = x.flat(p.buffer).buffer;
  for (Buffer &b : out.allocs) b = x.flat(b).buffer;
  out.body = x.mutate(f.body);
  return out;
}

}  // namespace tessera::lower
