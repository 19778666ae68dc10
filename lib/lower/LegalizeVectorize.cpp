//===- lib/lower/LegalizeVectorize.cpp - Vectorized loops, scalar fallback --===//
//
// A vectorized loop becomes an unrolled loop of scalar accesses, which nvcc
// often merges into vector accesses anyway. Emitting float4/half2 loads and
// stores where the access is contiguous and aligned is a later increment;
// this pass is where it will go.
//
//===----------------------------------------------------------------------===//
#include "tessera/ir/Functor.h"
#include "tessera/lower/Passes.h"

namespace tessera::lower {

namespace {

using namespace tessera::ir;

class VectorizeLegalizer : public IRMutator {
 protected:
  Stmt visit_(const For *op, const Stmt &self) override {
    Stmt r = IRMutator::visit_(op, self);
    if (op->for_kind != ForKind::Vectorized) return r;
    const auto *f = r.as<For>();
    return For::make(f->loop_var, f->min, f->extent, ForKind::Unrolled, f->body, "", f->annotations);
  }
};

}  // namespace

Stmt legalize_vectorize(const Stmt &s) { return VectorizeLegalizer().mutate(s); }

}  // namespace tessera::lower
