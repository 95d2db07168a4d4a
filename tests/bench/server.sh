#!/bin/sh
# tests/bench/server.sh - polysandboxd against the library it serves and a
# reference server, measured in one run (run by `make bench`)
#
#   round trip:  POST /v1/run of /bin/true, one at a time, against
#                sbx_run() in a loop (bench-runs -t 1: what the server adds)
#                and `polysandbox run -- /bin/true` (a process per run)
#   throughput:  1, 8 and 64 keep-alive clients (srv-load) on polysandboxd
#                and on the reference (ref-server.py: FastAPI under uvicorn,
#                bwrap through subprocess, as PolySandbox's first sketch
#                was), and sbx_run() on 1 and 2 threads
#   soak:        BENCH_SRV_SOAK requests (10000) from 64 keep-alive clients
#                on the warm server: its fds and resident memory before
#                and after (flat: the same fds, at most 4 MiB more)
#
# Every figure is measured BENCH_SRV_REPS times, the peers alternating
# within each round, and the medians are compared (server-summary.py
# prints them with the targets of issue 14).  The load average is printed
# before and after.  Speed is never asserted: exits 1 only when a run or a
# request fails.  A peer that is not installed (bwrap, FastAPI, uvicorn)
# is skipped with a note.
#
# Knobs: BENCH_SRV_REPS (rounds, 3), BENCH_SRV_SECONDS (each throughput
# figure, 5), BENCH_SRV_RUNS (round trips per round, 200), BENCH_SRV_SOAK
# (requests of the soak, 10000; 0: none), BENCH_SRV_ARGS
# (more polysandboxd options, e.g. "-o server.workers=8"),
# BENCH_CONFIG_DIR (the configuration, tests/config).
set -u
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
bench="$top_srcdir/tests/bench"
reps=${BENCH_SRV_REPS:-3}
secs=${BENCH_SRV_SECONDS:-5}
runs=${BENCH_SRV_RUNS:-200}
soak=${BENCH_SRV_SOAK:-10000}

export POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/local/.libs"
export POLYSANDBOX_CONFIG_DIR="${BENCH_CONFIG_DIR:-$top_srcdir/tests/config}"
# The in-process path (daemon = off) for the server and the library alike.
export POLYSANDBOX_LOCAL_DAEMON=off
work=$(mktemp -d "${TMPDIR:-/tmp}/polysandbox-bench-server.XXXXXX") || exit 1
export POLYSANDBOX_STATE_DIR="$work/state"
figures="$work/figures"
: >"$figures"
srv_pid=
ref_pid=
cleanup() {
    for p in $srv_pid $ref_pid; do
        kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The real binaries, not libtool's wrapper scripts.
[ -d "$top_builddir/core/.libs" ] &&
    export LD_LIBRARY_PATH="$top_builddir/core/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin() {
    if [ -x "$top_builddir/$1/.libs/$2" ]; then echo "$top_builddir/$1/.libs/$2"
    else echo "$top_builddir/$1/$2"; fi
}
psd=$(bin . polysandboxd)
psb=$(bin . polysandbox)
runner=$(bin tests/bench bench-runs)
load=$(bin tests/bench srv-load)
for b in "$psd" "$psb" "$runner" "$load"; do
    [ -x "$b" ] || { echo "server bench: build first ($b missing)"; exit 1; }
done
# The system's python, which has Debian's FastAPI (never a pyenv shim).
py=/usr/bin/python3
[ -x "$py" ] || py=python3

# wait_listen LOG PID: the URL a server logged ("listening on URL"), once
# it does (20 s at most).
wait_listen() {
    i=0
    while [ $i -lt 200 ]; do
        u=$(sed -n 's/.*listening on \(http:\/\/[^ ]*\).*/\1/p' "$1" | head -n 1)
        [ -n "$u" ] && { echo "$u"; return 0; }
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# shellcheck disable=SC2086 # BENCH_SRV_ARGS is a list of words
"$psd" --listen 127.0.0.1:0 -o server.state_dir="$work/jobs" ${BENCH_SRV_ARGS:-} \
    2>"$work/server.log" &
srv_pid=$!
srv=$(wait_listen "$work/server.log" "$srv_pid") ||
    { echo "server bench: polysandboxd did not start:"; cat "$work/server.log"; exit 1; }
ref=
if ! command -v bwrap >/dev/null 2>&1; then
    echo "(bwrap is not installed: the reference's figures are skipped)"
elif ! "$py" -c 'import fastapi, uvicorn' 2>/dev/null; then
    echo "(FastAPI or uvicorn is not installed for $py: the reference's figures are skipped)"
else
    "$py" "$bench/ref-server.py" 2>"$work/ref.log" &
    ref_pid=$!
    ref=$(wait_listen "$work/ref.log" "$ref_pid") ||
        { echo "(the reference did not start: its figures are skipped)"; cat "$work/ref.log"; ref=; }
fi
echo "== polysandboxd against sbx_run and the reference ($(sed -n \
    's/.*listening on [^ ]* (\(.*\))/\1/p' "$work/server.log" | head -n 1); $(nproc) cores)"

status=0
body='{"argv":["/bin/true"]}'
# measure KEY CLIENTS -n N|-d S URL EXPECT [SRV-LOAD ARGS]: one figure of
# srv-load, saved under KEY (POST $body; each answer must hold EXPECT).
# The reference failing a request under load is one of its figures (the
# summary prints them), not a failure of this benchmark.
measure() {
    key=$1 c=$2 how=$3 amount=$4 url=$5 expect=$6
    shift 6
    BENCH_SAVE="$figures" "$load" -c "$c" "$how" "$amount" -w "$c" -e "$expect" \
        -l "$key" --save "$key" "$@" "$url" "$body" && return
    case $key in
    ref.*) echo "(the reference failed: counted in its figures)" ;;
    *) status=1 ;;
    esac
}
srv_ok='"exit_code":0'
ref_ok='"exit_code":0'
lib() {
    BENCH_SAVE="$figures" "$runner" "$@" || status=1
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "load average before: $load0"
# What the server adds to a run is measured two ways: the median round
# trip against sbx_run's median (both move with the machine's load), and
# request by request: the round trip less the run's own total
# (timings_ns.total of the reply, create + exec + destroy) against the
# same of sbx_run (its latency less the result's total), which the
# sandbox's own time, the noisiest part, does not enter.
echo "-- round trip of /bin/true, one at a time ($reps rounds of $runs)"
r=0
while [ $r -lt "$reps" ]; do
    r=$((r + 1))
    # alternate which goes first, so neither always gets a warmer cache
    if [ $((r % 2)) -eq 1 ]; then
        lib -t 1 -n "$runs"
        measure srv.rt 1 -n "$runs" "$srv/v1/run" "$srv_ok" -m total
    else
        measure srv.rt 1 -n "$runs" "$srv/v1/run" "$srv_ok" -m total
        lib -t 1 -n "$runs"
    fi
done
"$py" "$bench/latency.py" -n "$((runs / 4 > 20 ? runs / 4 : 20))" --save "$figures" \
    "polysandbox=$psb run -- /bin/true" || status=1

echo "-- throughput: keep-alive clients, $secs s each ($reps rounds)"
r=0
while [ $r -lt "$reps" ]; do
    r=$((r + 1))
    for c in 1 8 64; do
        if [ $((r % 2)) -eq 1 ] || [ -z "$ref" ]; then
            measure "srv.c$c" "$c" -d "$secs" "$srv/v1/run" "$srv_ok"
            [ -n "$ref" ] && measure "ref.c$c" "$c" -d "$secs" "$ref/run_single" "$ref_ok"
        else
            measure "ref.c$c" "$c" -d "$secs" "$ref/run_single" "$ref_ok"
            measure "srv.c$c" "$c" -d "$secs" "$srv/v1/run" "$srv_ok"
        fi
    done
    lib -t 1 -d "$secs"
    lib -t 2 -d "$secs"
done

# The soak: after the rounds above (the server is warm), its fds and
# resident memory before and after many more requests.  The clients'
# connections are closed when srv-load exits; the server closes its side
# as soon as it notices, which is waited for (5 s at most).
nfds() { ls "/proc/$srv_pid/fd" | wc -l; }
rss_kib() { sed -n 's/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$srv_pid/status"; }
if [ "$soak" -gt 0 ]; then
    echo "-- soak: $soak requests from 64 keep-alive clients"
    fds0=$(nfds) rss0=$(rss_kib)
    measure soak 64 -n "$soak" "$srv/v1/run" "$srv_ok"
    i=0
    while [ "$(nfds)" -gt "$fds0" ] && [ $i -lt 50 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    fds1=$(nfds) rss1=$(rss_kib)
    echo "polysandboxd: fds $fds0 -> $fds1, resident memory $rss0 -> $rss1 KiB"
    printf 'soak.requests=%s\nsoak.fds.before=%s\nsoak.fds.after=%s\nsoak.rss.before=%s\nsoak.rss.after=%s\n' \
        "$soak" "$fds0" "$fds1" "$rss0" "$rss1" >>"$figures"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$py" "$bench/server-summary.py" --load "$load0 / $(cut -d' ' -f1-3 /proc/loadavg)" "$figures"
[ -n "${BENCH_SAVE:-}" ] && cat "$figures" >>"$BENCH_SAVE"
[ "$status" -eq 0 ] || echo "server bench: a run or a request failed (see above)"
exit "$status"
