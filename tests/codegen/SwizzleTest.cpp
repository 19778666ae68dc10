//===- tests/codegen/SwizzleTest.cpp - XOR-swizzled shared layouts ---------===//
//
// lower::swizzle_shared_buffers: a block's "tessera.swizzle" buffers get
// their 16-byte chunks permuted by row in every access, a bijection within
// each row that separates the banks of the rows an ldmatrix phase reads;
// what it cannot do is a LowerError naming the block and buffer.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <set>

#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/lower/Lower.h"
#include "tessera/script/Parser.h"

namespace tessera::lower {
namespace {

/// One thread copies a 16 x ROW tile of float16 through a shared buffer S.
std::string program(int row, const std::string &scope = "shared", const std::string &name = "S") {
  std::string r = std::to_string(row);
  return "@T.prim_func\n"
         "def main(A: T.Buffer((16, " + r + "), \"float16\"), B: T.Buffer((16, " + r + "), \"float16\")) -> None:\n"
         "    for bx in T.thread_binding(1, thread=\"blockIdx.x\"):\n"
         "        with T.block(\"tile\"):\n"
         "            T.block_attr({\"tessera.swizzle\": [\"" + name + "\"]})\n"
         "            S = T.alloc_buffer((16, " + r + "), \"float16\", scope=\"" + scope + "\")\n"
         "            for i, j in T.grid(16, " + r + "):\n"
         "                S[i, j] = A[i, j]\n"
         "            for i, j in T.grid(16, " + r + "):\n"
         "                B[i, j] = S[i, j]\n";
}

/// The flat offset of S[i, j] after lowering, for every (i, j).
std::vector<std::vector<int64_t>> offsets(const LoweredFunc &k, int rows, int row) {
  const ir::Store *store = nullptr;
  ir::pre_order_visit(
      k.body, nullptr, [&](const ir::Stmt &s) {
        if (const auto *st = s.as<ir::Store>(); st && st->buffer.name() == "S") store = st;
      });
  EXPECT_NE(store, nullptr);
  std::vector<ir::Var> loop_vars;
  ir::pre_order_visit(
      k.body, nullptr, [&](const ir::Stmt &s) {
        if (const auto *f = s.as<ir::For>(); f && loop_vars.size() < 2) loop_vars.push_back(f->loop_var);
      });
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(rows), std::vector<int64_t>(static_cast<size_t>(row)));
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < row; ++j) {
      ir::Expr e = ir::substitute(store->indices[0], {{loop_vars[0], ir::make_int(loop_vars[0].dtype(), i)},
                                                      {loop_vars[1], ir::make_int(loop_vars[1].dtype(), j)}});
      out[size_t(i)][size_t(j)] = ir::as_const_int(arith::simplify(e)).value_or(-1);
    }
  return out;
}

TEST(SwizzleSharedBuffers, PermutesTheChunksOfEachRow) {
  for (int row : {64, 32, 96}) {  // 128-byte rows (key row % 8), 64 and 192 bytes (key (row / 2) % 4)
    SCOPED_TRACE(row);
    LoweredFunc k = lower(script::parse_func(program(row)));
    auto off = offsets(k, 16, row);
    for (int i = 0; i < 16; ++i) {
      std::set<int64_t> seen;
      for (int j = 0; j < row; ++j) {
        int64_t o = off[size_t(i)][size_t(j)];
        EXPECT_EQ(o / row, i) << "stays in its row";
        EXPECT_EQ(o % 8, j % 8) << "a 16-byte chunk moves whole";
        seen.insert(o);
      }
      EXPECT_EQ(seen.size(), size_t(row)) << "a bijection within the row";
    }
    // Rows 0..7 put column 0 in 8 (or 4) different chunks: the banks an
    // ldmatrix phase reads.
    std::set<int64_t> chunks;
    for (int i = 0; i < 8; ++i) chunks.insert(off[size_t(i)][0] % row / 8);
    EXPECT_EQ(chunks.size(), row % 64 == 0 ? 8u : 4u);
  }
}

TEST(SwizzleSharedBuffers, RefusesWhatItCannotSwizzle) {
  auto error_of = [](const std::string &text) -> std::string {
    try {
      lower(script::parse_func(text));
    } catch (const LowerError &e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(program(24)).find("not a multiple of 64 bytes"), std::string::npos) << error_of(program(24));
  EXPECT_NE(error_of(program(64, "local")).find("in scope 'local'"), std::string::npos);
  EXPECT_NE(error_of(program(64, "shared", "T")).find("names 'T', which the block does not allocate"),
            std::string::npos);
  EXPECT_NE(error_of(program(64, "shared", "T")).find("block 'tile'"), std::string::npos);
}

}  // namespace
}  // namespace tessera::lower
