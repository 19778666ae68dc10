//===- tests/workloads/Workloads.cpp - Workloads at test sizes, and beyond ---===//
#include "Workloads.h"

#include "tessera/analysis/Specialize.h"
#include "tessera/script/Parser.h"

namespace tessera::test {

ir::PrimFunc workload_at_size(const std::string &name, bool full) {
  const Entry &e = find_entry(name);
  return analysis::specialize(load_func(e), full ? e.full : e.small);
}

ir::PrimFunc matmul_layout_program(const std::string &layout, int m, int n, int k) {
  auto s = [](int v) { return std::to_string(v); };
  bool ta = layout[0] == 't', tb = layout[1] == 't';
  std::string a_shape = ta ? s(k) + ", " + s(m) : s(m) + ", " + s(k);
  std::string b_shape = tb ? s(n) + ", " + s(k) : s(k) + ", " + s(n);
  return script::parse_func(
      "@T.prim_func\ndef main(A: T.Buffer((" + a_shape + "), \"float32\"), B: T.Buffer((" + b_shape +
      "), \"float32\"), C: T.Buffer((" + s(m) + ", " + s(n) +
      "), \"float32\")):\n"
      "    for i, j, r in T.grid(" +
      s(m) + ", " + s(n) + ", " + s(k) +
      "):\n"
      "        with T.block(\"C\"):\n"
      "            vi, vj, vr = T.axis.remap(\"SSR\", [i, j, r])\n"
      "            with T.init():\n"
      "                C[vi, vj] = T.float32(0)\n"
      "            C[vi, vj] = C[vi, vj] + A[" +
      std::string(ta ? "vr, vi" : "vi, vr") + "] * B[" + (tb ? "vj, vr" : "vr, vj") + "]\n");
}

}  // namespace tessera::test
