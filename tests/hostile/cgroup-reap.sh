#!/bin/sh
# tests/hostile/cgroup-reap.sh - cgroups of a SIGKILLed supervisor are reaped (TAP)
#
# A supervisor killed with SIGKILL cannot remove its exec's cgroup (or
# give back its pool slot).  The provider removes the empty cgroups of
# ours whose supervisor is gone (its pid is free, or taken by a process
# started at another time than the one recorded in the cgroup's name),
# and pool slots left marked by a holder that died, when it lists
# sandboxes (what `polysandbox list` and `gc` do); destroy does the former too.  A live
# supervisor's cgroup, and a name whose pid and start time match a live
# process, are left alone.  Needs root and the cgroup hierarchy.

: "${top_srcdir:?top_srcdir is not set (run through make check)}"
. "$top_srcdir/tests/hostile/lib.sh"

if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP needs root"; exit 0; fi
# In-process supervisors' cgroups: with daemon = auto the exec's slot is
# the daemon's, marked with its pid (a killed client: tests/hostile/locald.sh).
POLYSANDBOX_LOCAL_DAEMON=off
export POLYSANDBOX_LOCAL_DAEMON
hostile_need cgroup-reap
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-cgroup-reap.XXXXXX") || exit 99
pids=""
cleanup() {
    for p in $pids; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
    for d in $fakes; do rmdir "$d" 2>/dev/null; done
    "$PS" list >/dev/null 2>&1
    rm -rf "$tmp" "$POLYSANDBOX_STATE_DIR"
}
fakes=""
trap cleanup EXIT

# Where our cgroups are: v2 has one tree, v1 one per controller.
if [ -d /sys/fs/cgroup/polysandbox ] && [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
    bases=/sys/fs/cgroup/polysandbox
else
    bases=""
    for c in memory pids cpuacct freezer; do
        [ -d "/sys/fs/cgroup/$c/polysandbox" ] && bases="$bases /sys/fs/cgroup/$c/polysandbox"
    done
fi
# The provider makes the parent at its first use.
"$PS" run -- true >/dev/null 2>&1
if [ -z "$bases" ]; then
    for c in memory pids cpuacct freezer; do
        [ -d "/sys/fs/cgroup/$c/polysandbox" ] && bases="$bases /sys/fs/cgroup/$c/polysandbox"
    done
fi
[ -z "$bases" ] && [ -d /sys/fs/cgroup/polysandbox ] && bases=/sys/fs/cgroup/polysandbox
if [ -z "$bases" ]; then echo "1..0 # SKIP no cgroup hierarchy of ours"; exit 0; fi
first=$(echo $bases | cut -d' ' -f1)
fz=$first
[ -d /sys/fs/cgroup/freezer/polysandbox ] && fz=/sys/fs/cgroup/freezer/polysandbox
echo "# cgroups under:$bases"
echo "1..6"

# cgs PID: the cgroups of supervisor PID, in every hierarchy: named for
# it, or pool slots (plugins/local/cgroup/slots.c) whose owner xattr
# ("<id> <pid> <start>") names it.
cgs() {
    for b in $bases; do ls -d "$b"/lcl-*-"$1"-* 2>/dev/null; done
    python3 -c '
import glob, os, sys
for d in sorted(glob.glob(sys.argv[1] + "/pool-*")):
    try:
        owner = os.getxattr(d, "trusted.polysandbox.owner").decode().split()
    except OSError:
        continue
    if len(owner) > 1 and owner[1] == sys.argv[2]:
        print(d)' "$fz" "$1"
}
# wait_cg PID: until supervisor PID has made its cgroup (bounded).
wait_cg() {
    i=0
    while [ -z "$(cgs "$1")" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    [ -n "$(cgs "$1")" ]
}
# reaped PID: list (as gc does) until PID's cgroups are gone (bounded:
# the killed init may take a moment to die and leave its cgroup).
reaped() {
    i=0
    while [ $i -lt 100 ]; do
        "$PS" list >/dev/null 2>"$tmp/err"
        [ -z "$(cgs "$1")" ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

"$PS" run -t 120s -- sleep 100 </dev/null >/dev/null 2>&1 &
victim=$!
pids="$pids $victim"
"$PS" run -t 120s -- sleep 100 </dev/null >/dev/null 2>&1 &
alive=$!
pids="$pids $alive"

if wait_cg "$victim" && wait_cg "$alive"; then
    ok "both supervisors made their cgroups"
else
    not_ok "both supervisors made their cgroups" "victim: $(cgs "$victim")" "alive: $(cgs "$alive")"
fi
# A process of ours in the victim's cgroups keeps them from being reaped
# until it goes: `make check` runs other tests whose `list` reaps the
# cgroups of any dead supervisor, and could otherwise do it before we
# look.
sleep 300 &
holder=$!
pids="$pids $holder"
for d in $(cgs "$victim"); do echo "$holder" >"$d/cgroup.procs" 2>/dev/null; done
kill -9 "$victim"
wait "$victim" 2>/dev/null
if [ -n "$(cgs "$victim")" ]; then ok "SIGKILL left the supervisor's cgroup behind"
else not_ok "SIGKILL left the supervisor's cgroup behind" "nothing to reap: the test proves nothing"; fi
kill -9 "$holder"
wait "$holder" 2>/dev/null
if reaped "$victim"; then ok "list reaped the cgroup of the killed supervisor"
else not_ok "list reaped the cgroup of the killed supervisor" "left: $(cgs "$victim")" "$(cat "$tmp/err")"; fi
if [ -n "$(cgs "$alive")" ]; then ok "the live supervisor's cgroup stayed"
else not_ok "the live supervisor's cgroup stayed" "removed under a running exec"; fi
kill -9 "$alive"
wait "$alive" 2>/dev/null
reaped "$alive" >/dev/null

# A reused pid: our shell is alive, but did not start at the recorded time.
start=$(sed 's/.*) //' "/proc/$$/stat" | cut -d' ' -f20)
fake_old="lcl-0000000000000000-$$-$((start + 1))-0"
fake_live="lcl-0000000000000001-$$-$start-0"
for b in $bases; do
    mkdir "$b/$fake_old" "$b/$fake_live" && fakes="$fakes $b/$fake_old $b/$fake_live"
done
"$PS" list >/dev/null 2>&1
if [ ! -d "$first/$fake_old" ]; then ok "a name whose pid was reused by a later process is reaped"
else not_ok "a name whose pid was reused by a later process is reaped" "$first/$fake_old stays"; fi
if [ -d "$first/$fake_live" ]; then ok "a name whose pid and start time match a live process stays"
else not_ok "a name whose pid and start time match a live process stays" "$first/$fake_live removed"; fi
