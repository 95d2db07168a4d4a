#!/bin/sh
# tests/hostile/syscalls-locald.sh - tests/hostile/syscalls.sh with execs in sandboxes
# polysandbox-locald prepared (daemon = auto): every filtered call, the same
# answers (TAP).
. "${top_srcdir:?top_srcdir is not set (run through make check)}/tests/hostile/lib.sh"
if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP the daemon serves root only"; exit 0; fi
locald_on
sh "$top_srcdir/tests/hostile/syscalls.sh"
rc=$?
rm -rf "$POLYSANDBOX_STATE_DIR"
exit $rc
