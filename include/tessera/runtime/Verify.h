//===- tessera/runtime/Verify.h - Checking results against a wide reference -===//
//
// One way to decide whether a computed output is right, used by `tessera run
// --device`, `tessera schedule --verify`, fast_tune, the benchmarks and the
// tests. A schedule keeps a program's serial semantics except for the order
// of its floating-point operations (rfactor, warp shuffles, tree reductions,
// split K: every GPU reduction reorders), so a fixed relative tolerance either
// rejects a correct reordering in float16 or hides a dropped term in float32.
// Instead the result is judged against what rounding can explain:
//
//   1. The reference is the ORIGINAL program evaluated in float64: every
//      floating-point buffer, variable and operation is widened, while the
//      program's explicit casts keep their meaning (a cast to float16 still
//      rounds to float16) — make_reference_program.
//   2. Alongside each value the same program propagates an estimate of the
//      variance of the rounding error that a correct evaluation in the
//      program's own dtypes accumulates (first-order, rounding errors taken as
//      independent): each operation of dtype t adds (c·u(t)·|v|)² with u the
//      unit roundoff (float16 2^-11, bfloat16 2^-8, float32 2^-24) and c = 1
//      for + - * / sqrt, 4 for exp/log/tanh/..., 8 for pow and sigmoid; errors
//      flow through operations by their derivatives (a·b: b²·Va + a²·Vb). An
//      addition's rounding is sized by the larger of its operands and of the
//      root-sum-square of the terms they hold — what a partial sum of those
//      terms typically reaches in any order — so a reduction summed in
//      another order than the program's (rfactor, shuffles, trees, split K)
//      is covered while a dropped term is not.
//   3. An output element passes when
//          |got − ref| ≤ 6·sqrt(V) + 2·u(out)·|ref| + tiny(out)
//      (6 standard deviations; the final rounding into the output's dtype;
//      tiny = the smallest subnormal). Non-finite references must be matched
//      exactly (NaN by NaN, an infinity by the same infinity); integer and
//      bool outputs must be equal.
//
// Measured on a 512 x 4096 float16 gemv accumulating in float16 (inputs in
// [-1, 1), tests/runtime/VerifyTest.cpp): the bounds are about 3 (what the
// program's own serial order can plausibly do); the same sum in a GPU's order
// (128 strided lanes, then a tree) is off by at most 0.07, while skipping one
// lane's 32 terms puts 47 of the 512 outputs outside their bound (worst 2x)
// and dropping each lane's last term 220 (4.5x). Accumulating in float32 the
// bound is about 0.002 and a single dropped term fails by 1000x.
//
//   std::vector<NDArray> args = make_random_args(f, dims, seed);
//   Reference ref = compute_reference(f, args);   // LLVM JIT or interpreter, float64
//   std::vector<NDArray> got = args;
//   interpret(scheduled, got);                    // or run on the GPU
//   for (const OutputCheck &c : check_outputs(f, got, ref))
//     if (!c.ok) std::cerr << c.str() << "\n";
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/runtime/NDArray.h"
#include "tessera/runtime/Oracle.h"

namespace tessera::runtime {

/// The reference program of `f` (point 1 and 2 above). Its parameters are
/// f's, in order, with every floating-point buffer or scalar widened to
/// float64, followed by two float64 buffers per floating-point buffer
/// parameter that f writes (same shape): the error variance of each element
/// (zero on entry: the initial contents are exact) and the sum of the squares
/// of the terms it adds up (the value squared on entry; it sizes the rounding
/// of sums in any order). A parameter f only reads is exact and has none.
struct ReferenceProgram {
  ir::PrimFunc func;
  /// Per parameter of f: the index in func.params() of its variance and
  /// squares buffers, or -1 (not a floating-point buffer, or one f only reads).
  std::vector<int> variance_param, squares_param;
};

/// Builds the reference program. UserError for what it cannot widen (vector
/// dtypes, warp intrinsics of an already scheduled program).
ReferenceProgram make_reference_program(const ir::PrimFunc &f);

/// Reference values and error bounds for every parameter of a function.
struct Reference {
  /// Per parameter: the float64 value of every floating-point buffer, the
  /// array itself for the others.
  std::vector<NDArray> values;
  /// Per parameter f writes: the variance of each element (float64); an
  /// empty array for the others (non-floating-point, or only read: exact).
  std::vector<NDArray> variance;
};

/// The arguments of the reference program for f's arguments `args`: float
/// arrays converted to float64 (exactly), then the companions of the
/// written ones (zero variances, squared values).
std::vector<NDArray> reference_args(const ReferenceProgram &p, const ir::PrimFunc &f,
                                    const std::vector<NDArray> &args);
/// Splits the reference program's arguments after a run into a Reference for f.
Reference collect_reference(const ReferenceProgram &p, const ir::PrimFunc &f, std::vector<NDArray> &&ran);

/// The reference of f on `inputs` (f's arguments; they are not modified),
/// computed by `oracle` (runtime/Oracle.h: the LLVM JIT when it can, else the
/// interpreter); `used`, when given, receives the executor that ran.
Reference compute_reference(const ir::PrimFunc &f, const std::vector<NDArray> &inputs,
                            Oracle oracle = Oracle::Auto, Oracle *used = nullptr);

/// The verdict on one output array.
struct OutputCheck {
  std::string buffer;
  bool ok = true;
  /// Elements checked: all of them, or the ones `only` marked.
  int64_t elements = 0;
  /// Elements outside their bound.
  int64_t failures = 0;
  /// The element closest to (or furthest past) its bound: its index, the
  /// computed and reference values, the bound, and |got - ref| / bound.
  std::vector<int64_t> worst_index;
  double got = 0, ref = 0, bound = 0, ratio = 0;
  /// "C: ok, worst C[3, 17]: |1.2345 - 1.2344| = 1e-4 <= 2.1e-3 (5% of the bound)", or
  /// "C: WRONG, 12 of 4096 elements outside their bound; worst C[3, 17]: got 3.5, ref 1.2, bound 0.01 (230x)".
  std::string str() const;
};

/// Checks one array against its reference value and variance (an empty
/// variance: exact comparison). With `only`, just the elements it marks (the
/// ones a partial run wrote). Shapes must agree (UserError otherwise).
OutputCheck check_output(const std::string &name, const NDArray &got, const NDArray &ref, const NDArray &variance,
                         const std::vector<uint8_t> *only = nullptr);

/// Checks every parameter that `f` writes (ir::written_params); with `only`,
/// parameter i just where only[i] marks (everywhere when only[i] is empty).
std::vector<OutputCheck> check_outputs(const ir::PrimFunc &f, const std::vector<NDArray> &got, const Reference &ref,
                                       const std::vector<std::vector<uint8_t>> &only = {});

/// "C[3, 17]": element `flat` (row-major) of the array `buffer` of `shape`.
std::string element_name(const std::string &buffer, int64_t flat, const std::vector<int64_t> &shape);

/// True when every check passed.
bool all_ok(const std::vector<OutputCheck> &checks);

/// The checks of a run as one verdict: the largest |got - ref| / bound over
/// them, and the failing checks' str() joined by "; " (empty when all pass).
struct ChecksSummary {
  double worst_ratio = 0;
  std::string failures;
  bool ok() const { return failures.empty(); }
};
ChecksSummary summarize_checks(const std::vector<OutputCheck> &checks);

}  // namespace tessera::runtime
