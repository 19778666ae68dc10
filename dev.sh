#!/usr/bin/env bash
# tessera developer entry point. Installs what is missing (Debian packages),
# configures and builds into ./build, then runs one job:
#   ./dev.sh demo   the bundled example (examples/softmax.py) end to end: format, interpret,
#                   schedule by the rules (verified in the interpreter), then fast-tune it
#                   (top-20 compiled with NVRTC; verified and timed on a GPU when there is one)
#   ./dev.sh test   run the test suite (ctest; GPU tests skip without a device)
#   ./dev.sh build  only build
#   ./dev.sh fuzz [SECONDS]  build the libFuzzer parser target with clang and run it
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

APT_PKGS=(cmake ninja-build g++ ccache
          libeigen3-dev nlohmann-json3-dev libfmt-dev libcli11-dev
          libgtest-dev libgmock-dev libbenchmark-dev)
JOBS=${JOBS:-2}

install_deps() {
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

build() {
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j "$JOBS"
}

case "${1:-}" in
  demo)
    install_deps
    build
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
    install_deps
    build
    ctest --test-dir build --output-on-failure -j "$JOBS" --timeout 600
    ;;
  build)
    install_deps
    build
    ;;
  fuzz)
    install_deps clang
    CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DTESSERA_BUILD_FUZZERS=ON \
      -DTESSERA_BUILD_BENCH=OFF >/dev/null
    cmake --build build-fuzz -j "$JOBS" --target tessera_parser_fuzzer
    mkdir -p build-fuzz/corpus
    ./build-fuzz/tests/fuzz/tessera_parser_fuzzer -max_total_time="${2:-60}" \
      build-fuzz/corpus tests/fuzz/seeds
    ;;
  *)
    sed -n '2,8p' "$0"
    exit 2
    ;;
esac
