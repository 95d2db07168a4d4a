#!/bin/sh
# tests/docker/reconnect.sh - the attach connection lost between execs
# and during one, in one process (tests/docker/reconnect.c), on a real
# dockerd.
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
. "$top_srcdir/tests/docker/lib.sh"
docker_ready; rc=$?
[ "$rc" -eq 77 ] && exit 0   # the skip was printed as TAP
[ "$rc" -eq 0 ] || exit "$rc"
exec "$top_builddir/tests/docker/test-docker-reconnect" "$DOCKER"
