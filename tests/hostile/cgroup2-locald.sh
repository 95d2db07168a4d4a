#!/bin/sh
# tests/hostile/cgroup2-locald.sh - polysandbox-locald on cgroup v2 (TAP)
#
# tests/hostile/cgroup2.sh with daemon = auto: on a v1 (hybrid) host it
# mounts cgroup2 on /sys/fs/cgroup in a private mount namespace (unshare
# -m) and starts the provider, and so the daemon, there.  The daemon then
# holds each prepared sandbox in a one-shot v2 slot
# (plugins/local/cgroup/slots.c), cloned into it with CLONE_INTO_CGROUP.
# Each run is checked to have gone through the daemon (its debug line,
# never a silent fallback) and to answer as the same run in-process;
# kills go through cgroup.kill, destroy reaches a daemon's exec, and the
# daemon leaves no cgroup and no process when it ends.  Needs root.

: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"

. "$top_srcdir/tests/hostile/cgroup2-enter.sh"

. "$top_srcdir/tests/hostile/lib.sh"
HOSTILE="$top_builddir/tests/hostile/hostile"
DAEMON_BIN="$top_builddir/plugins/local/polysandbox-locald"
hostile_need cgroup2-locald "$HOSTILE" "$DAEMON_BIN"
POLYSANDBOX_LOCALD_IDLE=30 # it is ended at the end (and by cleanup)
locald_on
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-cgroup2-locald.XXXXXX") || exit 99
cleanup() {
    for p in $(daemons); do kill -TERM "$p" 2>/dev/null; done
    rm -rf "$tmp" "$POLYSANDBOX_STATE_DIR"
}
trap cleanup EXIT
ctrl=$(cat /sys/fs/cgroup/cgroup.controllers 2>/dev/null)
echo "# cgroup2 ($PS_CG2_INNER) offers: ${ctrl:-no controllers}"
# Without the memory controller (bound to cgroup v1 on a hybrid host) the
# memory limit cannot be enforced, which the core refuses unless allowed:
# allowed here (its own check below is skipped then).
echo "$ctrl" | grep -qw memory || allow_unenforced "$tmp/conf" memory
echo "1..12"

run() { # run OPTIONS... -- COMMAND...: the JSON result in $tmp/out.json, stderr in $tmp/err
    # shellcheck disable=SC2086 # SANENV is a word list
    POLYSANDBOX_LOG=debug "$PS" run --json $SANENV "$@" </dev/null >"$tmp/out.json" 2>"$tmp/err"
}
served() { grep -q "a sandbox polysandbox-locald prepared (pool-" "$tmp/err"; }
# marked ID: the v2 cgroups still marked as ID's (trusted xattr, pool slots).
marked() {
    python3 - "$1" <<'PYEOF'
import os, sys
base = "/sys/fs/cgroup/polysandbox"
for n in sorted(os.listdir(base)) if os.path.isdir(base) else []:
    try:
        v = os.getxattr(os.path.join(base, n), "trusted.polysandbox.owner")
    except OSError:
        continue
    if v.split(b" ")[0] == sys.argv[1].encode():
        print(n)
PYEOF
}
# answers FILE: what a result says, without its times and ids.
answers() {
    python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(j.get("status"), j.get("exit_code"), j.get("signal"), repr(j.get("stdout")), repr(j.get("stderr")),
      j.get("stdout_truncated"), j.get("cpu_ns") is not None and j.get("cpu_ns") > 0, j.get("peak_memory_bytes") is None)' "$1"
}
wait_for() { # CMD...: until it succeeds, 20 s at most
    i=0
    while ! "$@"; do
        i=$((i + 1)); [ $i -gt 200 ] && return 1
        sleep 0.1
    done
}

if "$PS" doctor --provider local 2>&1 | grep -q "cgroup v2" &&
    "$PS" doctor --provider local 2>&1 | grep "polysandbox-locald" | grep -qv "not used here"; then
    ok "doctor: cgroup v2, and the daemon is used here"
else not_ok "doctor: cgroup v2, and the daemon is used here" "$("$PS" doctor --provider local 2>&1 | grep -i "cgroup\|daemon")"; fi

run -- sh -c 'cat /proc/self/cgroup; i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done'
if [ "$(jget "$tmp/out.json" status)" = ok ] && served; then ok "a run goes through the daemon and succeeds"
else not_ok "a run goes through the daemon and succeeds" "$(cat "$tmp/out.json" "$tmp/err" | head -c 600)"; fi
if jget "$tmp/out.json" stdout | grep -qx '0::/'; then ok "the payload is at the root of its cgroup namespace"
else not_ok "the payload is at the root of its cgroup namespace" "$(jget "$tmp/out.json" stdout | head -c 300)"; fi
cpu=$(jget "$tmp/out.json" cpu_ns)
if [ "${cpu:-0}" != null ] && [ "${cpu:-0}" -gt 0 ] 2>/dev/null; then ok "CPU time from the slot's cpu.stat ($cpu ns)"
else not_ok "CPU time from the slot's cpu.stat" "cpu_ns: $cpu"; fi

# The same answers as in-process: the sandbox's view, exit codes,
# signals, output caps, not found.
same=true
n=0
for cmd in 'id -u; hostname; cat /proc/self/cgroup; wc -l </proc/self/mountinfo; ls /; ls -a /work; ulimit -n; ulimit -s; umask; echo $PATH' \
    'exit 3' 'kill -9 $$' 'yes | head -c 100000' 'no-such-command'; do
    n=$((n + 1))
    for mode in off auto; do
        # shellcheck disable=SC2086 # SANENV is a word list
        POLYSANDBOX_LOG=debug POLYSANDBOX_LOCAL_DAEMON=$mode "$PS" run --json $SANENV --output-limit 1000 -- sh -c "$cmd" \
            </dev/null >"$tmp/$mode.json" 2>"$tmp/$mode.err"
        answers "$tmp/$mode.json" >"$tmp/$mode.txt"
    done
    grep -q "polysandbox-locald prepared" "$tmp/auto.err" || { same=false; echo "# case $n: not through the daemon"; }
    grep -q "polysandbox-locald prepared" "$tmp/off.err" && { same=false; echo "# case $n: off went through the daemon"; }
    cmp -s "$tmp/auto.txt" "$tmp/off.txt" || { same=false; echo "# case $n: $(cat "$tmp/auto.txt") / $(cat "$tmp/off.txt")"; }
done
if $same; then ok "the daemon's execs answer as in-process ones (view, status, caps)"
else not_ok "the daemon's execs answer as in-process ones"; fi

# A timeout with a second process running: the kill reaches both.
run -t 1s -- sh -c 'sleep 3017 & sleep 3019'
id=$(jget "$tmp/out.json" sandbox_id)
if [ "$(jget "$tmp/out.json" status)" = timeout ] && served; then ok "a timeout through the daemon kills the run"
else not_ok "a timeout through the daemon kills the run" "$(cat "$tmp/out.json" "$tmp/err" | head -c 600)"; fi
no_sleeps() { ! pgrep -f "sleep 301[79]" >/dev/null 2>&1; }
if no_sleeps && wait_for eval '[ -z "$(marked "$id")" ]'; then ok "nothing left: no process (cgroup.kill), no slot marked as the sandbox's"
else not_ok "nothing left: no process, no slot marked as the sandbox's" "$(marked "$id") $(pgrep -af "sleep 301[79]")"; fi

if echo "$ctrl" | grep -qw memory; then
    run --memory 64M -t 20s --file "$HOSTILE:hostile" -- ./hostile membomb
    if [ "$(jget "$tmp/out.json" status)" = memory_limit ] && served; then ok "memory.max stops a memory bomb"
    else not_ok "memory.max stops a memory bomb" "$(head -c 400 "$tmp/out.json")"; fi
else
    skip "memory.max stops a memory bomb" "no memory controller in this cgroup2 (bound to cgroup v1 here)"
fi
if echo "$ctrl" | grep -qw pids; then
    run --pids 16 -t 20s --file "$HOSTILE:hostile" -- ./hostile forkbomb
    if [ "$(jget "$tmp/out.json" status)" = pids_limit ] && served; then ok "pids.max stops a fork bomb"
    else not_ok "pids.max stops a fork bomb" "$(head -c 400 "$tmp/out.json")"; fi
else
    skip "pids.max stops a fork bomb" "no pids controller in this cgroup2 (bound to cgroup v1 here)"
fi

# destroy, from another process, kills a daemon's exec of the sandbox.
sid=$("$PS" create --persistent 2>"$tmp/err")
POLYSANDBOX_LOG=debug "$PS" exec "$sid" -- sleep 3023 </dev/null >/dev/null 2>"$tmp/exec.err" &
bg=$!
running() { pgrep -x -f "sleep 3023" >/dev/null; }
if [ -n "$sid" ] && wait_for running && [ -n "$(marked "$sid")" ]; then
    "$PS" destroy "$sid" >/dev/null 2>&1
    wait_for eval '! running'
    wait "$bg" 2>/dev/null
    if ! running && grep -q "polysandbox-locald prepared" "$tmp/exec.err"; then
        ok "destroy kills a sandbox's exec in a daemon's v2 slot"
    else
        not_ok "destroy kills a sandbox's exec in a daemon's v2 slot" "$(pgrep -af 'sleep 3023')" "$(cat "$tmp/exec.err")"
    fi
else
    not_ok "destroy kills a sandbox's exec in a daemon's v2 slot" "id '$sid', marked '$(marked "$sid")'" "$(cat "$tmp/err" "$tmp/exec.err")"
    kill -9 "$bg" 2>/dev/null
fi

# The daemon ends (as when idle): its prepared sandboxes and slots with it.
run -- true
d=$(daemons)
for p in $d; do kill -TERM "$p"; done
no_daemon() { [ -z "$(daemons)" ]; }
slots() { for p in $d; do ls -d /sys/fs/cgroup/polysandbox/pool-*-d"$p"-* 2>/dev/null; done; }
if [ -n "$d" ] && wait_for no_daemon && wait_for eval '[ -z "$(slots)" ]'; then ok "the daemon ends with no slot left"
else not_ok "the daemon ends with no slot left" "daemons: $d / $(daemons)" "$(slots)"; fi
rest=$(ls -d /sys/fs/cgroup/polysandbox/lcl-* 2>/dev/null)
if [ -z "$rest" ]; then ok "no per-exec cgroup left at the end"
else not_ok "no per-exec cgroup left at the end" "$rest"; fi
