#!/bin/sh
# tests/fuzz/run.sh - run fuzz targets for a bounded time (make fuzz-run)
#
#   run.sh [-t SECONDS] [-j JOBS] [TARGET...]
#
# Runs each target (every one when none is named) of
# $top_builddir/tests/fuzz/polysandbox-fuzz for SECONDS, JOBS at a time,
# starting from its seeds in $top_srcdir/tests/fuzz/corpus/TARGET and
# writing what it finds under $top_builddir/tests/fuzz/run/TARGET/ (new
# inputs in corpus/, a crashing one as crash-*, leak-*, timeout-* or
# oom-*).  Exits 1 when any target found one, after printing the report,
# the input (base64) and the command that reproduces it.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
secs=60 jobs=1
while getopts t:j: o; do
    case $o in
    t) secs=$OPTARG ;;
    j) jobs=$OPTARG ;;
    *) echo "usage: run.sh [-t SECONDS] [-j JOBS] [TARGET...]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
fuzz=$top_builddir/tests/fuzz/polysandbox-fuzz
[ -x "$fuzz" ] || { echo "run.sh: no $fuzz (make fuzz)" >&2; exit 2; }
targets=${*:-$(SBX_FUZZ_LIST=1 "$fuzz")}
out=$top_builddir/tests/fuzz/run
# The run's own environment: what a caller exported must not steer the
# configuration the targets read.
unset POLYSANDBOX_CONFIG_DIR POLYSANDBOX_PROVIDER_PATH POLYSANDBOX_STATE_DIR
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:detect_odr_violation=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

run_one() {
    t=$1 d=$out/$1
    rm -rf "$d" && mkdir -p "$d/corpus" || return 2
    dict=
    [ -f "$top_srcdir/tests/fuzz/dict/$t.dict" ] && dict=-dict=$top_srcdir/tests/fuzz/dict/$t.dict
    # -timeout: one input may not take 30 s; -rss_limit_mb: nor 2.5 GB.
    SBX_FUZZ_TARGET=$t "$fuzz" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2560 \
        -print_final_stats=1 -artifact_prefix="$d/" $dict \
        "$d/corpus" "$top_srcdir/tests/fuzz/corpus/$t" >"$d/log" 2>&1
    echo $? >"$d/status"
}

# JOBS at a time.
set -- $targets
running=0
for t in "$@"; do
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait
        running=0
    fi
done
wait

failed=0
for t in $targets; do
    d=$out/$t
    st=$(cat "$d/status" 2>/dev/null || echo "?")
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/log" | tail -n1)
    new=$(ls "$d/corpus" | wc -l)
    found=$(ls "$d" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' | head -n1)
    if [ "$st" = 0 ] && [ -z "$found" ]; then
        echo "fuzz: $t: ok, ${runs:-?} inputs in ${secs}s, $new new in the corpus"
        continue
    fi
    failed=1
    echo "fuzz: $t: FAILED (exit $st) after ${runs:-?} inputs"
    grep -n -A 40 -E '^==[0-9]+==ERROR|runtime error|fuzz: the code under test|^==[0-9]+== ERROR|libFuzzer: (deadly|timeout|out-of-memory)' \
        "$d/log" | head -n 80 | sed 's/^/    /'
    if [ -n "$found" ]; then
        echo "fuzz: $t: the input ($d/$found), base64:"
        base64 "$d/$found" | sed 's/^/    /'
        echo "fuzz: $t: reproduce with: SBX_FUZZ_TARGET=$t tests/fuzz/polysandbox-fuzz $d/$found"
        echo "fuzz: $t: or without libFuzzer: tests/fuzz/replay $t $d/$found"
    else
        tail -n 30 "$d/log" | sed 's/^/    /'
    fi
done
exit $failed
