#!/bin/sh
# tests/bench/run.sh - benchmarks of the local provider against its peers,
# measured in the same run on the same machine (run by `make bench`).
# Prints figures and ratios; speed is never asserted in tests.
set -u
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
export POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/local/.libs"
export POLYSANDBOX_CONFIG_DIR="$top_srcdir/tests/config"
export POLYSANDBOX_STATE_DIR="${TMPDIR:-/tmp}/polysandbox-bench-state"
psb="$top_builddir/polysandbox"
[ -x "$psb" ] || { echo "bench: build first ($psb missing)"; exit 1; }
# The libtool wrapper script would add a shell and a relink check to every
# run: measure the real binary.
[ -x "$top_builddir/.libs/polysandbox" ] && psb="$top_builddir/.libs/polysandbox" &&
    export LD_LIBRARY_PATH="$top_builddir/core/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

set -- "polysandbox=$psb run -- /bin/true"
command -v bwrap >/dev/null &&
    set -- "$@" "bwrap=bwrap --unshare-all --ro-bind / / --proc /proc --dev /dev /bin/true"
set -- "$@" "unshare=unshare --fork --pid --mount --net --uts --ipc --mount-proc /bin/true"
echo "== latency of one sandboxed /bin/true (median of ${BENCH_RUNS:-50})"
python3 "$top_srcdir/tests/bench/latency.py" -n "${BENCH_RUNS:-50}" "$@" \
    --ratio polysandbox/bwrap --ratio polysandbox/unshare
