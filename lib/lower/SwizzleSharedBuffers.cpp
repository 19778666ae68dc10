//===- lib/lower/SwizzleSharedBuffers.cpp - XOR-swizzled shared layouts ---===//
//
// A shared tile read by ldmatrix (eight 16-byte rows at once) and written by
// 16-byte cp.async conflicts in the banks when its rows are a multiple of
// 128 bytes long. Padding each row fixes that at the cost of shared memory;
// the XOR swizzle fixes it for free: the 16-byte chunks of row r are stored
// permuted,
//
//   chunk' = chunk ^ (r % 8)            rows of a multiple of 8 chunks (Hopper's 128-byte swizzle)
//   chunk' = chunk ^ ((r / 2) % 4)      other rows of a multiple of 4 chunks (64 bytes, 192, ...)
//
// so the 8 rows an ldmatrix phase reads, and the chunks a warp's copies
// write, fall in distinct banks. Any rule asks for it by annotating the
// block that allocates the buffers:
//
//   T.block_attr({"tessera.swizzle": ["A_shared", "B_shared"]})
//
// and this pass, before the blocks are lowered, rewrites every access to
// them (loads, stores, and the addresses of ldmatrix and cp.async, which
// start at a chunk): the last index becomes the swizzled column of the row
// the next-to-last index names. The interpreter, which runs the scheduled
// function, ignores the annotation: a swizzle permutes each row, so it
// changes where elements live, never what the program computes.
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/lower/Passes.h"
#include "tessera/script/Printer.h"

namespace tessera::lower {

namespace {

using namespace tessera::ir;

/// One swizzled buffer: elements per 16-byte chunk, chunks per row.
struct Layout {
  int64_t chunk = 8, chunks = 8;
};

class Swizzler : public IRMutator {
 public:
  explicit Swizzler(std::vector<std::pair<const BufferNode *, Layout>> buffers) : buffers_(std::move(buffers)) {}

 protected:
  Expr visit_(const Load *op, const Expr &self) override {
    Expr e = IRMutator::visit_(op, self);
    const auto *l = e.as<Load>();
    const Layout *s = find(l->buffer);
    return s ? Load::make(l->buffer, swizzle(l->indices, *s)) : e;
  }
  Stmt visit_(const Store *op, const Stmt &self) override {
    Stmt st = IRMutator::visit_(op, self);
    const auto *s = st.as<Store>();
    const Layout *layout = find(s->buffer);
    return layout ? Store::make(s->buffer, s->value, swizzle(s->indices, *layout)) : st;
  }

 private:
  const Layout *find(const Buffer &b) const {
    for (const auto &[node, layout] : buffers_)
      if (node == b.get()) return &layout;
    return nullptr;
  }
  static std::vector<Expr> swizzle(std::vector<Expr> idx, const Layout &s) {
    Expr row = idx[idx.size() - 2], col = idx.back();
    DataType t = col.dtype();
    auto c = [&](int64_t v) { return make_int(t, v); };
    Expr r = cast(t, row);
    // The XOR stays inside the row: a multiple of 8 (4) chunks takes keys 0..7 (0..3).
    Expr key = s.chunks % 8 == 0 ? floormod(r, c(8)) : floormod(floordiv(r, c(2)), c(4));
    idx.back() = arith::simplify(bitwise_xor(floordiv(col, c(s.chunk)), key) * c(s.chunk) + floormod(col, c(s.chunk)));
    return idx;
  }
  std::vector<std::pair<const BufferNode *, Layout>> buffers_;
};

class FindAnnotated : public IRMutator {
 protected:
  Stmt visit_(const Block *op, const Stmt &self) override {
    Stmt s = IRMutator::visit_(op, self);
    auto it = op->annotations.find(kSwizzleAnnotation);
    if (it == op->annotations.end()) return s;
    const std::string where = "block '" + op->name + "': \"" + kSwizzleAnnotation + "\"";
    if (!it->second.is_list()) throw LowerError(where + " must list buffer names");
    std::vector<std::pair<const BufferNode *, Layout>> buffers;
    for (const AnnValue &v : it->second.as_list()) {
      if (!v.is_string()) throw LowerError(where + " must list buffer names");
      const std::string &name = v.as_string();
      auto b = std::find_if(op->allocs.begin(), op->allocs.end(), [&](const Buffer &x) { return x.name() == name; });
      if (b == op->allocs.end()) throw LowerError(where + " names '" + name + "', which the block does not allocate");
      if (b->scope() != "shared" && b->scope() != "shared.dyn")
        throw LowerError(where + ": '" + name + "' is in scope '" + b->scope() + "', not shared memory");
      auto row = b->ndim() >= 2 ? as_const_int(b->shape().back()) : std::nullopt;
      const int64_t bytes = b->dtype().bytes();
      if (!row || (*row * bytes) % 64 != 0)
        throw LowerError(where + ": the rows of '" + name + "' (" + script::print(b->shape().back()) + " x " +
                         b->dtype().str() + ") are not a multiple of 64 bytes (four 16-byte chunks)");
      buffers.push_back({b->get(), Layout{16 / bytes, *row * bytes / 16}});
    }
    const auto *blk = s.as<Block>();
    return blk->with_body(Swizzler(std::move(buffers)).mutate(blk->body));
  }
};

}  // namespace

ir::Stmt swizzle_shared_buffers(const ir::Stmt &s) { return FindAnnotated().mutate(s); }

}  // namespace tessera::lower
