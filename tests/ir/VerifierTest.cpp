//===- VerifierTest.cpp - Well-formedness checks ---------------------------===//
#include <gtest/gtest.h>

#include "tessera/ir/Op.h"
#include "tessera/ir/Verifier.h"

using namespace tessera::ir;

namespace {

const DataType kF32 = DataType::float32();

/// A function `f(a)` with A: float32[16, 16] and the given body.
struct Fixture {
  Var a{"a", DataType::handle()};
  Buffer A = Buffer::make("A", kF32, {i32(16), i32(16)});
  PrimFunc func(Stmt body, std::string name = "f") const {
    return PrimFunc::make(std::move(name), {a}, {{a, A}}, std::move(body));
  }
  Stmt store(Expr i, Expr j, double v = 1.0) const { return Store::make(A, make_const(kF32, v), {i, j}); }
};

Stmt loop(const Var &v, int64_t extent, Stmt body) {
  return For::make(v, i32(0), i32(extent), ForKind::Serial, std::move(body));
}

/// A For built field by field, bypassing the factory's checks.
Stmt raw_for(const Var &v, Expr min, Expr extent, ForKind kind, Stmt body, std::string tag = "") {
  auto n = std::make_shared<For>();
  n->loop_var = v;
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->for_kind = kind;
  n->thread_tag = std::move(tag);
  n->body = std::move(body);
  return Stmt(std::move(n));
}

/// A block over `ivs` (all spatial, [0, 16)) bound to `bindings`, without the factory's checks.
Stmt raw_block(std::string name, std::vector<Var> ivs, std::vector<Expr> bindings, Stmt body) {
  auto n = std::make_shared<Block>();
  n->name = std::move(name);
  for (const Var &v : ivs) n->iter_vars.push_back({v, Range::from_extent(i32(16)), IterKind::Spatial});
  n->bindings = std::move(bindings);
  n->predicate = const_true();
  n->body = std::move(body);
  return Stmt(std::move(n));
}

/// Checks that exactly one problem is reported and that it contains every fragment.
void expect_one_problem(const PrimFunc &f, std::initializer_list<std::string> fragments) {
  std::vector<std::string> problems = verify(f);
  ASSERT_EQ(problems.size(), 1u) << [&] {
    std::string all;
    for (const std::string &p : problems) all += p + "\n";
    return all;
  }();
  for (const std::string &frag : fragments)
    EXPECT_NE(problems[0].find(frag), std::string::npos)
        << "problem: " << problems[0] << "\nmissing: " << frag;
}

/// A well-formed matmul-like function with a symbolic dimension, a scalar
/// parameter, an allocated buffer, a reduction block with init, a let and a
/// thread-bound loop.
PrimFunc well_formed() {
  Var a("a", DataType::handle()), c("c", DataType::handle()), scale("scale", kF32);
  Var n("n");
  Buffer A = Buffer::make("A", kF32, {n, i32(32)});
  Buffer C = Buffer::make("C", kF32, {n});
  Buffer T = Buffer::make("T", kF32, {i32(1)}, "local");
  Var i("i"), k("k"), vi("vi"), vk("vk"), x("x", kF32);
  Stmt init = Store::make(C, make_const(kF32, 0), {vi});
  Stmt body = LetStmt::make(x, Load::make(A, {vi, vk}) * scale,
                            Seq::make({Store::make(T, x, {i32(0)}),
                                       Store::make(C, Load::make(C, {vi}) + Load::make(T, {i32(0)}), {vi})}));
  Stmt blk = Block::make(
      "C",
      {{vi, Range::from_extent(n), IterKind::Spatial}, {vk, Range::from_extent(i32(32)), IterKind::Reduce}},
      {i, k}, i < n, {BufferRegion{A, {Range{vi, i32(1)}, Range{vk, i32(1)}}}},
      {BufferRegion{C, {Range{vi, i32(1)}}}}, {T}, init, body);
  Stmt nest = For::make(i, i32(0), n, ForKind::ThreadBinding,
                        For::make(k, i32(0), i32(32), ForKind::Serial, blk), "threadIdx.x");
  return PrimFunc::make("main", {a, c, scale}, {{a, A}, {c, C}}, nest);
}

}  // namespace

TEST(Verifier, WellFormedProgramHasNoProblems) {
  PrimFunc f = well_formed();
  EXPECT_EQ(verify(f), std::vector<std::string>{});
  EXPECT_NO_THROW(check_well_formed(f));
}

TEST(Verifier, ScalarParamsAndShapeVarsAreDefinedEverywhere) {
  Var a("a", DataType::handle()), m("m"), n("n"), i("i");
  Buffer A = Buffer::make("A", kF32, {n});
  Stmt body = For::make(i, i32(0), min(m, n), ForKind::Serial, Store::make(A, make_const(kF32, 1), {i}));
  EXPECT_EQ(verify(PrimFunc::make("f", {a, m}, {{a, A}}, body)), std::vector<std::string>{});
}

TEST(Verifier, UndefinedVariable) {
  Fixture fx;
  Var x("x");
  expect_one_problem(fx.func(fx.store(x, i32(0))),
                     {"in function 'f', block 'root'", "variable 'x' is not defined"});
}

TEST(Verifier, LoopVariableUsedOutsideItsLoop) {
  Fixture fx;
  Var i("i");
  Stmt body = Seq::make({loop(i, 16, fx.store(i, i32(0))), fx.store(i, i32(1))});
  expect_one_problem(fx.func(body), {"variable 'i' is used outside the loop that defines it"});
}

TEST(Verifier, IterVarUsedAfterItsBlock) {
  Fixture fx;
  Var i("i"), vi("vi");
  Stmt blk = Block::make("B", {{vi, Range::from_extent(i32(16)), IterKind::Spatial}}, {i}, Expr(), {}, {}, {},
                         std::nullopt, fx.store(vi, i32(0)));
  Stmt body = loop(i, 16, Seq::make({blk, fx.store(vi, i32(1))}));
  expect_one_problem(fx.func(body), {"loop 'i'", "iter var 'vi' is used outside block 'B' that defines it"});
}

TEST(Verifier, InnerLoopVariableUsedInOuterBlockBinding) {
  Fixture fx;
  Var i("i"), j("j"), vi("vi");
  Stmt blk = Block::make("B", {{vi, Range::from_extent(i32(16)), IterKind::Spatial}}, {j}, Expr(), {}, {}, {},
                         std::nullopt, loop(j, 16, fx.store(vi, j)));
  expect_one_problem(fx.func(loop(i, 16, blk)), {"variable 'j' is used outside the loop that defines it"});
}

TEST(Verifier, VariableDefinedTwice) {
  Fixture fx;
  Var i("i");
  expect_one_problem(fx.func(loop(i, 16, loop(i, 16, fx.store(i, i)))),
                     {"variable 'i' is defined twice: by loop 'i' and by loop 'i'"});
  // Sibling loops sharing one Var node are reported too (the IR is kept in SSA form).
  expect_one_problem(fx.func(Seq::make({loop(i, 16, fx.store(i, i)), loop(i, 8, fx.store(i, i))})),
                     {"variable 'i' is defined twice"});
}

TEST(Verifier, BufferNeitherParamNorAllocated) {
  Fixture fx;
  Buffer X = Buffer::make("X", kF32, {i32(16), i32(16)});
  Var i("i");
  expect_one_problem(
      fx.func(loop(i, 16, Store::make(fx.A, Load::make(X, {i, i}), {i, i}))),
      {"buffer 'X' is loaded but is neither a parameter buffer nor allocated by an enclosing block"});
  expect_one_problem(fx.func(loop(i, 16, Store::make(X, Load::make(fx.A, {i, i}), {i, i}))),
                     {"buffer 'X' is stored to"});
  // Allocated by a sibling block: not in scope.
  Stmt alloc_blk = Block::make("B", {}, {}, Expr(), {}, {}, {X}, std::nullopt,
                               Store::make(X, make_const(kF32, 0), {i32(0), i32(0)}));
  Stmt use_blk = Block::make("D", {}, {}, Expr(), {BufferRegion::full(X)}, {}, {}, std::nullopt,
                             fx.store(i32(0), i32(0)));
  expect_one_problem(fx.func(Seq::make({alloc_blk, use_blk})), {"block 'D'", "buffer 'X' is read but"});
}

TEST(Verifier, BlockBindingArityMismatch) {
  Fixture fx;
  Var i("i"), vi("vi"), vj("vj");
  Stmt blk = raw_block("B", {vi, vj}, {i}, fx.store(vi, vj));
  expect_one_problem(fx.func(loop(i, 16, blk)), {"block 'B' has 2 iter vars but 1 bindings"});
}

TEST(Verifier, IterVarUsedInItsOwnBindings) {
  Fixture fx;
  Var i("i"), vi("vi");
  Stmt blk = raw_block("B", {vi}, {vi + 1}, fx.store(vi, i32(0)));
  expect_one_problem(fx.func(loop(i, 16, blk)),
                     {"variable 'vi' is used in the bindings of block 'B', which defines it"});
}

TEST(Verifier, RegionDimensionCountMismatch) {
  Fixture fx;
  Stmt blk = Block::make("B", {}, {}, Expr(), {BufferRegion{fx.A, {Range::from_extent(i32(16))}}}, {}, {},
                         std::nullopt, fx.store(i32(0), i32(0)));
  expect_one_problem(fx.func(blk),
                     {"the reads region of 'A' in block 'B' has 1 dimensions but the buffer has 2"});
}

TEST(Verifier, ThreadBoundLoopWithoutTag) {
  Fixture fx;
  Var tx("tx");
  expect_one_problem(fx.func(raw_for(tx, i32(0), i32(16), ForKind::ThreadBinding, fx.store(tx, tx))),
                     {"loop 'tx' is bound to a thread but has no thread tag"});
}

TEST(Verifier, LoopVariableInItsOwnExtent) {
  Fixture fx;
  Var i("i");
  expect_one_problem(fx.func(raw_for(i, i32(0), i + 1, ForKind::Serial, fx.store(i, i))),
                     {"variable 'i' is used in the extent of loop 'i', which defines it"});
}

TEST(Verifier, NonIntegerLoopBounds) {
  Fixture fx;
  Var i("i");
  expect_one_problem(fx.func(raw_for(i, i32(0), make_const(kF32, 16), ForKind::Serial, fx.store(i, i))),
                     {"loop 'i' has a non-integer extent of type float32"});
}

TEST(Verifier, InitWithoutReductionIterVar) {
  Fixture fx;
  Var i("i"), vi("vi");
  Stmt blk = Block::make("B", {{vi, Range::from_extent(i32(16)), IterKind::Spatial}}, {i}, Expr(), {}, {}, {},
                         fx.store(vi, i32(0), 0.0), fx.store(vi, i32(0)));
  expect_one_problem(fx.func(loop(i, 16, blk)),
                     {"block 'B' has an init statement but no reduction iter var"});
}

TEST(Verifier, DuplicateBlockNames) {
  Fixture fx;
  Stmt b1 = Block::make("B", {}, {}, Expr(), {}, {}, {}, std::nullopt, fx.store(i32(0), i32(0)));
  Stmt b2 = Block::make("B", {}, {}, Expr(), {}, {}, {}, std::nullopt, fx.store(i32(1), i32(0)));
  expect_one_problem(fx.func(Seq::make({b1, b2})), {"in function 'f'", "2 blocks are named 'B'"});
}

TEST(Verifier, NonIntegerIterVarDomain) {
  Fixture fx;
  Var i("i"), vi("vi");
  Stmt blk = Block::make("B", {{vi, Range{make_const(kF32, 0), make_const(kF32, 16)}, IterKind::Spatial}},
                         {i}, Expr(), {}, {}, {}, std::nullopt, fx.store(vi, i32(0)));
  expect_one_problem(fx.func(loop(i, 16, blk)),
                     {"iter var 'vi' of block 'B' has a non-integer domain (float32)"});
}

TEST(Verifier, ReportsEveryProblemAndThrowsWithAll) {
  Fixture fx;
  Var i("i"), x("x"), y("y");
  Buffer X = Buffer::make("X", kF32, {i32(16), i32(16)});
  Stmt body = Seq::make(
      {fx.store(x, i32(0)), fx.store(y, i32(0)), loop(i, 16, Store::make(X, make_const(kF32, 0), {i, i}))});
  PrimFunc f = fx.func(body, "g");
  std::vector<std::string> problems = verify(f);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_NE(problems[0].find("'x'"), std::string::npos);
  EXPECT_NE(problems[1].find("'y'"), std::string::npos);
  EXPECT_NE(problems[2].find("in function 'g', block 'root', loop 'i': buffer 'X'"), std::string::npos)
      << problems[2];
  try {
    check_well_formed(f);
    FAIL() << "expected IllFormedError";
  } catch (const IllFormedError &e) {
    EXPECT_EQ(e.problems, problems);
    EXPECT_NE(std::string(e.what()).find("3 problems"), std::string::npos) << e.what();
  }
}
