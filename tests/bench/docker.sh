#!/bin/sh
# tests/bench/docker.sh - the docker provider against the docker command,
# same run, same machine, same daemon (run by `make bench`, after run.sh).
#
#   exec: `polysandbox exec --provider docker ID -- sh -c :` against
#         `/usr/bin/docker exec CONTAINER sh -c :` (same kind of container),
#         in the default exec_mode (attach) and with exec_mode = api
#   run:  `polysandbox run --provider docker -- sh -c :` against
#         `/usr/bin/docker run --rm --network none IMAGE sh -c :`
#
# Prints medians (latency.py: interleaved runs, p10/p90) and ratios.  The
# run figure goes through a warm pool when the configuration in
# BENCH_DOCKER_CONFIG_DIR (default: tests/config) configures one for the
# docker provider.  Skips (exit 0 with a note) where Docker is not usable.
# Knob: BENCH_DOCKER_RUNS (samples per command, 20).
set -u
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
runs=${BENCH_DOCKER_RUNS:-20}
CI=${CI:-} . "$top_srcdir/tests/docker/lib.sh"
if ! docker_ready >/dev/null; then
    echo "docker bench: skipped (Docker or the test image is not available)"
    exit 0
fi
[ -x /usr/bin/docker ] || { echo "docker bench: skipped (no /usr/bin/docker to compare with)"; exit 0; }

export POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/docker/.libs"
export POLYSANDBOX_CONFIG_DIR="${BENCH_DOCKER_CONFIG_DIR:-$top_srcdir/tests/config}"
state=$(mktemp -d "${TMPDIR:-/tmp}/polysandbox-bench-docker.XXXXXX") || exit 1
export POLYSANDBOX_STATE_DIR="$state"
psb="$top_builddir/polysandbox"
[ -d "$top_builddir/core/.libs" ] &&
    export LD_LIBRARY_PATH="$top_builddir/core/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -x "$top_builddir/.libs/polysandbox" ] && psb="$top_builddir/.libs/polysandbox"

id=$("$psb" create --provider docker) || { echo "docker bench: create failed"; exit 1; }
peer=polysandbox-bench-peer-$$
cleanup() {
    "$psb" destroy --provider docker "$id" >/dev/null 2>&1
    /usr/bin/docker rm -f "$peer" >/dev/null 2>&1
    rm -rf "$state"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# The peer container: the same image, idle, limits alike.
/usr/bin/docker run -d --name "$peer" --network none --read-only --cap-drop ALL \
    --security-opt no-new-privileges --memory 512m --memory-swap 512m --pids-limit 128 \
    --entrypoint /bin/sleep "$DOCKER_TEST_IMAGE" infinity >/dev/null ||
    { echo "docker bench: the peer container did not start"; exit 1; }

echo "== docker provider: exec round trip of 'sh -c :' ($runs runs)"
python3 "$top_srcdir/tests/bench/latency.py" -n "$runs" --peer docker_exec \
    "polysandbox_exec=$psb exec --provider docker $id -- sh -c :" \
    "docker_exec=/usr/bin/docker exec $peer sh -c :" \
    --ratio polysandbox_exec/docker_exec || status=1
echo "   (target: at most 0.5)"

# The same through the daemon's exec (exec_mode = api: the fallback path,
# and the only one before attach mode), for comparison.
api=$state/conf-api
if cp -R "$POLYSANDBOX_CONFIG_DIR/." "$api/" 2>/dev/null && chmod -R u+w "$api" &&
    sed -i 's/^\[settings\]$/&\nexec_mode = api/' "$api/providers.d/docker.ini" &&
    aid=$(POLYSANDBOX_CONFIG_DIR=$api "$psb" create --provider docker); then
    echo "== docker provider: the same with exec_mode = api ($runs runs)"
    python3 "$top_srcdir/tests/bench/latency.py" -n "$runs" --peer docker_exec \
        "polysandbox_exec_api=env POLYSANDBOX_CONFIG_DIR=$api $psb exec --provider docker $aid -- sh -c :" \
        "docker_exec=/usr/bin/docker exec $peer sh -c :" \
        --ratio polysandbox_exec_api/docker_exec || status=1
    "$psb" destroy --provider docker "$aid" >/dev/null 2>&1
fi

echo "== docker provider: run (create + exec + destroy) of 'sh -c :' ($runs runs)"
python3 "$top_srcdir/tests/bench/latency.py" -n "$runs" --peer docker_run \
    "polysandbox_run=$psb run --provider docker -- sh -c :" \
    "docker_run=/usr/bin/docker run --rm --network none $DOCKER_TEST_IMAGE sh -c :" \
    --ratio polysandbox_run/docker_run | tee "$state/run.txt" || status=1
echo "   (the full create + start + exec + remove of a one-shot CLI run)"

# A pooled run needs a process that lives on (the library, eval, a
# server): bench-pool runs sbx_run through a warm pool of 4 in one process.
echo "== docker provider: pooled sbx_run of 'sh -c :' against docker run --rm"
export POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/docker/.libs"
pool=$("$top_builddir/tests/bench/bench-pool" -p docker -n "$((runs * 2))" -s 4 -- sh -c : 2>&1) ||
    { echo "$pool"; status=1; }
echo "$pool" | sed 's/^/  /'
pooled=$(echo "$pool" | sed -n 's/^ *pooled *median *\([0-9.]*\) ms.*/\1/p')
docker_run=$(sed -n 's/^ *docker_run: median *\([0-9.]*\) ms.*/\1/p' "$state/run.txt")
[ -n "$pooled" ] && [ -n "$docker_run" ] &&
    echo "ratio pooled_run/docker_run: $(python3 -c "print('%.2f' % ($pooled / $docker_run))")" \
         "(pooled $pooled ms, docker run --rm $docker_run ms; target: at most 0.2)"
ready=$(echo "$pool" | sed -n 's/^ *ready *median *\([0-9.]*\) ms.*/\1/p')
[ -n "$ready" ] && [ -n "$docker_run" ] &&
    echo "ratio ready_pooled_run/docker_run: $(python3 -c "print('%.2f' % ($ready / $docker_run))")" \
         "(the pooled runs that found a sandbox ready, $ready ms: the others wait for the" \
         "pool's refill, a container create and start)"
exit "${status:-0}"
