#!/bin/sh
# tests/podman/pull.sh - tests/docker/pull.sh (pulls of missing images from
# a registry on loopback: policies, errors, credentials, the deadline) on
# Podman's Docker-compatible service.
. "$top_srcdir/tests/podman/lib.sh"
podman_ready pull; rc=$?
# A skip was printed as TAP ("1..0 # SKIP ..."): that is a clean exit.
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || exit "$rc"
exec /bin/sh "$top_srcdir/tests/docker/pull.sh"
