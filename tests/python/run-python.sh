# tests/python/run-python.sh - sourced by the Python package's tests:
# PYTHON_TEST=test_NAME.py; . run-python.sh runs that pytest file with the
# system's python3 on the build tree's libpolysandbox, printing TAP
# (conftest.py's plugin: one line per test); another NAME.py (such as
# unlisted.py, for tests/server/list.sh) is run as a plain script.
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
# The cffi backend's module (built when configure found cffi) loads its
# library by soname: this tree's, not an installed one.
LD_LIBRARY_PATH="$top_builddir/core/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
if [ "${POLYSANDBOX_BACKEND:-}" = cffi ] &&
   [ ! -f "$top_builddir/python/.libs/_polysandbox_cffi.so" ]; then
    echo "1..0 # SKIP the cffi backend is not built (configure found no python3-cffi)"
    exit 0
fi

. "$top_srcdir/tests/python/sanitizer-env.sh"
[ -z "$py_skip" ] || { echo "1..0 # SKIP $py_skip"; exit 0; }

# Bytecode caches would land in the source tree.
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE
case "${PYTHON_TEST:?PYTHON_TEST is not set}" in
test_*.py) ;;
*) exec "$PY" "$top_srcdir/tests/python/$PYTHON_TEST" ;;    # a plain script
esac
# conftest.py's plugin prints TAP on fd 3 (this stdout), pytest's own
# report goes to the log (stderr).
"$PY" -c 'import pytest, pytest_asyncio' 2>/dev/null || {
    echo "1..0 # SKIP python3-pytest or python3-pytest-asyncio is not installed"
    exit 0
}
POLYSANDBOX_TAP_FD=3
export POLYSANDBOX_TAP_FD
exec 3>&1 1>&2
exec "$PY" -m pytest -rfEs -c "$top_srcdir/tests/python/pytest.ini" \
    --rootdir "$top_srcdir/tests/python" \
    "$top_srcdir/tests/python/$PYTHON_TEST"
