#!/bin/sh
# tests/kube/signal.sh - signals for a running command on the kubernetes
# provider (SBX_CAP_SIGNAL: the exec wrapper's process group, a second
# exec of kill) against the Kubernetes fake, through the library
# (test-signal: SIGINT, SIGTERM, trapped signals, a signal held until the
# command runs, SIGSTOP dropped, a signal at the end harmless, SIGKILL by
# cancel); the same program on the local provider, and each case must end
# alike on both (status, signal, exit code).
. "$top_srcdir/tests/kube/lib.sh"
plan 25
prog=$top_builddir/tests/kube/test-signal
# run_prog PROVIDER: its TAP lines, numbered after ours; its "=" lines in
# $tmp/PROVIDER.res.
run_prog() {
    timeout -k 5 300 "$prog" "$1" "$tap_n" >"$tmp/prog.out" 2>&1 || tap_failed=1
    grep -v '^= ' "$tmp/prog.out"
    grep '^= ' "$tmp/prog.out" >"$tmp/$1.res"
    tap_n=$((tap_n + $(grep -c -E '^(not )?ok ' "$tmp/prog.out")))
}

start_provider_fake
cp "$top_srcdir/tests/config/providers.d/local.ini" "$tmp/config/providers.d/"
run_prog local
run_prog kubernetes
# (without perl kubernetes cannot tell a signal from exit 128 + N)
grep -v '^= no-perl ' "$tmp/local.res" >"$tmp/local.cmp"
grep -v '^= no-perl ' "$tmp/kubernetes.res" >"$tmp/kubernetes.cmp"
check "kubernetes ends every case as local does (status, signal, exit code)" \
    eval 'diff "$tmp/local.cmp" "$tmp/kubernetes.cmp" | sed "s/^/# /"; cmp -s "$tmp/local.cmp" "$tmp/kubernetes.cmp"'
done_testing
