#!/bin/sh
# tests/conformance/local-locald.t - the conformance kit against the local
# provider with execs in sandboxes polysandbox-locald prepared (daemon =
# auto, strict: every exec it can take waits for it).  The kit prints TAP.
: "${top_builddir:=.}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
. "$top_srcdir/tests/hostile/lib.sh"
if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP the daemon serves root only"; exit 0; fi
locald_on
"$top_builddir/polysandbox-conformance" local
rc=$?
rm -rf "$POLYSANDBOX_STATE_DIR"
exit $rc
