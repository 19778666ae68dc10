//===- tests/codegen/SimtMbarriers.h - mbarriers and TMA copies, threaded ===//
//
// The SIMT emulator's (SimtEmulator.h) model of Hopper's mbarriers and the
// TMA copies that complete on them, shared by the threads of one thread
// block (each a std::thread):
//   - a barrier's phase completes once the arrivals it was initialised to
//     expect have come and every announced byte has landed; a wait for the
//     phase of parity p returns once the barrier's phase in progress has
//     the other parity, and blocks until then;
//   - a TMA copy is taken from global memory when issued (its destination
//     then holds poison) and lands, completing its bytes, when a thread
//     waits on its barrier and every arrival of the phase is in: as late as
//     the hardware may land it, so a thread that reads the tile before
//     waiting reads poison;
//   - copies still in flight when the block ends, an arrival more than a
//     phase expects, a wait that never returns (20 s), a barrier used
//     before it is initialised are errors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/runtime/NDArray.h"

namespace tessera::simt {

class Mbarriers {
 public:
  /// Where a barrier lives: its buffer's storage and element.
  using Key = std::pair<const void *, int64_t>;

  /// A TMA copy's elements, written into `dst` when it lands.
  struct Copy {
    runtime::NDArray *dst = nullptr;
    std::vector<int64_t> index;
    std::vector<double> values;  ///< floats as doubles; integers exactly (|v| < 2^53)
    int64_t bytes = 0;
  };

  /// Thrown by `wait` once the block has failed elsewhere.
  struct Aborted {};

  void init(Key bar, int64_t count) {
    std::lock_guard<std::mutex> lock(mu_);
    State &s = states_[bar];
    if (!s.copies.empty()) throw std::runtime_error("an mbarrier initialised again while a TMA copy is in flight on it");
    s = State{count, count, 0, 0, true, {}};
  }

  /// One arrival, announcing `tx` bytes.
  void arrive(Key bar, int64_t tx) {
    std::lock_guard<std::mutex> lock(mu_);
    State &s = initialised(bar);
    if (s.pending == 0)
      throw std::runtime_error("an mbarrier phase of " + std::to_string(s.expected) +
                               " arrivals got one more before it completed");
    s.tx += tx;
    --s.pending;
    complete_if_done(s);
    cv_.notify_all();  // a waiter may now land the copies
  }

  void issue(Key bar, Copy copy) {
    std::lock_guard<std::mutex> lock(mu_);
    initialised(bar).copies.push_back(std::move(copy));
    cv_.notify_all();
  }

  /// Blocks until the phase of parity `parity` of `bar` has completed.
  void wait(Key bar, int parity) {
    std::unique_lock<std::mutex> lock(mu_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      if (aborted_) throw Aborted{};
      State &s = initialised(bar);
      if (s.parity != parity) return;
      if (s.pending == 0 && !s.copies.empty()) {
        for (const Copy &c : s.copies) {
          for (size_t k = 0; k < c.index.size(); ++k) {
            if (c.dst->dtype().is_float()) c.dst->set(c.index[k], c.values[k]);
            else c.dst->set_int(c.index[k], static_cast<int64_t>(c.values[k]));
          }
          s.tx -= c.bytes;
        }
        s.copies.clear();
        complete_if_done(s);
        continue;
      }
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout)
        throw std::runtime_error("an mbarrier wait for parity " + std::to_string(parity) + " never returned: " +
                                 std::to_string(s.pending) + " of " + std::to_string(s.expected) + " arrivals and " +
                                 std::to_string(s.tx) + " announced bytes missing");
    }
  }

  void abort() {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_ = true;
    cv_.notify_all();
  }

  /// TMA copies issued and never landed.
  size_t in_flight() {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const auto &[key, s] : states_) n += s.copies.size();
    return n;
  }

 private:
  struct State {
    int64_t pending = 0, expected = 0, tx = 0;
    int parity = 0;
    bool initialised = false;
    std::vector<Copy> copies;
  };

  State &initialised(Key bar) {
    auto it = states_.find(bar);
    if (it == states_.end() || !it->second.initialised)
      throw std::runtime_error("an mbarrier used before T.mbarrier_init");
    return it->second;
  }
  void complete_if_done(State &s) {
    if (s.pending != 0 || s.tx != 0) return;
    s.parity ^= 1;
    s.pending = s.expected;
    cv_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, State> states_;
  bool aborted_ = false;
};

}  // namespace tessera::simt
