#!/bin/sh
# tests/cli/terminal.sh - exec -i and run -i on a real terminal: runs
# terminal.py (TAP), which drives polysandbox on a pseudo-terminal.
: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
if [ ! -e "$top_builddir/plugins/local/.libs/local.so" ]; then
    echo "1..0 # SKIP the local provider is not built"
    exit 0
fi
[ -x /usr/bin/python3 ] || { echo "1..0 # SKIP /usr/bin/python3 is not installed"; exit 0; }
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE
exec /usr/bin/python3 "$top_srcdir/tests/cli/terminal.py"
