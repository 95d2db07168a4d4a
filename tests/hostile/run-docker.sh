#!/bin/sh
# tests/hostile/run-docker.sh - tests/hostile/run.sh through the docker
# provider, on a real dockerd (tests/docker/lib.sh): the same attacks, the
# same answers, the rows that make no sense in a container skipped with
# their reason (TAP).
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
. "$top_srcdir/tests/docker/lib.sh"
docker_ready; r=$?
[ "$r" -eq 77 ] && exit 0   # the skip was printed as TAP
[ "$r" -eq 0 ] || exit "$r"
HOSTILE_PROVIDER=docker
export HOSTILE_PROVIDER DOCKER
exec sh "$top_srcdir/tests/hostile/run.sh"
