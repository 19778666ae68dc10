#!/usr/bin/env bash
# tessera::dispatch links nothing of the compiler (issue 37):
#   links_no_compiler.sh PROGRAM CLOSURE_DIR
# PROGRAM is linked against tessera_dispatch alone (examples/consumer's
# dispatch program); CLOSURE_DIR holds, per library, every target its link
# line reaches (cmake/LinkClosure.cmake, written at configure time). Checks
#   1. the link closures of tessera_dispatch and tessera_arch name no compiler
#      library (IR, script, schedule, lowering, code generation, NVRTC, LLVM, ...);
#   2. PROGRAM does not record NEEDED libnvrtc, libLLVM or libcuda;
#   3. PROGRAM holds no symbol of the compiler's namespaces.
set -euo pipefail
program=$1 closures=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
forbidden='^(tessera_(ir|arith|analysis|script|te|schedule|lower|codegen|runtime|cuda|cpu|rules|policies|tune|api)|LLVM.*|CUDA::.*|.*nvrtc.*|.*libLLVM.*)$'
for lib in tessera_dispatch tessera_arch; do
  [[ -f $closures/$lib.txt ]] || fail "no link closure for $lib in $closures"
  bad=$(grep -E "$forbidden" "$closures/$lib.txt" || true)
  [[ -z $bad ]] || fail "$lib links compiler libraries: $(echo $bad)"
  echo "$lib links: $(tr '\n' ' ' <"$closures/$lib.txt")"
done
needed=$(readelf -d "$program" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for so in $needed; do
  [[ $so == libnvrtc* || $so == libLLVM* || $so == libcuda* ]] && fail "$(basename "$program") needs $so"
done
echo "$(basename "$program") needs: $(echo $needed)"
compiler_symbols=$(nm -C "$program" | grep -cE 'tessera::(ir|schedule|lower|codegen|script|rules|policies|tune|analysis)::' || true)
((compiler_symbols == 0)) || fail "$(basename "$program") holds $compiler_symbols symbols of the compiler"
echo "ok: $(basename "$program") links the dispatch library and the driver layer only"
