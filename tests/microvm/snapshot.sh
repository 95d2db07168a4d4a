#!/bin/sh
# tests/microvm/snapshot.sh - VMs restored from a snapshot (snapshot = auto):
# the snapshot built once (by the first create that knows its
# accelerator) and reused by the next, two restored VMs reading
# different random bytes with a current clock (the agent's SEED), a
# changed setting (memory) rebuilding it, once for two creates at once
# (the lock), snapshot = off booting.  Three boots (two of them saved)
# and four restores at most; a private
# state directory, so the snapshot is this test's alone (removed at the
# end), with the suite's KVM probe result copied in when there is one.
. "$top_srcdir/tests/cli/lib.sh"

. "$top_srcdir/tests/microvm/guest.sh"
plan 14

POLYSANDBOX_STATE_DIR=$tmp/state POLYSANDBOX_LOG=info
export POLYSANDBOX_STATE_DIR POLYSANDBOX_LOG
mkdir -p "$tmp/state/microvm" || exit 99
cp "$top_builddir/tests/state/microvm/accel" "$tmp/state/microvm/" 2>/dev/null
ini=$tmp/config/providers.d/microvm.ini

cli doctor --provider microvm
snap=$(sed -n 's|.*snapshot: auto: \(/.*/vm\.snap\) (.*|\1|p' "$tmp/out" "$tmp/err" | head -n 1)
check "doctor names where the snapshot lives, not built yet" \
    sh -c '[ -n "$1" ] && grep -q "not built for these settings" "$2" "$3"' sh "$snap" \
    "$tmp/out" "$tmp/err"
[ -n "$snap" ] || snap=$tmp/none/vm.snap
trap 'rm -rf "$tmp" "${snap%/vm.snap}"' EXIT

code='import os, time; print(os.urandom(16).hex(), int(time.time()))'
# run N: `polysandbox run` of $code; its status in $rcN, its output in
# $tmp/outN, its log in $tmp/errN.  start N / finish N: the same in the
# background, for two at once.
start() {
    ("$PS" run --provider microvm --lang python -c "$code" < /dev/null > "$tmp/out$1" \
        2> "$tmp/err$1"; echo $? > "$tmp/rc$1") &
}
finish() {
    wait
    eval "rc$1=\$(cat \"\$tmp/rc$1\")"
    echo "# run $1: status $(cat "$tmp/rc$1"), $(cat "$tmp/out$1")"
    grep -o 'microvm: [a-z]* .* in [0-9]* ms' "$tmp/err$1" | sed 's/^/#   /'
}
run() { start "$1"; finish "$1"; }
ident() { stat -c '%i %Y.%y' "$snap" 2>/dev/null; }

run 1 # the KVM probe, when none was copied, boots without a snapshot
run 2
ram=${snap%/vm.snap}/vm.ram
ram2=$(stat -c '%i %s %.9Y' "$ram" 2>/dev/null)
id2=$(ident)
t3=$(date +%s)
run 3
t3end=$(date +%s)
check "a VM restored from the snapshot runs code" \
    sh -c '[ "$1" -eq 0 ] && grep -q "restored a VM" "$2" && grep -Eqx "[0-9a-f]{32} [0-9]+" "$3"' \
    sh "$rc3" "$tmp/err3" "$tmp/out3"
check "the snapshot was built once, by the first create that could" \
    sh -c '[ "$(cat "$@" | grep -c "built the snapshot")" -eq 1 ]' sh "$tmp/err1" "$tmp/err2" \
    "$tmp/err3"
check "the second restored sandbox reuses it (not rebuilt, the same file)" \
    sh -c '[ -n "$1" ] && [ "$1" = "$2" ] && ! grep -q "built the snapshot" "$3"' sh "$id2" \
    "$(ident)" "$tmp/err3"
check "both VMs were restored from it" sh -c 'grep -q "restored a VM" "$1" && [ "$2" -eq 0 ]' \
    sh "$tmp/err2" "$rc2"
r2=$(cut -d' ' -f1 "$tmp/out2")
r3=$(cut -d' ' -f1 "$tmp/out3")
check "two VMs restored from one snapshot read different random bytes" \
    sh -c '[ -n "$1" ] && [ -n "$2" ] && [ "$1" != "$2" ]' sh "$r2" "$r3"
g3=$(cut -d' ' -f2 "$tmp/out3")
echo "# host clock $t3..$t3end, restored guest's $g3"
check "a restored VM's clock is the host's now, not the snapshot's" \
    sh -c '[ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]' sh "$g3" "$t3" "$t3end"

# snapshot_memory = shared (the default): the guest's RAM is a file beside
# the stream (the builder's, mapped shared), which the stream leaves out.
check "the RAM: a file of the guest's size beside a stream without it, unwritten by restored VMs" \
    sh -c '[ "$(stat -c %s "$1")" -eq $((512 << 20)) ] && [ "$(stat -c %s "$2")" -lt $((16 << 20)) ] &&
           [ -n "$3" ] && [ "$3" = "$(stat -c "%i %s %.9Y" "$1")" ]' sh "$ram" "$snap" "$ram2"

cli doctor --provider microvm
check "doctor: the snapshot is built for these settings" \
    sh -c 'grep -q "snapshot: auto: .*(built for these settings)" "$1" "$2"' sh "$tmp/out" "$tmp/err"

# A changed setting: the snapshot no longer fits; rebuilt at the next create.
echo "memory = 384" >> "$ini" || exit 99
cli doctor --provider microvm
check "doctor: a changed setting leaves the snapshot stale" \
    sh -c 'grep -q "snapshot: auto: .*not built for these settings" "$1" "$2"' sh "$tmp/out" \
    "$tmp/err"
# Two creates at once: one builds (the lock), the other waits and restores.
start 4
start 5
finish 4
finish 5
check "a changed setting (memory) rebuilds the snapshot, and a VM is restored from it" \
    sh -c '[ "$1" -eq 0 ] && cat "$2" "$3" | grep -q "built the snapshot" &&
           grep -q "restored a VM" "$2" && [ -n "$4" ] && [ "$4" != "$5" ]' \
    sh "$rc4" "$tmp/err4" "$tmp/err5" "$(ident)" "$id2"
check "two creates at once: the snapshot built by one of them, both VMs restored" \
    sh -c '[ "$1" -eq 0 ] && [ "$(cat "$2" "$3" | grep -c "built the snapshot")" -eq 1 ] &&
           grep -q "restored a VM" "$3"' sh "$rc5" "$tmp/err4" "$tmp/err5"
id4=$(ident)

echo "snapshot = off" >> "$ini" || exit 99
run 6
check "snapshot = off boots the VM (no restore, the snapshot untouched)" \
    sh -c '[ "$1" -eq 0 ] && grep -q "booted a VM" "$2" && ! grep -q "restored a VM\|built the" "$2" &&
           grep -Eqx "[0-9a-f]{32} [0-9]+" "$3" && [ "$4" = "$5" ]' \
    sh "$rc6" "$tmp/err6" "$tmp/out6" "$id4" "$(ident)"
cli doctor --provider microvm
check "doctor says snapshot = off" sh -c 'grep -q "snapshot: off" "$1" "$2"' sh "$tmp/out" \
    "$tmp/err"
done_testing
