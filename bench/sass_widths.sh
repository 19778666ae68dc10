#!/usr/bin/env bash
# The global/shared/local access widths in the SASS of every memory-bound
# workload at its full size: the policy's top-3 and the default config
# (tessera tune --no-measure for the configs, schedule --specialize + compile
# for each, whose SASS summary gives the widths). No GPU needed. One line per
# config: WORKLOAD ORIGIN CONFIG :: global ld 16B x8 | st 16B x2 | ... (static
# counts, a kernel per ';').
#   bench/sass_widths.sh [WORKLOAD ...]     (default: the memory-bound corpus)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
T=$root/build/tools/tessera; W=$root/workloads
dis=$(ls "$root"/.deps/cuda-tools/nvidia/cu*/bin/cuobjdump 2>/dev/null | head -1 || true)
dis=${TESSERA_CUOBJDUMP:-${dis:-$(command -v cuobjdump || true)}}
[[ -x $T ]] || { echo "build first: ./dev.sh build" >&2; exit 2; }
[[ -n $dis ]] || { echo "no cuobjdump: ./dev.sh build installs it into .deps/cuda-tools" >&2; exit 2; }
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
names=${*:-copy_f16 add_f16 transpose_f32 reduce_sum_f32 reduce_max_f16 reduce_sum_outer_f32 softmax_f16 rmsnorm_f16 layernorm_f16 gemv_f16 gemv_int4}
for n in $names; do
  read -r file dims < <(python3 -c "import json,sys;d={w['name']:w for w in json.load(open('$W/workloads.json'))};w=d['$n'];print(w['file'], ' '.join('--dim %s=%d'%(k,v) for k,v in w['full'].items()))")
  # shellcheck disable=SC2086
  "$T" tune "$W/$file" --arch h100 $dims --topk 3 --db none --no-measure --no-sass --json "$out/$n.json" -o "$out/$n.tune" >/dev/null 2>&1
  python3 -c "
import json
for c in json.load(open('$out/$n.json'))['candidates']:
    cfg = c['config'] if isinstance(c['config'], dict) else json.loads(c['config'])
    print(c['origin'].replace(' ', '_') + '\t' + json.dumps(cfg, separators=(',', ':')))" > "$out/$n.configs"
  while IFS=$'\t' read -r origin cfg; do
    d=$out/$n.$origin; mkdir -p "$d"
    rule=$(python3 -c "import json,sys;print(json.loads(sys.argv[1])['rule'])" "$cfg")
    # shellcheck disable=SC2086
    if ! "$T" schedule "$W/$file" --arch h100 $dims --specialize --rule "$rule" --config "$cfg" > "$d/s.py" 2>"$d/err"; then
      echo "$n $origin $cfg :: schedule failed: $(head -1 "$d/err")"; continue
    fi
    # tessera compile's SASS summary (runtime/Sass.h), one line per kernel.
    TESSERA_CUOBJDUMP=$dis "$T" compile "$d/s.py" --arch sm_90 > "$d/compile.log" 2>&1 ||
      { echo "$n $origin $cfg :: compile failed"; continue; }
    widths=$(sed -n 's/^  sass: //p' "$d/compile.log" | paste -sd';' -)
    echo "$n $origin $cfg :: $widths"
  done < "$out/$n.configs"
done
