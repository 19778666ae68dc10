//===- tests/codegen/SimtEmulator.cpp - Lowered kernels run on CPU threads --===//
//
// A tree-walking evaluator per emulated thread (speed does not matter: the
// tests run a few small thread blocks). Barriers and shuffles make the
// threads of a block wait for each other with a mutex and a condition
// variable; after any failure every barrier is aborted so that all threads
// return and the first message is reported.
//
// Race tracking: each thread counts the barriers it passed (its epoch; the
// epochs of different blocks never meet). Every shared or global element
// remembers (epoch, thread) of its last writer and last reader; an access
// that meets another thread's conflicting access of the same epoch is a race.
//
//===----------------------------------------------------------------------===//
#include "SimtEmulator.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>

#include "tessera/ir/MmaFragments.h"
#include "SimtMbarriers.h"
#include "SimtMemory.h"
#include "tessera/ir/Tma.h"
#include "tessera/ir/Wgmma.h"
#include "tessera/support/Half.h"

namespace tessera::simt {

namespace {

using namespace tessera::ir;
namespace mma = tessera::ir::mma;
using runtime::NDArray;
using namespace detail;

struct Warp {
  explicit Warp(int lanes) : barrier(lanes), lanes_mask(lanes >= 32 ? 0xffffffffu : (1u << lanes) - 1) {}
  Barrier barrier;
  const uint32_t lanes_mask;
  std::array<Value, kWarpSize> slots;
  /// What the lanes publish for ldmatrix (row addresses) and mma.sync (A and B fragments).
  std::array<Address, kWarpSize> rows;
  std::array<std::array<double, 16>, kWarpSize> frag_a;
  std::array<std::array<double, 8>, kWarpSize> frag_b;
};


/// What the threads of one thread block share.
struct BlockState {
  BlockState(int threads, uint64_t epoch_base) : barrier(threads), epoch_base(epoch_base) {
    for (int w = 0; w * kWarpSize < threads; ++w)
      warps.push_back(std::make_unique<Warp>(std::min(kWarpSize, threads - w * kWarpSize)));
  }
  void abort() {
    barrier.abort();
    mbarriers.abort();
    for (auto &w : warps) w->barrier.abort();
  }
  Barrier barrier;
  Mbarriers mbarriers;
  /// The tensors T.tma_load copies from, by name (the call names the
  /// parameter as written, before lowering flattened it).
  std::unordered_map<std::string, Memory *> params_by_name;
  std::vector<std::unique_ptr<Warp>> warps;
  std::unordered_map<const BufferNode *, Memory *> memory;  // global and shared
  uint64_t epoch_base;
};

/// Evaluates and executes the kernel body as one thread.
class Thread {
 public:
  Thread(BlockState &block, std::unordered_map<const VarNode *, Value> env, int linear)
      : block_(block), env_(std::move(env)), linear_(linear), warp_(*block.warps[linear / kWarpSize]),
        epoch_(block.epoch_base) {}

  void add_local(const Buffer &b) { locals_[b.get()] = Memory::allocate(b, false); }

  Value eval(const Expr &e) {
    switch (e.kind()) {
      case NodeKind::IntImm: return {e.as<IntImm>()->value, 0};
      case NodeKind::FloatImm: return {0, e.as<FloatImm>()->value};
      case NodeKind::Var: {
        auto it = env_.find(e.as<VarNode>());
        if (it == env_.end()) throw EmulationError("unbound variable '" + e.as<VarNode>()->name + "'");
        return it->second;
      }
      case NodeKind::Binary: return binary(*e.as<Binary>());
      case NodeKind::Unary: {
        const auto *u = e.as<Unary>();
        Value a = eval(u->a);
        DataType t = e.dtype();
        if (u->op == UnaryOp::Not) return {!a.i, 0};
        if (u->op == UnaryOp::BitNot) return {wrap(t, ~a.i), 0};
        if (t.is_float()) return {0, -a.f};
        return {wrap(t, static_cast<int64_t>(0 - static_cast<uint64_t>(a.i))), 0};
      }
      case NodeKind::Select: {
        const auto *s = e.as<Select>();
        Value c = eval(s->cond), t = eval(s->true_value), f = eval(s->false_value);
        return c.i ? t : f;
      }
      case NodeKind::Cast: return cast(e.dtype(), e.as<Cast>()->value);
      case NodeKind::Load: {
        const auto *l = e.as<Load>();
        auto [m, i] = element(l->buffer, l->indices);
        on_read(*m, l->buffer, i);
        return get(*m, i, e.dtype());
      }
      case NodeKind::Call: return call(*e.as<Call>());
      case NodeKind::Let: {
        const auto *l = e.as<Let>();
        env_[l->var.get()] = eval(l->value);
        Value v = eval(l->body);
        env_.erase(l->var.get());
        return v;
      }
      default: throw EmulationError(std::string("expression ") + node_kind_name(e.kind()) + " in a lowered kernel");
    }
  }

  void exec(const Stmt &s) {
    switch (s.kind()) {
      case NodeKind::Seq:
        for (const Stmt &x : s.as<Seq>()->stmts) exec(x);
        return;
      case NodeKind::For: {
        const auto *f = s.as<For>();
        int64_t lo = eval(f->min).i, n = eval(f->extent).i;
        for (int64_t v = lo; v < lo + n; ++v) {
          env_[f->loop_var.get()] = {v, 0};
          exec(f->body);
        }
        env_.erase(f->loop_var.get());
        return;
      }
      case NodeKind::IfThenElse: {
        const auto *i = s.as<IfThenElse>();
        if (eval(i->cond).i) exec(i->then_case);
        else if (i->else_case) exec(*i->else_case);
        return;
      }
      case NodeKind::LetStmt: {
        const auto *l = s.as<LetStmt>();
        env_[l->var.get()] = eval(l->value);
        exec(l->body);
        env_.erase(l->var.get());
        return;
      }
      case NodeKind::Store: {
        const auto *st = s.as<Store>();
        Value v = eval(st->value);
        auto [m, i] = element(st->buffer, st->indices);
        on_write(*m, st->buffer, i);
        set(*m, i, v);
        return;
      }
      case NodeKind::Evaluate: {
        const auto *c = s.as<Evaluate>()->value.as<Call>();
        if (c && c->op == Intrinsic::SyncThreads) {
          block_.barrier.arrive_and_wait(s.get(), "barrier");
          ++epoch_;
          return;
        }
        if (c && is_async_or_warp_statement(c->op)) return warp_statement(*c);
        eval(s.as<Evaluate>()->value);
        return;
      }
      default: throw EmulationError(std::string("statement ") + node_kind_name(s.kind()) + " in a lowered kernel");
    }
  }

  /// After the body: copies still in flight are a missing wait.
  void finish() const {
    if (size_t pending = cp_.pending())
      throw EmulationError("thread " + std::to_string(linear_) + " ends with " + std::to_string(pending) +
                           " cp.async copies never waited for");
    if (size_t pending = wgmma_.pending())
      throw EmulationError("thread " + std::to_string(linear_) + " ends with " + std::to_string(pending) +
                           " wgmma never waited for");
    if (size_t pending = stores_.size())
      throw EmulationError("thread " + std::to_string(linear_) + " ends with " + std::to_string(pending) +
                           " TMA stores never retired (T.tma_store_wait)");
  }

 private:
  std::pair<Memory *, int64_t> element(const Buffer &b, const std::vector<Expr> &indices) {
    if (indices.size() != 1) throw EmulationError("buffer '" + b.name() + "' is not flat");
    int64_t i = eval(indices[0]).i;
    Memory *m = nullptr;
    if (auto it = locals_.find(b.get()); it != locals_.end()) m = it->second.get();
    else if (auto g = block_.memory.find(b.get()); g != block_.memory.end()) m = g->second;
    if (!m) throw EmulationError("buffer '" + b.name() + "' has no memory");
    if (i < 0 || i >= m->array->numel())
      throw EmulationError("out-of-bounds access " + b.name() + "[" + std::to_string(i) + "] (size " +
                           std::to_string(m->array->numel()) + ") by thread " + std::to_string(linear_));
    return {m, i};
  }

  uint64_t stamp() const { return (epoch_ << kThreadBits) | static_cast<uint64_t>(linear_ + 1); }
  bool conflicts(uint64_t other) const {
    return other >> kThreadBits == epoch_ && (other & ((1u << kThreadBits) - 1)) != static_cast<uint64_t>(linear_ + 1);
  }
  [[noreturn]] void race(const Buffer &b, int64_t i, const char *what, uint64_t other) const {
    std::ostringstream os;
    os << "data race on " << b.name() << "[" << i << "]: thread " << linear_ << " " << what << " thread "
       << ((other & ((1u << kThreadBits) - 1)) - 1) << " since the last barrier";
    throw EmulationError(os.str());
  }
  void on_read(Memory &m, const Buffer &b, int64_t i) {
    if (!m.last_writer) return;
    if (uint64_t w = m.last_writer[i].load(); conflicts(w)) race(b, i, "reads what was written by", w);
    m.last_reader[i].store(stamp());
  }
  void on_write(Memory &m, const Buffer &b, int64_t i) {
    if (m.written) m.written[i].store(1);
    if (!m.last_writer) return;
    if (uint64_t w = m.last_writer[i].exchange(stamp()); conflicts(w)) race(b, i, "overwrites what was written by", w);
    if (uint64_t r = m.last_reader[i].load(); conflicts(r)) race(b, i, "overwrites what was read by", r);
  }

  Value binary(const Binary &b) {
    if (b.op == BinaryOp::And) return {eval(b.a).i && eval(b.b).i, 0};
    if (b.op == BinaryOp::Or) return {eval(b.a).i || eval(b.b).i, 0};
    Value x = eval(b.a), y = eval(b.b);
    DataType t = b.a.dtype();
    if (t.is_float()) {
      double p = x.f, q = y.f, nan = std::numeric_limits<double>::quiet_NaN();
      switch (b.op) {
        case BinaryOp::Add: return {0, round_to(t, p + q)};
        case BinaryOp::Sub: return {0, round_to(t, p - q)};
        case BinaryOp::Mul: return {0, round_to(t, p * q)};
        case BinaryOp::Div: return {0, round_to(t, p / q)};
        case BinaryOp::Min: return {0, std::isnan(p) || std::isnan(q) ? nan : std::min(p, q)};
        case BinaryOp::Max: return {0, std::isnan(p) || std::isnan(q) ? nan : std::max(p, q)};
        case BinaryOp::EQ: return {p == q, 0};
        case BinaryOp::NE: return {p != q, 0};
        case BinaryOp::LT: return {p < q, 0};
        case BinaryOp::LE: return {p <= q, 0};
        case BinaryOp::GT: return {p > q, 0};
        case BinaryOp::GE: return {p >= q, 0};
        default: throw EmulationError(std::string("float ") + binary_op_name(b.op));
      }
    }
    int64_t p = x.i, q = y.i;
    uint64_t up = static_cast<uint64_t>(p), uq = static_cast<uint64_t>(q);
    bool u64 = t.is_uint() && t.bits() == 64;
    auto less = [&](int64_t a, int64_t c) { return u64 ? static_cast<uint64_t>(a) < static_cast<uint64_t>(c) : a < c; };
    auto need_divisor = [&] {
      if (q == 0) throw EmulationError("integer division by zero");
    };
    DataType rt = b.dtype;
    switch (b.op) {
      case BinaryOp::Add: return {wrap(rt, static_cast<int64_t>(up + uq)), 0};
      case BinaryOp::Sub: return {wrap(rt, static_cast<int64_t>(up - uq)), 0};
      case BinaryOp::Mul: return {wrap(rt, static_cast<int64_t>(up * uq)), 0};
      case BinaryOp::Div: need_divisor(); return {wrap(rt, u64 ? static_cast<int64_t>(up / uq) : p / q), 0};
      case BinaryOp::Mod: need_divisor(); return {wrap(rt, u64 ? static_cast<int64_t>(up % uq) : p % q), 0};
      case BinaryOp::FloorDiv: {
        need_divisor();
        int64_t d = p / q;
        return {wrap(rt, (p % q != 0 && (p < 0) != (q < 0)) ? d - 1 : d), 0};
      }
      case BinaryOp::FloorMod: {
        need_divisor();
        int64_t r = p % q;
        return {wrap(rt, (r != 0 && (r < 0) != (q < 0)) ? r + q : r), 0};
      }
      case BinaryOp::Min: return {less(p, q) ? p : q, 0};
      case BinaryOp::Max: return {less(p, q) ? q : p, 0};
      case BinaryOp::EQ: return {p == q, 0};
      case BinaryOp::NE: return {p != q, 0};
      case BinaryOp::LT: return {less(p, q), 0};
      case BinaryOp::LE: return {!less(q, p), 0};
      case BinaryOp::GT: return {less(q, p), 0};
      case BinaryOp::GE: return {!less(p, q), 0};
      case BinaryOp::BitAnd: return {p & q, 0};
      case BinaryOp::BitOr: return {p | q, 0};
      case BinaryOp::BitXor: return {p ^ q, 0};
      case BinaryOp::Shl:
      case BinaryOp::Shr: {
        if (q < 0 || q >= t.bits()) throw EmulationError("shift by " + std::to_string(q));
        if (b.op == BinaryOp::Shl) return {wrap(rt, static_cast<int64_t>(up << q)), 0};
        if (t.is_uint()) return {wrap(rt, static_cast<int64_t>(up >> q)), 0};
        return {wrap(rt, p >> q), 0};
      }
      default: throw EmulationError(std::string("integer ") + binary_op_name(b.op));
    }
  }

  Value cast(DataType to, const Expr &x) {
    DataType from = x.dtype();
    Value v = eval(x);
    if (to.is_bool()) return {from.is_float() ? v.f != 0 : v.i != 0, 0};
    if (to.is_float()) {
      if (from.is_float()) return {0, round_to(to, v.f)};
      double d = from.is_uint() && from.bits() == 64 ? static_cast<double>(static_cast<uint64_t>(v.i))
                                                     : static_cast<double>(v.i);
      return {0, round_to(to, d)};
    }
    if (!from.is_float()) return {wrap(to, v.i), 0};
    if (std::isnan(v.f)) return {0, 0};
    auto [lo, hi] = int_range(to);
    double t = std::trunc(v.f);
    if (t <= static_cast<double>(lo)) return {lo, 0};
    if (t >= static_cast<double>(hi)) return {hi, 0};
    return {static_cast<int64_t>(t), 0};
  }

  Value call(const Call &c) {
    DataType t = c.dtype;
    switch (c.op) {
      case Intrinsic::IfThenElse: return eval(c.args[0]).i ? eval(c.args[1]) : eval(c.args[2]);
      case Intrinsic::MaxValue:
      case Intrinsic::MinValue: {
        bool is_max = c.op == Intrinsic::MaxValue;
        if (t.is_float()) return {0, is_max ? float_max(t) : -float_max(t)};
        auto [lo, hi] = int_range(t);
        return {is_max ? hi : lo, 0};
      }
      case Intrinsic::ShflXor: return shuffle(c);
      case Intrinsic::Abs:
        if (t.is_integer()) return {wrap(t, std::abs(eval(c.args[0]).i)), 0};
        return {0, std::fabs(eval(c.args[0]).f)};
      case Intrinsic::Exp:
      case Intrinsic::Sqrt:
      case Intrinsic::Rsqrt: {
        double x = eval(c.args[0]).f;
        bool narrow = t != DataType::float64();
        double r = c.op == Intrinsic::Exp    ? (narrow ? std::exp(static_cast<float>(x)) : std::exp(x))
                   : c.op == Intrinsic::Sqrt ? (narrow ? std::sqrt(static_cast<float>(x)) : std::sqrt(x))
                                             : 1.0 / std::sqrt(x);
        return {0, round_to(t, r)};
      }
      case Intrinsic::RoundToTf32: return {0, tessera::round_to_tf32(static_cast<float>(eval(c.args[0]).f))};
      default:
        throw EmulationError(std::string("intrinsic T.") + intrinsic_name(c.op) + " is not supported by the emulator");
    }
  }

  // ---- tensor cores and cp.async: each lane publishes its operands, the
  // warp meets, each lane computes its own results, the warp meets again.

  Address address(const Expr &operand) {
    const auto *l = operand.as<Load>();
    if (!l) throw EmulationError("an address operand is not a buffer element");
    auto [m, i] = element(l->buffer, l->indices);
    return {m, &l->buffer, i};
  }
  int full_warp_lane(const Call &c) const {
    if (warp_.lanes_mask != 0xffffffffu)
      throw EmulationError(std::string("T.") + intrinsic_name(c.op) + " in a warp of fewer than 32 threads");
    return linear_ % kWarpSize;
  }
  void check_span(const Address &a, int64_t n, const char *what) const {
    if (a.i + n > a.m->array->numel())
      throw EmulationError(std::string(what) + " of " + std::to_string(n) + " elements at " + a.buffer->name() + "[" +
                           std::to_string(a.i) + "] runs past its end");
  }

  void warp_statement(const Call &c) {
    switch (c.op) {
      case Intrinsic::Ldmatrix: return ldmatrix(c);
      case Intrinsic::MmaSync: return mma_sync(c);
      case Intrinsic::CpAsync: return cp_async(c);
      case Intrinsic::Wgmma: return wgmma(c);
      case Intrinsic::CpAsyncCommit: return cp_.commit();
      case Intrinsic::WgmmaCommit: return wgmma_.commit();
      case Intrinsic::CpAsyncWait: return retire(cp_, eval(c.args[0]).i);
      case Intrinsic::WgmmaWait:
        // wait_group is .sync.aligned: the warp's lanes pass it together,
        // so one lane may speak for its warp once past it (a stage released
        // by lane 0 is released by the whole warp).
        warp_.barrier.arrive_and_wait(&c, "wgmma wait");
        return retire(wgmma_, eval(c.args[0]).i);
      // Each thread runs in program order and wgmma reads its operands
      // when issued: the fences order nothing further here.
      case Intrinsic::WgmmaFence:
      case Intrinsic::FenceProxyAsync:
      case Intrinsic::SetMaxNReg: return;
      case Intrinsic::MbarrierInit:
      case Intrinsic::MbarrierArrive:
      case Intrinsic::MbarrierArriveExpectTx:
      case Intrinsic::MbarrierWait:
      case Intrinsic::TmaLoad: return mbarrier_statement(c);
      case Intrinsic::TmaStore: return tma_store(c);
      case Intrinsic::TmaStoreWait: return retire_stores(eval(c.args[0]).i);
      case Intrinsic::SyncWarp: return warp_.barrier.arrive_and_wait(&c, "syncwarp");
      default: throw EmulationError(std::string("T.") + intrinsic_name(c.op) + " is not a warp statement");
    }
  }

  /// The mbarrier statements and TMA copies (SimtMbarriers.h).
  void mbarrier_statement(const Call &c) {
    const Address bar = address(c.args[c.op == Intrinsic::TmaLoad ? 1 : 0]);
    if (bar.buffer->dtype().bytes() != 8) throw EmulationError("an mbarrier in '" + bar.buffer->name() + "', not 8 bytes");
    const Mbarriers::Key key{bar.m, bar.i};
    try {
      switch (c.op) {
        case Intrinsic::MbarrierInit: return block_.mbarriers.init(key, eval(c.args[1]).i);
        case Intrinsic::MbarrierArrive: return block_.mbarriers.arrive(key, 0);
        case Intrinsic::MbarrierArriveExpectTx: return block_.mbarriers.arrive(key, eval(c.args[1]).i);
        case Intrinsic::MbarrierWait: return block_.mbarriers.wait(key, static_cast<int>(eval(c.args[1]).i));
        default: return block_.mbarriers.issue(key, tma_copy(c));
      }
    } catch (const Mbarriers::Aborted &) {
      throw Aborted{};
    }
  }

  std::deque<PendingStore> stores_;  ///< this thread's TMA stores in flight

  /// What a T.tma_load or T.tma_store names, checked: the global tensor
  /// (a parameter), the box and its first coordinates, and the box's start
  /// in shared memory (an element and its byte).
  struct TmaOperands {
    const Buffer *tensor;
    Memory *memory;
    tessera::ir::tma::Box box;
    std::vector<int64_t> shape, first;
    Address smem;
    int64_t start;
  };
  TmaOperands tma_operands(const Call &c) {
    const bool load = c.op == Intrinsic::TmaLoad;
    const std::string what = load ? "T.tma_load" : "T.tma_store";
    const size_t lead = load ? 4 : 3;  // dst, bar, src.data, swizzle / src, dst.data, swizzle
    const Buffer &tensor = c.args[lead - 2].as<BufferPtr>()->buffer;
    auto found = block_.params_by_name.find(tensor.name());
    if (found == block_.params_by_name.end())
      throw EmulationError(what + (load ? " of '" : " into '") + tensor.name() + "', not a parameter");
    TmaOperands t{&tensor, found->second, {}, {}, {}, address(c.args[0]), 0};
    const int n = tensor.ndim();
    t.box.swizzle_bytes = static_cast<int>(eval(c.args[lead - 1]).i);
    t.box.elem_bytes = tensor.dtype().bytes();
    for (int d = 0; d < n; ++d) {
      t.box.extent.push_back(eval(c.args[lead + d]).i);
      t.first.push_back(eval(c.args[lead + n + d]).i);
      t.shape.push_back(eval(tensor.shape()[d]).i);
    }
    if (std::string bad = t.box.check(); !bad.empty()) throw EmulationError(what + ": " + bad);
    if (std::string bad = tessera::ir::tma::check_tensor(t.shape, t.box.elem_bytes); !bad.empty())
      throw EmulationError(what + (load ? " of '" : " into '") + tensor.name() + "': " + bad);
    const int64_t e = t.smem.buffer->dtype().bytes();
    t.start = t.smem.i * e;
    if (e != t.box.elem_bytes || t.start % 128 != 0 || t.smem.i + t.box.elements() > t.smem.m->array->numel())
      throw EmulationError(what + (load ? " into " : " from ") + t.smem.buffer->name() + "[" +
                           std::to_string(t.smem.i) +
                           "]: elements of another size, not 128-byte aligned, or past its end");
    return t;
  }

  /// A T.tma_load's box, read now from its tensor (zeros outside it),
  /// addressed where ir/Tma.h puts each element; the destination poisoned.
  Mbarriers::Copy tma_copy(const Call &c) {
    const TmaOperands t = tma_operands(c);
    const int64_t e = t.box.elem_bytes;
    Mbarriers::Copy copy;
    copy.dst = t.smem.m->array;
    copy.bytes = t.box.bytes();
    const bool is_float = t.tensor->dtype().is_float();
    t.box.for_each_element(t.first.data(), t.shape, [&](const int64_t *at, int64_t from) {
      copy.index.push_back(t.box.shared_address(t.start, at) / e);
      copy.values.push_back(from < 0            ? 0.0
                            : is_float          ? t.memory->array->get(from)
                                                : double(t.memory->array->get_int(from)));
    });
    poison(t.smem, t.box.elements());
    return copy;
  }

  /// T.tma_store: the box's shared elements are noted now and read when a
  /// T.tma_store_wait retires the store (TMA may read them any time in
  /// between: an element that changed meanwhile is a race).
  void tma_store(const Call &c) {
    const TmaOperands t = tma_operands(c);
    const int64_t e = t.box.elem_bytes;
    PendingStore store;
    t.box.for_each_element(t.first.data(), t.shape, [&](const int64_t *at, int64_t to) {
      if (to < 0) return;
      Address from{t.smem.m, t.smem.buffer, t.box.shared_address(t.start, at) / e};
      store.moves.push_back({from, t.memory, t.tensor, to, get(*from.m, from.i, from.buffer->dtype())});
    });
    stores_.push_back(std::move(store));
  }

  /// T.tma_store_wait: the oldest stores land until at most `keep` remain.
  void retire_stores(int64_t keep) {
    while (static_cast<int64_t>(stores_.size()) > keep) {
      for (const PendingStore::Move &mv : stores_.front().moves) {
        const DataType t = mv.from.buffer->dtype();
        const Value now = get(*mv.from.m, mv.from.i, t);
        const bool same = t.is_float() ? (now.f == mv.issued.f || (std::isnan(now.f) && std::isnan(mv.issued.f)))
                                       : now.i == mv.issued.i;
        if (!same)
          throw EmulationError("T.tma_store by thread " + std::to_string(linear_) + ": " + mv.from.buffer->name() +
                               "[" + std::to_string(mv.from.i) +
                               "] changed between the store and the wait that retires it (the TMA unit may read "
                               "it at any time in between)");
        on_write(*mv.to, *mv.tensor, mv.at);
        set(*mv.to, mv.at, now);
      }
      stores_.pop_front();
    }
  }

  /// ldmatrix moves 16-bit units (two elements of an 8-bit buffer each).
  void ldmatrix(const Call &c) {
    const int lane = full_warp_lane(c);
    const int num = static_cast<int>(eval(c.args[1]).i);
    mma::LdmatrixLayout layout(num, eval(c.args[0]).i != 0);
    Address dst = address(c.args[2]), row = address(c.args[3]);
    const int bytes = row.buffer->dtype().bytes(), per_unit = 2 / bytes;
    check_span(dst, 2 * num * per_unit, "T.ldmatrix's destination");
    if ((row.i * bytes) % 16 != 0)
      throw EmulationError("T.ldmatrix row address " + row.buffer->name() + "[" + std::to_string(row.i) +
                           "] is not 16-byte aligned");
    warp_.rows[lane] = row;
    warp_.barrier.arrive_and_wait(&c, "ldmatrix");
    for (int j = 0; j < num; ++j)
      for (int h = 0; h < 2; ++h) {
        mma::Element u = layout.at(lane, j, h);
        const Address &r = warp_.rows[layout.address_lane(j, u.row)];
        for (int q = 0; q < per_unit; ++q) {
          int64_t from = r.i + u.col * per_unit + q, to = dst.i + (2 * j + h) * per_unit + q;
          check_span(r, u.col * per_unit + q + 1, "T.ldmatrix's row");
          on_read(*r.m, *r.buffer, from);
          set(*dst.m, to, get(*r.m, from, r.buffer->dtype()));
        }
      }
    warp_.barrier.arrive_and_wait(&c, "ldmatrix");
  }

  /// Every form of ir/MmaFragments.h's MmaVariant: the products exact, the
  /// sum rounded once into the accumulator (int32: wrapping).
  void mma_sync(const Call &c) {
    const int lane = full_warp_lane(c);
    Address d = address(c.args[1]), a = address(c.args[2]), b = address(c.args[3]);
    std::string why;
    auto v = mma::find_mma_variant(c.args[0], a.buffer->dtype(), b.buffer->dtype(), d.buffer->dtype(), &why);
    if (!v) throw EmulationError("T.mma_sync: " + why);
    const mma::MmaTables &t = v->tables();
    const bool integer = v->in.is_int();
    check_span(d, v->c_per_lane(), "T.mma_sync's accumulator");
    check_span(a, t.a_per_lane(), "T.mma_sync's A fragment");
    check_span(b, t.b_per_lane(), "T.mma_sync's B fragment");
    auto value = [&](const Address &x, int64_t k) {
      return integer ? double(x.m->array->get_int(x.i + k)) : v->input(x.m->array->get(x.i + k));
    };
    for (int k = 0; k < t.a_per_lane(); ++k) warp_.frag_a[lane][k] = value(a, k);
    for (int k = 0; k < t.b_per_lane(); ++k) warp_.frag_b[lane][k] = value(b, k);
    warp_.barrier.arrive_and_wait(&c, "mma.sync");
    for (int i = 0; i < v->c_per_lane(); ++i) {
      double sum = mma::mma_dot(
          t, lane, i, [&](int from, int k) { return warp_.frag_a[from][k]; },
          [&](int from, int k) { return warp_.frag_b[from][k]; });
      if (integer)
        d.m->array->set_int(d.i + i, wrap(DataType::int32(), d.m->array->get_int(d.i + i) + static_cast<int64_t>(sum)));
      else
        d.m->array->set(d.i + i, d.m->array->get(d.i + i) + sum);  // rounded to D's type
    }
    warp_.barrier.arrive_and_wait(&c, "mma.sync");
  }

  /// wgmma's SS form (ir/Wgmma.h): this thread of the warpgroup computes its
  /// own accumulators from the two shared tiles (reads checked for races
  /// now), starting from their pending values when a wgmma in flight writes
  /// them; the results land when a wait retires the group, poison before.
  void wgmma(const Call &c) {
    if (warp_.lanes_mask != 0xffffffffu) throw EmulationError("T.wgmma in a warp of fewer than 32 threads");
    const int thread = linear_ % tessera::ir::wgmma::kWarpgroup;
    Address d = address(c.args[1]), a = address(c.args[2]), b = address(c.args[3]);
    std::string why;
    auto v = tessera::ir::wgmma::find_wgmma_variant(c.args[0], a.buffer->dtype(), b.buffer->dtype(), d.buffer->dtype(), &why);
    if (!v) throw EmulationError("T.wgmma: " + why);
    const tessera::ir::wgmma::SmemLayout layout{static_cast<int>(eval(c.args[5]).i), eval(c.args[6]).i, eval(c.args[7]).i};
    if (std::string bad = layout.check(); !bad.empty()) throw EmulationError("T.wgmma: " + bad);
    const int64_t trans_a = eval(c.args[8]).i, trans_b = eval(c.args[9]).i;
    for (auto [operand, trans] : {std::pair{"A", trans_a}, {"B", trans_b}})
      if (std::string bad = tessera::ir::wgmma::check_transpose(operand, trans, v->in); !bad.empty())
        throw EmulationError("T.wgmma: " + bad);
    // RS: A's fragments in the registers of this thread's warp, exchanged
    // as mma.sync's are (ir/Wgmma.h).
    const std::string &a_scope = a.buffer->scope();
    const bool a_in_registers = a_scope == "warp" || a_scope == "local";
    const int lane = thread % kWarpSize;
    if (a_in_registers) {
      if (trans_a != 0) throw EmulationError("T.wgmma reads A from registers, K-major: trans_a must be 0");
      const int n = tessera::ir::wgmma::a_registers_per_thread(*v);
      check_span(a, n, "T.wgmma's A fragment");
      for (int k = 0; k < n; ++k)
        warp_.frag_a[lane][k] = v->in.is_int() ? double(a.m->array->get_int(a.i + k)) : a.m->array->get(a.i + k);
      warp_.barrier.arrive_and_wait(&c, "wgmma A fragment");
    }
    const bool mn_major_a = trans_a != 0, mn_major_b = trans_b != 0;
    check_span(d, v->d_per_thread(), "T.wgmma's accumulators");
    const int e = a.buffer->dtype().bytes();
    Copy result{d, std::vector<Value>(static_cast<size_t>(v->d_per_thread()))};
    auto element = [&](const Address &x, bool mn_major, int row, int k) {
      const int64_t at = layout.element_address(x.i * e, row, k, e, mn_major) / e;
      if (at < 0 || at >= x.m->array->numel())
        throw EmulationError("T.wgmma reads " + x.buffer->name() + "[" + std::to_string(at) + "], past its end");
      on_read(*x.m, *x.buffer, at);
      result.reads.push_back({x.m, x.buffer, at});
      return v->in.is_int() ? double(x.m->array->get_int(at)) : x.m->array->get(at);
    };
    const Copy *pending = wgmma_.find(d);
    for (int i = 0; i < v->d_per_thread(); ++i) {
      const mma::Element at = tessera::ir::wgmma::accumulator_at(thread, i, v->n);
      double sum = 0;
      for (int k = 0; k < v->k(); ++k) {
        double x = 0;
        if (a_in_registers) {
          const mma::Slot s = tessera::ir::wgmma::a_register_owner(*v, at.row, k);
          x = warp_.frag_a[s.lane % kWarpSize][s.index];
        } else {
          x = element(a, mn_major_a, at.row, k);
        }
        sum += x * element(b, mn_major_b, at.col, k);
      }
      const Value old = pending ? pending->values[i] : get(*d.m, d.i + i, d.buffer->dtype());
      result.values[i] = v->acc.is_int()
                             ? Value{wrap(DataType::int32(), old.i + static_cast<int64_t>(sum)), 0}
                             : Value{0, double(static_cast<float>(old.f + sum))};  // rounded once, to float32
    }
    if (a_in_registers) warp_.barrier.arrive_and_wait(&c, "wgmma A fragment");  // read before they change
    poison(d, v->d_per_thread());
    // The tiles are read until the group retires: the reads are checked
    // again then, so a store between the issue and the wait races.
    std::sort(result.reads.begin(), result.reads.end());
    result.reads.erase(std::unique(result.reads.begin(), result.reads.end()), result.reads.end());
    wgmma_.open.push_back(std::move(result));
  }

  void cp_async(const Call &c) {
    Address dst = address(c.args[0]);
    const int64_t bytes = eval(c.args[2]).i, valid = eval(c.args[3]).i, e = dst.buffer->dtype().bytes();
    if ((bytes != 4 && bytes != 8 && bytes != 16) || valid < 0 || valid > bytes)
      throw EmulationError("T.cp_async of " + std::to_string(bytes) + " bytes reading " + std::to_string(valid));
    check_span(dst, bytes / e, "T.cp_async's destination");
    Copy cp{dst, std::vector<Value>(static_cast<size_t>(bytes / e))};
    if (valid > 0) {
      Address src = address(c.args[1]);
      check_span(src, valid / e, "T.cp_async's source");
      for (int64_t q = 0; q < valid / e; ++q) {
        on_read(*src.m, *src.buffer, src.i + q);
        cp.values[q] = get(*src.m, src.i + q, src.buffer->dtype());
      }
    }
    // The destination reads as poison until the copy lands.
    poison(dst, bytes / e);
    cp_.open.push_back(std::move(cp));
  }

  static void poison(const Address &a, int64_t n) {
    for (int64_t q = 0; q < n; ++q) {
      if (a.buffer->dtype().is_float()) a.m->array->set(a.i + q, std::numeric_limits<double>::quiet_NaN());
      else a.m->array->set_int(a.i + q, static_cast<int64_t>(0xA5A5A5A5A5A5A5A5ull));
    }
  }

  static Value get(const Memory &m, int64_t i, DataType t) {
    return t.is_float() ? Value{0, m.array->get(i)} : Value{m.array->get_int(i), 0};
  }
  void set(Memory &m, int64_t i, const Value &v) {
    if (m.array->dtype().is_float()) m.array->set(i, v.f);
    else m.array->set_int(i, v.i);
  }

  using Copy = AsyncWrite;
  using Queue = AsyncQueue;

  /// Lands the oldest groups of `q` until at most `keep` are in flight.
  void retire(Queue &q, int64_t keep) {
    while (static_cast<int64_t>(q.groups.size()) > keep) {
      for (const Copy &cp : q.groups.front()) {
        for (const Copy::Read &r : cp.reads) on_read(*r.m, *r.buffer, r.i);
        for (size_t i = 0; i < cp.values.size(); ++i) {
          on_write(*cp.dst.m, *cp.dst.buffer, cp.dst.i + int64_t(i));
          set(*cp.dst.m, cp.dst.i + int64_t(i), cp.values[i]);
        }
      }
      q.groups.pop_front();
    }
  }
  Queue cp_, wgmma_;

  Value shuffle(const Call &c) {
    uint32_t mask = static_cast<uint32_t>(eval(c.args[0]).i);
    Value v = eval(c.args[1]);
    int64_t lane_mask = eval(c.args[2]).i, width = eval(c.args[3]).i;
    if ((warp_.lanes_mask & mask) != warp_.lanes_mask)
      throw EmulationError("T.shfl_xor with mask " + std::to_string(mask) + " omits lanes of its warp");
    if (width <= 0 || kWarpSize % width != 0) throw EmulationError("T.shfl_xor width " + std::to_string(width));
    int lane = linear_ % kWarpSize;
    warp_.slots[lane] = v;
    warp_.barrier.arrive_and_wait(&c, "shuffle");
    int64_t src = lane ^ lane_mask;
    bool inside = src / width == lane / width && ((warp_.lanes_mask >> src) & 1);
    Value out = inside ? warp_.slots[src] : v;
    warp_.barrier.arrive_and_wait(&c, "shuffle");
    return out;
  }

  BlockState &block_;
  std::unordered_map<const VarNode *, Value> env_;
  std::unordered_map<const BufferNode *, std::unique_ptr<Memory>> locals_;
  const int linear_;
  Warp &warp_;
  uint64_t epoch_;
};

int64_t const_extent(const Expr &e, const std::unordered_map<const VarNode *, Value> &scalars) {
  if (!e.defined()) return 1;
  BlockState dummy(1, 0);
  return Thread(dummy, scalars, 0).eval(e).i;
}

}  // namespace

WrittenMask emulate(const lower::LoweredFunc &f, const std::vector<NDArray *> &args,
                    const std::vector<std::array<int64_t, 3>> &blocks) {
  if (args.size() != f.params.size()) throw EmulationError("wrong number of arguments");
  // Step 1. Parameters: global memory and scalars.
  std::unordered_map<const VarNode *, Value> scalars;
  std::vector<std::unique_ptr<Memory>> globals;
  std::unordered_map<const BufferNode *, Memory *> global_map;
  std::unordered_map<std::string, Memory *> params_by_name;
  for (size_t i = 0; i < args.size(); ++i) {
    const lower::KernelParam &p = f.params[i];
    if (p.is_buffer()) {
      globals.push_back(std::make_unique<Memory>(args[i], true, true));
      global_map[p.buffer.get()] = globals.back().get();
      params_by_name[p.buffer.name()] = globals.back().get();
    } else {
      scalars[p.var.get()] = p.var.dtype().is_float() ? Value{0, args[i]->get(0)} : Value{args[i]->get_int(0), 0};
    }
  }
  // Step 2. The launch.
  std::array<int64_t, 3> grid{}, dim{};
  for (int a = 0; a < 3; ++a) {
    grid[a] = const_extent(f.launch.grid[a], scalars);
    dim[a] = const_extent(f.launch.block[a], scalars);
  }
  int threads = static_cast<int>(dim[0] * dim[1] * dim[2]);
  std::vector<std::array<int64_t, 3>> todo = blocks;
  if (todo.empty())
    for (int64_t z = 0; z < grid[2]; ++z)
      for (int64_t y = 0; y < grid[1]; ++y)
        for (int64_t x = 0; x < grid[0]; ++x) todo.push_back({x, y, z});
  // Step 3. Each thread block: shared memory, then one std::thread per thread.
  for (size_t k = 0; k < todo.size(); ++k) {
    BlockState block(threads, static_cast<uint64_t>(k + 1) << 32);
    block.memory = global_map;
    block.params_by_name = params_by_name;
    std::vector<std::unique_ptr<Memory>> shared;
    for (const Buffer &b : f.allocs) {
      if (b.scope() == "local") continue;
      shared.push_back(Memory::allocate(b, true));
      block.memory[b.get()] = shared.back().get();
    }
    std::mutex error_mutex;
    std::string error;
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        try {
          std::unordered_map<const VarNode *, Value> env = scalars;
          int64_t idx[3] = {t % dim[0], t / dim[0] % dim[1], t / (dim[0] * dim[1])};
          for (int a = 0; a < 3; ++a) {
            if (f.launch.thread_vars[a].defined()) env[f.launch.thread_vars[a].get()] = {idx[a], 0};
            if (f.launch.block_vars[a].defined()) env[f.launch.block_vars[a].get()] = {todo[k][a], 0};
          }
          Thread thread(block, std::move(env), t);
          for (const Buffer &b : f.allocs)
            if (b.scope() == "local") thread.add_local(b);
          thread.exec(f.body);
          thread.finish();
        } catch (const Aborted &) {
        } catch (const std::exception &e) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (error.empty()) error = e.what();
          block.abort();
        }
      });
    }
    for (std::thread &w : workers) w.join();
    if (error.empty())
      if (size_t n = block.mbarriers.in_flight())
        error = "the block ends with " + std::to_string(n) + " TMA copies never waited for";
    if (!error.empty()) {
      std::ostringstream os;
      os << error << " (thread block (" << todo[k][0] << ", " << todo[k][1] << ", " << todo[k][2] << "))";
      throw EmulationError(os.str());
    }
  }
  WrittenMask written(args.size());
  for (size_t i = 0, g = 0; i < args.size(); ++i) {
    if (!f.params[i].is_buffer()) continue;
    const Memory &m = *globals[g++];
    for (int64_t j = 0; j < args[i]->numel(); ++j) written[i].push_back(m.written[j].load());
  }
  return written;
}

}  // namespace tessera::simt
