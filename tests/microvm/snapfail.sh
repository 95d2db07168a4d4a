#!/bin/sh
# tests/microvm/snapfail.sh - a snapshot that cannot be built costs one
# try: the create that tried boots its VM all the same (a snapshot is a
# speed-up, never a new way to fail), the failure is recorded for those
# settings (doctor says so), and the next create boots without trying;
# once that wait is over (its record's retry_after moved into the past:
# no test waits) it is tried again, and a second failure in a row waits
# twice as long (a minute, then two, ... at most an hour).  A snapshot
# that builds but never restores counts its failures in a row across
# the rebuilds between (60, 120, 240 s), not one each time.
#
# Needs neither QEMU nor KVM: the VMM is a script that records its
# arguments and exits, so every VM stops before its agent answers (exit
# 125, as image.sh).  snapshot.sh restores real guests.
. "$top_srcdir/tests/cli/lib.sh"

. "$top_srcdir/tests/microvm/fakevmm.sh"
CLI_TIMEOUT=120
plan 10

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
# "tried again in N s (failure K in a row": N and K
again() { sed -n 's/.*tried again in \([0-9]*\) s (failure \([0-9]*\) in a row.*/\1 \2/p' \
              "$tmp/out" "$tmp/err" | head -n 1; }
read -r wait n <<EOF2
$(again)
EOF2
check "... after a first failure, tried again within a minute, not an hour" \
    eval '[ "${n:-0}" -eq 1 ] && [ "${wait:-0}" -gt 30 ] && [ "${wait:-0}" -le 60 ]'

rm -f "$tmp/vmm-started"
cli run --provider microvm --lang python -c 'print(1)'
check "the next create boots without trying the snapshot again" sh -c \
    '[ "$1" -eq 125 ] && [ "$2" -eq 1 ] && [ "$3" -eq 0 ]' sh "$rc" "$(starts)" "$(builders)"

# The wait over (moved into the past in the record): tried again, and
# the second failure in a row waits twice as long.
rec=${snap%/vm.snap}/snap.json
sed -i 's/"retry_after": *[0-9]*/"retry_after": 1/' "$rec" || exit 99
rm -f "$tmp/vmm-started"
cli run --provider microvm --lang python -c 'print(1)'
check "the wait over, the next create tries the snapshot again" sh -c \
    '[ "$1" -eq 125 ] && [ "$2" -eq 2 ] && [ "$3" -eq 1 ]' sh "$rc" "$(starts)" "$(builders)"
cli doctor --provider microvm
read -r wait n <<EOF2
$(again)
EOF2
check "... and a second failure in a row waits twice as long (two minutes)" \
    eval '[ "${n:-0}" -eq 2 ] && [ "${wait:-0}" -gt 90 ] && [ "${wait:-0}" -le 120 ]'

# A changed setting is another snapshot: tried again.
echo "memory = 384" >> "$tmp/config/providers.d/microvm.ini" || exit 99
rm -f "$tmp/vmm-started"
cli run --provider microvm --lang python -c 'print(1)'
check "a changed setting tries the snapshot again" sh -c \
    '[ "$1" -eq 125 ] && [ "$2" -eq 2 ] && [ "$3" -eq 1 ]' sh "$rc" "$(starts)" "$(builders)"
# A snapshot that builds but never restores.  The fake VMM cannot save
# a VM, so each successful (re)build is written here as snap_build
# writes it: an OK record for the key (the failed record's), the stream
# and the RAM; each restore then fails (QMP refused) and the wait must
# double each time, the count kept across the rebuilds.
# The VMM answers a restore's QMP greeting and refuses its first
# command (else the restore waits for the greeting until its deadline).
cat > "$tmp/vmm" <<EOF2 || exit 99
#!/bin/sh
echo "\$*" >> "$tmp/vmm-started"
case "\$*" in *-incoming*) ;; *) exit 0 ;; esac
fd=\$(echo "\$*" | sed -n 's/.*socket,id=qmp,fd=\([0-9]*\).*/\1/p')
[ -n "\$fd" ] && eval "printf '{\"QMP\": {}}\\n{\"error\": {\"desc\": \"fake\"}}\\n' >&\$fd"
EOF2
sed -i "s/^memory = 384/memory = 320/" "$tmp/config/providers.d/microvm.ini" || exit 99
cli run --provider microvm --lang python -c 'print(1)'
rm -f "${rec%/snap.json}/failures.json"
built() {
    python3 - "$rec" <<'EOF2' && : > "${rec%/snap.json}/vm.snap" && : > "${rec%/snap.json}/vm.ram"
import json, sys
r = json.load(open(sys.argv[1]))
json.dump({"key": r["key"], "tsc_khz": 1000000, "disk_bytes": 67108864,
           "state_dir": r.get("state_dir")}, open(sys.argv[1], "w"))
EOF2
}
k=1
for want in 60 120 240; do
    built || exit 99
    rm -f "$tmp/vmm-started"
    cli run --provider microvm --lang python -c 'print(1)'
    ran=$rc tried=$(grep -c -- '-incoming' "$tmp/vmm-started" 2>/dev/null)
    cli doctor --provider microvm
    read -r wait n <<EOF2
$(again)
EOF2
    check "restore failure $k in a row after a rebuild: tried, then a wait of $want s" \
        eval '[ "$ran" -eq 125 ] && [ "${tried:-0}" -eq 1 ] && [ "${n:-0}" -eq $k ] &&
              [ "${wait:-0}" -gt $((want * 3 / 4)) ] && [ "${wait:-0}" -le $want ]'
    k=$((k + 1))
done
done_testing
