//===- tessera/ir/StructuralEqual.h - Alpha-equivalence and hashing --------===//
//
// Two programs are structurally equal when they are the same tree up to a
// consistent renaming of variables and buffers: name hints are ignored, and a
// variable (or buffer) defined in one program must correspond to the same
// variable (buffer) everywhere in the other. Definitions are loop variables,
// block iter vars, let-bound variables, function parameters, the symbolic
// shape variables of parameter buffers, and allocated / parameter buffers.
// Free variables (not defined anywhere in the compared trees) must be
// identical nodes.
//
// structural_hash is consistent with structural_equal: equal programs hash
// equally (names and variable identities do not enter the hash).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <string>

#include "tessera/ir/Func.h"

namespace tessera::ir {

bool structural_equal(const PrimFunc &a, const PrimFunc &b);
bool structural_equal(const Module &a, const Module &b);
bool structural_equal(const Stmt &a, const Stmt &b);
bool structural_equal(const Expr &a, const Expr &b);

/// Like structural_equal, but explains the first difference (for test
/// failures): "body.Seq[1].For(j).extent: 64 vs 128". Empty when equal.
std::string structural_diff(const PrimFunc &a, const PrimFunc &b);

size_t structural_hash(const PrimFunc &f);
size_t structural_hash(const Stmt &s);
size_t structural_hash(const Expr &e);

}  // namespace tessera::ir
