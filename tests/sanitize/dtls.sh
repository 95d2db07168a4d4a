#!/bin/sh
# tests/sanitize/dtls.sh - under AddressSanitizer, the leak check at exit
# survives a dlopen'ed module's TLS block at a page + 16 (dtls-exit.c):
# every program of the suite that loads providers can have one there.
: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-dtls-test.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/lib/tap.sh"

"$top_builddir/tests/sanitize/dtls-exit" \
    "$top_builddir/tests/sanitize/.libs/dtls-mod.so" >"$tmp/out" 2>"$tmp/err"
rc=$?
case $rc in
77) echo "1..0 # SKIP not built with AddressSanitizer"; exit 0 ;;
3) echo "1..0 # SKIP no allocation count put the TLS block at a page + 16"; exit 0 ;;
esac

plan 2
check "the TLS block was placed at a page + 16" grep -q "page offset 16 " "$tmp/out"
check "the leak check at exit completes (exit 0, no tracer crash)" \
    eval '[ "$rc" -eq 0 ] && ! grep -q "Tracer caught" "$tmp/err"'
done_testing
