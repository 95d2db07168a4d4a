#!/bin/sh
# tests/hostile/syscalls-docker.sh - tests/hostile/syscalls.sh through the
# docker provider, on a real dockerd (tests/docker/lib.sh): inside its
# containers every probed call answers as under the local provider's
# filter (the container's seccomp profile and the command's own filter
# are made of the same lists and checks), and ordinary work still runs
# (TAP).
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
. "$top_srcdir/tests/docker/lib.sh"
docker_ready; r=$?
[ "$r" -eq 77 ] && exit 0   # the skip was printed as TAP
[ "$r" -eq 0 ] || exit "$r"
# The compiler workload runs in an image with gcc (built once per machine
# like the test image); without it, that one row is skipped.
DOCKER_CC_IMAGE=polysandbox-test/cc:bookworm
docker_build_image "$DOCKER_CC_IMAGE" python3,gcc,libc6-dev cc >/dev/null || DOCKER_CC_IMAGE=
HOSTILE_PROVIDER=docker
export HOSTILE_PROVIDER DOCKER DOCKER_CC_IMAGE
exec sh "$top_srcdir/tests/hostile/syscalls.sh"
