#!/bin/sh
# tests/microvm/pool.sh - a warm pool of microvm sandboxes (restored VMs):
# the pool fills with a VM restored from the snapshot and warmed (warm =
# pass: python3 started once in it), a run of python
# code takes it (a pool hit: sbx_result_pool names the pool), prints 42
# from inside it, and the pool restores the next one in the background;
# the VM that served the run leaves no VMM process behind once destroyed,
# and none is left once the pool's context is freed.  Two restores (and
# the snapshot's build when the suite's state directory has none yet:
# one boot); then a process SIGKILLed while its pool holds a VM (a third
# restore) leaves no VMM behind either.  Skips as run.sh does
# (tests/microvm/guest.sh).
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/microvm/guest.sh"
plan 7

POLYSANDBOX_LOG=info
export POLYSANDBOX_LOG
t0=$(date +%s)
"$top_builddir/tests/bench/pooled-run" -p microvm -T python -s 1 -n 1 -w 600 -W pass \
    python 'print(6*7)' > "$tmp/out" 2> "$tmp/err"
rc=$?
sed 's/^/# /' "$tmp/out"
grep -o 'microvm: [a-z]* .* in [0-9]* ms' "$tmp/err" | sed 's/^/#   /'
echo "# $(($(date +%s) - t0)) s"
[ "$rc" -eq 0 ] || sed 's/^/# err: /' "$tmp/err" | tail -n 20
run=$(grep '^run 1 ' "$tmp/out")
pool=$(grep '^pool ' "$tmp/out")
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

check "a pooled run on microvm succeeds" [ "$rc" -eq 0 ]
check "the run was a pool hit (its result names the pool)" [ "$(field "$run" pool)" = pooled ]
check "it ran the code inside the VM: 42" \
    sh -c '[ "$1" = ok ] && [ "$2" = "42\\n" ]' sh "$(field "$run" status)" "$(field "$run" stdout)"
check "the pool restores its VMs from the snapshot (the refill at least)" \
    sh -c '[ "$(grep -c "restored a VM" "$1")" -ge 1 ]' sh "$tmp/err"
check "the pool refilled: a second VM created and ready, the lent one destroyed" \
    sh -c '[ "$1" = 1 ] && [ "$2" = 2 ] && [ "$3" = 1 ] && [ "$4" = 1 ]' sh \
    "$(field "$pool" ready)" "$(field "$pool" created)" "$(field "$pool" hits)" \
    "$(field "$pool" destroyed)"
# The ready VM's VMM, a child of pooled-run until its context was freed.
pids=$(field "$pool" pids)
left=
for p in $(echo "$pids" | tr ',' ' '); do
    [ "$p" != - ] && grep -q qemu "/proc/$p/cmdline" 2>/dev/null && left="$left $p"
done
check "one VMM while the pool held one VM, none once the pool was gone" \
    sh -c '[ "$1" = 1 ] && [ -z "$2" ]' sh "$(field "$pool" children)" "$left"

# Killed (SIGKILL) with a VM ready in its pool: the VMM goes with it.
"$top_builddir/tests/bench/pooled-run" -p microvm -T python -s 1 -n 0 -k -w 600 \
    python 'print(6*7)' > "$tmp/out2" 2> "$tmp/err2"
rc=$?
sed 's/^/# killed: /' "$tmp/out2"
pool=$(grep '^pool ' "$tmp/out2")
pids=$(field "$pool" pids)
qemus() {
    for p in $(echo "$pids" | tr ',' ' '); do
        [ "$p" != - ] && grep -q qemu "/proc/$p/cmdline" 2>/dev/null && echo "$p"
    done
}
i=0
while [ -n "$(qemus)" ] && [ "$i" -lt 100 ]; do i=$((i + 1)); sleep 0.1; done
check "a process killed while its pool held a VM leaves no VMM behind" \
    sh -c '[ "$1" -eq 137 ] && [ "$2" = 1 ] && [ -z "$3" ]' sh "$rc" \
    "$(field "$pool" children)" "$(qemus)"
done_testing
