#!/usr/bin/env bash
# A warm query with and without `memoir watch` (issue 29, point 1): wall
# time of `recall` and of the prompt hook (`context --from-hook` with a
# UserPromptSubmit payload on stdin), p50 / p95 of RUNS runs after 3
# warm-ups, beside `memoir --version` (the process floor), on generated
# stores; then a hand edit made between two queries, with and without the
# watcher, must be found by the second. docs/performance.md records a run.
#
#   bench/watch.sh [SIZE...]      default sizes: 1000 10000
#   RUNS=30 bench/watch.sh 60000
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000)
runs=${RUNS:-60}
cargo build --release --quiet --example gen_store
cargo build --release --quiet
export PATH="$PWD/target/release:$PATH"
gen="$PWD/target/release/examples/gen_store"
work=$(mktemp -d)
watcher=
cleanup() {
  [ -z "$watcher" ] || kill "$watcher" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export GIT_CONFIG_GLOBAL="$work/gitconfig" GIT_CONFIG_NOSYSTEM=1
git config --global user.name Bench
git config --global user.email bench@example.com
git config --global init.defaultBranch main
git config --global gc.auto 0
git config --global maintenance.auto false
payload='{"hook_event_name": "UserPromptSubmit", "prompt": "why does the database migration time out in staging?"}'

# times LABEL: p50 and p95 (ms) of each command, one line per command.
times() {
  python3 - "$1" "$runs" "$payload" <<'PY'
import statistics, subprocess, sys, time
label, runs, payload = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode()
cmds = {
    "--version": (["memoir", "--version"], None),
    "recall": (["memoir", "recall", "database", "migration", "timeout"], None),
    "context --from-hook": (["memoir", "context", "--from-hook"], payload),
}
for name, (cmd, stdin) in cmds.items():
    ts = []
    for i in range(runs + 3):
        t = time.perf_counter()
        subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, check=True)
        if i >= 3:
            ts.append((time.perf_counter() - t) * 1000)
    ts.sort()
    p95 = ts[min(len(ts) - 1, round(0.95 * (len(ts) - 1)))]
    print(f"{label}\t{name}\t{statistics.median(ts):.1f}\t{p95:.1f}")
PY
}

# stats ARGS...: the MEMOIR_DEBUG_STATS line of one query.
stats() { MEMOIR_DEBUG_STATS=1 memoir "$@" 2>&1 >/dev/null | grep 'stats:' | sed 's/.*stats: //'; }

# edit N: a hand edit of one memory's description, then a recall of the
# new word, which must find it.
edit() {
  local f word=kumquat$1
  f=$(ls memory/project | sed -n 1p)
  sed -i "s/^description: /description: $word /" "memory/project/$f"
  MEMOIR_DEBUG_STATS=1 memoir recall "$word" >"$work/out" 2>"$work/err"
  grep -q "memory/project/$f" "$work/out" || { echo "the hand edit of $f was not seen" >&2; exit 1; }
  echo "hand edit seen by the next recall ($(grep -o 'listed: [0-9]*, log replays: [0-9]*, watched: [0-9]*' "$work/err"))"
}

for n in "${sizes[@]}"; do
  store="$work/store-$n"
  echo "generating $n memories…" >&2
  "$gen" "$store" "$n" 42 >&2
  cd "$store"
  git add -A >/dev/null && git commit -qm "generated store"
  sync && sleep 5
  memoir recall warm up >/dev/null
  echo "== $n memories"
  echo "without the watcher: $(stats recall database migration timeout)"
  times "$n without"
  edit 1
  memoir watch &
  watcher=$!
  # Ready once it has saved the index with its token: nothing to stat.
  for _ in $(seq 200); do
    s=$(stats recall database migration timeout)
    case $s in *"listed: 0, "*"watched: 1") break ;; esac
    sleep 0.1
  done
  echo "with the watcher: $s"
  times "$n with"
  edit 2
  kill "$watcher" && wait "$watcher" || true
  watcher=
  cd - >/dev/null
done
