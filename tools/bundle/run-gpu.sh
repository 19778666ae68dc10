#!/usr/bin/env bash
# run-gpu.sh OUTDIR [--budget SECONDS] [--archive FILE.tar.gz]
#
# Everything tessera can measure on a GPU machine, in one call, from a device
# bundle (./dev.sh bundle) copied to any path: no source tree, nothing to
# install. Each step is time-boxed and logs in full to OUTDIR/logs/; a summary
# table is printed last (and kept as OUTDIR/summary.md):
#   a. tessera devices; tessera arch --detect (and every field that differs
#      from its preset); the device-to-device copy bandwidth;
#   b. every gpu-labelled test binary (gtest XML in OUTDIR/tests/);
#   c. tessera_bench_workloads (every workload at full size, default config,
#      against cuBLAS and the copy bandwidth), tessera_bench_kernels and the
#      memory-bound workloads in PyTorch eager (torch-baseline.py, when the
#      machine's python3 has torch: bench/torch.json);
#   d. tessera bench --suite tensor_core, seed004 and llm_decode (JSON, Markdown,
#      SVG) in whatever time the budget leaves after keeping 50 s for e
#      (skipped workloads are listed as such);
#   e. compute-sanitizer: memcheck on one small tune per rule, racecheck on a
#      cross-thread reduction and on the fallback;
# and the kernel package launched by a dispatch-only program, and the Python
# package's tests on PyTorch CUDA tensors (when the bundle carries the
# extension built for this machine's python3, and that python3 has torch
# and pytest).
# The programs come packed (payload.tar.gz): unpacked first into a scratch
# folder (TMPDIR), removed at the end.
# --budget (default 480 s) bounds the whole run; --archive packs OUTDIR into
# one tarball (the form a device call brings back). Without a GPU every step
# says why it measured nothing and the exit status is 0; with one, it is 1
# when a step failed or ran out of time.
#
# Found on the machine, never carried: libnvrtc.so.13 and the CUDA headers
# (cuda_fp16.h) NVRTC needs, and libcublas; looked for in $CUDA_HOME,
# /usr/local/cuda, the loader's cache and the nvidia-* Python wheels.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out="" budget=480 archive=""
while (($#)); do
  case $1 in
    --budget) budget=${2:?--budget needs seconds}; shift 2 ;;
    --archive) archive=${2:?--archive needs a file}; shift 2 ;;
    -h | --help) sed -n '2,/^set /p' "$0" | sed '$d'; exit 0 ;;
    -*) echo "run-gpu.sh: unknown option $1" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
[[ -n $out ]] || { echo "usage: run-gpu.sh OUTDIR [--budget SECONDS] [--archive FILE]" >&2; exit 2; }
[[ $budget =~ ^[0-9]+$ ]] || { echo "run-gpu.sh: --budget must be whole seconds, got '$budget'" >&2; exit 2; }
mkdir -p "$out/logs" "$out/tests" "$out/bench" || exit 2
out=$(cd "$out" && pwd)
start=$SECONDS
payload=$here
if [[ ! -d $here/bin && -f $here/payload.tar.gz ]]; then
  payload=$(mktemp -d "${TMPDIR:-/tmp}/tessera-bundle.XXXXXX") || exit 2
  trap 'rm -rf "$payload"' EXIT
  tar -xzf "$here/payload.tar.gz" -C "$payload" || { echo "run-gpu.sh: cannot unpack $here/payload.tar.gz" >&2; exit 2; }
fi
bin=$payload/bin
git_hash=$(sed -n 's/^git //p' "$here/BUNDLE.txt" 2>/dev/null)
git_hash=${git_hash:-unknown}

cd "$out" || exit 2  # whatever a program writes beside itself lands in the results
export TESSERA_HOME=$payload/data
export TESSERA_DB=$out/tuning.jsonl
export TESSERA_DUMP_DIR=$out/dumps

# --- bookkeeping ------------------------------------------------------------
declare -a S_NAME S_STATUS S_SECS S_NOTE
failures=0
left() { echo $((budget - (SECONDS - start))); }
record() {  # NAME STATUS SECONDS NOTE
  S_NAME+=("$1") S_STATUS+=("$2") S_SECS+=("$3") S_NOTE+=("$4")
  [[ $2 == FAIL* || $2 == timeout ]] && failures=$((failures + 1))
  printf '[%4ds] %-34s %-9s %s\n' $((SECONDS - start)) "$1" "$2" "$4"
}
skip() { record "$1" skip 0 "$2"; }
# step NAME CAP_SECONDS RESERVE_SECONDS CMD...: runs CMD with a timeout of
# min(CAP, time left - RESERVE), output to logs/NAME.log; sets $rc and $log.
step() {
  local name=$1 cap=$2 reserve=$3
  shift 3
  log=$out/logs/${name//[^A-Za-z0-9_.-]/_}.log
  local t=$(($(left) - reserve))
  ((t > cap)) && t=$cap
  skipped=0
  if ((t < 5)); then
    rc=-1 skipped=1
    echo "not run: budget spent" >"$log"
    record "$name" skip 0 "budget spent ($(left) s left)"
    return
  fi
  local t0=$SECONDS
  { echo "\$ $*"; echo "# timeout ${t}s"; } >"$log"
  timeout -k 5 "$t" "$@" >>"$log" 2>&1
  rc=$?
  step_secs=$((SECONDS - t0))
  step_status=ok
  if ((rc == 124 || rc == 137)); then step_status=timeout
  elif ((rc != 0)); then step_status="FAIL($rc)"
  fi
}
finish() {  # NAME NOTE: records the last step(), unless it was not run
  ((skipped)) || record "$1" "$step_status" "$step_secs" "$2"
}
first_line() { grep -m1 -E "$1" "$log" | cut -c1-150; }
output_line() { sed -n "$((2 + $1))p" "$log" | cut -c1-150; }  # line N of the step's output

# --- the machine: toolkit pieces tessera needs from it -----------------------
# find_file NAME DIR...: the first DIR holding NAME; else a bounded search of
# the usual prefixes (the nvidia-* wheels install under site-packages/nvidia/).
find_file() {
  local name=$1 d
  shift
  for d in "$@"; do [[ -n $d && -e $d/$name ]] && { echo "$d"; return 0; }; done
  local hit
  hit=$(timeout 20 find /usr/local /usr/lib /opt /usr/local/lib -maxdepth 9 -name "$name" -print -quit 2>/dev/null)
  [[ -n $hit ]] && { dirname "$hit"; return 0; }
  return 1
}
cuda_roots=("${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda /usr/local/cuda-13.0)
lib_dirs=() inc_dirs=()
for r in "${cuda_roots[@]}"; do
  [[ -n $r ]] || continue
  lib_dirs+=("$r/lib64" "$r/targets/x86_64-linux/lib")
  inc_dirs+=("$r/include" "$r/targets/x86_64-linux/include")
done
{
  echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host $(uname -srm)"
  cat "$here/BUNDLE.txt" 2>/dev/null
} >"$out/environment.txt"

missing=()
if ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so\.13 '; then
  nvrtc_dir="(loader cache)"
elif nvrtc_dir=$(find_file libnvrtc.so.13 "${lib_dirs[@]}"); then
  export LD_LIBRARY_PATH=$nvrtc_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  nvrtc_dir="" missing+=("libnvrtc.so.13 (looked in ${lib_dirs[*]}, the loader cache, /usr/local /usr/lib /opt)")
fi
if inc=$(find_file cuda_fp16.h "${inc_dirs[@]}"); then
  export TESSERA_CUDA_INCLUDE=$inc
else
  inc="" missing+=("cuda_fp16.h, the CUDA headers NVRTC includes (looked in ${inc_dirs[*]}, /usr/local /usr/lib /opt)")
fi
if ldconfig -p 2>/dev/null | grep -q 'libcublas\.so\.13 '; then
  blas_dir="(loader cache)"
elif blas_dir=$(find_file libcublas.so.13 "${lib_dirs[@]}"); then
  export LD_LIBRARY_PATH=$blas_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  blas_dir="not found: the cuBLAS columns stay empty"
fi
sanitizer=$(command -v compute-sanitizer || true)
for r in "${cuda_roots[@]}"; do
  [[ -z $sanitizer && -n $r && -x $r/bin/compute-sanitizer ]] && sanitizer=$r/bin/compute-sanitizer
done
{
  echo "libnvrtc.so.13: ${nvrtc_dir:-MISSING}"
  echo "cuda headers: ${inc:-MISSING}"
  echo "libcublas.so.13: $blas_dir"
  echo "compute-sanitizer: ${sanitizer:-not found}"
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv 2>&1
  command -v nvcc >/dev/null && nvcc --version 2>&1 | tail -2
} >>"$out/environment.txt"
sed -n '/^libnvrtc/,$p' "$out/environment.txt"

# The programs must start: a library the loader cannot find stops everything.
unresolved=$(ldd "$bin"/* 2>/dev/null | grep 'not found' | sort -u | tr -s ' \t' ' ')
if [[ -n $unresolved ]]; then
  missing+=("shared libraries:$unresolved")
fi
if ((${#missing[@]})); then
  for m in "${missing[@]}"; do record preflight "FAIL" 0 "missing $m"; done
fi

# --- a. the device ------------------------------------------------------------
gpu=0
step devices 30 0 "$bin/tessera" devices
if ((rc == 0)) && grep -q '^CUDA driver' "$log"; then
  gpu=1
  finish devices "$(grep -m1 -E '^ *(\[0\]|0:|device 0)' "$log" || sed -n 2p "$log" | cut -c1-150)"
else
  finish devices "$(output_line 1)"
fi
why_none=$(output_line 1 | sed 's/^no CUDA device: //; s/ (.*//')
why_none="no device: ${why_none:-tessera devices failed}"

if ((gpu)); then
  step arch-detect 30 0 "$bin/tessera" arch --detect
  finish arch-detect "$(first_line '^ *device ')"
  step arch-diff 30 0 "$bin/tessera" arch --detect --diff
  finish arch-diff "$(tail -1 "$log" | cut -c1-150)"
  step copy-bandwidth 60 0 "$bin/tessera_bench_kernels" --copy-only --json "$out/bench/copy.json" --git "$git_hash"
  finish copy-bandwidth "$(first_line 'copy bandwidth' | sed 's/(cuMemcpyDtoD, //')"
else
  skip arch-detect "$why_none"
  skip copy-bandwidth "$why_none"
fi

# NVRTC here: one kernel to sm_90 with ptxas's resource report (source, cubin, log kept).
step compile-resources 60 0 "$bin/tessera" compile "$TESSERA_HOME/tests/codegen/kernels/matmul_shared_f32.py" \
  --arch sm_90 -o "$out/compile"
finish compile-resources "$(output_line 1)"

# --- b. the gpu tests -----------------------------------------------------------
gtest_note() {
  local passed failed skipped
  passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
  failed=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
  skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
  local note="${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
  ((${skipped:-0} > 0 && gpu == 0)) && note+=" ($why_none)"
  local first
  first=$(grep -m1 -E '^\[  FAILED  \] [A-Za-z]' "$log" | cut -c14-120)
  [[ -n $first ]] && note+="; first: $first"
  echo "$note"
}
for t in "$bin"/*_test; do
  [[ -x $t ]] || continue
  name=$(basename "$t")
  step "test:$name" 180 150 "$t" --gtest_color=no "--gtest_output=xml:$out/tests/$name.xml"
  finish "test:$name" "$(gtest_note)"
done

# --- c. the benchmark programs ----------------------------------------------------
step bench-workloads 150 100 "$bin/tessera_bench_workloads" --json "$out/bench/workloads.json" --git "$git_hash"
finish bench-workloads "$( ((gpu)) && echo "$(grep -c '^| [a-z].* | ok ' "$log") of $(($(grep -c '^| [a-z]' "$log") - 1)) workloads checked ok" || output_line 1)"
step bench-kernels 90 90 "$bin/tessera_bench_kernels" --json "$out/bench/kernels.json" --git "$git_hash"
finish bench-kernels "$( ((gpu)) && echo "$(grep -c '^| [a-z]' "$log") kernel rows" || output_line 1 | tr '\n' ' ')"
if ((gpu)); then
  step torch-baseline 60 60 python3 "$here/torch-baseline.py" "$TESSERA_HOME/workloads/workloads.json" \
    "$out/bench/torch.json"
  if ((rc == 3)); then  # no torch, or torch without CUDA: nothing to compare with
    ((skipped)) || record torch-baseline skip "$step_secs" "$(output_line 1)"
  else
    finish torch-baseline "$(grep -c '^| [a-z]' "$log") workloads in PyTorch eager"
  fi
else
  skip torch-baseline "$why_none"
fi

# A dynamic-shape plan measured on the device (issue 15): the QKV projection's
# kernels for M in [1, 4096], each cell's kernel and its runners-up timed, the
# fastest kept; the plan with its measurements and the records kept.
if ((gpu)); then
  step dynamic-measure 90 60 "$bin/tessera" dynamic "$TESSERA_HOME/workloads/matmul_nt_f16.py" --arch auto \
    --range m=1:4096 --hot m=1 --dim n=12288 --dim k=4096 --max-kernels 8 --measure --budget-ms 30000 \
    --cache "$out/kernels" --db "$out/bench/dynamic-tuning.jsonl" --json "$out/bench/dynamic-plan.json"
  finish dynamic-measure "$(first_line '^# measured' | cut -c3-150)"
else
  skip dynamic-measure "$why_none"
fi
# Cold start on this host's cores (issue 15's target: one GEMM over two
# symbols ready in 2 s on a 16-core GPU host): built cold, its counters.
step dynamic-cold-2d 90 45 "$bin/tessera" dynamic "$TESSERA_HOME/workloads/matmul_nt_f16.py" --arch "$( ((gpu)) && echo auto || echo h100)" \
  --range m=1:4096 --range n=128:8192 --dim k=4096 --max-kernels 16 --cells-per-octave 1 --build --cache none
finish dynamic-cold-2d "$(first_line '^# cold start' | cut -c3-150)"
# Dispatch: select(), and a dynamic launch against a raw cuLaunchKernel.
if [[ -x $bin/tessera_bench_dynamic_select ]] && ((gpu)); then
  step dynamic-launch 60 30 "$bin/tessera_bench_dynamic_select" --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=true --benchmark_out="$out/bench/dynamic-select.json" \
    --benchmark_out_format=json
  finish dynamic-launch "$(grep -E '^BM_Launch[A-Za-z]*_median' "$log" | awk '{printf "%s %s %s; ", $1, $2, $3}' | cut -c1-150)"
else
  skip dynamic-launch "$( ((gpu)) && echo "tessera_bench_dynamic_select not built" || echo "$why_none")"
fi

# A kernel package (issue 37): tuned and saved by tessera, then loaded, bound
# and launched by a program linked against tessera::dispatch alone.
if [[ -x $bin/tessera_dispatch_example ]]; then
  step package-save 60 20 "$bin/tessera" tune "$TESSERA_HOME/examples/softmax.py" --arch "$( ((gpu)) && echo auto || echo h100)" \
    --dim rows=4096 --topk 4 --db none --cache none --no-sass --save "$out/bench/softmax.tsk" -o "$out/package"
  finish package-save "$(first_line '^# kernel package' | cut -c3-150)"
  step package-dispatch 30 10 "$bin/tessera_dispatch_example" "$out/bench/softmax.tsk"
  finish package-dispatch "$(grep -E '^(launched|no CUDA device)' "$log" | head -1 | cut -c1-150)"
else
  skip package-dispatch "tessera_dispatch_example not in the bundle"
fi

# The Python package (issue 38): its tests with the bundle's extension, where
# the GPU ones run on PyTorch CUDA tensors (the CPU target's skip: the bundle
# has no LLVM).
py_dir=$payload/python
if [[ ! -d $py_dir/tessera ]]; then
  skip python "the bundle has no Python extension (./dev.sh bundle builds it where python3.12 is)"
elif ! python3 -c "import sys; sys.exit('%d.%d' % sys.version_info[:2] != '$(cat "$py_dir/PYTHON_VERSION")')" 2>/dev/null; then
  skip python "the extension is for Python $(cat "$py_dir/PYTHON_VERSION"), python3 here is $(python3 -V 2>&1)"
elif ! python3 -c 'import pytest, numpy' 2>/dev/null; then
  skip python "python3 here has no pytest or numpy"
else
  step python 150 60 env PYTHONPATH="$py_dir" PYTHONDONTWRITEBYTECODE=1 \
    TESSERA_MEASURE_WORKER="$payload/bin/tessera-measure-worker" python3 -m pytest -q -rs -p no:cacheprovider \
    "$py_dir/tests" "--junitxml=$out/tests/python.xml" --basetemp="$out/python-tmp"
  finish python "$(grep -E '[0-9]+ (passed|failed)' "$log" | tail -1 | cut -c1-150)"
  rm -rf "$out/python-tmp"
fi

# --- d. the tune suites, in what is left ------------------------------------------------
if ((gpu)); then
  for suite in tensor_core seed004 llm_decode; do
    # tensor_core gets 40% of what is left, seed004 60% of the rest,
    # llm_decode the remainder; the sanitizer runs (e) keep 50 s and the
    # summary 10 s.
    share=$(($(left) - 60))
    [[ $suite == tensor_core ]] && share=$((share * 4 / 10))
    [[ $suite == seed004 ]] && share=$((share * 6 / 10))
    if ((share < 20)); then
      skip "bench:$suite" "budget spent ($(left) s left)"
      continue
    fi
    step "bench:$suite" $((share + 30)) 0 "$bin/tessera" bench --suite "$suite" --out "$out/bench" \
      --git "$git_hash" --budget "$share"
    finish "bench:$suite" "$(first_line '^- median tune time' | cut -c3-150) $(first_line 'skipped for the --budget' | sed 's/^note: //')"
  done
else
  skip bench:seed004 "$why_none (the compile path alone: tessera bench --no-measure)"
  skip bench:llm_decode "$why_none"
fi

# --- e. compute-sanitizer -----------------------------------------------------------
W=$TESSERA_HOME/workloads
sanitize() {  # TOOL NAME ARGS...: one tessera command under compute-sanitizer
  local tool=$1 name=$2
  shift 2
  if ((!gpu)); then skip "$tool:$name" "$why_none"; return; fi
  if [[ -z $sanitizer ]]; then skip "$tool:$name" "compute-sanitizer not found"; return; fi
  step "$tool:$name" 45 10 "$sanitizer" --tool "$tool" --error-exitcode 3 --print-limit 20 "$bin/tessera" "$@"
  finish "$tool:$name" "$(tail -n +3 "$log" | grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY|[Ee]rror' | cut -c1-150)"
}
tune_small() { echo tune "$@" --topk 1 --db none --arch auto; }
sanitize memcheck elementwise $(tune_small "$W/add_f16.py" --dim rows=37 --dim cols=130)
sanitize memcheck transpose $(tune_small "$W/transpose_f32.py" --dim rows=45 --dim cols=67)
sanitize memcheck reduction $(tune_small "$W/reduce_sum_f32.py" --dim rows=37 --dim cols=130)
sanitize memcheck general_reduction $(tune_small "$W/softmax_f16.py" --dim rows=37 --dim cols=130)
sanitize memcheck matmul $(tune_small "$W/matmul_nn_f16.py" --dim m=67 --dim n=45 --dim k=40)
sanitize memcheck conv2d $(tune_small "$W/conv2d_nhwc_f16.py" --dim n=2 --dim h=9 --dim w=11 --dim ci=6 --dim co=10)
sanitize memcheck gemv $(tune_small "$W/gemv_int4.py" --dim m=37 --dim k=300)
sanitize memcheck fallback $(tune_small "$TESSERA_HOME/workloads/longtail/prefix_sum.py")
sanitize racecheck cross_thread_reduction run "$TESSERA_HOME/tests/codegen/kernels/row_reduce_cross_thread.py" --device cuda
sanitize racecheck matmul_tensor_core $(tune_small "$W/matmul_nn_f16.py" --dim m=67 --dim n=45 --dim k=40)
sanitize racecheck software_pipeline run "$TESSERA_HOME/tests/codegen/kernels/matmul_pipelined_f32.py" --device cuda
sanitize memcheck matmul_tensor_core_batched $(tune_small "$W/bmm_symbolic_m_f16.py" --dim b=3 --dim m=7 --dim n=45 --dim k=40)
sanitize racecheck fallback $(tune_small "$TESSERA_HOME/workloads/longtail/if_nest.py" --rule fallback)
# Hopper's TMA copies and mbarriers: the hand-scheduled kernel (tensor maps encoded at launch).
sanitize memcheck tma run "$TESSERA_HOME/tests/codegen/hopper/tma_wgmma_nt_f16.py" --device cuda

# --- summary --------------------------------------------------------------------------
{
  echo "# run-gpu.sh: $(grep -m1 '^date' "$out/environment.txt" | cut -d' ' -f2), git $git_hash, $((SECONDS - start)) s of $budget s"
  echo
  echo "| step | status | s | note |"
  echo "|---|---|---:|---|"
  for i in "${!S_NAME[@]}"; do
    printf '| %s | %s | %s | %s |\n' "${S_NAME[$i]}" "${S_STATUS[$i]}" "${S_SECS[$i]}" "${S_NOTE[$i]//|//}"
  done
  echo
  echo "$failures step(s) failed or timed out; logs in $out/logs"
} >"$out/summary.md"
if [[ -n $archive ]]; then
  mkdir -p "$(dirname "$archive")"
  tar czf "$archive" -C "$(dirname "$out")" "$(basename "$out")" && echo "archive: $archive ($(du -k "$archive" | cut -f1) KiB)"
fi
echo
cat "$out/summary.md"
((failures == 0))
