#!/bin/sh
# tests/microvm/persist.sh - a persistent microvm sandbox across
# polysandbox processes, on one VM boot: `create` leaves the VM running
# in a session of its own with its record (0700 directory, 0600 file);
# two `exec`s from separate processes share its state; upload and
# download reach it; `list` finds it by label (a damaged record skipped,
# and refused by exec naming it); a record pointing at
# another process (a tampered one), expired, is reaped by `gc` without
# that process killed, and the live sandbox (its TTL an hour) is kept;
# `destroy` stops the VM and leaves nothing behind.  Skips as run.sh does
# (tests/microvm/guest.sh).
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/microvm/guest.sh"

id= decoy=
label=suite=mvpersist-$$
sbdir=$POLYSANDBOX_STATE_DIR/microvm/sandboxes
fake=microvm-pdecoy$$ junk=microvm-pjunk$$
trap '[ -n "$id" ] && "$PS" destroy --provider microvm "$id" >/dev/null 2>&1
      [ -n "$decoy" ] && kill "$decoy" 2>/dev/null
      rm -rf "$tmp" "$sbdir/$fake" "$sbdir/$junk"' EXIT
plan 16
CLI_TIMEOUT=600
# PID has ended: no such process, or a zombie its reaper (not us) has
# yet to collect.
gone() { ! [ -e "/proc/$1" ] || [ "$(cut -d')' -f2 "/proc/$1/stat" | awk '{print $1}')" = Z ]; }
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }

t0=$(date +%s)
cli create --provider microvm --label "$label" --ttl 1h
id=$(cat "$tmp/out")
echo "# create (one boot): $(($(date +%s) - t0)) s"
check "create prints a persistent microvm sandbox's id" \
    eval 'is_rc 0 && case "$id" in microvm-p*) true ;; *) false ;; esac'
dir=$sbdir/$id
pid=$(field "$dir/vm.json" pid 2>/dev/null)
echo "# its VMM: pid ${pid:-none}"
check "its VM outlives create, in a session of its own" \
    sh -c '[ -n "$1" ] && kill -0 "$1" && sid=$(ps -o sid= -p "$1" | tr -d " ") &&
           [ -n "$sid" ] && [ "$sid" != "$(ps -o sid= -p $$ | tr -d " ")" ]' sh "$pid"
check "its directory is 0700, its record 0600" \
    sh -c '[ "$(stat -c %a "$1")" = 700 ] && [ "$(stat -c %a "$1/vm.json")" = 600 ]' sh "$dir"

t0=$(date +%s)
cli exec "$id" -- python3 -c 'open("kept", "w").write("left by the first exec")'
check "an exec from a second process" is_rc 0
cli exec "$id" -- python3 -c 'print(open("kept").read())'
check "an exec from a third process sees what the second left" rc_and_out 0 "left by the first exec"
echo "# two execs: $(($(date +%s) - t0)) s"

head -c 100000 /dev/urandom > "$tmp/up" || exit 99
cli upload "$id" "$tmp/up" d/up.bin
check "upload into the running VM" is_rc 0
cli exec "$id" -- python3 -c 'import hashlib; print(hashlib.sha256(open("d/up.bin", "rb").read()).hexdigest())'
check "a command sees the uploaded bytes" rc_and_out 0 "$(sha256sum < "$tmp/up" | cut -d' ' -f1)"
cli download "$id" d/up.bin "$tmp/back"
check "download gives them back byte-exact" eval 'is_rc 0 && cmp -s "$tmp/up" "$tmp/back"'

cli list --provider microvm --label "$label"
check "list finds it by its label" eval 'is_rc 0 && out_has "$id"'
cli list --provider microvm --label "suite=none-$$"
check "list with another label does not" eval 'is_rc 0 && ! out_has "$id"'
mkdir -m 700 "$sbdir/$junk" && printf '{"version":1,"pid":' > "$sbdir/$junk/vm.json" &&
    chmod 600 "$sbdir/$junk/vm.json" || exit 99
cli list --provider microvm
listed=$(cat "$tmp/out")
cli exec --provider microvm "$junk" -- true
check "a damaged record: list skips it, exec refuses it naming the file" \
    eval 'case "$listed" in *"$id"*) ! echo "$listed" | grep -q "$junk" ;; *) false ;; esac &&
          [ "$rc" -ne 0 ] && grep -q "$junk/vm.json.*not JSON" "$tmp/err"'
rm -r "$sbdir/$junk"

# A record naming another process of ours (its true start time, even),
# ours by its owner label and expired: it is not that VM (its command
# line does not name it), so gc removes the record and leaves the
# process alone.
sleep 600 & decoy=$!
owner=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["labels"]["polysandbox.owner"])' "$dir/vm.json") &&
    mkdir -m 700 "$sbdir/$fake" &&
    start=$(cut -d')' -f2- "/proc/$decoy/stat" | awk '{print $20}') &&
    printf '{"version":1,"id":"%s","pid":%s,"start":%s,"created_ns":1,"ttl_ns":1,"accel":"tcg","unenforced":0,"labels":{"polysandbox.owner":"%s","polysandbox.expires":"1"},"env":[],"limits":{"wall_ns":1,"cpu_ns":1,"memory_bytes":1,"pids":1,"nofile":1,"fsize_bytes":1,"disk_bytes":1,"stdout_bytes":1,"stderr_bytes":1}}' \
        "$fake" "$decoy" "$start" "$owner" > "$sbdir/$fake/vm.json" &&
    chmod 600 "$sbdir/$fake/vm.json" || exit 99
cli exec --provider microvm "$fake" -- true
check "an exec in a record whose process is no VM of ours fails, naming it gone" \
    eval '[ "$rc" -ne 0 ] && grep -q "no longer running" "$tmp/err"'
cli gc --provider microvm
check "gc reaps that expired record, never killing the process it names" \
    eval 'is_rc 0 && out_has "$fake" && [ ! -e "$sbdir/$fake" ] && kill -0 "$decoy"'
check "gc keeps the live sandbox (its TTL not passed)" eval '! out_has "$id" && [ -e "$dir/vm.json" ] && kill -0 "$pid"'

cli destroy --provider microvm "$id"
check "destroy stops the VM and removes its state" \
    eval 'is_rc 0 && gone "$pid" && [ ! -e "$dir" ]'
cli exec "$id" -- true
check "the destroyed sandbox is not found (exit 2)" is_rc 2
id=
done_testing
