#!/bin/sh
# tests/pool/gc-orphans.sh - gc collects killed runs whose state dir is gone
#
# A run SIGKILLed mid-run leaves its non-persistent sandbox in the run
# directory in /dev/shm, its work tmpfs mounted in the host's mount
# namespace.  Once its state directory is removed too, no gc from there
# can find it: gc (list) from any other state directory of the same euid
# collects it after its expiry (plugins/local/local-orphans.c).  A
# sandbox a live state directory still links to, one not yet expired,
# a meta.json that is not what we write and a run directory name that is
# a link are left alone.  Needs root (the work tmpfs) and a tmpfs
# /dev/shm.
. "$top_srcdir/tests/cli/lib.sh"

if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP needs root (work tmpfs)"; exit 0; fi
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" != tmpfs ]; then
    echo "1..0 # SKIP /dev/shm is not a tmpfs"; exit 0
fi
# The exec in this process, not a daemon's: a plain killed CLI.
POLYSANDBOX_LOCAL_DAEMON=off
export POLYSANDBOX_LOCAL_DAEMON
uid=$(id -u)
hex() { od -An -N8 -tx1 /dev/urandom | tr -d ' \n'; }
fake1=/dev/shm/polysandbox-$uid-$(hex)
fake2=/dev/shm/polysandbox-$uid-$(hex)
fakelink=/dev/shm/polysandbox-$uid-$(hex)
pids=""
cleanup() {
    for p in $pids; do kill -9 "$p" 2>/dev/null; done
    for p in $pids; do wait "$p" 2>/dev/null; done
    rm -rf "$fake1" "$fake2"
    rm -f "$fakelink"
    # B's sandbox, if a check failed before its own gc reaped it.
    POLYSANDBOX_STATE_DIR="$tmp/b" "$PS" gc --provider local >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT

plan 13

# start_run STATE: a run in state directory STATE (in the background,
# its pid in $rp) whose command stays; started STATE: its sandbox
# directory once the command runs (empty after 30 s).
start_run() {
    mkdir -p "$1"
    POLYSANDBOX_STATE_DIR=$1 "$PS" run -t 60s -- sh -c 'touch /work/started; exec sleep 60' \
        >/dev/null 2>&1 &
    rp=$!
    pids="$pids $rp"
}
started() {
    end=$(($(date +%s) + 30))
    while [ "$(date +%s)" -lt "$end" ]; do
        for f in "$(readlink "$1/local/run-dir" 2>/dev/null)"/lcl-*/work/started; do
            [ -e "$f" ] && { dirname "$(dirname "$f")"; return 0; }
        done
        sleep 0.1
    done
}
mounted() { grep -q -F " $1/work " /proc/self/mountinfo; }
# backdate DIR: its sandbox's time-to-live passed (rather than waiting
# the one-shot ttl, 2 x 60 s + 60 s).
backdate() {
    python3 - "$1/meta.json" <<'PY'
import json, sys
p = sys.argv[1]
m = json.load(open(p))
m["created_ns"] -= m["ttl_ns"] + 10**9
m["labels"]["polysandbox.expires"] = str((m["created_ns"] + m["ttl_ns"]) // 10**9)
json.dump(m, open(p, "w"))
PY
}
gc_from_c() { mkdir -p "$tmp/c"; POLYSANDBOX_STATE_DIR="$tmp/c" cli gc --provider local; }

# Killed mid-run: a (its state directory removed next) and b (kept);
# d goes on running (another state directory's live run).
start_run "$tmp/a"; pa=$rp
start_run "$tmp/b"; pb=$rp
start_run "$tmp/d"; live=$rp
a=$(started "$tmp/a")
b=$(started "$tmp/b")
d=$(started "$tmp/d")
kill -9 "$pa" "$pb"
wait "$pa" "$pb" 2>/dev/null
check "a SIGKILLed run leaves its sandbox with its work tmpfs mounted in the host's namespace" \
    eval '[ -n "$a" ] && [ -d "$a" ] && mounted "$a" && [ -n "$b" ] && mounted "$b"'
check "its meta.json records its state directory" python3 -c '
import json, os, sys
m = json.load(open(sys.argv[1] + "/meta.json"))
sys.exit(0 if m["state_dir"] == os.path.realpath(sys.argv[2]) and not m["persistent"] else 1)' \
    "$a" "$tmp/a/local"

# Hand-made run directories: metadata from before the state directory
# was recorded (expired: collected), hostile metadata (left), and a
# run directory name that is a link (never followed).
mkdir -m 700 "$fake1" "$fake1/lcl-0123456789abcdef" "$fake2" "$fake2/lcl-0123456789abcdef" \
    "$fake2/lcl-fedcba9876543210" "$tmp/target" "$tmp/target/lcl-0123456789abcdef"
old='{"persistent":false,"created_ns":1000000000,"ttl_ns":1000000000}'
printf '%s' "$old" >"$fake1/lcl-0123456789abcdef/meta.json"
printf '%s' "$old" >"$tmp/target/lcl-0123456789abcdef/meta.json"
printf '%s' '{"persistent":false,"created_ns":1,"ttl_ns":1,"state_dir":42}' \
    >"$fake2/lcl-0123456789abcdef/meta.json"
printf '{{{' >"$fake2/lcl-fedcba9876543210/meta.json"
ln -s "$tmp/target" "$fakelink"

rm -rf "$tmp/a"
gc_from_c
check "gc leaves an orphan whose time-to-live has not passed" \
    eval 'is_rc 0 && [ -d "$a" ] && mounted "$a"'
check "gc collects expired metadata that names no state directory, and its run dir" \
    eval '[ ! -e "$fake1" ]'
check "gc leaves metadata it does not understand" \
    eval '[ -f "$fake2/lcl-0123456789abcdef/meta.json" ] && [ -f "$fake2/lcl-fedcba9876543210/meta.json" ]'
check "gc follows no link named like a run directory" \
    eval '[ -L "$fakelink" ] && [ -f "$tmp/target/lcl-0123456789abcdef/meta.json" ]'

backdate "$a"
backdate "$b"
gc_from_c
check "gc from another state directory unmounts the expired orphan's work tmpfs" \
    eval 'is_rc 0 && ! mounted "$a"'
check "and removes its directory" eval '[ ! -e "$a" ]'
check "and its emptied run directory" eval '[ ! -e "$(dirname "$a")" ]'
check "an expired sandbox its live state directory still links to is left to that one's gc" \
    eval '[ -d "$b" ] && mounted "$b"'

POLYSANDBOX_STATE_DIR="$tmp/b" cli gc --provider local
check "which reaps it" eval 'is_rc 0 && out_has "reaped local $(basename "$b")" && ! mounted "$b" &&
                             [ ! -e "$b" ]'

# Every gc above ran while d ran (another state directory, not expired).
check "a live run's sandbox of another state directory is left alone" \
    eval '[ -n "$d" ] && [ -d "$d" ] && mounted "$d" && kill -0 "$live"'
kill -9 "$live"
wait "$live" 2>/dev/null
rm -rf "$tmp/d"
backdate "$d"
# The killed run's sandbox dies asynchronously (its init by
# PDEATHSIG).  Once, under load in an ASan run, the first list did not
# collect it and said nothing; list is asked again, a bounded number of
# times, and what stands in the way is printed if it never does.
: >"$tmp/lists"
tries=0
while [ "$tries" -lt 20 ]; do
    tries=$((tries + 1))
    POLYSANDBOX_LOG=info POLYSANDBOX_STATE_DIR="$tmp/c" cli list --provider local --json
    cat "$tmp/err" >>"$tmp/lists"
    [ "$rc" -eq 0 ] && grep -q -F "collected orphaned sandbox $d" "$tmp/lists" && break
    sleep 0.5
done
cp "$tmp/lists" "$tmp/err"
[ "$tries" -gt 1 ] && echo "# list said it after $tries tries"
if [ -e "$d" ]; then
    echo "# $d is still there; its state directory: $(ls -la "$tmp/d" 2>&1 | tr '\n' ' ')"
fi
check "list (what gc runs) collects it once killed, expired and its state directory gone, and says so" \
    eval 'is_rc 0 && ! mounted "$d" && [ ! -e "$d" ] && err_has "collected orphaned sandbox $d"'
done_testing
