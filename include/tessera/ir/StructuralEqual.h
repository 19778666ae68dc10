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
// Everything else is compared: node kinds, dtypes, operators, constants
// (floats bit for bit, but any NaN equals any NaN), buffer dtype, shape,
// strides and scope, loop kinds and thread tags, annotations, block names
// (schedules find blocks by name), iter kinds, domains, bindings, predicates,
// reads/writes regions, allocations, init presence, function names and
// attributes. Modules compare their functions pairwise, in order.
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
/// failures) as a path from the function and both values:
///   "body.Block(root).Seq[1].For(j).extent: 64 vs 128"
///   "body.Block(root).For(i).For(j).Block(C).Store(C).value.a.Load(A).indices[0]:
///    vj vs vi (they refer to different definitions)"
/// Empty when equal.
std::string structural_diff(const PrimFunc &a, const PrimFunc &b);

size_t structural_hash(const PrimFunc &f);
size_t structural_hash(const Stmt &s);
size_t structural_hash(const Expr &e);

}  // namespace tessera::ir
