#!/bin/sh
# tests/hostile/cgroup2.sh - the local provider on cgroup v2 (TAP)
#
# On a cgroup v2 host this tests the real hierarchy.  On a v1 (hybrid)
# host it mounts cgroup2 on /sys/fs/cgroup in a private mount namespace
# of its own (unshare -m), so the provider probes v2 there: execs are
# cloned into their cgroup (CLONE_INTO_CGROUP, with a cgroup namespace),
# CPU time comes from cpu.stat, kills go through cgroup.kill.  The memory
# and pids limits are tested only where that cgroup2 offers the
# controllers (cgroup.controllers); on a v1 host they are bound to the v1
# hierarchies, and those checks say so and skip.  Needs root.

: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"

. "$top_srcdir/tests/hostile/cgroup2-enter.sh"

. "$top_srcdir/tests/hostile/lib.sh"
HOSTILE="$top_builddir/tests/hostile/hostile"
hostile_need cgroup2 "$HOSTILE"
in_process
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-cgroup2.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
ctrl=$(cat /sys/fs/cgroup/cgroup.controllers 2>/dev/null)
echo "# cgroup2 ($PS_CG2_INNER) offers: ${ctrl:-no controllers}"
# Without the memory controller (bound to cgroup v1 on a hybrid host) the
# memory limit cannot be enforced, which the core refuses unless allowed:
# allowed here (its own check below is skipped then).
echo "$ctrl" | grep -qw memory || allow_unenforced "$tmp/conf" memory
echo "1..9"

run() { # run OPTIONS... -- COMMAND...: the JSON result in $tmp/out.json
    # shellcheck disable=SC2086 # SANENV is a word list
    "$PS" run --json $SANENV "$@" </dev/null >"$tmp/out.json" 2>"$tmp/err"
}
left() { # left ID: the cgroups of sandbox ID still there
    ls -d /sys/fs/cgroup/polysandbox/"$1"-* 2>/dev/null
}

if "$PS" doctor --provider local 2>&1 | grep -q "cgroup v2"; then ok "doctor: the provider probed cgroup v2"
else not_ok "doctor: the provider probed cgroup v2" "$("$PS" doctor --provider local 2>&1 | grep -i cgroup)"; fi

run -- sh -c 'cat /proc/self/cgroup; i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done'
if [ "$(jget "$tmp/out.json" status)" = ok ]; then ok "a run succeeds"
else not_ok "a run succeeds" "$(cat "$tmp/out.json" "$tmp/err" | head -c 600)"; fi
if jget "$tmp/out.json" stdout | grep -qx '0::/'; then ok "the payload is at the root of its cgroup namespace"
else not_ok "the payload is at the root of its cgroup namespace" "$(jget "$tmp/out.json" stdout | head -c 300)"; fi
cpu=$(jget "$tmp/out.json" cpu_ns)
if [ "${cpu:-0}" != null ] && [ "${cpu:-0}" -gt 0 ] 2>/dev/null; then ok "CPU time from cpu.stat ($cpu ns)"
else not_ok "CPU time from cpu.stat" "cpu_ns: $cpu"; fi

# A timeout with a second process running: the kill reaches both.
run -t 1s -- sh -c 'sleep 3017 & sleep 3019'
id=$(jget "$tmp/out.json" sandbox_id)
if [ "$(jget "$tmp/out.json" status)" = timeout ]; then ok "a timeout kills the run"
else not_ok "a timeout kills the run" "$(head -c 400 "$tmp/out.json")"; fi
if [ -z "$(left "$id")" ] && ! pgrep -f "sleep 301[79]" >/dev/null 2>&1; then ok "nothing left: no cgroup, no process (cgroup.kill)"
else not_ok "nothing left: no cgroup, no process (cgroup.kill)" "$(left "$id") $(pgrep -af "sleep 301[79]")"; fi

if echo "$ctrl" | grep -qw memory; then
    run --memory 64M -t 20s --file "$HOSTILE:hostile" -- ./hostile membomb
    if [ "$(jget "$tmp/out.json" status)" = memory_limit ]; then ok "memory.max stops a memory bomb"
    else not_ok "memory.max stops a memory bomb" "$(head -c 400 "$tmp/out.json")"; fi
else
    skip "memory.max stops a memory bomb" "no memory controller in this cgroup2 (bound to cgroup v1 here)"
fi
if echo "$ctrl" | grep -qw pids; then
    run --pids 16 -t 20s --file "$HOSTILE:hostile" -- ./hostile forkbomb
    if [ "$(jget "$tmp/out.json" status)" = pids_limit ]; then ok "pids.max stops a fork bomb"
    else not_ok "pids.max stops a fork bomb" "$(head -c 400 "$tmp/out.json")"; fi
else
    skip "pids.max stops a fork bomb" "no pids controller in this cgroup2 (bound to cgroup v1 here)"
fi
rest=$(ls -d /sys/fs/cgroup/polysandbox/lcl-* 2>/dev/null)
if [ -z "$rest" ]; then ok "no per-exec cgroup left at the end"
else not_ok "no per-exec cgroup left at the end" "$rest"; fi
