#!/usr/bin/env bash
# Times every operation of issue 5/5 on generated stores, each side by side
# with its floor or alternative measured in the same run, then prints how
# each grows with the store (the exponent). docs/performance.md explains the
# table and records a run.
#
#   bench/run.sh [SIZE...]        default sizes: 1000 10000 50000
#   RUNS=5 bench/run.sh 50000     fewer runs per measurement (default 10)
#   GEN="--zh 0.6 --body-lines 12 --seed 7" bench/run.sh 50000
#                                 another store shape (gen_store's options;
#                                 --seed replaces the default seed 42)
#   HOOK_RUNS=60 bench/run.sh     runs of the prompt hook's rows (default 40:
#                                 their p95 needs more runs than RUNS)
#
# With two sizes or more it also prints the largest store's time over the
# smallest's (issue 29: recall at 60,000 within 3× recall at 1,000).
#
# Each store: `gen_store <dir> SIZE 42` (4 × SIZE log events, 1,000 pending
# proposals at 50,000), committed to git. Needs hyperfine and ripgrep
# (installed from Debian's packages if missing), git, python3 and bm25s
# (installed from PyPI if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 50000)
runs=${RUNS:-10}
hook_runs=${HOOK_RUNS:-40}

if ! command -v hyperfine >/dev/null || ! command -v rg >/dev/null; then
  apt-get install -y hyperfine ripgrep >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y hyperfine ripgrep >/dev/null; }
fi
python3 -c 'import bm25s' 2>/dev/null || pip install -q bm25s >/dev/null 2>&1
root=$PWD
seed=42
gen_opts=()
set -- ${GEN:-}
while [ $# -gt 0 ]; do
  if [ "$1" = --seed ]; then seed=$2; shift 2; else gen_opts+=("$1"); shift; fi
done
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
results="$work/results.tsv"
: >"$results"

# Pinned identity and config, as a CI runner would have.
export GIT_CONFIG_GLOBAL="$work/gitconfig" GIT_CONFIG_NOSYSTEM=1
git config --global user.name Bench
git config --global user.email bench@example.com
git config --global init.defaultBranch main
# No background `git gc --auto` after committing 50,000 new files: it takes
# both cores for minutes, under the timings.
git config --global gc.auto 0
git config --global maintenance.auto false

# bench SIZE NAME [hyperfine options...] -- COMMAND: records the median and
# the p95 (ms) of whole-process time. Commands run through a shell (hyperfine
# subtracts its start-up) so that they can use $RANDOM and redirections.
bench() {
  local n=$1 name=$2; shift 2
  local opts=(-w 2 -r "$runs") shell=(-S bash)
  while [ "$1" != -- ]; do
    # --slow: seconds per run, with a costly --prepare: 3 runs, no warm-up.
    if [ "$1" = --slow ]; then opts=(-w 0 -r 3)
    # --runs N: N runs instead of RUNS (a p95 needs more than 10).
    elif [ "$1" = --runs ]; then opts=(-w 2 -r "$2"); shift
    # -N: run without a shell, nothing subtracted (a command of 2 ms is
    # lost in the noise of the shell's start-up that is subtracted).
    elif [ "$1" = -N ]; then shell=(-N)
    else opts+=("$1"); fi
    shift
  done
  shift
  local json="$work/$n-$name.json"
  hyperfine "${shell[@]}" "${opts[@]}" --export-json "$json" "$*" >/dev/null 2>"$work/err" || {
    echo "bench $name failed:" >&2; cat "$work/err" >&2; exit 1; }
  python3 - "$json" "$n" "$name" >>"$results" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
ts = sorted(r["times"])
p95 = ts[round(0.95 * (len(ts) - 1))]
print(f"{sys.argv[2]}\t{sys.argv[3]}\t{r['median'] * 1000:.1f}")
print(f"{sys.argv[2]}\tp95:{sys.argv[3]}\t{p95 * 1000:.1f}")
PY
}
# peak SIZE NAME COMMAND...: records the peak RSS (MB) of one run.
peak() {
  local n=$1 name=$2; shift 2
  local kb
  kb=$(/usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1)
  printf '%s\tpeak:%s\t%s\n' "$n" "$name" "$((kb / 1024))" >>"$results"
}

for n in "${sizes[@]}"; do
  store="$work/store-$n"
  echo "generating $n memories…" >&2
  "$gen" "$store" "$n" "$seed" "${gen_opts[@]}" >&2
  cd "$store"
  git add -A >/dev/null && git commit -qm "generated store"
  git tag base
  # Let the kernel finish writing the new files back and settle: timings
  # taken in the first minute after writing 300 MB are up to 1.5x slower.
  sync && sleep 60
  mem="memory/user memory/project memory/task"
  log="$work/append-$n.txt"
  # The prompt hook as `memoir setup` installs it for Claude Code
  # (UserPromptSubmit: `context --from-hook --budget 800`), its payload on stdin.
  hook="$work/hook-$n.json"
  printf '{"session_id": "bench", "hook_event_name": "UserPromptSubmit", "cwd": "%s", "prompt": "why does the database migration time out in staging?"}\n' "$store" >"$hook"
  # Each run's key and description are new words, so `remember` writes;
  # they are made without starting a process (four `tr` would add 25 ms).
  new_memory='w() { local n=$((RANDOM * 32768 + RANDOM)) s=; while ((n)); do s+=${L:n%26:1}; ((n /= 26)); done; W=$s; }; L=abcdefghijklmnopqrstuvwxyz; w; k=$W; w; a=$W; w; b=$W; w; memoir remember -q "project/bench-$k" -d "$a $b $W" -s bench --body "bench body"'

  echo "timing at $n…" >&2
  bench "$n" version -N -- memoir --version
  bench "$n" note -- "memoir note 'bench note: the deploy needs a warm cache'"
  bench "$n" printf -- "printf 'bench note: the deploy needs a warm cache\n' >> $log"
  bench "$n" remember -- "$new_memory"
  bench "$n" recall -- memoir recall database migration timeout
  bench "$n" rg -- rg -il migration memory/
  # The simplest alternative: every memory in one JSON file, keyword search.
  python3 "$root/bench/json_store.py" build . "$work/store-$n.json"
  bench "$n" json-store -- python3 "$root/bench/json_store.py" search "$work/store-$n.json" database migration timeout
  # BM25 over the same memories (bm25s, numpy/scipy), its index built once.
  python3 "$root/bench/bm25s_store.py" build . "$work/bm25s-$n"
  bench "$n" bm25s -- python3 "$root/bench/bm25s_store.py" search "$work/bm25s-$n" database migration timeout
  bench "$n" context -- memoir context --budget 1500 database migration timeout
  # A prompt as agents send them: several sentences, each of which the
  # decision asks of the store on its own (search.md, context <prompt>).
  bench "$n" context-long -- memoir context --budget 1500 "'I am taking over the database migration work. The staging run hit a timeout yesterday; can you check what the deploy checklist says about long migrations, and whether we have a rule for locking tables? Then draft the plan for tonight.'"
  bench "$n" hook --runs "$hook_runs" -- "memoir context --from-hook --budget 800 < $hook"
  # The same warm queries with `memoir watch` running in the store (issue 29
  # point 1): it tells them what changed, so they stat no memory file. Ready
  # once it has saved the index with its token (as bench/watch.sh waits).
  memoir watch & watcher=$!
  for _ in $(seq 300); do
    s=$(MEMOIR_DEBUG_STATS=1 memoir recall database migration timeout 2>&1 >/dev/null | grep 'stats:' || true)
    case $s in *"listed: 0, "*"watched: 1") break ;; esac
    sleep 0.1
  done
  case $s in *"listed: 0, "*"watched: 1") ;; *) echo "memoir watch not ready: $s" >&2; exit 1 ;; esac
  # A resident process is timed in its steady state: the index it has just
  # saved (100 MB at 60,000 memories) written back first, not under the
  # timings (the kernel writes dirty pages back 30 s later, mid-run).
  sync && sleep 2
  bench "$n" recall-watched -- memoir recall database migration timeout
  bench "$n" hook-watched --runs "$hook_runs" -- "memoir context --from-hook --budget 800 < $hook"
  kill "$watcher" && wait "$watcher" || true
  watcher=
  bench "$n" reindex -- memoir reindex
  bench "$n" cat-memories -- "find $mem -name '*.md' -print0 | xargs -0 cat >/dev/null"
  bench "$n" check -- memoir check
  bench "$n" rebuild-check -- memoir rebuild --check
  bench "$n" rebuild -- memoir rebuild
  bench "$n" cat-logs -- "find memory/log -name '*.md' -print0 | xargs -0 cat >/dev/null"
  git add -A >/dev/null && git commit -qm "bench writes" >/dev/null

  # The pre-commit hook on a commit that stages no store path.
  memoir hooks install -q
  bench "$n" commit-hooked --prepare 'echo $RANDOM >> unrelated.txt && git add unrelated.txt' -- git commit -qm unrelated
  bench "$n" commit-plain --prepare 'echo $RANDOM >> unrelated.txt && git add unrelated.txt' -- git commit -q --no-verify -m unrelated
  memoir hooks uninstall -q
  git tag -f before-consolidate >/dev/null

  # consolidate of the pending proposals, against git committing the same
  # files. The restore moves aside the files the run created (bench/aside.py:
  # deleting them would slow the next run's file creation, which no real
  # consolidation meets), and, since the reset truncates the logs, brings
  # the persistent index up to date, as it is on a store that only grows.
  restore="python3 $root/bench/aside.py $work/aside-$n && memoir reindex -q && sync"
  bench "$n" consolidate --prepare "$restore" -- memoir consolidate -q --yes
  bench "$n" git-commit --prepare "$restore && memoir consolidate -q --yes && git reset -q --mixed HEAD~1 && sync" -- "git add -A && git commit -qm same-files"
  eval "$restore"

  # A rebuild of every view into emptied folders whose old files were
  # moved away, so that no inode is freed: what it costs where freed
  # inodes are reused at once (ext4 with a journal), against `cp` of the
  # same files in the same state.
  views="$work/views-$n" && mkdir -p "$views" && cp -r memory/user memory/project memory/task "$views/"
  empty="for s in user project task; do d=$work/emptied-$n/\$(date +%s%N) && mkdir -p \$d && mv memory/\$s \$d/ && mkdir memory/\$s && touch memory/\$s/.gitkeep; done && sync"
  bench "$n" rebuild-emptied --slow --prepare "$empty" -- memoir rebuild
  bench "$n" cp-emptied --slow --prepare "$empty" -- "for s in user project task; do cp -r $views/\$s/. memory/\$s/; done"

  # Creating files right after deleting as many is slow on ext4 without a
  # journal (the inode allocator skips recently deleted inodes): the floor
  # of a rebuild of every view is `cp` of the same files after the same
  # deletion. Timed after everything else that creates files: for minutes
  # after it, every file created steps over the 50,000 freed inodes.
  bench "$n" rebuild-deleted --slow --prepare "find $mem -name '*.md' -delete" -- memoir rebuild
  bench "$n" cp-deleted --slow --prepare "find $mem -name '*.md' -delete" -- "for s in user project task; do cp -r $views/\$s/. memory/\$s/; done"
  bench "$n" cold-recall --slow --prepare "rm -f .git/memoir/stores/*/index.bin" -- memoir recall database migration timeout

  peak "$n" note memoir note "peak note"
  peak "$n" remember bash -c "$new_memory"
  peak "$n" recall memoir recall database migration timeout
  peak "$n" context memoir context --budget 1500 database migration timeout
  peak "$n" reindex memoir reindex
  peak "$n" check memoir check
  peak "$n" rebuild-check memoir rebuild --check
  find $mem -name '*.md' -delete
  peak "$n" rebuild memoir rebuild
  rm -f .git/memoir/stores/*/index.bin
  peak "$n" cold-recall memoir recall database migration timeout
  eval "$restore"
  peak "$n" consolidate memoir consolidate -q --yes
  cd - >/dev/null
done

python3 - "$results" "seed $seed ${gen_opts[*]}" "${sizes[@]}" <<'PY'
import math, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
shape = sys.argv[2]
sizes = sys.argv[3:]
t = {(n, k): float(v) for n, k, v in rows}
ops = [  # operation, its floor (or alternative), what the floor is
    ("version", None, ""),
    ("note", "printf", "printf >> file"),
    ("remember", "note", "note"),
    ("recall", "version", "memoir --version (the process floor)"),
    ("recall", "rg", "rg -il WORD memory/"),
    ("recall", "json-store", "keyword search of one JSON file (bench/json_store.py)"),
    ("recall", "bm25s", "BM25 with bm25s, index built once (bench/bm25s_store.py)"),
    ("context", "recall", "recall"),
    ("context", "rg", "rg -il WORD memory/"),
    ("context-long", "rg", "rg -il WORD memory/"),
    ("hook", "version", "memoir --version (the process floor)"),
    ("recall-watched", "recall", "recall without the watcher"),
    ("hook-watched", "hook", "the hook without the watcher"),
    ("reindex", "cat-memories", "cat of every memory file"),
    ("rebuild", "cat-logs", "cat of every log file"),
    ("rebuild", "rebuild-check", "rebuild --check"),
    ("rebuild-emptied", "cp-emptied", "cp of the same files into the same emptied folders"),
    ("rebuild-deleted", "cp-deleted", "cp of the same files after the same deletion"),
    ("check", "rebuild-check", "rebuild --check"),
    ("commit-hooked", "commit-plain", "the same commit without hooks"),
    ("consolidate", "git-commit", "git add -A && git commit, same files"),
    ("cold-recall", None, ""),
]
names = {"version": "--version", "hook": "context --from-hook (the prompt hook)",
         "recall-watched": "recall, memoir watch running", "hook-watched": "context --from-hook, memoir watch running",
         "rebuild-check": "rebuild --check", "context-long": "context, a 50-word prompt of four sentences", "rebuild-deleted": "rebuild, every view deleted", "rebuild-emptied": "rebuild, every view moved away", "commit-hooked": "commit with pre-commit hook",
         "cold-recall": "recall, no persistent index"}
for n in sizes:
    print(f"\n### {int(n):,} memories (gen_store {shape.strip()})\n")
    print("| operation | median | p95 | floor or alternative | its median | ratio | peak RSS |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for op, floor, label in ops:
        if (n, op) not in t:
            continue
        m = t[(n, op)]
        f = t.get((n, floor)) if floor else None
        ratio = f"{m / f:.2f}×" if f else ""
        extra = f"+{m - f:.1f} ms" if op == "commit-hooked" and f is not None else ratio
        pk = t.get((n, "peak:" + op))
        pk = pk if pk is not None else t.get((n, "peak:" + op.replace("-deleted", "").replace("-emptied", "")))
        print(f"| {names.get(op, op)} | {m:.1f} ms | {t[(n, 'p95:' + op)]:.1f} ms | {label} | {f'{f:.1f} ms' if f is not None else ''} | {extra} | {f'{pk:.0f} MB' if pk is not None else ''} |")
if len(sizes) > 1:
    a, b = min(sizes, key=int), max(sizes, key=int)
    print(f"\n### {int(b):,} memories against {int(a):,}: the same operation, larger store / smaller\n")
    print(f"| operation | median at {int(a):,} | at {int(b):,} | ratio | p95 at {int(a):,} | at {int(b):,} | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for op in ["version", "recall", "recall-watched", "context", "hook", "hook-watched", "note", "remember", "check", "rebuild-check"]:
        if (a, op) in t and (b, op) in t:
            pa, pb = t[(a, "p95:" + op)], t[(b, "p95:" + op)]
            print(f"| {names.get(op, op)} | {t[(a, op)]:.1f} ms | {t[(b, op)]:.1f} ms | {t[(b, op)] / t[(a, op)]:.2f}× | {pa:.1f} ms | {pb:.1f} ms | {pb / pa:.2f}× |")
    print("\n### Growth: time ∝ size^k\n")
    pairs = list(zip(sizes, sizes[1:]))
    print("| operation | " + " | ".join(f"k {int(a):,}→{int(b):,}" for a, b in pairs) + " |")
    print("| --- |" + " --- |" * len(pairs))
    floors = ["printf", "rg", "json-store", "bm25s", "cat-memories", "cat-logs", "cp-emptied", "cp-deleted"]
    for op in dict.fromkeys([op for op, _, _ in ops] + floors):
        ks = []
        for a, b in pairs:
            if t.get((a, op), 0) > 0 and t.get((b, op), 0) > 0:
                ks.append(f"{math.log(t[(b, op)] / t[(a, op)]) / math.log(int(b) / int(a)):.2f}")
            else:
                ks.append("")
        print(f"| {names.get(op, op)} | " + " | ".join(ks) + " |")
PY
