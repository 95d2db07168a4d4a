#!/bin/sh
# tests/bench/run.sh - benchmarks of the local provider against its peers,
# measured in the same run on the same machine (run by `make bench`).
# Prints figures and ratios; speed is never asserted in tests.  Exits 1
# only when a run fails or the leak check finds a leak.  Needs no network;
# a peer that is not installed is reported as skipped.
#
# Knobs (environment): BENCH_RUNS (latency samples per command, 50),
# BENCH_RATE_RUNS (library runs per rate figure, 2000), BENCH_CLI_RUNS
# (CLI runs per rate figure, 500), BENCH_LEAK_RUNS (10000; 0 skips the leak check),
# BENCH_LEAK_WARMUP (300), BENCH_POOL_RUNS (runs each, pooled and not, 200),
# BENCH_CONFIG_DIR (the configuration, tests/config), BENCH_PY_RUNS (runs of
# each side of the Python binding's figures, 200).
set -u
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
runs=${BENCH_RUNS:-50}
rate_runs=${BENCH_RATE_RUNS:-2000}
cli_runs=${BENCH_CLI_RUNS:-500}
leak_runs=${BENCH_LEAK_RUNS:-10000}
leak_warm=${BENCH_LEAK_WARMUP:-300}
bench="$top_srcdir/tests/bench"

export POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/local/.libs"
# BENCH_CONFIG_DIR: another configuration, e.g. one with only
# providers.d/local.ini, so no other provider's module is loaded per run.
export POLYSANDBOX_CONFIG_DIR="${BENCH_CONFIG_DIR:-$top_srcdir/tests/config}"
# A private state directory, so the leak check sees only our sandboxes.
state=$(mktemp -d "${TMPDIR:-/tmp}/polysandbox-bench.XXXXXX") || exit 1
export POLYSANDBOX_STATE_DIR="$state"
BENCH_SAVE="$state/figures"
export BENCH_SAVE
# The in-process path (daemon = off), except where a section says auto.
export POLYSANDBOX_LOCAL_DAEMON=off
trap 'rm -rf "$state"' EXIT
trap 'exit 130' INT TERM

psb="$top_builddir/polysandbox"
[ -x "$psb" ] || { echo "bench: build first ($psb missing)"; exit 1; }
# The libtool wrapper script would add a shell and a relink check to every
# run: measure the real binaries.
[ -d "$top_builddir/core/.libs" ] &&
    export LD_LIBRARY_PATH="$top_builddir/core/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -x "$top_builddir/.libs/polysandbox" ] && psb="$top_builddir/.libs/polysandbox"
runner="$top_builddir/tests/bench/bench-runs"
[ -x "$top_builddir/tests/bench/.libs/bench-runs" ] &&
    runner="$top_builddir/tests/bench/.libs/bench-runs"
[ -x "$runner" ] || { echo "bench: build first ($runner missing)"; exit 1; }

status=0
# A peer's failures are its own (reported, never our exit status).
peers="--peer bwrap --peer unshare"
bwrap_cmd="bwrap --unshare-all --ro-bind / / --proc /proc --dev /dev /bin/true"
unshare_cmd="unshare --fork --pid --mount --net --uts --ipc --mount-proc /bin/true"
have_bwrap=false
if command -v bwrap >/dev/null 2>&1; then
    have_bwrap=true
else
    echo "(bwrap is not installed: its figures are skipped)"
fi
have_unshare=false
if command -v unshare >/dev/null 2>&1; then
    have_unshare=true
else
    echo "(unshare is not installed: its figures are skipped)"
fi

# ---- 1. latency of one sandboxed /bin/true ----
set -- "polysandbox=$psb run -- /bin/true"
ratios=""
$have_bwrap && set -- "$@" "bwrap=$bwrap_cmd" && ratios="$ratios --ratio polysandbox/bwrap"
$have_unshare && set -- "$@" "unshare=$unshare_cmd" && ratios="$ratios --ratio polysandbox/unshare"
echo "== latency of one sandboxed /bin/true (median of $runs)"
# shellcheck disable=SC2086 # $peers and $ratios are lists of words
python3 "$bench/latency.py" -n "$runs" --save "$BENCH_SAVE" $peers "$@" $ratios || status=1

# ---- 2. python3 -c pass, sandboxed and bare ----
# The system's python on both sides (never a pyenv or venv shim).
py=/usr/bin/python3
echo
echo "== python3 -c pass through the local provider and bare (median of $runs)"
if [ -x "$py" ]; then
    python3 "$bench/latency.py" -n "$runs" --save "$BENCH_SAVE" \
        "sbx-python=$psb run -- $py -c pass" "python=$py -c pass" \
        --ratio sbx-python/python || status=1
else
    echo "skipped: $py is not installed"
fi

# ---- 1b, 2b. the same with prepared sandboxes (daemon = auto) ----
# polysandbox-locald (plugins/local/daemon/): the local provider hands
# each exec to a sandbox the daemon prepared; peers measured again in the
# same run.  The first run starts the daemon (and runs in-process).
locald="$top_builddir/plugins/local/polysandbox-locald"
# locald_stop: ends the daemon of our state directory (else it waits out
# its idle minute); its pid is in the lock file of the run directory.
locald_stop() {
    rd=$(readlink "$POLYSANDBOX_STATE_DIR/local/run-dir")
    pid=$(cat "$rd/locald.lock" 2>/dev/null)
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
}
if [ -x "$locald" ] && [ "$(id -u)" = 0 ]; then
    echo
    echo "== the same with polysandbox-locald (daemon = auto; median of $runs)"
    (
        export POLYSANDBOX_LOCAL_DAEMON=auto POLYSANDBOX_LOCALD="$locald"
        "$psb" run -- /bin/true >/dev/null 2>&1
        sleep 1
        set -- "polysandbox-locald=$psb run -- /bin/true"
        ratios=""
        $have_bwrap && set -- "$@" "bwrap=$bwrap_cmd" && ratios="$ratios --ratio polysandbox-locald/bwrap"
        $have_unshare && set -- "$@" "unshare=$unshare_cmd" &&
            ratios="$ratios --ratio polysandbox-locald/unshare"
        # shellcheck disable=SC2086 # $peers and $ratios are lists of words
        python3 "$bench/latency.py" -n "$runs" --save "$BENCH_SAVE.locald" $peers "$@" $ratios || exit 1
        if [ -x "$py" ]; then
            python3 "$bench/latency.py" -n "$runs" --save "$BENCH_SAVE.locald" \
                "sbx-locald-python=$psb run -- $py -c pass" "python=$py -c pass" \
                --ratio sbx-locald-python/python || exit 1
        fi
        locald_stop
        exit 0
    ) || status=1
else
    echo
    echo "(polysandbox-locald: not built, or not root: its figures are skipped)"
fi

# ---- 3. sustained one-shot runs ----
echo
echo "== sustained one-shot runs of /bin/true on $(nproc 2>/dev/null || echo '?') cores"
echo "-- through the library (sbx_run in a loop; no process start-up per run)"
"$runner" -t 1 -n "$rate_runs" || status=1
"$runner" -t 2 -n "$rate_runs" || status=1
echo "-- through the CLI and the peers (one process per run)"
set -- "polysandbox=$psb run -- /bin/true"
$have_bwrap && set -- "$@" "bwrap=$bwrap_cmd"
$have_unshare && set -- "$@" "unshare=$unshare_cmd"
# shellcheck disable=SC2086
python3 "$bench/rate.py" -n "$cli_runs" -j 1 --save "$BENCH_SAVE" $peers "$@" || status=1
# shellcheck disable=SC2086
python3 "$bench/rate.py" -n "$cli_runs" -j 2 --save "$BENCH_SAVE" $peers "$@" || status=1

# ---- 4. nothing leaks (BENCH_LEAK_RUNS=0: skipped) ----
echo
if [ "$leak_runs" = 0 ]; then
    echo "(leak check skipped: BENCH_LEAK_RUNS=0)"
else
    "$runner" --leak -t 2 -w "$leak_warm" -n "$leak_runs" || status=1
    if [ -x "$locald" ] && [ "$(id -u)" = 0 ]; then
        echo "-- the same with polysandbox-locald (daemon = auto; its own figures file)"
        POLYSANDBOX_LOCAL_DAEMON=auto POLYSANDBOX_LOCALD="$locald" BENCH_SAVE="$BENCH_SAVE.locald" \
            "$runner" --leak -t 2 -w "$leak_warm" -n "$leak_runs" || status=1
        locald_stop
    fi
fi

# ---- 5. a warm pool: sbx_run with and without one, same run ----
echo
pool_runner="$top_builddir/tests/bench/bench-pool"
[ -x "$top_builddir/tests/bench/.libs/bench-pool" ] &&
    pool_runner="$top_builddir/tests/bench/.libs/bench-pool"
"$pool_runner" -n "${BENCH_POOL_RUNS:-200}" || status=1

# ---- 6. scoring a dataset: polysandbox eval against the reference harness's way ----
echo
sh "$bench/eval.sh" || status=1

# ---- 6b. judged problems: polysandbox eval against a plain subprocess judge ----
echo
sh "$bench/judged.sh" || status=1

# ---- 7. the Python binding against sbx_run in C and against the CLI ----
# py_bench SAVE-FILE [DAEMON]: tests/bench/python.py on the build tree's
# package, library and cffi module, with daemon = DAEMON (off when not
# given).
py_bench() {
    POLYSANDBOX_LOCAL_DAEMON="${2:-off}" POLYSANDBOX_LOCALD="$locald" \
        PYTHONPATH="$top_srcdir/python:$top_builddir/python/.libs" PYTHONDONTWRITEBYTECODE=1 \
        POLYSANDBOX_LIBRARY="$top_builddir/core/.libs/libpolysandbox.so" \
        LD_LIBRARY_PATH="$top_builddir/core/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$py" "$bench/python.py" -n "${BENCH_PY_RUNS:-200}" --save "$1" "$runner" "$psb"
}
echo
if [ -x "$py" ]; then
    py_bench "$BENCH_SAVE" || status=1
    # The init a copy-on-write fork of the caller (plugins/local/README.md,
    # "Embedding processes"): what sharing its memory saves, same minutes.
    echo "-- the same with the copy-on-write init (POLYSANDBOX_LOCAL_LAUNCH=fork)"
    POLYSANDBOX_LOCAL_LAUNCH=fork py_bench "$BENCH_SAVE.fork" || status=1
else
    echo "(the Python binding: $py is not installed, skipped)"
fi
# ---- 7b. the same with polysandbox-locald (daemon = auto, the default as root) ----
# The daemon's prepared sandboxes run each exec: no copy of the calling
# process per run, so python3's size (7's C caller as large as it) is
# off the run's path.
if [ -x "$py" ] && [ -x "$locald" ] && [ "$(id -u)" = 0 ]; then
    echo "-- the same with polysandbox-locald (daemon = auto)"
    py_bench "$BENCH_SAVE.locald" auto || status=1
    locald_stop
fi

echo
python3 "$bench/summary.py" "$BENCH_SAVE" "$BENCH_SAVE.locald"
[ "$status" -eq 0 ] || echo "bench: a run failed or something leaked (see above)"
exit "$status"
