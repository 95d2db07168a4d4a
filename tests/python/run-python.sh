# tests/python/run-python.sh - sourced by the Python package's tests:
# PYTHON_TEST=SCRIPT.py; . run-python.sh runs SCRIPT.py (TAP) with the system's python3
# on the build tree's libpolysandbox.
# Under an AddressSanitizer build, see sanitizer-env.sh.
: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"

PY=/usr/bin/python3
[ -x "$PY" ] || { echo "1..0 # SKIP /usr/bin/python3 is not installed"; exit 0; }
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 9))' ||
    { echo "1..0 # SKIP python3 is older than 3.9"; exit 0; }

POLYSANDBOX_LIBRARY="$top_builddir/core/.libs/libpolysandbox.so"
[ -f "$POLYSANDBOX_LIBRARY" ] ||
    { echo "Bail out! $POLYSANDBOX_LIBRARY is not built"; exit 1; }
export POLYSANDBOX_LIBRARY

. "$top_srcdir/tests/python/sanitizer-env.sh"
[ -z "$py_skip" ] || { echo "1..0 # SKIP $py_skip"; exit 0; }

# Bytecode caches would land in the source tree.
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE
exec "$PY" "$top_srcdir/tests/python/${PYTHON_TEST:?PYTHON_TEST is not set}"
