#!/usr/bin/env bash
# tessera installs and is found by other projects (issue 37):
#   install_test.sh BUILD_DIR
# installs BUILD_DIR into an empty prefix, then checks
#   1. the layout: libraries, headers, the CMake package, the program, its data;
#   2. the installed program runs from the prefix and reads the prefix's data;
#   3. examples/consumer, configured against the prefix alone (find_package),
#      builds: its facade program tunes a softmax for the CPU, runs it, checks
#      it against float64, saves and reloads it; its dispatch program, linked
#      against tessera::dispatch alone, needs neither NVRTC nor LLVM and reads
#      a GPU kernel package the installed program wrote (with NVRTC only).
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
prefix="$tmp/prefix"

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install"; }
for f in include/tessera/tessera.h include/tessera/dispatch/Dispatcher.h lib/cmake/tessera/tesseraConfig.cmake \
  lib/cmake/tessera/tesseraConfigVersion.cmake lib/cmake/tessera/tesseraTargets.cmake lib/libtessera_api.a \
  lib/libtessera_dispatch.a bin/tessera libexec/tessera/tessera-measure-worker share/tessera/arch/h100_sxm.json share/tessera/workloads/workloads.json \
  share/tessera/workloads/longtail/prefix_sum.py share/tessera/bench/suites/smoke.json share/tessera/examples/softmax.py; do
  [[ -e $prefix/$f ]] || fail "$f is not installed"
done
[[ ! -e $prefix/include/tessera/bench ]] || fail "the program's own headers are installed"
# The measuring worker runs from the prefix (its libraries found): no request, a clean exit.
"$prefix/libexec/tessera/tessera-measure-worker" </dev/null || fail "the installed measuring worker does not run"
echo "installed: $(find "$prefix" -type f | wc -l) files, $(du -sm "$prefix" | cut -f1) MiB"

# 2. The program from the prefix, from an empty folder, its data the prefix's.
mkdir -p "$tmp/cwd"
cd "$tmp/cwd"
out=$(env -u TESSERA_HOME "$prefix/bin/tessera" devices 2>&1) || fail "installed tessera devices: $out"
grep -q "^data: $prefix/share/tessera (install)" <<<"$out" || fail "the installed program reads other data: $out"
out=$(env -u TESSERA_HOME "$prefix/bin/tessera" schedule "$prefix/share/tessera/workloads/longtail/if_nest.py" \
  --arch a100 --verify 2>&1) || fail "installed tessera schedule: $out"
grep -q "# verify: .*: ok" <<<"$out" || fail "installed tessera schedule does not verify: $out"

# 3. A project of its own, against the prefix alone.
cmake -S "$src/examples/consumer" -B "$tmp/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log"; fail "configuring examples/consumer"; }
cmake --build "$tmp/consumer" >>"$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log"; fail "building examples/consumer"; }
grep -q "$prefix/lib/cmake/tessera" "$tmp/consumer/CMakeCache.txt" || fail "examples/consumer found another tessera"
if "$prefix/bin/tessera" devices | grep -q "^LLVM JIT (the CPU target): not in this build"; then
  echo "skipped the facade program: this tessera has no LLVM JIT (the CPU target)"
else
  out=$("$tmp/consumer/tessera_consumer" 64 2>&1) || fail "tessera_consumer: $out"
  grep -q "the same bits" <<<"$out" || fail "tessera_consumer: $out"
  echo "$out" | tail -2
fi
needed=$(readelf -d "$tmp/consumer/tessera_dispatch_consumer" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
grep -qE 'libnvrtc|libLLVM|libcuda' <<<"$needed" && fail "the dispatch program needs $(echo $needed)"
out=$("$tmp/consumer/tessera_dispatch_consumer" /nonexistent.tsk 2>&1) && fail "a missing package was accepted: $out"
grep -q "cannot read the kernel package /nonexistent.tsk" <<<"$out" || fail "a missing package: $out"
if "$prefix/bin/tessera" devices | grep -q "^NVRTC not available"; then
  echo "skipped the GPU package: this tessera has no NVRTC"
else
  out=$(env -u TESSERA_HOME "$prefix/bin/tessera" tune "$prefix/share/tessera/examples/softmax.py" --arch h100 \
    --dim rows=512 --topk 2 --db none --cache none --no-sass --save "$tmp/softmax.tsk" -o "$tmp/out" 2>&1) ||
    fail "installed tessera tune --save: $out"
  out=$("$tmp/consumer/tessera_dispatch_consumer" "$tmp/softmax.tsk" 2>&1) || fail "tessera_dispatch_consumer: $out"
  grep -q "'softmax' for sm_90: 1 kernels, 1 cells, 0 symbols" <<<"$out" || fail "tessera_dispatch_consumer: $out"
  if ! "$prefix/bin/tessera" devices | grep -q "^CUDA driver"; then
    # Bound to the placeholder addresses of A (buffer 0) and B (buffer 1).
    grep -q "^bound softmax_kernel: 0x1000000 0x2000000" <<<"$out" || fail "tessera_dispatch_consumer did not bind: $out"
  fi
  echo "$out"
fi
echo "ok: installed into $prefix, found by find_package, consumed"
