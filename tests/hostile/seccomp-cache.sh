#!/bin/sh
# tests/hostile/seccomp-cache.sh - the cached seccomp filter (TAP)
#
# The local provider keeps its built filter in its state directory
# (seccomp-KEY.bpf, program + checksum) so a new process loads it instead
# of building it.  A damaged or truncated cache must be rebuilt, never
# loaded: after each, a denied call (ptrace) is still denied inside.

: "${top_builddir:?top_builddir is not set (run through make check)}"
PS="$top_builddir/polysandbox"
PROBE="$top_builddir/tests/hostile/probe"

if [ ! -x "$PS" ] || [ ! -x "$PROBE" ]; then
    echo "1..0 # SKIP polysandbox or tests/hostile/probe not built"
    exit 0
fi
if [ "$(uname -m)" != x86_64 ]; then
    echo "1..0 # SKIP the probe's answers are for x86_64"
    exit 0
fi
# In-process: an exec the daemon serves never reads the cache (the daemon
# loaded the filter when it started), so nothing would replace a bad one.
POLYSANDBOX_LOCAL_DAEMON=off
export POLYSANDBOX_LOCAL_DAEMON
# A state directory of our own: other tests load the shared cache meanwhile.
POLYSANDBOX_STATE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ps-seccomp-cache.XXXXXX") || exit 99
export POLYSANDBOX_STATE_DIR
trap 'rm -rf "$POLYSANDBOX_STATE_DIR"' EXIT

n=0 failed=0
check() { # check DESCRIPTION COMMAND...
    desc=$1; shift
    n=$((n + 1))
    if "$@"; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; failed=1; fi
}
cache() { ls "$POLYSANDBOX_STATE_DIR"/local/seccomp-*.bpf 2>/dev/null; }
# ptrace answers EPERM inside (the probe runs only in the sandbox).
ptrace_denied() {
    "$PS" -q run -e ASAN_OPTIONS=detect_leaks=0 --file "$PROBE:probe" -- ./probe all \
        2>/dev/null | grep -qx 'ptrace EPERM'
}

echo "1..7"
check "a first run builds and caches the filter" ptrace_denied
check "exactly one cache file, private to its owner" \
    sh -c '[ "$(ls "$0"/local/seccomp-*.bpf | wc -l)" -eq 1 ] &&
           [ "$(stat -c %a "$(ls "$0"/local/seccomp-*.bpf)")" = 600 ]' "$POLYSANDBOX_STATE_DIR"
f=$(cache)
cp "$f" "$POLYSANDBOX_STATE_DIR/good"
check "a second run loads it: still denied" ptrace_denied

# One flipped byte inside the program.
printf '\377' | dd of="$f" bs=1 seek=64 conv=notrunc 2>/dev/null
check "a damaged cache is not used: still denied" ptrace_denied
check "and is replaced by a good one" cmp -s "$f" "$POLYSANDBOX_STATE_DIR/good"

# Cut short.
head -c 12 "$POLYSANDBOX_STATE_DIR/good" >"$f"
check "a truncated cache is not used: still denied" ptrace_denied
check "and is replaced by a good one" cmp -s "$f" "$POLYSANDBOX_STATE_DIR/good"
exit $failed
