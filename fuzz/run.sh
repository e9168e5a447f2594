#!/usr/bin/env bash
# Runs each fuzz target for a set time, one process at a time, nice'd.
#
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]
#
# SECONDS_PER_TARGET defaults to 600; TARGET defaults to every target
# (memory log slug secrets merge interop mcp hook). Seeds the corpora (seed.py) and builds
# the targets (cargo +nightly fuzz build -O) first; FUZZ_NO_BUILD=1 skips
# the build. Prints per target the executions and any crash or timeout;
# crash inputs land in fuzz/artifacts/<target>/, libFuzzer's output in
# fuzz/logs/<target>/. Exits 1 when any target found something.
set -u
cd "$(dirname "$0")"
here=$(pwd)
secs=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(memory log slug secrets merge interop mcp hook)

mkdir -p logs
python3 seed.py >/dev/null || exit 2
if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then
    nice -n 19 cargo +nightly fuzz build -O >"$here/logs/build.log" 2>&1 || {
        tail -30 "$here/logs/build.log"
        exit 2
    }
fi
bin_dir=$here/target/x86_64-unknown-linux-gnu/release

# One libFuzzer run: target, seconds, max_len, log name. Prints
# "<executions> <status>" and leaves the run's output in logs/<target>/.
run_once() {
    local t=$1 s=$2 max_len=$3 name=$4
    local dir=$here/logs/$t/$name
    rm -rf "$dir"
    mkdir -p "$dir" "$here/corpus/$t" "$here/artifacts/$t"
    # -jobs=1 -workers=1: one child process; it writes fuzz-0.log in its
    # working directory.
    (cd "$dir" && nice -n 19 "$bin_dir/$t" \
        -jobs=1 -workers=1 \
        -max_total_time="$s" -timeout=2 -rss_limit_mb=2048 \
        -max_len="$max_len" -print_final_stats=1 \
        -artifact_prefix="$here/artifacts/$t/" \
        "$here/corpus/$t" >"$dir/parent.log" 2>&1)
    local log=$dir/fuzz-0.log
    local execs
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    if [ -z "$execs" ]; then
        # A crash ends the run before the final stats: the last status line.
        execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
    fi
    local status=ok
    if grep -qE 'ERROR: libFuzzer: timeout|ALARM: working on the last Unit' "$log"; then
        status=timeout
    elif grep -qE 'out-of-memory|ERROR: libFuzzer: (malloc|rss)' "$log"; then
        status=oom
    elif grep -qE '==[0-9]+==ERROR|panicked at|deadly signal' "$log"; then
        status=crash
    fi
    echo "${execs:-0} $status"
}

found=0
for t in "${targets[@]}"; do
    [ -x "$bin_dir/$t" ] || { echo "$t: not built"; found=1; continue; }
    case $t in
        # Short inputs for half the time, then up to 256 KiB (the size of
        # the largest memory file) to bound the time on long lines.
        secrets) phases=("$((secs / 2)) 4096 short" "$((secs - secs / 2)) 262144 long") ;;
        slug) phases=("$secs 1024 run") ;;
        *) phases=("$secs 262144 run") ;;
    esac
    total=0
    report=""
    for p in "${phases[@]}"; do
        set -- $p
        read -r execs status < <(run_once "$t" "$1" "$2" "$3")
        total=$((total + execs))
        report="$report $3:max_len=$2:$execs:$status"
        if [ "$status" != ok ]; then
            found=1
            log=$here/logs/$t/$3/fuzz-0.log
            echo "$t: $status after $execs executions (max_len $2)"
            grep -E 'panicked at|ERROR: libFuzzer|==ERROR|SUMMARY|Test unit written to|Timeout of' "$log" | head -8 | sed 's/^/    /'
            grep -A3 'panicked at' "$log" | head -4 | sed 's/^/    /'
            break
        fi
    done
    echo "$t: $total executions in ${secs}s;$report"
done
exit $found
