//===- TeTest.cpp - The TE builder's output, checked node by node ----------===//
//
// These tests look at create_prim_func's output directly (stage order, loop
// nesting, block iter vars, init, buffers) and at every TeError. The
// comparison with parsed TVMScript and the interpreter run is in
// TeScriptTest.cpp.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tessera/ir/Functor.h"
#include "tessera/te/Tensor.h"

#include "TeWorkloads.h"

namespace tessera::te {
namespace {

using ir::DataType;
using ir::Expr;
using ir::Var;
using ::testing::HasSubstr;

const DataType f32 = DataType::float32();

// The stages of a function: the statements of the root block's body.
std::vector<ir::Stmt> stages(const ir::PrimFunc &f) {
  const ir::Stmt &body = f.root_block().body;
  if (const auto *seq = body.as<ir::Seq>()) return seq->stmts;
  return {body};
}

// The loops around a stage's block, outermost first, and the block. The
// stage is held: the pointers are into it (a nest of a temporary function's
// stage outlives the function).
struct Nest {
  ir::Stmt stage;
  std::vector<const ir::For *> loops;
  const ir::Block *block = nullptr;
};
Nest nest_of(const ir::Stmt &s) {
  Nest n;
  n.stage = s;
  ir::Stmt cur = s;
  while (const auto *f = cur.as<ir::For>()) {
    n.loops.push_back(f);
    cur = f->body;
  }
  n.block = cur.as<ir::Block>();
  return n;
}

std::string iter_kinds(const ir::Block &b) {
  std::string s;
  for (const ir::IterVar &iv : b.iter_vars) s += ir::iter_kind_char(iv.kind);
  return s;
}

std::vector<std::string> loop_names(const Nest &n) {
  std::vector<std::string> out;
  for (const ir::For *f : n.loops) out.push_back(f->loop_var.name());
  return out;
}

// Expects `fn` to throw a TeError whose message contains `fragment`.
template <typename F>
void expect_te_error(F fn, const std::string &fragment) {
  try {
    fn();
    ADD_FAILURE() << "expected a TeError containing \"" << fragment << "\"";
  } catch (const TeError &e) {
    EXPECT_THAT(e.what(), HasSubstr(fragment));
  }
}

TEST(Te, MatmulLoopsBlockAndInit) {
  Tensor A = placeholder({128, 64}, f32, "A");
  Tensor B = placeholder({64, 32}, f32, "B");
  ReduceAxis k = reduce_axis(64, "k");
  Tensor C = compute({128, 32}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C", {"i", "j"});
  EXPECT_TRUE(C.is_reduction());
  ASSERT_EQ(C.inputs().size(), 2u);
  EXPECT_TRUE(C.inputs()[0].same_as(A));

  ir::PrimFunc f = create_prim_func({A, B, C});
  EXPECT_EQ(f.name(), "main");
  ASSERT_EQ(f.params().size(), 3u);
  ASSERT_EQ(f.buffer_map().size(), 3u);
  EXPECT_TRUE(f.buffer_map()[0].second.same_as(A.buffer()));
  EXPECT_TRUE(f.buffer_map()[2].second.same_as(C.buffer()));
  EXPECT_TRUE(f.root_block().allocs.empty());
  ASSERT_EQ(f.attrs().size(), 1u);
  EXPECT_EQ(f.attrs().at("tir.noalias"), ir::AnnValue(true));

  auto st = stages(f);
  ASSERT_EQ(st.size(), 1u);
  Nest n = nest_of(st[0]);
  ASSERT_NE(n.block, nullptr);
  EXPECT_EQ(loop_names(n), (std::vector<std::string>{"i", "j", "k"}));
  EXPECT_TRUE(ir::is_const_int(n.loops[2]->extent, 64));
  EXPECT_EQ(n.block->name, "C");
  EXPECT_EQ(iter_kinds(*n.block), "SSR");
  EXPECT_EQ(n.block->iter_vars[0].var.name(), "v_i");
  EXPECT_EQ(n.block->iter_vars[2].var.name(), "v_k");
  for (size_t d = 0; d < 3; ++d) {
    EXPECT_TRUE(n.block->bindings[d].same_as(n.loops[d]->loop_var));
    EXPECT_TRUE(ir::is_const_int(n.block->iter_vars[d].dom.min, 0));
  }
  EXPECT_TRUE(n.block->annotations.empty());

  // init: C[v_i, v_j] = 0; body: C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
  ASSERT_TRUE(n.block->init.has_value());
  const auto *init = n.block->init->as<ir::Store>();
  ASSERT_NE(init, nullptr);
  ASSERT_TRUE(init->value.is<ir::FloatImm>());
  EXPECT_EQ(init->value.as<ir::FloatImm>()->value, 0.0);
  const auto *store = n.block->body.as<ir::Store>();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->buffer.same_as(C.buffer()));
  EXPECT_TRUE(store->indices[0].same_as(n.block->iter_vars[0].var));
  const auto *add = store->value.as<ir::Binary>();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->op, ir::BinaryOp::Add);
  ASSERT_TRUE(add->a.is<ir::Load>());
  EXPECT_TRUE(add->a.as<ir::Load>()->buffer.same_as(C.buffer()));
  const auto *mul = add->b.as<ir::Binary>();
  ASSERT_NE(mul, nullptr);
  const auto *a_load = mul->a.as<ir::Load>();
  ASSERT_NE(a_load, nullptr);
  EXPECT_TRUE(a_load->buffer.same_as(A.buffer()));
  EXPECT_TRUE(a_load->indices[0].same_as(n.block->iter_vars[0].var));
  EXPECT_TRUE(a_load->indices[1].same_as(n.block->iter_vars[2].var));
}

TEST(Te, LoadsAreRebuiltAsPlainLoads) {
  Tensor A = placeholder({4}, f32, "A");
  Tensor B = compute(
      {4}, [&](Var i) { return A(i) + A(0); }, "B");
  ir::PrimFunc f = create_prim_func({A, B});
  int loads = 0;
  ir::pre_order_visit(f.body(),
                      [&](const Expr &e) {
                        if (const auto *l = e.as<ir::Load>()) {
                          ++loads;
                          EXPECT_EQ(typeid(*l), typeid(ir::Load));
                        }
                      },
                      {});
  EXPECT_EQ(loads, 2);
}

TEST(Te, SoftmaxStagesIntermediatesAndIdentities) {
  auto [A, M, E, S, N] = workloads::softmax();
  ir::PrimFunc f = create_prim_func({A, N});

  ASSERT_EQ(f.params().size(), 2u);
  const auto &allocs = f.root_block().allocs;
  ASSERT_EQ(allocs.size(), 3u);
  EXPECT_TRUE(allocs[0].same_as(M.buffer()));
  EXPECT_TRUE(allocs[1].same_as(E.buffer()));
  EXPECT_TRUE(allocs[2].same_as(S.buffer()));

  auto st = stages(f);
  ASSERT_EQ(st.size(), 4u);
  std::vector<std::string> names;
  for (const auto &s : st) names.push_back(nest_of(s).block->name);
  EXPECT_EQ(names, (std::vector<std::string>{"T_softmax_maxelem", "T_softmax_exp", "T_softmax_expsum",
                                             "T_softmax_norm"}));
  Nest mx = nest_of(st[0]);
  EXPECT_EQ(iter_kinds(*mx.block), "SR");
  const auto *init = mx.block->init->as<ir::Store>();
  const auto *id = init->value.as<ir::Call>();
  ASSERT_NE(id, nullptr);
  EXPECT_EQ(id->op, ir::Intrinsic::MinValue);
  EXPECT_EQ(id->dtype, f32);
  const auto *upd = mx.block->body.as<ir::Store>()->value.as<ir::Binary>();
  ASSERT_NE(upd, nullptr);
  EXPECT_EQ(upd->op, ir::BinaryOp::Max);
  EXPECT_TRUE(upd->a.as<ir::Load>()->buffer.same_as(M.buffer()));

  Nest ex = nest_of(st[1]);
  EXPECT_EQ(iter_kinds(*ex.block), "SS");
  EXPECT_FALSE(ex.block->init.has_value());
  EXPECT_TRUE(ex.block->body.as<ir::Store>()->value.is<ir::Call>());
}

TEST(Te, MinReductionUsesMaxValueIdentity) {
  Tensor A = placeholder({8, 8}, DataType::int32(), "A");
  ReduceAxis k = reduce_axis(8, "k");
  Tensor B = compute(
      {8}, [&](Var i) { return min(A(i, k), {k}); }, "B");
  Nest n = nest_of(stages(create_prim_func({A, B}))[0]);
  const auto *id = n.block->init->as<ir::Store>()->value.as<ir::Call>();
  ASSERT_NE(id, nullptr);
  EXPECT_EQ(id->op, ir::Intrinsic::MaxValue);
  EXPECT_EQ(id->dtype, DataType::int32());
  EXPECT_EQ(n.block->body.as<ir::Store>()->value.as<ir::Binary>()->op, ir::BinaryOp::Min);
}

TEST(Te, BinaryMaxStillWorksUnderUsingNamespace) {
  Tensor A = placeholder({8}, f32, "A");
  Tensor B = compute(
      {8}, [&](Var i) { return te::max(A(i), make_const(f32, 0)); }, "relu");
  EXPECT_FALSE(B.is_reduction());
  EXPECT_EQ(
      nest_of(stages(create_prim_func({A, B}))[0]).block->body.as<ir::Store>()->value.as<ir::Binary>()->op,
      ir::BinaryOp::Max);
}

TEST(Te, CustomReducerKeepsAccumulatorOnTheLeft) {
  CommReducer prod = workloads::prod_reducer();
  Tensor A = placeholder({8, 4}, f32, "A");
  ReduceAxis k = reduce_axis(4, "k");
  Tensor B = compute({8}, [&](Var i) { return reduce(prod, A(i, k) + 1, {k}); }, "B", {"i"});
  Nest n = nest_of(stages(create_prim_func({A, B}))[0]);
  const auto *init = n.block->init->as<ir::Store>();
  EXPECT_EQ(init->value.as<ir::FloatImm>()->value, 1.0);
  const auto *mul = n.block->body.as<ir::Store>()->value.as<ir::Binary>();
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->op, ir::BinaryOp::Mul);
  EXPECT_TRUE(mul->a.as<ir::Load>()->buffer.same_as(B.buffer()));
  EXPECT_TRUE(mul->b.is<ir::Binary>());  // A[v_i, v_k] + 1
}

TEST(Te, ConvWithPaddingStage) {
  // NHWC input, HWIO weights, pad 1, stride 2.
  auto [X, W, P, Y] = workloads::conv_with_padding();
  ir::PrimFunc f = create_prim_func({X, W, Y});
  ASSERT_EQ(f.root_block().allocs.size(), 1u);
  EXPECT_TRUE(f.root_block().allocs[0].same_as(P.buffer()));
  auto st = stages(f);
  ASSERT_EQ(st.size(), 2u);
  Nest pad = nest_of(st[0]);
  EXPECT_EQ(pad.block->name, "pad");
  const auto *ite = pad.block->body.as<ir::Store>()->value.as<ir::Call>();
  ASSERT_NE(ite, nullptr);
  EXPECT_EQ(ite->op, ir::Intrinsic::IfThenElse);
  Nest conv = nest_of(st[1]);
  EXPECT_EQ(loop_names(conv), (std::vector<std::string>{"n", "h", "w", "co", "rh", "rw", "rc"}));
  EXPECT_EQ(iter_kinds(*conv.block), "SSSSRRR");
  EXPECT_EQ(conv.block->iter_vars[4].var.name(), "v_rh");
}

TEST(Te, SymbolicDimsAreBufferShapeVars) {
  Var n("n", DataType::int64());
  Tensor A = placeholder({n, 64}, DataType::float16(), "A");
  ReduceAxis k = reduce_axis(64, "k");
  Tensor B = compute({n}, [&](Var i) { return sum(A(i, k), {k}); }, "B", {"i"});
  ir::PrimFunc f = create_prim_func({A, B});
  ASSERT_EQ(f.params().size(), 2u);  // no scalar parameter for n
  auto sv = f.shape_vars();
  ASSERT_EQ(sv.size(), 1u);
  EXPECT_TRUE(sv[0].same_as(n));
  Nest nst = nest_of(stages(f)[0]);
  EXPECT_TRUE(nst.loops[0]->extent.same_as(n));
  EXPECT_EQ(nst.loops[0]->loop_var.dtype(), DataType::int64());
  EXPECT_EQ(nst.loops[1]->loop_var.dtype(), DataType::int32());
  EXPECT_EQ(nst.block->init->as<ir::Store>()->value.dtype(), DataType::float16());
}

TEST(Te, ReduceAxisWithNonZeroMin) {
  Tensor A = placeholder({8, 16}, f32, "A");
  ReduceAxis k = reduce_axis(4, 8, "k");
  EXPECT_TRUE(ir::is_const_int(k.dom().min, 4));
  Tensor B = compute(
      {8}, [&](Var i) { return sum(A(i, k), {k}); }, "B");
  Nest n = nest_of(stages(create_prim_func({A, B}))[0]);
  EXPECT_TRUE(ir::is_const_int(n.loops[1]->min, 4));
  EXPECT_TRUE(ir::is_const_int(n.loops[1]->extent, 8));
  EXPECT_TRUE(ir::is_const_int(n.block->iter_vars[1].dom.min, 4));
}

TEST(Te, IndexFormsAndDefaultNames) {
  Tensor A = placeholder({2, 3, 4}, f32, "A");
  Tensor B = compute(
      A.shape(), [&](auto i, auto j, auto l) { return A(i, j, l) * 2; }, "B");
  Tensor C = compute(
      A.shape(),
      [&](const std::vector<Var> &ix) {
        return B(ix) + A({ix[0], 0, ix[2]});
      },
      "C");
  Tensor D = compute(
      {}, [&]() { return C(1, 2, 3); }, "D");
  ir::PrimFunc f = create_prim_func({A, D});
  auto st = stages(f);
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(loop_names(nest_of(st[0])), (std::vector<std::string>{"i0", "i1", "i2"}));
  Nest d = nest_of(st[2]);
  EXPECT_TRUE(d.loops.empty());
  EXPECT_TRUE(d.block->iter_vars.empty());
  EXPECT_EQ(f.root_block().allocs.size(), 2u);
}

TEST(Te, FullReductionToScalar) {
  Tensor A = placeholder({8, 8}, f32, "A");
  ReduceAxis i = reduce_axis(8, "i"), j = reduce_axis(8, "j");
  Tensor S = compute(
      {},
      [&]() {
        return sum(A(i, j), {i, j});
      },
      "S");
  Nest n = nest_of(stages(create_prim_func({A, S}))[0]);
  EXPECT_EQ(iter_kinds(*n.block), "RR");
  EXPECT_TRUE(n.block->body.as<ir::Store>()->indices.empty());
}

TEST(Te, TopologicalOrderFollowsArgsAndFirstUse) {
  Tensor A = placeholder({4}, f32, "A");
  Tensor B = compute(
      {4}, [&](Var i) { return A(i) + 1; }, "B");
  Tensor C = compute(
      {4}, [&](Var i) { return A(i) * 2; }, "C");
  Tensor D = compute(
      {4}, [&](Var i) { return C(i) + B(i); }, "D");
  Tensor E = compute(
      {4}, [&](Var i) { return B(i) - 1; }, "E");
  Tensor Unused = compute(
      {4}, [&](Var i) { return A(i); }, "Unused");
  ir::PrimFunc f = create_prim_func({A, E, D});
  std::vector<std::string> names;
  for (const auto &s : stages(f)) names.push_back(nest_of(s).block->name);
  EXPECT_EQ(names, (std::vector<std::string>{"B", "E", "C", "D"}));
  ASSERT_EQ(f.root_block().allocs.size(), 2u);  // B and C
  EXPECT_TRUE(f.root_block().allocs[0].same_as(B.buffer()));
  EXPECT_TRUE(f.buffer_map()[1].second.same_as(E.buffer()));
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST(TeErrors, ReductionInsideAnAddition) {
  Tensor A = placeholder({8, 8}, f32, "A");
  ReduceAxis k = reduce_axis(8, "k");
  expect_te_error(
      [&] {
        compute(
            {8}, [&](Var i) { return sum(A(i, k), {k}) + 1; }, "C");
      },
      "compute 'C': reduction over axis 'k' must be the whole body, found it inside an addition");
}

TEST(TeErrors, TwoReductionsInOneBody) {
  Tensor A = placeholder({8, 8}, f32, "A");
  ReduceAxis k = reduce_axis(8, "k"), r = reduce_axis(8, "r");
  expect_te_error(
      [&] {
        compute(
            {8}, [&](Var i) { return sum(A(i, k), {k}) * max(A(r, i), {r}); }, "C");
      },
      "must be the whole body, found it inside a multiplication");
  expect_te_error(
      [&] {
        compute(
            {8}, [&](Var i) { return te::exp(sum(A(i, k), {k})); }, "C");
      },
      "found it inside a call to exp");
}

TEST(TeErrors, ReduceAxisOutsideReduction) {
  Tensor A = placeholder({8, 8}, f32, "A");
  ReduceAxis k = reduce_axis(8, "k");
  expect_te_error(
      [&] {
        compute(
            {8}, [&](Var i) { return A(i, k); }, "B");
      },
      "compute 'B': reduce axis 'k' is used outside a reduction");
}

TEST(TeErrors, ReductionUsesUnlistedAxis) {
  Tensor A = placeholder({8, 8}, f32, "A");
  ReduceAxis k = reduce_axis(8, "k"), r = reduce_axis(8, "r");
  expect_te_error([&] { sum(A(r, k), {k}); },
                  "reduction over axis 'k' uses reduce axis 'r', which it does not list");
  expect_te_error([&] { sum(A(k, k), {k, k}); }, "lists axis 'k' twice");
  expect_te_error([&] { sum(A(0, 0), std::vector<ReduceAxis>{}); }, "has no axes");
}

TEST(TeErrors, NestedReduction) {
  Tensor A = placeholder({8, 8}, f32, "A");
  ReduceAxis k = reduce_axis(8, "k"), r = reduce_axis(8, "r");
  Expr inner = sum(A(k, 0), {k});
  expect_te_error([&] { sum(inner + A(r, 0), {r}); }, "nested reduction over axis 'k' is not supported");
}

TEST(TeErrors, CombineTypeMismatch) {
  CommReducer bad{[](Expr x, Expr y) { return ir::cast(DataType::float64(), x + y); },
                  [](DataType t) { return ir::make_const(t, 0); }, "bad"};
  Tensor A = placeholder({8}, f32, "A");
  ReduceAxis k = reduce_axis(8, "k");
  expect_te_error([&] { reduce(bad, A(k), {k}); },
                  "reducer 'bad': combine of two float32 values returns float64, expected float32");
}

TEST(TeErrors, IndexingAndArity) {
  Tensor A = placeholder({8, 8}, f32, "A");
  expect_te_error([&] { A(1, 2, 3); }, "tensor 'A' has 2 dimensions but is indexed with 3 indices");
  expect_te_error([&] { A(1, make_const(f32, 1)); },
                  "tensor 'A': index 1 has type float32, expected an integer");
  expect_te_error(
      [&] {
        compute(
            {8, 8}, [&](Var i) { return A(i, i); }, "B");
      },
      "compute 'B': the function does not take 2 index arguments");
  expect_te_error(
      [&] {
        compute({8, 8}, [&](Var i, Var j) { return A(i, j); }, "B", {"i"});
      },
      "compute 'B': 1 index names given for a shape with 2 dimensions");
  expect_te_error([&] { placeholder({make_const(f32, 2)}, f32, "P"); },
                  "placeholder 'P': shape entry 0 has type float32, expected an integer");
}

TEST(TeErrors, CreatePrimFuncArguments) {
  Tensor A = placeholder({8}, f32, "A");
  Tensor B = compute(
      {8}, [&](Var i) { return A(i) + 1; }, "B");
  expect_te_error([&] { create_prim_func({B}); },
                  "create_prim_func 'main': placeholder 'A' (read by 'B') is not in the argument list");
  expect_te_error([&] { create_prim_func({A, B, A}); }, "tensor 'A' is passed twice");
  expect_te_error([&] { create_prim_func({}); }, "no arguments");
  expect_te_error([&] { create_prim_func({A}); }, "nothing to compute");
}

TEST(TeErrors, IntermediateShapeVarNotInArgs) {
  Var n("n"), m("m");
  Tensor A = placeholder({n}, f32, "A");
  Tensor T = compute(
      {m}, [&](Var i) { return A(i); }, "T");
  Tensor B = compute(
      {n}, [&](Var i) { return T(i); }, "B");
  expect_te_error(
      [&] {
        create_prim_func({A, B});
      },
      "the shape of intermediate 'T' uses 'm', which is not a dimension of any argument");
}

TEST(TeErrors, ForeignIndexVariable) {
  Tensor A = placeholder({8}, f32, "A");
  Var leaked;
  Tensor B = compute(
      {8},
      [&](Var i) {
        leaked = i;
        return A(i);
      },
      "B");
  Tensor C = compute(
      {8}, [&](Var i) { return A(leaked) + A(i); }, "C");
  expect_te_error([&] { create_prim_func({A, B, C}); }, "compute 'C' uses variable 'i0'");
}

TEST(TeErrors, ReduceAxisRangeDependsOnAnIndex) {
  Tensor A = placeholder({8, 8}, f32, "A");
  Tensor B = compute({8},
                     [&](Var i) {
                       ReduceAxis k = reduce_axis(i + 1, "k");
                       return sum(A(i, k), {k});
                     },
                     "B", {"i"});
  expect_te_error(
      [&] {
        create_prim_func({A, B});
      },
      "compute 'B': the range of reduce axis 'k' uses 'i', which is not a dimension of any argument");
}

TEST(Te, DimFromCxxIntegers) {
  EXPECT_EQ(Dim(3).expr().dtype(), DataType::int32());
  EXPECT_EQ(Dim(size_t{3}).expr().dtype(), DataType::int32());
  EXPECT_EQ(Dim(int64_t{3}).expr().dtype(), DataType::int64());
  Tensor A = placeholder({4, 4}, f32, "A");
  for (size_t r = 0; r < 2; ++r) EXPECT_TRUE(A(r, 1).is<ir::Load>());
}

}  // namespace
}  // namespace tessera::te
