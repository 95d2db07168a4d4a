#!/bin/sh
# tests/podman/cli.sh - tests/docker/cli.sh (the container's configuration,
# templates, kills seen from the daemon's side, volume removal) on Podman's
# Docker-compatible service, through the docker command pointed at it.
. "$top_srcdir/tests/podman/lib.sh"
podman_ready cli; rc=$?
# A skip was printed as TAP ("1..0 # SKIP ..."): that is a clean exit.
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || exit "$rc"
exec /bin/sh "$top_srcdir/tests/docker/cli.sh"
