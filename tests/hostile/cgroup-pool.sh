#!/bin/sh
# tests/hostile/cgroup-pool.sh - reused v1 cgroups carry nothing over (TAP)
#
# As root on cgroup v1 an exec takes a slot of a pool of cgroups
# (plugins/local/cgroup/slots.c).  What one exec did must never show in
# the next one's verdict or statistics: an OOM kill or a pids.max hit
# (counters the kernel cannot reset) retires the slot; CPU time and the
# memory peak are reset; a slot is free again (no owner mark) after its
# exec; destroy kills a sandbox's exec running in a slot.  Elsewhere
# (cgroup v2, no root) there is no pool and the script skips.

: "${top_srcdir:?top_srcdir is not set (run through make check)}"
. "$top_srcdir/tests/hostile/lib.sh"

if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP needs root"; exit 0; fi
# The in-process pool: with daemon = auto, prepared sandboxes hold (marked)
# slots of their own between execs (tests/hostile/locald*.sh test those).
POLYSANDBOX_LOCAL_DAEMON=off
export POLYSANDBOX_LOCAL_DAEMON
fz=/sys/fs/cgroup/freezer/polysandbox
hostile_need cgroup-pool
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-cgroup-pool.XXXXXX") || exit 99
bg=""
trap 'for p in $bg; do kill -9 "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp" "$POLYSANDBOX_STATE_DIR"' EXIT
"$PS" run -- true >/dev/null 2>&1
if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] || [ ! -d "$fz" ]; then
    echo "1..0 # SKIP no cgroup v1 freezer hierarchy: no pool"
    exit 0
fi
echo "1..8"

run() { # run OPTIONS... -- COMMAND...: the JSON result in $tmp/out.json
    # shellcheck disable=SC2086 # SANENV is a word list
    "$PS" run --json $SANENV "$@" </dev/null >"$tmp/out.json" 2>"$tmp/err"
}
# slots LIMITS: the pool slots of limits "m<bytes>-p<pids+1>".
slots() { ls -d "$fz"/pool-"$1"-* 2>/dev/null; }
marked() { # marked DIR...: those still carrying an owner mark
    python3 -c '
import os, sys
for d in sys.argv[1:]:
    try:
        os.getxattr(d, "trusted.polysandbox.owner")
        print(d)
    except OSError:
        pass' "$@"
}

# 48M = 50331648 bytes, 6 pids -> pids.max 7: limits no other test uses.
lim="m50331648-p7"
run --memory 48M --pids 6 -- true
s=$(slots "$lim")
if [ -n "$s" ] && [ -z "$(marked $s)" ]; then ok "after an exec its slot is in the pool, unmarked"
else not_ok "after an exec its slot is in the pool, unmarked" "slots: $s" "marked: $(marked $s)"; fi

run --memory 48M --pids 6 -- python3 -c 'b = bytearray(200 * 1024 * 1024)'
st=$(jget "$tmp/out.json" status)
if [ "$st" = memory_limit ]; then ok "an exec over the memory limit: memory_limit"
else not_ok "an exec over the memory limit: memory_limit" "status $st" "$(cat "$tmp/err")"; fi
run --memory 48M --pids 6 -- sh -c 'exit 3'
st=$(jget "$tmp/out.json" status)
if [ "$st" = nonzero_exit ]; then ok "the next exec with those limits does not inherit the OOM kill"
else not_ok "the next exec with those limits does not inherit the OOM kill" "status $st" \
    "$(cat "$tmp/out.json")" "$(cat "$tmp/err")"; fi

run --memory 48M --pids 6 -- sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do sleep 1 & done; wait'
st=$(jget "$tmp/out.json" status)
if [ "$st" = pids_limit ] || [ "$st" = nonzero_exit ]; then ok "a fork past pids.max fails ($st)"
else not_ok "a fork past pids.max fails" "status $st" "$(cat "$tmp/err")"; fi
run --memory 48M --pids 6 -- sh -c 'exit 3'
st=$(jget "$tmp/out.json" status)
if [ "$st" = nonzero_exit ]; then ok "the next exec does not inherit the pids.max hit"
else not_ok "the next exec does not inherit the pids.max hit" "status $st" "$(cat "$tmp/out.json")" \
    "$(cat "$tmp/err")" "slots: $(slots "$lim")" "marked: $(marked $(slots "$lim"))"; fi

# CPU time is reset: an exec burning ~0.3 s, then one that burns nothing.
run --memory 48M --pids 6 -- sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'
burn=$(jget "$tmp/out.json" cpu_ns)
run --memory 48M --pids 6 -- true
idle=$(jget "$tmp/out.json" cpu_ns)
if [ -n "$burn" ] && [ -n "$idle" ] && [ "$idle" -lt "$burn" ] && [ "$idle" -lt 100000000 ]; then
    ok "CPU time starts from zero in a reused slot ($burn ns, then $idle ns)"
else not_ok "CPU time starts from zero in a reused slot" "burn $burn, then $idle"; fi

# destroy, from another process, kills an exec running in a slot.
id=$("$PS" create --persistent --memory 48M --pids 6 2>"$tmp/err")
if [ -z "$id" ]; then
    not_ok "destroy kills a sandbox's exec in a pool slot" "create failed: $(cat "$tmp/err")"
    not_ok "the slot goes back to the pool or away, unmarked"
    exit 0
fi
"$PS" exec "$id" -- sleep 100 </dev/null >/dev/null 2>&1 &
bg=$!
i=0
while [ -z "$(marked $(slots "$lim"))" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
"$PS" destroy "$id" >/dev/null 2>&1
i=0
while kill -0 "$bg" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if ! kill -0 "$bg" 2>/dev/null; then ok "destroy kills a sandbox's exec in a pool slot"
else not_ok "destroy kills a sandbox's exec in a pool slot" "the exec still runs"; fi
wait "$bg" 2>/dev/null
bg=""
if [ -z "$(marked $(slots "$lim"))" ]; then ok "the slot goes back to the pool or away, unmarked"
else not_ok "the slot goes back to the pool or away, unmarked" "$(marked $(slots "$lim"))"; fi
