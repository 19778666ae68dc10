//===- tests/codegen/SimtMemory.h - The SIMT emulator's memory and values ===//
//
// The pieces of the SIMT emulator (SimtEmulator.cpp) below its threads: the
// block barrier its threads meet at, the value a thread computes (an
// integer and a float side), the interpreter's rounding and wrapping rules
// per dtype, a buffer's elements with the words that track the last
// writer and reader of each for the race check, and a thread's
// asynchronous writes in flight (cp.async, wgmma, TMA stores).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <chrono>
#include <compare>
#include <condition_variable>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "SimtEmulator.h"
#include "tessera/support/Half.h"

namespace tessera::simt::detail {

using namespace tessera::ir;
using runtime::NDArray;

constexpr int kWarpSize = 32;
constexpr int kThreadBits = 12;  // thread ids (+1) in the race-tracking words

/// Thrown in the other threads once one has failed.
struct Aborted {};

class Barrier {
 public:
  explicit Barrier(int count) : count_(count) {}

  /// Returns once `count` threads arrived, all at `site` (a node of the kernel).
  void arrive_and_wait(const void *site, const char *what) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (aborted_) throw Aborted{};
    if (arrived_ == 0) site_ = site;
    if (site_ != site) throw EmulationError(std::string("threads met at different ") + what + "s");
    uint64_t generation = generation_;
    if (++arrived_ == count_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    if (!cv_.wait_for(lock, std::chrono::seconds(20), [&] { return generation_ != generation || aborted_; }))
      throw EmulationError(std::string("a ") + what + " timed out: some threads never reached it");
    if (aborted_) throw Aborted{};
  }

  void abort() {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  const int count_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  const void *site_ = nullptr;
  bool aborted_ = false;
};

struct Value {
  int64_t i = 0;
  double f = 0;
};

inline double round_to(DataType t, double v) {
  if (t.is_float16()) return round_to_half(v);
  if (t.is_bfloat16()) return round_to_bfloat16(v);
  if (t == DataType::float32()) return static_cast<float>(v);
  return v;
}

inline int64_t wrap(DataType t, int64_t v) {
  if (t.is_bool()) return v != 0;
  int bits = t.bits();
  if (bits >= 64) return v;
  uint64_t m = (uint64_t{1} << bits) - 1, u = static_cast<uint64_t>(v) & m;
  if (t.is_uint() || !(u >> (bits - 1))) return static_cast<int64_t>(u);
  return static_cast<int64_t>(u | ~m);
}

inline std::pair<int64_t, int64_t> int_range(DataType t) {
  if (t.is_bool()) return {0, 1};
  if (t.bits() >= 64)
    return t.is_uint() ? std::pair<int64_t, int64_t>{0, -1}
                       : std::pair{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  if (t.is_uint()) return {0, (int64_t{1} << t.bits()) - 1};
  return {-(int64_t{1} << (t.bits() - 1)), (int64_t{1} << (t.bits() - 1)) - 1};
}

inline double float_max(DataType t) {
  if (t.is_float16()) return 65504.0;
  if (t.is_bfloat16()) return bfloat16_bits_to_float(0x7f7f);
  if (t == DataType::float32()) return std::numeric_limits<float>::max();
  return std::numeric_limits<double>::max();
}

/// One buffer's elements; for shared and global memory also the race
/// tracking words and (parameters) which elements were stored to.
struct Memory {
  Memory(NDArray *a, bool track_races, bool record_writes) : array(a) {
    size_t n = static_cast<size_t>(a->numel());
    if (track_races) {
      last_writer = std::make_unique<std::atomic<uint64_t>[]>(n);
      last_reader = std::make_unique<std::atomic<uint64_t>[]>(n);
    }
    if (record_writes) written = std::make_unique<std::atomic<uint8_t>[]>(n);
  }
  /// Owns a new array of `b`'s dtype and (flat, constant) size, poisoned.
  static std::unique_ptr<Memory> allocate(const Buffer &b, bool track_races) {
    auto size = as_const_int(b.shape()[0]);
    if (!size) throw EmulationError("allocation '" + b.name() + "' of symbolic size");
    auto owned = std::make_unique<NDArray>(b.dtype(), std::vector<int64_t>{*size});
    for (int64_t i = 0; i < *size; ++i) {
      if (b.dtype().is_float()) owned->set(i, std::numeric_limits<double>::quiet_NaN());
      else owned->set_int(i, static_cast<int64_t>(0xA5A5A5A5A5A5A5A5ull));
    }
    auto m = std::make_unique<Memory>(owned.get(), track_races, false);
    m->owned = std::move(owned);
    return m;
  }

  NDArray *array;
  std::unique_ptr<NDArray> owned;
  std::unique_ptr<std::atomic<uint64_t>[]> last_writer, last_reader;
  std::unique_ptr<std::atomic<uint8_t>[]> written;
};

/// A buffer element an instruction names as an address.
struct Address {
  Memory *m = nullptr;
  const Buffer *buffer = nullptr;
  int64_t i = 0;
};

/// An asynchronous write: cp.async's copied elements or wgmma's results.
struct AsyncWrite {
  Address dst;
  std::vector<Value> values;
  /// What an asynchronous reader (wgmma) reads until it lands.
  struct Read {
    Memory *m;
    const Buffer *buffer;
    int64_t i;
    auto operator<=>(const Read &) const = default;
  };
  std::vector<Read> reads;
};
struct AsyncQueue {
  std::vector<AsyncWrite> open;                ///< issued since the last commit
  std::deque<std::vector<AsyncWrite>> groups;  ///< committed, oldest first
  void commit() {
    groups.push_back(std::move(open));
    open.clear();
  }
  size_t pending() const {
    size_t n = open.size();
    for (const auto &g : groups) n += g.size();
    return n;
  }
  /// The newest pending write starting at `dst`, or null.
  const AsyncWrite *find(const Address &dst) const {
    for (auto it = open.rbegin(); it != open.rend(); ++it)
      if (it->dst.m == dst.m && it->dst.i == dst.i) return &*it;
    for (auto g = groups.rbegin(); g != groups.rend(); ++g)
      for (auto it = g->rbegin(); it != g->rend(); ++it)
        if (it->dst.m == dst.m && it->dst.i == dst.i) return &*it;
    return nullptr;
  }
};

/// A T.tma_store in flight: each element of its box inside the tensor,
/// where it is read in shared memory and written in the tensor, and the
/// value it had when the store was issued.
struct PendingStore {
  struct Move {
    Address from;
    Memory *to;
    const Buffer *tensor;
    int64_t at;
    Value issued;
  };
  std::vector<Move> moves;
};

}  // namespace tessera::simt::detail
