//===- StructuralEqualTest.cpp - Alpha-equivalence, diff and hash ----------===//
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tessera/ir/Op.h"
#include "tessera/ir/StructuralEqual.h"

using namespace tessera::ir;

namespace {

/// Knobs for a small matmul-like function:
///   C[vi, vj] += A[vi, vk] * B[vk, vj], with a local scratch buffer.
struct MatmulSpec {
  std::string suffix;  // appended to every name: names must not matter
  int64_t m = 128, n = 64, k = 32;
  int64_t loop_i_extent = -1;  // -1: m
  DataType a_dtype = DataType::float32();
  std::string scratch_scope = "local";
  std::string block_name = "C";
  ForKind j_kind = ForKind::Serial;
  Annotations k_annotations;
  Annotations attrs = {{"global_symbol", "main"}};
  double init_value = 0.0;
  bool swap_a_indices = false;
  bool with_init = true;
  IterKind k_kind = IterKind::Reduce;
};

PrimFunc make_matmul(const MatmulSpec &s) {
  DataType f32 = DataType::float32();
  Var a("a" + s.suffix, DataType::handle()), b("b" + s.suffix, DataType::handle()),
      c("c" + s.suffix, DataType::handle());
  Buffer A = Buffer::make("A" + s.suffix, s.a_dtype, {i32(s.m), i32(s.k)});
  Buffer B = Buffer::make("B" + s.suffix, f32, {i32(s.k), i32(s.n)});
  Buffer C = Buffer::make("C" + s.suffix, f32, {i32(s.m), i32(s.n)});
  Buffer T = Buffer::make("T" + s.suffix, f32, {i32(1)}, s.scratch_scope);
  Var i("i" + s.suffix), j("j" + s.suffix), k("k" + s.suffix);
  Var vi("vi" + s.suffix), vj("vj" + s.suffix), vk("vk" + s.suffix);

  std::vector<Expr> a_idx = s.swap_a_indices ? std::vector<Expr>{vk, vi} : std::vector<Expr>{vi, vk};
  Expr prod = cast(f32, Load::make(A, a_idx)) * Load::make(B, {vk, vj});
  Stmt body = Seq::make({
      Store::make(T, prod, {i32(0)}),
      Store::make(C, Load::make(C, {vi, vj}) + Load::make(T, {i32(0)}), {vi, vj}),
  });
  std::optional<Stmt> init;
  if (s.with_init) init = Store::make(C, make_const(f32, s.init_value), {vi, vj});
  std::vector<IterVar> ivs = {
      {vi, Range::from_extent(i32(s.m)), IterKind::Spatial},
      {vj, Range::from_extent(i32(s.n)), IterKind::Spatial},
      {vk, Range::from_extent(i32(s.k)), s.k_kind},
  };
  Stmt blk = Block::make(s.block_name, ivs, {i, j, k}, Expr(),
                         {BufferRegion{A, {Range{vi, i32(1)}, Range{vk, i32(1)}}},
                          BufferRegion{B, {Range{vk, i32(1)}, Range{vj, i32(1)}}}},
                         {BufferRegion{C, {Range{vi, i32(1)}, Range{vj, i32(1)}}}}, {T}, init, body);
  Stmt loops = For::make(k, i32(0), i32(s.k), ForKind::Serial, blk, "", s.k_annotations);
  loops = For::make(j, i32(0), i32(s.n), s.j_kind, loops,
                    s.j_kind == ForKind::ThreadBinding ? "threadIdx.x" : "");
  loops = For::make(i, i32(0), i32(s.loop_i_extent < 0 ? s.m : s.loop_i_extent), ForKind::Serial, loops);
  return PrimFunc::make("main", {a, b, c}, {{a, A}, {b, B}, {c, C}}, loops, s.attrs);
}

/// Asserts that `a` and `b` differ and that the diff contains every fragment.
void expect_diff(const PrimFunc &a, const PrimFunc &b, std::initializer_list<std::string> fragments) {
  EXPECT_FALSE(structural_equal(a, b));
  std::string d = structural_diff(a, b);
  ASSERT_FALSE(d.empty());
  for (const std::string &f : fragments)
    EXPECT_NE(d.find(f), std::string::npos) << "diff: " << d << "\nmissing: " << f;
}

PrimFunc with_spec(void (*edit)(MatmulSpec &)) {
  MatmulSpec s;
  s.suffix = "_2";
  edit(s);
  return make_matmul(s);
}

}  // namespace

TEST(StructuralEqual, AlphaEquivalentFunctionsAreEqual) {
  PrimFunc f = make_matmul({});
  MatmulSpec renamed;
  renamed.suffix = "_other";
  PrimFunc g = make_matmul(renamed);
  EXPECT_TRUE(structural_equal(f, g));
  EXPECT_TRUE(structural_equal(g, f));
  EXPECT_EQ(structural_diff(f, g), "");
  EXPECT_EQ(structural_hash(f), structural_hash(g));
  EXPECT_TRUE(structural_equal(f, f));
}

TEST(StructuralEqual, SwappedIndicesDiffer) {
  MatmulSpec s;
  s.k = s.m;  // square A so that both orders type-check
  PrimFunc f = make_matmul(s);
  s.swap_a_indices = true;
  s.suffix = "_2";
  PrimFunc g = make_matmul(s);
  expect_diff(f, g,
              {"body.Block(root).For(i).For(j).For(k).Block(C).Seq[0].Store(T).value.a.Load(A).indices[0]",
               "vi vs vk_2", "different definitions"});
  EXPECT_NE(structural_hash(f), structural_hash(g));
}

TEST(StructuralEqual, LoopExtentDiffIsExact) {
  PrimFunc f = make_matmul({});
  PrimFunc g = with_spec([](MatmulSpec &s) { s.loop_i_extent = 64; });
  EXPECT_EQ(structural_diff(f, g), "body.Block(root).For(i).extent: 128 vs 64");
  EXPECT_NE(structural_hash(f), structural_hash(g));
}

TEST(StructuralEqual, BufferShapeDtypeAndScopeDiffer) {
  PrimFunc f = make_matmul({});
  expect_diff(f, with_spec([](MatmulSpec &s) { s.m = 64; }), {"buffer_map[0].shape[0]: 128 vs 64"});
  expect_diff(f, with_spec([](MatmulSpec &s) { s.a_dtype = DataType::float16(); }),
              {"buffer_map[0].dtype: float32 vs float16"});
  expect_diff(f, with_spec([](MatmulSpec &s) { s.scratch_scope = "shared"; }),
              {"Block(C).allocs[0].scope: \"local\" vs \"shared\""});
}

TEST(StructuralEqual, BlockNamesAreCompared) {
  expect_diff(make_matmul({}), with_spec([](MatmulSpec &s) { s.block_name = "D"; }),
              {"For(k).Block(C).name: \"C\" vs \"D\""});
}

TEST(StructuralEqual, AnnotationsAndAttrsAreCompared) {
  PrimFunc f = make_matmul({});
  expect_diff(f, with_spec([](MatmulSpec &s) {
                s.k_annotations = {{"pragma_unroll", int64_t{4}}};
              }),
              {"For(k).annotations", "\"pragma_unroll\": 4", "(absent)"});
  MatmulSpec a, b;
  a.k_annotations = {{"pragma_unroll", int64_t{4}}};
  b.k_annotations = {{"pragma_unroll", int64_t{8}}};
  expect_diff(make_matmul(a), make_matmul(b), {"For(k).annotations.pragma_unroll: 4 vs 8"});
  expect_diff(f, with_spec([](MatmulSpec &s) { s.attrs["tir.noalias"] = true; }),
              {"attrs", "\"tir.noalias\": True"});
}

TEST(StructuralEqual, ForKindsAndThreadTagsAreCompared) {
  PrimFunc f = make_matmul({});
  expect_diff(f, with_spec([](MatmulSpec &s) { s.j_kind = ForKind::Parallel; }),
              {"For(j).kind: serial vs parallel"});
  expect_diff(f, with_spec([](MatmulSpec &s) { s.j_kind = ForKind::ThreadBinding; }),
              {"For(j).kind: serial vs thread_binding"});
}

TEST(StructuralEqual, ConstantsIterKindsAndInitAreCompared) {
  PrimFunc f = make_matmul({});
  expect_diff(f, with_spec([](MatmulSpec &s) { s.init_value = 1.0; }),
              {"Block(C).init.Store(C).value: T.float32(0) vs T.float32(1)"});
  expect_diff(f, with_spec([](MatmulSpec &s) { s.k_kind = IterKind::Spatial; }),
              {"iter_vars[2].kind: R vs S"});
  expect_diff(f, with_spec([](MatmulSpec &s) { s.with_init = false; }),
              {"Block(C).init: Store(C) vs (none)"});
}

TEST(StructuralEqual, FloatConstantsAreBitExactButNanEqualsNan) {
  DataType f32 = DataType::float32();
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(structural_equal(FloatImm::make(f32, nan), FloatImm::make(f32, -nan)));
  EXPECT_EQ(structural_hash(FloatImm::make(f32, nan)), structural_hash(FloatImm::make(f32, -nan)));
  EXPECT_FALSE(structural_equal(FloatImm::make(f32, 0.0), FloatImm::make(f32, -0.0)));
  EXPECT_FALSE(structural_equal(FloatImm::make(f32, 1.0), FloatImm::make(DataType::float16(), 1.0)));
  EXPECT_TRUE(structural_equal(FloatImm::make(f32, 0.1), FloatImm::make(f32, 0.1)));
  EXPECT_FALSE(structural_equal(i32(1), make_int(DataType::int64(), 1)));
}

TEST(StructuralEqual, FreeVariablesMustBeIdentical) {
  Var x("x"), x2("x"), y("y");
  EXPECT_TRUE(structural_equal(x + 1, x + 1));
  EXPECT_FALSE(structural_equal(x + 1, x2 + 1));
  EXPECT_FALSE(structural_equal(x + y, y + x));
  // A free variable does not enter the hash by identity.
  EXPECT_EQ(structural_hash(x + 1), structural_hash(x2 + 1));
}

TEST(StructuralEqual, LetBindingsAreAlphaEquivalent) {
  Var x("x"), y("y"), free("n");
  Expr a = Let::make(x, i32(1), x + free);
  Expr b = Let::make(y, i32(1), y + free);
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
  // The let variable must not match the free variable on the other side.
  Expr c = Let::make(y, i32(1), free + free);
  EXPECT_FALSE(structural_equal(a, c));
  // Scopes end: after the let, x is free again.
  EXPECT_FALSE(structural_equal(Let::make(x, i32(1), x) + x, Let::make(y, i32(1), y) + y));
}

TEST(StructuralEqual, SymbolicShapeVarsAreDefinedByParamBuffers) {
  auto make = [](bool same_dims) {
    Var n("n"), m("m"), a("a", DataType::handle());
    Buffer A = Buffer::make("A", DataType::float32(), {n, same_dims ? Expr(n) : Expr(m)});
    Var i("i");
    Stmt body =
        For::make(i, i32(0), n, ForKind::Serial, Store::make(A, make_const(DataType::float32(), 1), {i, i}));
    return PrimFunc::make("f", {a}, {{a, A}}, body);
  };
  EXPECT_TRUE(structural_equal(make(true), make(true)));
  EXPECT_EQ(structural_hash(make(true)), structural_hash(make(true)));
  EXPECT_TRUE(structural_equal(make(false), make(false)));
  expect_diff(make(true), make(false), {"buffer_map[0].shape[1]: n vs m"});
}

TEST(StructuralEqual, SiblingLoopsMayShareOrNotShareVariables) {
  Buffer A = Buffer::make("A", DataType::int32(), {i32(8)});
  auto loop = [&](const Var &v) {
    return For::make(v, i32(0), i32(8), ForKind::Serial, Store::make(A, v, {v}));
  };
  Var i("i"), j("j");
  Stmt shared = Seq::make({loop(i), loop(i)});
  Stmt distinct = Seq::make({loop(i), loop(j)});
  EXPECT_TRUE(structural_equal(shared, distinct));
  EXPECT_EQ(structural_hash(shared), structural_hash(distinct));
}

TEST(StructuralEqual, UsesMustReferToCorrespondingDefinitions) {
  Buffer A = Buffer::make("A", DataType::int32(), {i32(8)});
  auto nest = [&](bool use_outer) {
    Var i("i"), j("j");
    Stmt inner = Store::make(A, i32(0), {use_outer ? Expr(i) : Expr(j)});
    return For::make(i, i32(0), i32(8), ForKind::Serial,
                     For::make(j, i32(0), i32(8), ForKind::Serial, inner));
  };
  EXPECT_TRUE(structural_equal(nest(true), nest(true)));
  EXPECT_FALSE(structural_equal(nest(true), nest(false)));
  EXPECT_NE(structural_hash(nest(true)), structural_hash(nest(false)));
}

TEST(StructuralEqual, FreeBuffersMustBeIdentical) {
  Buffer A = Buffer::make("A", DataType::int32(), {i32(8)});
  Buffer A2 = Buffer::make("A", DataType::int32(), {i32(8)});
  EXPECT_TRUE(structural_equal(Load::make(A, {i32(0)}), Load::make(A, {i32(0)})));
  EXPECT_FALSE(structural_equal(Load::make(A, {i32(0)}), Load::make(A2, {i32(0)})));
}

TEST(StructuralEqual, FunctionNamesAndModulesAreCompared) {
  PrimFunc f = make_matmul({});
  expect_diff(f, f.with_name("other"), {"name: \"main\" vs \"other\""});
  Module m1{{f, f.with_name("g")}}, m2{{make_matmul({}), make_matmul({}).with_name("g")}};
  EXPECT_TRUE(structural_equal(m1, m2));
  Module m3{{f.with_name("g"), f}};
  EXPECT_FALSE(structural_equal(m1, m3));
  EXPECT_FALSE(structural_equal(m1, Module{{f}}));
}

TEST(StructuralEqual, SeqLengthDiffNamesTheExtraStatement) {
  Buffer A = Buffer::make("A", DataType::int32(), {i32(8)});
  Var a("a", DataType::handle());
  Stmt s1 = Store::make(A, i32(1), {i32(0)});
  Stmt s2 = Store::make(A, i32(2), {i32(1)});
  PrimFunc f = PrimFunc::make("f", {a}, {{a, A}}, Seq::make({s1, s2}));
  PrimFunc g = PrimFunc::make("f", {a}, {{a, A}}, Seq::make({s1, s2, s1}));
  EXPECT_EQ(structural_diff(f, g), "body.Block(root).Seq[2]: (nothing) vs Store(A)");
}

TEST(StructuralEqual, DeepProgramsDoNotOverflowTheStack) {
  Var x("x");
  Buffer A = Buffer::make("A", DataType::int32(), {i32(4)});
  Expr chain = x;
  for (int i = 0; i < 3000; ++i) chain = chain + i;
  EXPECT_TRUE(structural_equal(chain, chain));
  EXPECT_EQ(structural_hash(chain), structural_hash(chain));
  std::vector<Stmt> stmts;
  for (int i = 0; i < 20000; ++i) stmts.push_back(Store::make(A, i32(i), {i32(i % 4)}));
  Stmt seq = Seq::make(stmts);
  stmts.back() = Store::make(A, i32(-1), {i32(0)});
  Stmt seq2 = Seq::make(stmts);
  EXPECT_TRUE(structural_equal(seq, seq));
  EXPECT_FALSE(structural_equal(seq, seq2));
  // Nested loops: a few thousand levels are fine with recursion.
  Stmt nest = Store::make(A, i32(0), {i32(0)});
  for (int i = 0; i < 2000; ++i) nest = For::make(Var("i"), i32(0), i32(2), ForKind::Serial, nest);
  EXPECT_TRUE(structural_equal(nest, nest));
}
