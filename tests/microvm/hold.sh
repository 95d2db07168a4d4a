#!/bin/sh
# tests/microvm/hold.sh - one holder of a snapshot's sealed copies shared
# by one-shot jailed runs (plugins/microvm/mv-hold.c): a fake holder
# already on the snapshot's socket hands an unsealed memfd; the first
# `polysandbox run` refuses it, seals its own copies, starts a holder and
# prints 42; the second gets the copies from that holder (no "sealed a
# copy") and prints 42; the holder keeps no fd but its copies and socket;
# once the state directory is gone, gc removes the snapshot and kills the
# holder.  One boot (the snapshot), two restores.  The holder's idle end
# and the other wrong answers: tests/microvm/test-microvm-hold.  Skips
# as run.sh does (tests/microvm/guest.sh).
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/microvm/guest.sh"

# A holder outlives the test's runs: a long idle time, so that it
# serves the second run however loaded the host is.
POLYSANDBOX_MICROVM_HOLD_IDLE=300
export POLYSANDBOX_MICROVM_HOLD_IDLE
jailed_own_state
case $snap in
/dev/shm/*) ;;
*) echo "1..0 # SKIP the snapshot is not in /dev/shm (${snap:-none})"; exit 0 ;;
esac
sdir=${snap%/vm.snap}
fake= holder=
trap '[ -n "$fake" ] && kill "$fake" 2>/dev/null
      [ -n "$holder" ] && kill "$holder" 2>/dev/null
      rm -rf "$tmp" "$sdir"' EXIT
plan 6
CLI_TIMEOUT=600
gone() { ! [ -e "/proc/$1" ] || [ "$(cut -d')' -f2 "/proc/$1/stat" | awk '{print $1}')" = Z ]; }

# The fake: mv-hold.c's wire (a request of 48 bytes, an answer of 56),
# the identity asked for echoed, and an unsealed memfd of its size.
mkdir -m 700 "$sdir" || exit 99
python3 - "$sdir/hold.sock" "$tmp/fake-ready" <<'EOF' &
import os, socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(4)
open(sys.argv[2], "w").close()
while True:
    c, _ = s.accept()
    q = c.recv(48, socket.MSG_WAITALL)
    if len(q) == 48:
        magic, version, which, dev, ino, size, sec, nsec = struct.unpack("=IHHQQQqq", q)
        fd = os.memfd_create("polysandbox-vm-ram")
        os.ftruncate(fd, size)
        rep = struct.pack("=IHHII", magic, version, 0, which, os.getpid()) + q[8:]
        socket.send_fds(c, [rep], [fd])
        os.close(fd)
    c.close()
EOF
fake=$!
i=0
while [ ! -e "$tmp/fake-ready" ] && [ "$i" -lt 100 ]; do i=$((i + 1)); sleep 0.1; done

t0=$(date +%s)
cli run --provider microvm --lang python -c 'print(6*7)'
echo "# the first run (the snapshot built): $(($(date +%s) - t0)) s"
grep -o 'microvm: \(sealed\|started\|the holder\|the snapshot.s sealed\).*' "$tmp/err" | sed 's/^/#   /'
holder=$(sed -n 's/.*started the holder .*(pid \([0-9]*\),.*/\1/p' "$tmp/err" | head -n 1)
check "the first run refuses the fake's unsealed memfd, seals its own copies and prints 42" \
    sh -c '[ "$1" -eq 0 ] && [ "$(cat "$2")" = 42 ] && grep -q "refused the answer of the holder.*: not sealed" "$3" &&
           grep -q "sealed a copy of the snapshot.s RAM" "$3"' sh "$rc" "$tmp/out" "$tmp/err"
check "and starts a holder in its own session (pid ${holder:-none})" \
    sh -c '[ -n "$1" ] && [ "$(cat "/proc/$1/comm")" = sbx-mv-hold ] &&
           [ "$(ps -o sid= -p "$1")" != "$(ps -o sid= -p $$)" ]' \
    sh "$holder"
# (never 0: the trap's kill would end the whole process group, make too)
[ -n "$holder" ] || holder=none
ls -l "/proc/$holder/fd" 2>/dev/null | sed -n 's/.* \([0-9]* -> .*\)/# holder fd \1/p'
check "the holder keeps its two sealed copies and its socket (0600), no other fd" \
    sh -c 'ls -l "/proc/$1/fd" | grep -c " -> " | grep -qx 3 &&
           ls -l "/proc/$1/fd" | grep -q "memfd:polysandbox-vm-ram" &&
           ls -l "/proc/$1/fd" | grep -q "memfd:polysandbox-vm-snap" &&
           [ "$(stat -c %a "$2/hold.sock")" = 600 ] && [ "$(stat -c %a "$2")" = 700 ]' \
    sh "$holder" "$sdir"

t0=$(date +%s)
cli run --provider microvm --lang python -c 'print(6*7)'
echo "# the second run: $(($(date +%s) - t0)) s"
grep -o 'microvm: \(sealed\|started\|the holder\|the snapshot.s sealed\).*' "$tmp/err" | sed 's/^/#   /'
check "the second run gets the copies from the holder, seals nothing, and prints 42" \
    sh -c '[ "$1" -eq 0 ] && [ "$(cat "$2")" = 42 ] && ! grep -q "sealed a copy" "$3" &&
           grep -q "sealed copies from its holder (pid $4)" "$3"' sh "$rc" "$tmp/out" "$tmp/err" \
    "$holder"

# gc from another state directory, this one removed: its snapshot is an
# orphan, removed, and its holder killed.
rm -rf "$tmp/state" || exit 99
POLYSANDBOX_STATE_DIR=$tmp/other cli gc --provider microvm
sed 's/^/# /' "$tmp/err"
i=0
while ! gone "$holder" && [ "$i" -lt 100 ]; do i=$((i + 1)); sleep 0.1; done
check "gc removes the orphaned snapshot and kills its holder" \
    sh -c '[ "$1" -eq 0 ] && ! [ -e "$2" ] && grep -q "stopped the holder" "$3"' sh "$rc" "$sdir" \
    "$tmp/err"
check "the holder is gone" gone "$holder"
done_testing
