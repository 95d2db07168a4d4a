#!/bin/sh
# tests/hostile/etc-cache.sh - the cached /etc scan (TAP)
#
# The local provider keeps the list of /etc entries a sandbox shows in
# its state directory (etc-scan.cache), keyed by /etc's identity and
# times, so a new process reads it instead of scanning /etc.  A damaged,
# forged or foreign-keyed list must never widen what a sandbox sees: each
# name read back must match the provider's patterns (else the file is
# not used and a scan replaces it).  The sandbox's /etc is compared with
# the one a fresh scan gives.  In-process only (daemon off): the daemon's
# provider reads the list once, at its start.

: "${top_builddir:?top_builddir is not set (run through make check)}"
PS="$top_builddir/polysandbox"

if [ ! -x "$PS" ]; then
    echo "1..0 # SKIP polysandbox is not built"
    exit 0
fi
POLYSANDBOX_STATE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ps-etc-cache.XXXXXX") || exit 99
export POLYSANDBOX_STATE_DIR
POLYSANDBOX_LOCAL_DAEMON=off
export POLYSANDBOX_LOCAL_DAEMON
trap 'rm -rf "$POLYSANDBOX_STATE_DIR"' EXIT
f=$POLYSANDBOX_STATE_DIR/local/etc-scan.cache

n=0 failed=0
check() { # check DESCRIPTION COMMAND...
    desc=$1; shift
    n=$((n + 1))
    if "$@"; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; failed=1; fi
}
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
etc_inside() { "$PS" -q run -- /bin/ls -a /etc 2>/dev/null; }
same_etc() { [ "$(etc_inside)" = "$want" ]; }

echo "1..9"
want=$(etc_inside)
check "a first run shows the host's ld.so cache and no shadow" \
    sh -c 'printf "%s\n" "$0" | grep -qx ld.so.cache && ! printf "%s\n" "$0" | grep -qx shadow' "$want"
# /etc changed in the last seconds (a package install): nothing is stored.
if [ ! -f "$f" ]; then
    for i in 2 3 4 5 6 7 8 9; do skip "/etc changed lately: its scan is not cached"; done
    exit $failed
fi
check "the list is cached, private to its owner" sh -c '[ "$(stat -c %a "$0")" = 600 ]' "$f"
cp "$f" "$POLYSANDBOX_STATE_DIR/good"
check "a second run (from the cache) shows the same /etc" same_etc

# A name no pattern allows (shadow exists on every host): not used.
sed 's/^end$/8 shadow\nend/' "$POLYSANDBOX_STATE_DIR/good" >"$f"
check "a list naming /etc/shadow is not used: same /etc, no shadow" same_etc
check "and is replaced by a fresh scan" cmp -s "$f" "$POLYSANDBOX_STATE_DIR/good"

# Another key (another /etc, or another build's patterns): not used.
sed '1s/ [0-9a-f]*$/ 0123456789abcdef/; s/^end$/8 python3-not-there\nend/' \
    "$POLYSANDBOX_STATE_DIR/good" >"$f"
check "a list of another key is not used: same /etc" same_etc

# Cut short (no "end"), and garbage.
head -n 3 "$POLYSANDBOX_STATE_DIR/good" >"$f"
check "a truncated list is not used: same /etc" same_etc
head -c 300 /dev/urandom >"$f"
check "garbage is not used: same /etc" same_etc
check "and is replaced by a fresh scan" cmp -s "$f" "$POLYSANDBOX_STATE_DIR/good"
exit $failed
