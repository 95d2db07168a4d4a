#!/bin/sh
# tests/microvm/snapfail.sh - a snapshot that cannot be built costs one
# try: the create that tried boots its VM all the same (a snapshot is a
# speed-up, never a new way to fail), the failure is recorded for those
# settings (doctor says so), and the next create boots without trying.
#
# Needs neither QEMU nor KVM: the VMM is a script that records its
# arguments and exits, so every VM stops before its agent answers (exit
# 125, as image.sh).  snapshot.sh restores real guests.
. "$top_srcdir/tests/cli/lib.sh"

. "$top_srcdir/tests/microvm/fakevmm.sh"
CLI_TIMEOUT=120
plan 4

cli doctor --provider microvm
snap=$(sed -n 's|.*snapshot: auto: \(/.*/vm\.snap\) (.*|\1|p' "$tmp/out" "$tmp/err" | head -n 1)
[ -n "$snap" ] && trap 'rm -rf "$tmp" "${snap%/vm.snap}"' EXIT
starts() { cat "$tmp/vmm-started" 2>/dev/null | wc -l; }
builders() { cat "$tmp/vmm-started" 2>/dev/null | grep -c -- '-mon chardev=qmp'; }

cli run --provider microvm --lang python -c 'print(1)'
sed 's/^/# started: /' "$tmp/vmm-started" 2>/dev/null | cut -c1-60
check "a snapshot that cannot be built: the create boots its VM all the same" sh -c \
    '[ "$1" -eq 125 ] && grep -q "stopped before its agent answered" "$2" &&
     [ "$3" -eq 2 ] && [ "$4" -eq 1 ] && ! grep -q -- "-incoming" "$5"' \
    sh "$rc" "$tmp/err" "$(starts)" "$(builders)" "$tmp/vmm-started"

cli doctor --provider microvm
check "doctor says the snapshot failed for these settings" \
    sh -c 'grep -q "snapshot: auto: .*failed for these settings: its VM did not boot" "$1" "$2"' \
    sh "$tmp/out" "$tmp/err"

rm -f "$tmp/vmm-started"
cli run --provider microvm --lang python -c 'print(1)'
check "the next create boots without trying the snapshot again" sh -c \
    '[ "$1" -eq 125 ] && [ "$2" -eq 1 ] && [ "$3" -eq 0 ]' sh "$rc" "$(starts)" "$(builders)"

# A changed setting is another snapshot: tried again.
echo "memory = 384" >> "$tmp/config/providers.d/microvm.ini" || exit 99
rm -f "$tmp/vmm-started"
cli run --provider microvm --lang python -c 'print(1)'
check "a changed setting tries the snapshot again" sh -c \
    '[ "$1" -eq 125 ] && [ "$2" -eq 2 ] && [ "$3" -eq 1 ]' sh "$rc" "$(starts)" "$(builders)"
done_testing
