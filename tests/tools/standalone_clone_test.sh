#!/usr/bin/env bash
# The repository builds and runs from its own files (issue 37):
#   standalone_clone_test.sh TESSERA_PROGRAM
# copies the repository's files (what git tracks, and new files it does not
# ignore: a clone of the working tree) into an empty folder with nothing
# beside it, then
#   1. configures it with CMake: no file outside the copy is needed to configure;
#   2. runs the built `tessera` on the copy's data (TESSERA_HOME) from inside
#      the copy: it reports the copy as its data, schedules and verifies a
#      long-tail program and a corpus workload there, and lists the bench suites;
#   3. checks that no build file, script or program source of the copy names
#      the developers' shared folder beside the repository.
# Exit 77 (skipped) outside a git checkout.
set -euo pipefail
tessera=$(realpath "$1")
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "SKIP: $src is not a git checkout"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
clone="$tmp/empty/tessera"
mkdir -p "$clone"
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
  xargs -0 cp --parents -t "$clone")
[[ $(ls -A "$tmp/empty") == tessera ]] || fail "the clone's folder has something beside the repository"
[[ -d $clone/workloads/longtail ]] || fail "workloads/longtail/ is not in the repository"

# 1. Configure (tests and benchmarks included: every CMakeLists.txt is read).
cmake -S "$clone" -B "$tmp/build" -G Ninja >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log"; fail "cmake cannot configure the clone"; }
grep -n "\.\./shared" "$tmp/build/CMakeCache.txt" && fail "the clone's CMake cache names the shared folder"

# 2. The program on the clone's data, from inside the clone.
cd "$clone"
export TESSERA_HOME="$clone"
out=$("$tessera" devices 2>&1) || fail "tessera devices: $out"
grep -q "^data: $clone (TESSERA_HOME)" <<<"$out" || fail "tessera devices does not read the clone's data: $out"
out=$("$tessera" schedule workloads/longtail/prefix_sum.py --arch h100 --verify 2>&1) ||
  fail "tessera schedule of a long-tail program in the clone: $out"
grep -q "# rule: fallback" <<<"$out" || fail "the long-tail program was not scheduled by the fallback: $out"
grep -q "# verify: B: ok" <<<"$out" || fail "the long-tail program does not verify: $out"
out=$("$tessera" schedule workloads/softmax_f16.py --arch a100 --verify --dim rows=5 --dim cols=70 2>&1) ||
  fail "tessera schedule of a corpus workload in the clone: $out"
grep -q "# verify: .*: ok" <<<"$out" || fail "the corpus workload does not verify: $out"

# 3. Nothing the build, the scripts or the programs read names the shared folder.
hits=$(grep -rln --include=CMakeLists.txt --include='*.cmake' --include='*.sh' --include='*.py' \
  --include='*.cpp' --include='*.json' --exclude="$(basename "$0")" -e '\.\./shared' -e 'TESSERA_SHARED_DIR' . || true)
[[ -z $hits ]] || fail "files that reach outside the repository: $hits"
echo "ok: configured and ran from a clone in an empty folder ($clone)"
