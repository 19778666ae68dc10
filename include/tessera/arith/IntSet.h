//===- tessera/arith/IntSet.h - Symbolic intervals of index expressions ---===//
//
// Interval analysis: the values an expression takes while some of its
// variables range over domains, as a symbolic half-open ir::Range. This is
// how a schedule computes the region of a buffer that a loop nest touches
// (compute_at, cache_read/cache_write, ...).
//
//   // A[k0 * 32 + k1] inside `for k1 in range(32)`, k0 left free:
//   relax(k0 * 32 + k1, {{k1, Range::from_extent(32)}}, ana)
//       -> Range{min = k0 * 32, extent = 32}
//   // A[i // 4] over i in [0, 64):
//   relax(i // 4, {{i, [0, 64)}}, ana)          -> Range{0, 16}
//
// The result always covers every value (it is sound); it is exact for affine
// expressions (sums, differences, multiples by constants) of independent
// domain variables, and for floordiv by positive constants of those; it is a
// bounding interval for floormod, min, max and Select. Every returned min and
// extent is simplified with the analyzer (extent `32`, not
// `k0 * 32 + 32 - k0 * 32`). Variables that are not relaxed stay symbolic;
// facts the analyzer holds about them are used to simplify and to decide
// orderings. When no finite bound can be found (an indirect index A[B[i]],
// a product of two relaxed variables with unbounded domains), relax returns
// [0, dtype max): every valid buffer index; try_relax returns nullopt.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "tessera/arith/Analyzer.h"

namespace tessera::arith {

/// The domains of the relaxed variables: each var ranges over [min, min + extent).
using VarDomains = std::vector<std::pair<ir::Var, ir::Range>>;

/// The half-open range [min, min + extent) of the values of the integer
/// expression `e` when every variable of `dom` ranges over its domain (other
/// variables keep their symbolic value). The domains themselves must not
/// mention relaxed variables (they may mention free ones, e.g. [0, n)).
ir::Range relax(const ir::Expr &e, const VarDomains &dom, const Analyzer &analyzer);

/// Like relax, but nullopt when no finite bound was found.
std::optional<ir::Range> try_relax(const ir::Expr &e, const VarDomains &dom, const Analyzer &analyzer);

/// relax() applied to each index of a buffer access, giving its region:
///   relax_region({vi * 16 + ii, vk}, {{ii, [0, 16)}}, ana)
///       -> {[vi * 16, 16), [vk, 1)}
std::vector<ir::Range> relax_region(const std::vector<ir::Expr> &indices, const VarDomains &dom,
                                    const Analyzer &analyzer);

/// The smallest range containing all of `ranges` (the bounding interval),
/// simplified. Requires at least one range.
///   union_ranges({[k*32, 16), [k*32 + 16, 16)}) -> [k*32, 32)
ir::Range union_ranges(const std::vector<ir::Range> &ranges, const Analyzer &analyzer);

/// The bounding box of several regions of the same buffer (same rank; at
/// least one region): union_ranges dimension by dimension.
std::vector<ir::Range> union_regions(const std::vector<std::vector<ir::Range>> &regions,
                                     const Analyzer &analyzer);

}  // namespace tessera::arith
