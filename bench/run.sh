#!/usr/bin/env bash
# Benchmarks memoir's read path on generated stores, side by side with the
# floors in the same run: `rg -il WORD memory/` (a plain text search) and
# `find … -printf` (one stat per memory file, the least any index check can
# do). Prints a markdown table; docs/performance.md explains and records it.
#
#   bench/run.sh [SIZE...]        default sizes: 1000 10000 50000
#
# Needs hyperfine and ripgrep (installed from Debian's packages if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 50000)

if ! command -v hyperfine >/dev/null || ! command -v rg >/dev/null; then
  apt-get install -y hyperfine ripgrep >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y hyperfine ripgrep >/dev/null; }
fi
cargo build --release --quiet --example gen_store
cargo build --release --quiet
memoir="$PWD/target/release/memoir"
gen="$PWD/target/release/examples/gen_store"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { # hyperfine JSON -> median in ms
  python3 -c 'import json,sys; print("%.1f" % (json.load(open(sys.argv[1]))["results"][0]["median"]*1000))' "$1"
}
time_cmd() { # name, command... -> median ms (warm runs)
  local out="$work/$1.json"; shift
  hyperfine -N -w 3 -r 15 --export-json "$out" "$(printf '%q ' "$@")" >/dev/null 2>&1
  median "$out"
}
peak() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1; }

echo "| memories | recall (warm) | context query (warm) | rg -il | find -printf (stat floor) | recall cold | peak RSS warm / cold |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for n in "${sizes[@]}"; do
  store="$work/store-$n"
  "$gen" "$store" "$n" 42 >/dev/null
  cd "$store"
  index=(.git/memoir/stores/*/index.bin)
  rm -f "${index[@]}"
  cold_start=$(date +%s%N)
  cold_rss=$(peak "$memoir" recall database migration timeout)
  cold_ms=$(( ($(date +%s%N) - cold_start) / 1000000 ))
  recall=$(time_cmd "recall-$n" "$memoir" recall database migration timeout)
  context=$(time_cmd "context-$n" "$memoir" context --budget 1500 database migration timeout)
  rg_ms=$(time_cmd "rg-$n" rg -il migration memory/)
  find_ms=$(time_cmd "find-$n" find memory/user memory/project memory/task -name '*.md' -printf '%s %T@\n')
  warm_rss=$(peak "$memoir" recall database migration timeout)
  echo "| $n | ${recall} ms | ${context} ms | ${rg_ms} ms | ${find_ms} ms | ${cold_ms} ms | $((warm_rss / 1024)) / $((cold_rss / 1024)) MB |"
  cd - >/dev/null
done
