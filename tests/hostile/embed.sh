#!/bin/sh
# tests/hostile/embed.sh - the local provider's in-process init leaves
# its embedding process alone (tests/hostile/embed.py, with the Python
# package on the build tree), on both launchers: the init on the
# caller's memory (launch/vfork.c) and the copy-on-write one (TAP).
: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP not root: the memory limit may have no cgroup"; exit 0; }
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "1..0 # SKIP /usr/bin/python3 is not installed"; exit 0; }
POLYSANDBOX_LIBRARY="$top_builddir/core/.libs/libpolysandbox.so"
[ -f "$POLYSANDBOX_LIBRARY" ] || { echo "Bail out! $POLYSANDBOX_LIBRARY is not built"; exit 1; }
. "$top_srcdir/tests/python/sanitizer-env.sh"
[ -z "$py_skip" ] || { echo "1..0 # SKIP $py_skip"; exit 0; }
LD_LIBRARY_PATH="$top_builddir/core/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
PYTHONPATH="$top_srcdir/python:$top_builddir/python/.libs"
PYTHONDONTWRITEBYTECODE=1 POLYSANDBOX_LOCAL_DAEMON=off
export POLYSANDBOX_LIBRARY LD_LIBRARY_PATH PYTHONPATH PYTHONDONTWRITEBYTECODE \
    POLYSANDBOX_LOCAL_DAEMON
# Both runs' TAP as one plan: the second's numbers follow the first's.
out=$(mktemp "${TMPDIR:-/tmp}/ps-embed.XXXXXX") || exit 99
trap 'rm -f "$out"' EXIT
for launch in vfork fork; do
    POLYSANDBOX_LOCAL_LAUNCH=$launch "$PY" "$top_srcdir/tests/hostile/embed.py" 2>&1 |
        sed -n "s/^\(not \)\{0,1\}ok [0-9]* - /&($launch) /p" >>"$out"
done
# A run that died early has fewer lines: the plan says how many.
echo "1..16"
awk '{ sub(/ok [0-9]+ -/, "ok " NR " -"); print }' "$out"
