#!/usr/bin/env bash
# Every command of `tessera` on bad input (issue 39): empty files, binary
# garbage, truncated and malformed text, huge, negative and overflowing
# sizes, unknown arch names, configs of the wrong type, truncated traces and
# databases. Each row must end in an error that says what is wrong (its
# regex) with exit status 1, or 2 for a usage error, and never in a signal.
#   bad_input_table.sh TESSERA_BINARY SOURCE_DIR
set -uo pipefail
tessera=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TESSERA_CACHE=$tmp/kernels TESSERA_DB=$tmp/tuning.jsonl HOME=$tmp
cd "$tmp" || exit 1

# The inputs.
: >empty.py
printf '\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe\xfd\x00\x01\x02\x80\x81\x90 garbage \x00\x00\xc3\x28' >garbage.py
for i in $(seq 1 64); do printf "\\x$(printf %02x $((i * 37 % 256)))\\x00\\xff"; done >>garbage.py
head -c 200 "$src/workloads/add_f16.py" >truncated.py
printf 'def f(:\n' >badsyntax.py
cp "$src/workloads/add_f16.py" add.py
cp "$src/workloads/matmul_nn_f16.py" matmul.py
cp "$src/examples/softmax.py" softmax.py
printf '[{"op": "get_block", "name": "C"}, {"op": "split", "loop":' >truncated_trace.json
printf '{"op": "get_block"}' >object_trace.json
printf '[{"op": "frobnicate"}]' >unknown_trace.json
printf '{"key": {"workload": "00' >truncated_db.jsonl
printf '\x00\x01\x02\xff\n{"key":1}\nnot json\n' >garbage_db.jsonl
printf '{"name": "x", "compute": {"sm_count": "many"}}' >bad_arch.json
printf '{"rule": "elementwise", "threads": "lots"}' >bad_config.json
mkdir adir

rows=0 failures=0
# row NAME EXPECTED_RC REGEX ARGS...: runs tessera ARGS, checks the status and stderr.
row() {
  local name=$1 want=$2 regex=$3
  shift 3
  rows=$((rows + 1))
  timeout -k 5 120 "$tessera" "$@" >"$tmp/out.txt" 2>"$tmp/err.txt"
  local rc=$?
  local why=""
  if ((rc > 128 && rc != 124)); then why="killed by signal $((rc - 128))"
  elif ((rc == 124)); then why="timed out"
  elif [[ $rc != "$want" ]]; then why="exit status $rc, expected $want"
  elif ! grep -Eq -- "$regex" "$tmp/err.txt"; then why="stderr does not match /$regex/"
  fi
  if [[ -n $why ]]; then
    failures=$((failures + 1))
    echo "FAIL $name: $why"
    echo "  \$ tessera $*"
    sed 's/^/  | /' "$tmp/err.txt" | head -8
  else
    echo "ok   $name ($rc): $(head -1 "$tmp/err.txt" | cut -c1-140)"
  fi
}

# Usage errors: exit 2.
row no-command 2 'subcommand is required'
row unknown-command 2 "unknown command 'frobnicate'" frobnicate
row missing-file 2 'does not exist' run nonexist.py
row unknown-option 2 'no-such-option' run add.py --no-such-option
row directory-as-file 2 'adir|does not exist|directory' fmt adir
row negative-topk-value 1 'topk' tune add.py --topk -3 --arch h100 --dim rows=4 --dim cols=4 --db none

# Text that is not a program: exit 1 with FILE:LINE:COL.
for cmd in fmt run schedule codegen; do
  row "$cmd-empty" 1 'empty.py.*(no|empty|function)' $cmd empty.py
  row "$cmd-garbage" 1 'garbage.py:[0-9]+:[0-9]+' $cmd garbage.py
  row "$cmd-truncated" 1 'truncated.py:[0-9]+:[0-9]+' $cmd truncated.py
  row "$cmd-syntax" 1 'badsyntax.py:1:[0-9]+' $cmd badsyntax.py
done
row compile-garbage 1 'garbage.py:[0-9]+:[0-9]+' compile garbage.py
row tune-garbage 1 'garbage.py:[0-9]+:[0-9]+' tune garbage.py --arch h100
row tune-empty 1 'empty.py' tune empty.py --arch h100
row dynamic-garbage 1 'garbage.py:[0-9]+:[0-9]+' dynamic garbage.py --range m=1:64 --arch h100

# Sizes.
row run-int32-size-too-big 1 "'rows' is int32 in 'main': 4611686018427387904 does not fit it" run add.py --dim rows=4611686018427387904 --dim cols=2
row run-overflowing-size 1 'float32\[36028797018963968, 256\] has more (elements|bytes) than a 64-bit count holds' run softmax.py --dim rows=36028797018963968
row run-too-big-for-memory 1 "the arguments of 'softmax': .* of memory needed; this machine has .* available" run softmax.py --dim rows=300000000000
row run-negative-size 1 'negative' run add.py --dim rows=-5 --dim cols=2
row run-not-a-number 1 "rows|integer|number" run add.py --dim rows=lots --dim cols=2
row run-unknown-dim 1 "nope" run add.py --dim nope=3 --dim rows=2 --dim cols=2
row run-dim-without-value 1 "rows" run add.py --dim rows
row run-huge-number 1 "rows" run add.py --dim rows=99999999999999999999999 --dim cols=2
row tune-int32-size-too-big 1 "'rows' is int32 in 'main': 4611686018427387904 does not fit it" tune add.py --arch h100 --dim rows=4611686018427387904 --dim cols=2 --db none --topk 1
row tune-overflowing-size 1 "buffer 'A' of 'softmax': .* has more (elements|bytes) than a 64-bit count holds" tune softmax.py --arch h100 --dim rows=36028797018963968 --db none --topk 1
row tune-negative-size 1 'negative' tune add.py --arch h100 --dim rows=-5 --dim cols=2 --db none --topk 1
row schedule-negative-size 1 'negative' schedule add.py --arch h100 --verify --dim rows=-5 --dim cols=2
row dynamic-empty-range 1 'range' dynamic matmul.py --range m=64:1 --dim n=64 --dim k=64 --arch h100
row dynamic-zero-range 1 'range|at least 1|positive' dynamic matmul.py --range m=0:0 --dim n=64 --dim k=64 --arch h100

# Arch names and descriptions.
row schedule-unknown-arch 1 "unknown GPU 'v100'" schedule add.py --arch v100
row tune-unknown-arch 1 "unknown GPU 'v100'" tune add.py --arch v100 --dim rows=4 --dim cols=4
row arch-unknown 1 "unknown GPU 'v100'" arch v100
row arch-bad-json 1 'bad_arch.json' schedule add.py --arch bad_arch.json
row compile-unknown-arch 1 'sm_12|unknown' compile softmax.py --arch sm_12
row codegen-unknown-arch 1 'sm_12|unknown|arch' codegen softmax.py --arch sm_12

# Configs and traces.
row config-wrong-type 1 'threads' schedule add.py --arch h100 --rule elementwise --config @bad_config.json
row config-not-json 1 'config|JSON|json' schedule add.py --arch h100 --rule elementwise --config '{"rule": '
row config-missing-file 1 'nope.json' schedule add.py --arch h100 --rule elementwise --config @nope.json
row config-without-rule 1 'needs --rule' schedule add.py --arch h100 --config '{"threads": 64}'
row unknown-rule 1 'frobnicate' schedule add.py --arch h100 --rule frobnicate
row trace-truncated 1 'truncated_trace.json' schedule add.py --trace truncated_trace.json
row trace-not-a-list 1 'object_trace.json|list' schedule add.py --trace object_trace.json
row trace-unknown-op 1 'frobnicate' schedule add.py --trace unknown_trace.json

# Databases: a bad line is skipped with a warning, never fatal; a directory is an error.
row db-is-a-directory 1 'adir' tune add.py --arch h100 --dim rows=4 --dim cols=4 --db adir --topk 1
row db-garbage-lines-are-skipped 0 'garbage_db.jsonl:1: skipped' tune add.py --arch h100 --dim rows=4 --dim cols=4 \
  --db garbage_db.jsonl --topk 1 --no-measure --no-sass
row db-truncated-line-is-skipped 0 'truncated_db.jsonl:1: skipped' tune add.py --arch h100 --dim rows=4 --dim cols=4 \
  --db truncated_db.jsonl --topk 1 --no-measure --no-sass

echo "bad input: $rows rows, $failures failed"
((failures == 0))
