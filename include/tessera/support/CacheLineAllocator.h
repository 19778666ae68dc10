//===- tessera/support/CacheLineAllocator.h - Storage aligned to 64 bytes --===//
//
// A std::allocator for containers whose data the generated code reads and
// writes in whole vectors: the first element starts a cache line (and a
// 512-bit vector). malloc aligns large blocks to 16 bytes only (glibc's
// mmap-ed chunks start 16 bytes into a page), so every 64-byte access of such
// an array would straddle two lines, and non-temporal stores, which need
// aligned lines, could not be used at all.
//
//   std::vector<uint8_t, support::CacheLineAllocator<uint8_t>> bytes(n);
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <new>

namespace tessera::support {

inline constexpr std::size_t kCacheLineBytes = 64;

template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U> &) noexcept {}
  T *allocate(std::size_t n) {
    return static_cast<T *>(::operator new(n * sizeof(T), std::align_val_t(kCacheLineBytes)));
  }
  void deallocate(T *p, std::size_t) noexcept { ::operator delete(p, std::align_val_t(kCacheLineBytes)); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U> &) const noexcept {
    return true;
  }
};

}  // namespace tessera::support
