#!/usr/bin/env bash
# tessera developer entry point. Installs what is missing (Debian packages),
# configures and builds into ./build, then runs one job:
#   ./dev.sh demo   builds the `tessera` program (not the tests), then the bundled example
#                   (examples/softmax.py) end to end: format, interpret, schedule by the rules
#                   (verified in the interpreter), then fast-tune it (top-20 compiled with
#                   NVRTC; verified and timed on a GPU when there is one)
#   ./dev.sh test   run the test suite (ctest; GPU tests skip without a device), then the
#                   Python package: pip install . into ./.venv, and its tests (pytest)
#   ./dev.sh test --sanitize [--subset]  the unit tests built with ASan + UBSan (clang,
#                   ./build-sanitize) and run; --subset: the IR, arithmetic, TVMScript,
#                   analysis and schedule tests and the fuzz replays only (what CI runs)
#   ./dev.sh build  only build
#   ./dev.sh fuzz [TARGET] [SECONDS] [RUNS]  a libFuzzer campaign (parser, trace, config
#                   or database; default parser, 60 s, RUNS executions at most) on ./build-sanitize, the libraries
#                   instrumented; crashes land in build-sanitize/fuzz/TARGET/
#   ./dev.sh bundle          the relocatable GPU bundle: Release build into ./build-release,
#                            assembled in ./build-bundle (tools/bundle/make-bundle.sh)
#   ./dev.sh gpu             the bundle, then the exact device call that runs it on a GPU machine
#   ./dev.sh gpu-import DIR  file what the device call brought back into bench/results/
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

APT_PKGS=(cmake ninja-build g++ ccache
          libeigen3-dev nlohmann-json3-dev libfmt-dev libcli11-dev
          libgtest-dev libgmock-dev libbenchmark-dev
          llvm-19-dev libzstd-dev libdlpack-dev)
JOBS=${JOBS:-2}
# ccache serves the build folders of the same sources (./build, and the
# Python package's ./build-python) alike: the folder is not part of its key,
# and paths under the checkout are keyed relative to it (another clone hits).
export CCACHE_NOHASHDIR=true
export CCACHE_BASEDIR="$PWD"

install_deps() {
  install_apt "$@"
  install_cuda_tools
}

install_apt() {
  local missing=() p
  for p in "${APT_PKGS[@]}" "$@"; do
    [[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" == installed ]] || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "dev.sh: installing ${missing[*]}"
  local sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
  $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# NVIDIA's disassemblers (PyPI wheels) for the SASS summaries of `tessera compile`
# and `tessera tune` (runtime/Sass.h): optional, installed into a project-local,
# git-ignored folder; a failed install (offline) is only a warning.
CUDA_TOOLS=.deps/cuda-tools
install_cuda_tools() {
  compgen -G "$CUDA_TOOLS/nvidia/cu*/bin/cuobjdump" >/dev/null &&
    compgen -G "$CUDA_TOOLS/nvidia/cu*/bin/nvdisasm" >/dev/null && return 0
  python3 -m pip --version >/dev/null 2>&1 || install_apt python3-pip || true
  echo "dev.sh: installing nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm into $CUDA_TOOLS"
  local log
  if ! log=$(python3 -m pip install -q --disable-pip-version-check --no-warn-script-location --upgrade \
             --retries 1 --timeout 20 --target "$CUDA_TOOLS" nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm 2>&1); then
    echo "dev.sh: warning: could not install the CUDA disassemblers (tessera works without them," \
         "minus the SASS summaries): $(tail -n 1 <<<"$log")" >&2
  fi
  return 0
}

# build [TARGET...]: configure ./build and build the targets (default: everything).
build() {
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  local targets=() t
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build build -j "$JOBS" "${targets[@]}"
}

# The device bundle: optimised, stripped, RUNPATH $ORIGIN/../lib (make-bundle.sh).
bundle() {
  # Without the LLVM JIT: libLLVM (130 MB) would not fit the device call's 64 MiB carry; the
  # GPU machine's oracle is the interpreter or the device (runtime/Oracle.h, tune/Reference.h).
  # Each program links the libraries statically: sections per function and
  # data object, and the linker's garbage collection, keep only what each
  # program reaches (packed, the bundle must stay under make-bundle.sh's 48 MiB).
  # The Python extension for the GPU machine's python3 (3.12: the device tool's
  # KINDS.md), when that Python is here; else the bundle goes without it and
  # its python step says so.
  local py=(-DTESSERA_BUILD_PYTHON=OFF) targets=(tessera_bundle_programs)
  local bundle_python=${TESSERA_BUNDLE_PYTHON:-python3.12}
  if ! "$bundle_python" -c 'import sys' 2>/dev/null && command -v pyenv >/dev/null; then
    bundle_python=$(ls -d "$(pyenv root)"/versions/3.12*/bin/python3.12 2>/dev/null | tail -1)
  fi
  if [[ -n $bundle_python ]] && "$bundle_python" -c 'import sys' 2>/dev/null; then
    [[ -x .venv-bundle/bin/python ]] || "$bundle_python" -m venv .venv-bundle
    .venv-bundle/bin/python -m pip install -q --disable-pip-version-check nanobind
    py=(-DTESSERA_BUILD_PYTHON=ON "-DPython_EXECUTABLE=$PWD/.venv-bundle/bin/python")
    targets+=(_tessera)
  else
    echo "dev.sh bundle: no $bundle_python here: the bundle goes without the Python package" >&2
  fi
  cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS="-ffunction-sections -fdata-sections" -DCMAKE_EXE_LINKER_FLAGS="-s -Wl,--gc-sections" \
    -DTESSERA_ENABLE_CUDA=ON -DTESSERA_ENABLE_LLVM=OFF "${py[@]}" >/dev/null
  cmake --build build-release -j "$JOBS" --target "${targets[@]}"
  tools/bundle/make-bundle.sh build-release build-bundle
  # The relocation check the test build skips when it links LLVM: this
  # bundle's programs, copied away from the tree, run without a GPU.
  tests/bundle/relocation_test.sh build-release
}

# The Python package (pyproject.toml): `pip install .` into a virtual
# environment of the repository's own, then its tests.
VENV=.venv
python_tests() {
  if [[ ! -x $VENV/bin/python ]]; then
    python3 -m venv "$VENV" 2>/dev/null || { rm -rf "$VENV"; install_apt python3-venv; python3 -m venv "$VENV"; }
  fi
  "$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
    { echo "dev.sh: the Python package needs Python 3.10 or later" >&2; return 1; }
  echo "== pip install .[test] (into $VENV)"
  # scikit-build-core compiles with the compiler Python was built with
  # (sysconfig's CXX, often g++) unless CXX is set; ./build has CMake's
  # default, c++. The same one lets ccache serve ./build's objects.
  CXX=${CXX:-c++} CC=${CC:-cc} "$VENV/bin/python" -m pip install -q --disable-pip-version-check ".[test]"
  echo "== pytest python/tests"
  "$VENV/bin/python" -m pytest -q python/tests
}

# The sanitizer build (ASan + UBSan, libFuzzer's coverage on every library):
# clang 19, -O1 with line tables (symbolised reports, a small build folder),
# without NDEBUG: the IR checks after each schedule primitive are on too.
SANITIZE_SUBSET=(tessera_ir_test tessera_arith_test tessera_parser_test tessera_printer_test
                 tessera_roundtrip_test tessera_tvm_forms_test tessera_access_regions_test
                 tessera_analysis_test tessera_schedule_test tessera_parser_replay_test
                 tessera_fuzz_replay_parser tessera_fuzz_replay_trace tessera_fuzz_replay_config)
configure_sanitize() {
  install_deps clang-19 libclang-rt-19-dev
  CC=clang-19 CXX=clang++-19 cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DTESSERA_BUILD_FUZZERS=ON \
    -DTESSERA_BUILD_BENCH=OFF >/dev/null
}
# Reports stop the test that made them; leaks are reported at exit (LeakSanitizer),
# with the suppressions of tests/sanitize/lsan.supp (the CUDA libraries' own).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/sanitize/lsan.supp:print_suppressions=0}
sanitize_tests() {
  configure_sanitize
  # ASan's redzones make each frame several times larger (its fake stack
  # runs out in deep recursions): the depth tests' 3,000-level expressions,
  # fine in 8 MB normally, get 64 MB here.
  ulimit -s 65536 2>/dev/null || ulimit -s unlimited 2>/dev/null || true
  if [[ ${1:-} == --subset ]]; then
    local targets=() t exe failed=()
    for t in "${SANITIZE_SUBSET[@]}"; do targets+=(--target "$t"); done
    cmake --build build-sanitize -j "$JOBS" "${targets[@]}"
    # The subset's test programs, each run whole from its folder (as CTest
    # would), then the fuzz replays through CTest.
    for t in "${SANITIZE_SUBSET[@]}"; do
      [[ $t == tessera_fuzz_replay_* ]] && continue
      exe=$(find build-sanitize/tests -type f -name "$t" -perm -u+x | head -n 1)
      [[ -n $exe ]] || { echo "dev.sh: $t was not built" >&2; return 1; }
      echo "== $t (ASan + UBSan)"
      (cd "$(dirname "$exe")" && "./$t" --gtest_brief=1) || failed+=("$t")
    done
    local replays
    replays=$(printf '%s\n' "${SANITIZE_SUBSET[@]}" | grep '^tessera_fuzz_replay_' | paste -sd '|')
    ctest --test-dir build-sanitize --output-on-failure -j "$JOBS" --timeout 900 -L "^prog=($replays)\$" ||
      failed+=(fuzz-replays)
    if ((${#failed[@]})); then
      echo "dev.sh: the sanitizer subset failed: ${failed[*]}" >&2
      return 1
    fi
    echo "dev.sh: the sanitizer subset ran clean"
  else
    cmake --build build-sanitize -j "$JOBS"
    # Not the install test: its consumer project links the instrumented
    # libraries without the sanitizers' runtime.
    ctest --test-dir build-sanitize --output-on-failure -j "$JOBS" --timeout 900 -LE gpu \
      -E '^tessera_install_and_consume$'
  fi
}

fuzz_campaign() {
  local target=${1:-parser} seconds=${2:-60} runs=${3:--1}
  configure_sanitize
  ulimit -s 65536 2>/dev/null || true  # as for the tests: ASan's frames are larger
  cmake --build build-sanitize -j "$JOBS" --target "tessera_${target}_fuzzer"
  mkdir -p "build-sanitize/fuzz/$target/corpus"
  # Crash inputs are written to build-sanitize/fuzz/TARGET/; keep each under
  # tests/fuzz/crashes/TARGET/ once fixed (CTest replays them).
  ./build-sanitize/tests/fuzz/tessera_${target}_fuzzer -max_total_time="$seconds" -runs="$runs" -print_final_stats=1 \
    -artifact_prefix="build-sanitize/fuzz/$target/" "build-sanitize/fuzz/$target/corpus" "tests/fuzz/seeds/$target"
}

# What the device tool needs to run the bundle: shown by `./dev.sh gpu`.
GPU_BUDGET=${GPU_BUDGET:-420}
gpu_call() {
  cat <<CALL

The device call (the device tool's run verb):
  command:   build-bundle/run-gpu.sh /tmp/tessera-gpu --budget $GPU_BUDGET --archive "\$OUT/tessera-gpu.tar.gz"
  carry:     ["build-bundle"]
  timeout_s: $((GPU_BUDGET + 60))
Then, with the folder the files came back to:
  ./dev.sh gpu-import FILES_AT_FOLDER
(GPU_BUDGET=SECONDS ./dev.sh gpu sizes the run; the whole script must leave device time for a second call.)
CALL
}

case "${1:-}" in
  demo)
    install_deps
    build tessera   # the program alone: the tests are built by ./dev.sh test
    echo "== tessera fmt examples/softmax.py"
    ./build/tools/tessera fmt examples/softmax.py
    echo "== tessera run examples/softmax.py --dim rows=8"
    ./build/tools/tessera run examples/softmax.py --dim rows=8
    mkdir -p build/demo
    echo "== tessera schedule examples/softmax.py --arch h100 --verify --dim rows=8"
    ./build/tools/tessera schedule examples/softmax.py --arch h100 --verify --dim rows=8
    # The headline: the policy's top-20 configs (+ the default) scheduled,
    # compiled in parallel, verified and timed on the GPU; without one it goes
    # up to the cubin and says so. The database answers a second run.
    echo "== tessera tune examples/softmax.py --dim rows=4096 --topk 20"
    ./build/tools/tessera tune examples/softmax.py --arch auto --dim rows=4096 --topk 20 \
      --db build/demo/tuning.jsonl -o build/demo
    if ./build/tools/tessera devices | grep -q '^CUDA driver'; then
      echo "== tessera tune again: answered from the database"
      ./build/tools/tessera tune examples/softmax.py --arch auto --dim rows=4096 --db build/demo/tuning.jsonl -o build/demo
    else
      echo "== no GPU here: $(./build/tools/tessera devices | head -1)"
    fi
    ;;
  test)
    if [[ ${2:-} == --sanitize ]]; then
      sanitize_tests "${3:-}"
      exit
    fi
    install_deps
    build
    ctest --test-dir build --output-on-failure -j "$JOBS" --timeout 600
    python_tests
    ;;
  build)
    install_deps
    build
    ;;
  bundle)
    install_deps
    bundle
    ;;
  gpu)
    install_deps
    bundle
    gpu_call
    ;;
  gpu-import)
    [[ -n ${2:-} ]] || { echo "usage: ./dev.sh gpu-import DIR (the folder the device call's files came back to)" >&2; exit 2; }
    python3 tools/bundle/import-results.py "$2" bench/results bench/README.md
    ;;
  fuzz)
    fuzz_campaign "${2:-parser}" "${3:-60}" "${4:--1}"
    ;;
  *)
    sed -n '2,12p' "$0"
    exit 2
    ;;
esac
