#!/bin/sh
# tests/podman/conformance.t - the conformance kit against the docker
# provider on Podman's Docker-compatible service (started, and the test
# image imported, by tests/podman/lib.sh; skipped outside CI without Podman).
. "$top_srcdir/tests/podman/lib.sh"
podman_ready conformance; rc=$?
# A skip was printed as TAP ("1..0 # SKIP ..."): that is a clean exit.
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || exit "$rc"
exec "$top_builddir/polysandbox-conformance" docker
