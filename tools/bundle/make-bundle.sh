#!/usr/bin/env bash
# Assembles the device bundle from a Release build (./dev.sh bundle calls this):
#   make-bundle.sh BUILD_DIR BUNDLE_DIR
# BUNDLE_DIR/ gets
#   run-gpu.sh            the one command a GPU machine runs (see its header)
#   torch-baseline.py     the memory-bound workloads in PyTorch eager (run-gpu.sh step c)
#   BUNDLE.txt            git hash, date, toolkit, programs, sizes
#   payload.tar.gz        what run-gpu.sh unpacks first (a third of its size unpacked):
#     bin/                tessera, the GPU benchmarks, every gpu-labelled test (stripped)
#     lib/                every shared library a bare CUDA machine lacks (RUNPATH $ORIGIN/../lib)
#     data/               arch/, workloads/, bench/suites/, examples/, tests/ data
#     python/             the Python package with its extension, built for the GPU machine's
#                         python3 (PYTHON_VERSION says which), and python/tests; only when
#                         BUILD_DIR built it (./dev.sh bundle, where that Python is here)
# The programs find data/ beside bin/ by themselves (support/DataPaths.h).
# Libraries allowed to come from the GPU machine (never carried): glibc's,
# libstdc++, libgcc_s, and libnvrtc.so.13 (the driver and cuBLAS are dlopen'ed).
set -euo pipefail
build=$(cd "$1" && pwd)
bundle=$2
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The device tool carries 64 MiB in all, the source tree (7 MiB) included.
max_mib=${TESSERA_BUNDLE_MAX_MIB:-48}

# The sonames a GPU machine provides; anything else NEEDED travels in lib/.
ALLOWED='^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|ld-linux-x86-64\.so\.2|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libnvrtc\.so\.13)$'

list="$build/bundle_programs.txt"
[[ -f $list ]] || { echo "make-bundle: $list missing (configure with the CUDA toolkit and TESSERA_BUILD_BENCH=ON)" >&2; exit 1; }

rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/data"

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

while read -r program; do
  [[ -n $program ]] || continue
  [[ -x $program ]] || { echo "make-bundle: $program was not built" >&2; exit 1; }
  cp "$program" "$bundle/bin/"
done <"$list"
strip --strip-unneeded "$bundle"/bin/* 2>/dev/null || true

# The Python extension, when this build made one: with the package's modules and tests.
module=""
grep -q '^TESSERA_BUILD_PYTHON:BOOL=ON' "$build/CMakeCache.txt" &&
  module=$(find "$build/python" -maxdepth 1 -name '_tessera*.so' 2>/dev/null | head -1)
if [[ -n $module ]]; then
  mkdir -p "$bundle/python/tessera"
  cp "$module" "$bundle/python/tessera/"
  strip --strip-unneeded "$bundle"/python/tessera/*.so
  cp "$src"/python/tessera/*.py "$bundle/python/tessera/"
  mkdir -p "$bundle/python/tests"
  cp "$src"/python/tests/*.py "$bundle/python/tests/"
  "$(sed -n 's/^Python_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")" -c \
    'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")' >"$bundle/python/PYTHON_VERSION"
fi

# Carry what is not allowed, resolved by the loader here (one level is enough
# for fmt; the loop repeats until nothing new appears).
changed=1
while ((changed)); do
  changed=0
  for f in "$bundle"/bin/* "$bundle"/lib/* "$bundle"/python/tessera/*.so; do
    [[ -f $f ]] || continue
    for so in $(needed "$f"); do
      [[ $so =~ $ALLOWED || -f $bundle/lib/$so ]] && continue
      path=$(ldd "$f" | awk -v so="$so" '$1 == so { print $3 }')
      [[ -n $path && -f $path ]] || { echo "make-bundle: cannot find $so (needed by $f)" >&2; exit 1; }
      cp -L "$path" "$bundle/lib/$so"
      strip --strip-unneeded "$bundle/lib/$so" 2>/dev/null || true
      changed=1
    done
  done
done
for f in "$bundle"/bin/* "$bundle"/python/tessera/*.so; do
  [[ -f $f ]] || continue
  if [[ -n $(ls -A "$bundle/lib") ]] && ! readelf -d "$f" | grep -q 'R.*PATH.*\$ORIGIN/\.\./\(\.\./\)\?lib'; then
    echo "make-bundle: $f has no RUNPATH \$ORIGIN/../lib (CMakeLists.txt sets CMAKE_BUILD_RPATH)" >&2
    exit 1
  fi
done

# Data: what the programs read (support/DataPaths.h), without sources.
cp -r "$src/arch" "$src/workloads" "$src/examples" "$bundle/data/"
mkdir -p "$bundle/data/bench"
cp -r "$src/bench/suites" "$bundle/data/bench/"
(cd "$src" && find tests -type f ! -name '*.cpp' ! -name '*.h' ! -name 'CMakeLists.txt' -print0 |
  xargs -0 cp --parents -t "$bundle/data/")
cp "$src/tools/bundle/run-gpu.sh" "$bundle/run-gpu.sh"
cp "$src/tools/bundle/torch-baseline.py" "$bundle/torch-baseline.py"
chmod +x "$bundle/run-gpu.sh" "$bundle/torch-baseline.py"

git_hash=$(git -C "$src" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
git -C "$src" diff --quiet HEAD 2>/dev/null || git_hash="$git_hash+dirty"
unpacked_kib=$(du -sk "$bundle" | cut -f1)
{
  echo "git $git_hash"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m) $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
  echo "nvrtc_build $("$bundle/bin/tessera" devices 2>/dev/null | sed -n 's/^NVRTC \([0-9.]*\):.*/\1/p')"
  echo "python $(cat "$bundle/python/PYTHON_VERSION" 2>/dev/null || echo none)"
  echo "unpacked_kib $unpacked_kib"
  for f in "$bundle"/bin/* "$bundle"/lib/* "$bundle"/python/tessera/*.so; do
    [[ -f $f ]] && echo "file $(basename "$f") $(du -k "$f" | cut -f1) KiB NEEDED $(needed "$f" | tr '\n' ' ')"
  done
} >"$bundle/BUNDLE.txt"
# Packed: what travels is a third of it.
parts=(bin lib data)
[[ -d $bundle/python ]] && parts+=(python)
tar -C "$bundle" -czf "$bundle/payload.tar.gz" "${parts[@]}"
(cd "$bundle" && rm -rf "${parts[@]}")
size_kib=$(du -sk "$bundle" | cut -f1)
echo "size_kib $size_kib" >>"$bundle/BUNDLE.txt"
echo "bundle: $bundle ($((size_kib / 1024)) MiB packed, $((unpacked_kib / 1024)) MiB unpacked, git $git_hash)"
if ((size_kib > max_mib * 1024)); then
  echo "make-bundle: the bundle is $((size_kib / 1024)) MiB, over the ${max_mib} MiB limit" >&2
  exit 1
fi
