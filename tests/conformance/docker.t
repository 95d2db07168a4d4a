#!/bin/sh
# tests/conformance/docker.t - the conformance kit against the docker
# provider, on a real dockerd (started, and the test image built, by
# tests/docker/lib.sh when needed; skipped outside CI without Docker).
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
. "$top_srcdir/tests/docker/lib.sh"
docker_ready; rc=$?
[ "$rc" -eq 77 ] && exit 0   # the skip was printed as TAP
[ "$rc" -eq 0 ] || exit "$rc"
exec "$top_builddir/polysandbox-conformance" docker
