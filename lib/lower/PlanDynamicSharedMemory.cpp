//===- lib/lower/PlanDynamicSharedMemory.cpp - Shared memory beyond 48 KB --===//
//
// A thread block may declare at most 48 KB of static `__shared__` memory;
// more must be dynamic shared memory, which the launch requests (after an
// opt-in attribute, up to the architecture's limit). Buffers in scope
// "shared.dyn" always go there; when the static ones alone exceed 48 KB, all
// of them move there too (a kernel keeps one pool, so codegen declares one
// `extern __shared__` array). The pool layout is the allocation order, every
// buffer at a 16-byte boundary, so vector accesses stay aligned:
//
//   A_shared: 32768 bytes at 0        B_shared: 32768 bytes at 32768
//   dynamic_shared_bytes = 65536
//
//===----------------------------------------------------------------------===//
#include <unordered_map>

#include "tessera/ir/Functor.h"
#include "tessera/lower/Passes.h"

namespace tessera::lower {

namespace {

using namespace tessera::ir;

constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;
constexpr int64_t kSharedAlignment = 16;

/// Bytes `b` occupies, up to the next 16-byte boundary.
int64_t padded_bytes(const Buffer &b) {
  auto n = as_const_int(b.shape()[0]);
  TESSERA_ICHECK(n && b.ndim() == 1) << "shared buffer '" << b.name() << "' is not flat with a constant size";
  int64_t bytes = *n * b.dtype().bytes();
  return (bytes + kSharedAlignment - 1) / kSharedAlignment * kSharedAlignment;
}

/// Replaces buffers by their dynamic twins.
class BufferReplacer : public IRMutator {
 public:
  std::unordered_map<const BufferNode *, Buffer> replacement;
  Buffer mutate_buffer(const Buffer &b) override {
    auto it = replacement.find(b.get());
    return it == replacement.end() ? b : it->second;
  }
};

}  // namespace

LoweredFunc plan_dynamic_shared_memory(const LoweredFunc &f) {
  int64_t static_bytes = 0;
  for (const Buffer &b : f.allocs)
    if (b.scope() == "shared") static_bytes += padded_bytes(b);
  LoweredFunc out = f;
  if (static_bytes > kMaxStaticSharedBytes) {
    BufferReplacer r;
    for (Buffer &b : out.allocs) {
      if (b.scope() != "shared") continue;
      Buffer dynamic = b.with_scope("shared.dyn");
      r.replacement.emplace(b.get(), dynamic);
      b = dynamic;
    }
    out.body = r.mutate(f.body);
  }
  out.dynamic_shared_bytes = 0;
  for (const Buffer &b : out.allocs)
    if (b.scope() == "shared.dyn") out.dynamic_shared_bytes += padded_bytes(b);
  return out;
}

}  // namespace tessera::lower
