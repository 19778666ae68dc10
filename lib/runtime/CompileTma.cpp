//===- CompileTma.cpp - mbarriers, TMA copies and stores, syncwarp --------===//
//
// The interpreter's Hopper asynchronous statements (ir/Tma.h): an mbarrier's
// state lives in its shared-memory word; a TMA load is read from its tensor
// when issued and lands, completing its bytes, when a wait on its barrier
// needs it; a TMA store reads its shared box and writes the tensor when the
// issuing run's T.tma_store_wait retires it. A wait no earlier statement can
// complete is an error (a warp-specialised kernel needs its threads
// concurrent), and so is T.syncwarp, which orders lanes the serial
// interpreter runs one after another.
//
//===----------------------------------------------------------------------===//
#include <cstring>
#include <optional>

#include "WarpOperands.h"

#include "tessera/ir/Tma.h"

namespace tessera::runtime::detail {

namespace {

// ---- mbarrier and TMA -----------------------------------------------------------

/// An mbarrier's state, kept in its 8-byte shared-memory word as the
/// hardware keeps it there (in a layout of the interpreter's own): bits
/// 0-19 the arrivals this phase still waits for, 20-39 the arrivals a phase
/// expects, 40-61 the bytes announced and not landed (signed), 62 set once
/// initialised (the poison of an unwritten word leaves it clear), 63 the
/// parity of the phase in progress.
struct MbarrierState {
  int64_t pending = 0, expected = 0, tx = 0;
  int parity = 0;
  bool initialised = false;

  static MbarrierState read(const uint8_t *word) {
    uint64_t w;
    std::memcpy(&w, word, 8);
    MbarrierState s;
    s.pending = static_cast<int64_t>(w & 0xFFFFF);
    s.expected = static_cast<int64_t>((w >> 20) & 0xFFFFF);
    s.tx = static_cast<int64_t>((w >> 40) & 0x3FFFFF);
    if (s.tx >= (int64_t{1} << 21)) s.tx -= int64_t{1} << 22;
    s.initialised = (w >> 62) & 1;
    s.parity = static_cast<int>(w >> 63);
    return s;
  }
  void write(uint8_t *word) const {
    uint64_t w = static_cast<uint64_t>(pending) | static_cast<uint64_t>(expected) << 20 |
                 (static_cast<uint64_t>(tx) & 0x3FFFFF) << 40 | uint64_t{initialised} << 62 |
                 static_cast<uint64_t>(parity) << 63;
    std::memcpy(word, &w, 8);
  }
  /// Starts the next phase once every arrival and byte of this one is in.
  void complete_if_done() {
    if (pending != 0 || tx != 0) return;
    parity ^= 1;
    pending = expected;
  }
};

/// The largest arrival count and byte count a phase may take (PTX ISA:
/// the counts are 20-bit).
constexpr int64_t kMbarrierLimit = (int64_t{1} << 20) - 1;

/// Lands every TMA copy in flight on `barrier`, completing its bytes there.
void land_bulk_copies(AsyncCopies &async, uint8_t *barrier) {
  MbarrierState s = MbarrierState::read(barrier);
  auto &bulk = async.bulk;
  for (auto it = bulk.begin(); it != bulk.end();) {
    if (it->barrier != barrier) {
      ++it;
      continue;
    }
    std::memcpy(it->copy.dst, it->copy.bytes.data(), it->copy.bytes.size());
    s.tx -= static_cast<int64_t>(it->copy.bytes.size());
    it = bulk.erase(it);
  }
  s.complete_if_done();
  s.write(barrier);
}

/// Barrier operand `i`: an 8-byte element in shared memory.
Address barrier_operand(Compiler &cc, const ir::Call &c, int i) {
  Address bar = address_operand(cc, c, i, true);
  const std::string &scope = c.args[i].as<ir::Load>()->buffer.scope();
  if (bar.bytes() != 8 || !in_shared_memory(c.args[i].as<ir::Load>()->buffer))
    throw InterpretError("T." + std::string(ir::intrinsic_name(c.op)) + " in block '" + cc.block() + "' on '" +
                         bar.name + "' (" + bar.dtype.str() + ", scope '" + scope +
                         "'): an mbarrier is an 8-byte element (\"uint64\") in shared memory");
  return bar;
}

/// T.mbarrier_init / arrive / arrive_expect_tx / wait.
struct MbarrierNode final : StmtExec {
  Address bar;
  IntPtr arg;  ///< the count, the bytes or the parity
  Intrinsic op;
  const ErrCtx *ctx;

  MbarrierNode(Compiler &cc, const ir::Call &c)
      : bar(barrier_operand(cc, c, 0)),
        arg(c.args.size() > 1 ? cc.compile_int(c.args[1]) : nullptr),
        op(c.op),
        ctx(cc.ctx(ir::intrinsic_name(c.op))) {}

  [[noreturn]] void fail(const std::string &why, int64_t at) const {
    throw InterpretError("T." + std::string(ir::intrinsic_name(op)) + " in block '" + ctx->block + "' on '" +
                         bar.name + "' (element " + std::to_string(at) + "): " + why);
  }

  void exec(Frame &f) const override {
    const int64_t at = bar.ix.offset(f);
    uint8_t *word = bar.base(f) + at * 8;
    const int64_t value = arg ? arg->eval(f) : 0;
    if (op == Intrinsic::MbarrierInit) {
      if (value < 1 || value > kMbarrierLimit)
        fail("a phase takes 1 to " + std::to_string(kMbarrierLimit) + " arrivals, not " + std::to_string(value), at);
      for (const AsyncCopies::Bulk &b : f.async->bulk)
        if (b.barrier == word) fail("initialised again while a TMA copy is in flight on it", at);
      MbarrierState s;
      s.pending = s.expected = value;
      s.initialised = true;
      s.write(word);
      return;
    }
    MbarrierState s = MbarrierState::read(word);
    if (!s.initialised) fail("the barrier was never initialised (T.mbarrier_init)", at);
    switch (op) {
      case Intrinsic::MbarrierArriveExpectTx:
        if (value < 0 || value > kMbarrierLimit)
          fail("announces " + std::to_string(value) + " bytes; a phase takes 0 to " + std::to_string(kMbarrierLimit),
               at);
        s.tx += value;
        [[fallthrough]];
      case Intrinsic::MbarrierArrive:
        if (s.pending == 0)
          fail("one arrival more than the phase's " + std::to_string(s.expected) +
                   " before it completed (a wait for the wrong parity returns at once, and the next arrival falls "
                   "in the phase it did not wait for)",
               at);
        --s.pending;
        s.complete_if_done();
        s.write(word);
        return;
      default: break;
    }
    // A wait: done if the phase of this parity has completed; otherwise the
    // copies in flight on the barrier land now, and if the phase still has
    // not completed, no later statement of this serial order can complete it.
    if (value != 0 && value != 1) fail("waits for parity " + std::to_string(value) + "; a parity is 0 or 1", at);
    if (s.parity != value) return;
    land_bulk_copies(*f.async, word);
    s = MbarrierState::read(word);
    if (s.parity != value) return;
    fail("waits forever for phase parity " + std::to_string(value) + ": " + std::to_string(s.pending) + " of " +
             std::to_string(s.expected) + " arrivals and " + std::to_string(s.tx) +
             " announced bytes have not come (every arrival and copy the wait needs comes before it in the program's "
             "serial order; a warp-specialised kernel, whose warps wait for each other, runs only with its threads "
             "concurrent: on a GPU or in the SIMT emulator)",
         at);
  }
};

/// T.tma_load and T.tma_store (ir/Tma.h). A load's box is read from the
/// tensor when issued (zeros outside it) and swizzled into place when it
/// lands; a store's box is read from shared memory and written into the
/// tensor (elements inside it only) when this run's T.tma_store_wait
/// retires it.
struct TmaCopyNode final : StmtExec {
  bool store = false;
  Address smem;              ///< the box's start in shared memory
  std::optional<Address> bar;  ///< a load's mbarrier
  int tensor = 0;            ///< the tensor's buffer slot
  std::string tensor_name;
  ir::tma::Box box;
  std::vector<IntPtr> coord;
  const ErrCtx *ctx;

  TmaCopyNode(Compiler &cc, const ir::Call &c)
      : store(c.op == Intrinsic::TmaStore),
        smem(address_operand(cc, c, 0, !store)),
        ctx(cc.ctx(ir::intrinsic_name(c.op))) {
    const size_t lead = store ? 3 : 4;
    if (!store) bar = barrier_operand(cc, c, 1);
    const ir::Buffer &t = c.args[lead - 2].as<ir::BufferPtr>()->buffer;
    tensor = cc.buffer_slot(t, store ? "store to" : "load from");
    tensor_name = t.name();
    const size_t n = (c.args.size() - lead) / 2;
    box.swizzle_bytes = static_cast<int>(const_arg(cc, c, static_cast<int>(lead - 1), "the swizzle"));
    box.elem_bytes = t.dtype().bytes();
    for (size_t d = 0; d < n; ++d)
      box.extent.push_back(const_arg(cc, c, static_cast<int>(lead + d), "a box extent"));
    for (size_t d = 0; d < n; ++d) coord.push_back(cc.compile_int(c.args[lead + n + d]));
    if (std::string bad = box.check(); !bad.empty()) fail(bad);
    if (smem.bytes() != box.elem_bytes)
      fail("the elements differ in size (" + t.dtype().str() + " and " + smem.dtype.str() + ")");
    if (!in_shared_memory(c.args[0].as<ir::Load>()->buffer))
      fail(std::string("the ") + (store ? "source" : "destination") + " is not in shared memory");
    if (t.scope() != "global")
      fail("the tensor is in scope '" + t.scope() + "'; TMA copies a global tensor");
  }

  [[noreturn]] void fail(const std::string &why) const {
    throw InterpretError(store ? "T.tma_store in block '" + ctx->block + "' from '" + smem.name + "' into '" +
                                     tensor_name + "': " + why
                               : "T.tma_load in block '" + ctx->block + "' of '" + tensor_name + "' into '" +
                                     smem.name + "': " + why);
  }

  void exec(Frame &f) const override {
    BufState &t = f.bufs[tensor];
    const int n = static_cast<int>(box.extent.size());
    std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
    if (std::string bad = ir::tma::check_tensor(shape, box.elem_bytes); !bad.empty()) fail(bad);
    int64_t step = 1;
    for (int d = n - 1; d >= 0; step *= shape[size_t(d)], --d)
      if (t.strides[d] != step) fail("the tensor is not contiguous and row-major");
    int64_t first[ir::tma::kMaxDims];
    for (int d = 0; d < n; ++d) {
      first[d] = coord[size_t(d)]->eval(f);
      if (first[d] < INT32_MIN || first[d] > INT32_MAX)
        fail("coordinate " + std::to_string(d) + " is " + std::to_string(first[d]) + ", outside int32");
    }
    const int64_t start = smem.ix.offset(f) * smem.bytes();
    if (start % 128 != 0)
      fail("the box starts at shared byte " + std::to_string(start) + ", not a multiple of 128");
    const BufState &buf = f.bufs[smem.ix.buf];
    if (start + box.bytes() > buf.storage * smem.bytes())
      fail("the box of " + std::to_string(box.bytes()) + " bytes at byte " + std::to_string(start) + " runs past '" +
           smem.name + "' (" + std::to_string(buf.storage * smem.bytes()) + " bytes)");
    // (The strides were checked row-major: a box element's row-major offset is its offset.)
    const int e = box.elem_bytes;
    uint8_t *base = smem.base(f);
    if (store) {
      AsyncCopies::BulkStore out;
      out.elem_bytes = e;
      box.for_each_element(first, shape, [&](const int64_t *index, int64_t to) {
        if (to >= 0) out.moves.push_back({base + box.shared_address(start, index), t.data + to * e});
      });
      f.async->stores.push_back(std::move(out));
      return;
    }
    uint8_t *word = f.bufs[bar->ix.buf].data + bar->ix.offset(f) * 8;
    if (!MbarrierState::read(word).initialised) fail("the barrier '" + bar->name + "' was never initialised");
    AsyncCopies::Bulk copy;
    copy.barrier = word;
    copy.copy.dst = base + start;
    copy.copy.bytes.assign(static_cast<size_t>(box.bytes()), 0);
    box.for_each_element(first, shape, [&](const int64_t *index, int64_t from) {
      if (from >= 0)
        std::memcpy(copy.copy.bytes.data() + (box.shared_address(start, index) - start), t.data + from * e,
                    static_cast<size_t>(e));
    });
    poison(copy.copy.dst, copy.copy.bytes.size(), smem.dtype);
    f.async->bulk.push_back(std::move(copy));
  }
};

/// T.tma_store_wait(n): this run's oldest TMA stores land until n remain.
struct TmaStoreWaitNode final : StmtExec {
  int64_t keep = 0;
  void exec(Frame &f) const override {
    auto &stores = f.async->stores;
    while (static_cast<int64_t>(stores.size()) > keep) {
      const AsyncCopies::BulkStore &s = stores.front();
      for (const auto &[from, to] : s.moves) std::memcpy(to, from, static_cast<size_t>(s.elem_bytes));
      stores.pop_front();
    }
  }
};

/// T.syncwarp: the lanes of a warp meet; a serial run cannot order them.
struct SyncWarpNode final : StmtExec {
  const ErrCtx *ctx;
  void exec(Frame &) const override {
    throw InterpretError("T.syncwarp in block '" + ctx->block +
                         "': the serial interpreter runs one thread at a time and cannot order the lanes of a warp "
                         "(the kernel runs on a GPU or in the SIMT emulator)");
  }
};

}  // namespace

StmtPtr compile_tma_statement(Compiler &cc, const ir::Call &c) {
  switch (c.op) {
    case Intrinsic::TmaLoad:
    case Intrinsic::TmaStore: return std::make_unique<TmaCopyNode>(cc, c);
    case Intrinsic::TmaStoreWait: {
      auto n = std::make_unique<TmaStoreWaitNode>();
      n->keep = const_arg(cc, c, 0, "the store count");
      if (n->keep < 0) throw InterpretError("T.tma_store_wait in block '" + cc.block() + "' of a negative count");
      return n;
    }
    case Intrinsic::SyncWarp: {
      auto n = std::make_unique<SyncWarpNode>();
      n->ctx = cc.ctx("syncwarp");
      return n;
    }
    case Intrinsic::MbarrierInit:
    case Intrinsic::MbarrierArrive:
    case Intrinsic::MbarrierArriveExpectTx:
    case Intrinsic::MbarrierWait: return std::make_unique<MbarrierNode>(cc, c);
    default: return nullptr;
  }
}

}  // namespace tessera::runtime::detail
