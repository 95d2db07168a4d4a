#!/bin/sh
# tests/microvm/hostile.sh - the hostile programs that make sense in a VM,
# on the microvm provider: a fork bomb, a memory bomb, an output flood and
# one huge line, kill -1, filling /work and /tmp, a kernel-module load.
#
# Each row is the local provider's own (tests/hostile/run.sh's table,
# read from that file, so the statuses cannot drift apart): the same
# program (tests/hostile/hostile, copied in with --file), the same
# status and exit code.  They run one after the other in one persistent
# VM (one restore, not a boot per row) made with the rows' limits, and
# after each the VM must still serve an exec with the same VMM: no row
# may take the guest, its agent or QEMU down.  Then destroy leaves no VMM
# running, and a host process outlived the guest's kill -1.
#
# Skips as run.sh does (tests/microvm/guest.sh).
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/microvm/guest.sh"
HOSTILE="$top_builddir/tests/hostile/hostile"
[ -x "$HOSTILE" ] || { echo "1..0 # SKIP $HOSTILE is not built"; exit 0; }
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP python3 reads the JSON results"; exit 0; }

# The rows of the local table, by their program's arguments.
rows="forkbomb|membomb|flood|huge-line|kill-all|kmod|fill-disk /work 8|fill-disk /tmp 8"
sed -n '/^table() {$/,/^}$/p' "$top_srcdir/tests/hostile/run.sh" |
    awk -F'|' -v want="$rows" 'BEGIN { n = split(want, w, "|"); for (i = 1; i <= n; i++) k[w[i]] = 1 }
                               NF == 5 && ($3 in k)' > "$tmp/rows"
n_rows=$(wc -l < "$tmp/rows")
plan $((n_rows * 3 + 5))
[ "$n_rows" -eq 8 ] || echo "# only $n_rows of the 8 rows found in tests/hostile/run.sh"

# One VM with every row's limits (they never get in each other's way:
# 16 processes, 64 MiB, an 8 MiB disk, 1 MiB of output).
CLI_TIMEOUT=600
cli create --provider microvm --pids 16 --memory 64M --disk 8M --output-limit 1M
id=$(cat "$tmp/out")
case $id in microvm-p*) ;; *) echo "Bail out! no persistent VM: $(head -c 300 "$tmp/err")"; exit 99 ;; esac
trap '"$PS" destroy "$id" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
vmm() { pgrep -f -- "-name $id" | head -n 1; }
pid0=$(vmm)
echo "# VM $id, VMM pid $pid0"
cli exec "$id" -- df -k /work /tmp
sed 's/^/# /' "$tmp/out"
sizes=$(awk '$6 == "/work" || $6 == "/tmp" { printf "%s %s ", $6, $2 }' "$tmp/out")
check "the VM's /work and /tmp are each the disk size (8 MiB)" [ "$sizes" = "/work 8192 /tmp 8192 " ]

# A host process of ours that the guest's kill -1 must not reach.
sleep 3600 &
sentinel=$!

jget() {
    python3 -c 'import json, sys
v = json.load(open(sys.argv[1])).get(sys.argv[2])
print(json.dumps(v) if isinstance(v, bool) or v is None else v)' "$1" "$2" 2>/dev/null
}
t0=$(date +%s)
while IFS='|' read -r name opts args want_status want_exit; do
    # the row's own time limit (its other limits are the VM's)
    tmo=$(printf '%s\n' "$opts" | sed -n 's/.*-t \([^ ]*\).*/\1/p')
    # shellcheck disable=SC2086 # args is a word list by design
    cli exec --json -t "${tmo:-20s}" --file "$HOSTILE:hostile" "$id" -- ./hostile $args
    st=$(jget "$tmp/out" status)
    code=$(jget "$tmp/out" exit_code)
    case $args in
    flood|huge-line) trunc="$trunc $(jget "$tmp/out" stdout_truncated)"
                     : > "$tmp/out" ;; # (not shown on a failure: megabytes)
    esac
    echo "# $args: status $st, exit code $code"
    check "$name: status $want_status" [ "$st" = "$want_status" ]
    check "$name: exit code $want_exit" sh -c '[ "$1" = "*" ] || [ "$1" = "$2" ]' sh "$want_exit" "$code"
    cli exec "$id" -- echo alive
    check "$name: the VM serves the next exec, the same VMM" \
        sh -c '[ "$1" = 0 ] && [ "$2" = alive ] && [ -n "$3" ] && [ "$3" = "$4" ]' sh \
        "$rc" "$(cat "$tmp/out")" "$pid0" "$(vmm)"
done < "$tmp/rows"
echo "# $n_rows rows in one VM: $(($(date +%s) - t0)) s"

check "the flood and the huge line are marked truncated" [ "$trunc" = " true true" ]
check "a host process outlived the guest's kill -1" kill -0 "$sentinel"
kill "$sentinel"
cli destroy "$id"
check "destroy succeeds" is_rc 0
i=0
while [ -n "$(vmm)" ] && [ "$i" -lt 50 ]; do i=$((i + 1)); sleep 0.1; done
check "no VMM of the VM is left" [ -z "$(vmm)" ]
done_testing
