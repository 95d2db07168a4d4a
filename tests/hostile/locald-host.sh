#!/bin/sh
# tests/hostile/locald-host.sh - polysandbox-locald's host table (TAP)
#
# The daemon runs the local provider's sources on the SDK's test host
# (plugins/local/daemon/host.c): its --set values are read with the
# orchestrator's own grammar, so a key the provider does not declare, or
# a value it refuses, stops the daemon before it listens, and its error
# names the key.  Needs no root: it never gets as far as a sandbox.

: "${top_srcdir:?top_srcdir is not set (run through make check)}"
: "${top_builddir:?top_builddir is not set (run through make check)}"
. "$top_srcdir/tests/lib/tap.sh"

DAEMON_BIN="$top_builddir/plugins/local/polysandbox-locald"
if [ ! -x "$DAEMON_BIN" ]; then echo "1..0 # SKIP no polysandbox-locald"; exit 0; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-locald-host.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/state" || exit 99

daemon() {
    "$DAEMON_BIN" --foreground --state-dir "$tmp/state" --run-dir "$tmp/run" --key k \
        --idle 1 "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

plan 3
daemon --set nosuch=1
check "a key the provider does not declare stops it, named" rc_and_err 1 "'nosuch'"
daemon --set work_inodes=lots
check "a value the provider refuses stops it, its key named" rc_and_err 1 "work_inodes"
check "neither left a socket" test ! -e "$tmp/run/locald.sock"
done_testing
