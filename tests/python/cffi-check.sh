#!/bin/sh
# tests/python/cffi-check.sh - the cffi backend's C source checks its
# prototypes against <polysandbox/sandbox.h>: python/cffi_build.py's source
# compiles as it is, and fails to with one prototype changed (an argument
# cffi would convert silently, and a return type).
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
PY=/usr/bin/python3
"$PY" -c 'import cffi' 2>/dev/null ||
    { echo "1..0 # SKIP /usr/bin/python3 has no cffi (Debian's python3-cffi)"; exit 0; }
inc=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
[ -f "$inc/Python.h" ] || { echo "1..0 # SKIP no Python.h (Debian's python3-dev)"; exit 0; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

n=0
# check DESC [OLD NEW]: the source of CDEF (with OLD replaced by NEW)
# compiles (no OLD) or fails naming the function.
check() {
    desc=$1; shift
    n=$((n + 1))
    if [ $# -eq 0 ]; then set -- ; else set -- --replace "$1" "$2"; fi
    if ! "$PY" "$top_srcdir/python/cffi_build.py" "$tmp/m.c" "$@" >/dev/null 2>"$tmp/gen"; then
        echo "not ok $n - $desc: cffi_build.py failed"; sed 's/^/# /' "$tmp/gen"; return
    fi
    ${SBX_CC:-cc} -fsyntax-only -I"$top_srcdir/core/include" -I"$top_srcdir/sdk/include" -I"$inc" "$tmp/m.c" \
        >"$tmp/out" 2>&1
    rc=$?
    if [ $# -eq 0 ]; then
        [ $rc -eq 0 ] && echo "ok $n - $desc" ||
            { echo "not ok $n - $desc"; head -20 "$tmp/out" | sed 's/^/# /'; }
    elif [ $rc -ne 0 ] && grep -q "static assertion failed.*$name: the prototype" "$tmp/out"; then
        echo "ok $n - $desc"
    else
        echo "not ok $n - $desc (exit $rc)"; head -20 "$tmp/out" | sed 's/^/# /'
    fi
}

echo "1..3"
check "the prototypes as written compile against the header"
name=sbx_exec_opts_set_timeout
check "a uint64_t argument declared uint32_t fails the build" \
    "sbx_exec_opts_set_timeout(sbx_exec_opts *o, uint64_t ns)" \
    "sbx_exec_opts_set_timeout(sbx_exec_opts *o, uint32_t ns)"
name=sbx_sandbox_destroy
check "a return type declared long fails the build" \
    "int sbx_sandbox_destroy(" "long sbx_sandbox_destroy("
