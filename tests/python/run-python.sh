# tests/python/run-python.sh - sourced by the Python package's tests:
# PYTHON_TEST=SCRIPT.py; . run-python.sh runs SCRIPT.py (TAP) with the system's python3
# on the build tree's libpolysandbox.
#
# Under an AddressSanitizer build the library needs the sanitizer
# runtimes loaded before anything else in python3: they are preloaded
# (the compiler tells where they are), and leak checking is off because
# the interpreter keeps memory to its exit by design.
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

case "${SBX_CFLAGS:-} ${SBX_LDFLAGS:-}" in
*sanitize=address*)
    pre=
    for rt in libasan.so libubsan.so; do
        case "${SBX_CFLAGS:-} ${SBX_LDFLAGS:-}" in
        *sanitize=*undefined*) ;;
        *) [ "$rt" = libubsan.so ] && continue ;;
        esac
        f=$(${SBX_CC:-cc} -print-file-name=$rt 2>/dev/null)
        f=$(readlink -f "$f" 2>/dev/null)
        if [ -z "$f" ] || [ ! -f "$f" ]; then
            echo "1..0 # SKIP an ASan build, and ${SBX_CC:-cc} does not say where $rt is"
            exit 0
        fi
        pre="$pre${pre:+ }$f"
    done
    # polysandboxd is instrumented itself: binding.py starts it with these
    # (leak checking on, as in the other server tests).
    SERVER_ASAN_OPTIONS=${ASAN_OPTIONS-}
    SERVER_LD_PRELOAD=${LD_PRELOAD-}
    export SERVER_ASAN_OPTIONS SERVER_LD_PRELOAD
    LD_PRELOAD="$pre${LD_PRELOAD:+ $LD_PRELOAD}"
    # Last, so it wins over a caller's detect_leaks=1 (CI sets one).
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    export LD_PRELOAD ASAN_OPTIONS
    ;;
esac

# Bytecode caches would land in the source tree.
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE
exec "$PY" "$top_srcdir/tests/python/${PYTHON_TEST:?PYTHON_TEST is not set}"
