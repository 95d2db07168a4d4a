#!/bin/sh
# tests/docker/conformance-api.sh - the conformance kit against the docker
# provider with exec_mode = api (each exec a daemon exec of the helper:
# the fallback path), on a real dockerd.  tests/conformance/docker.kit runs
# it with the default, exec_mode = attach.
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
. "$top_srcdir/tests/docker/lib.sh"
docker_ready; rc=$?
[ "$rc" -eq 77 ] && exit 0   # the skip was printed as TAP
[ "$rc" -eq 0 ] || exit "$rc"
conf=$(mktemp -d "${TMPDIR:-/tmp}/ps-docker-api.XXXXXX") || exit 99
trap 'rm -rf "$conf"' EXIT
cp -R "$top_srcdir/tests/config/." "$conf/" && chmod -R u+w "$conf" &&
    sed -i 's/^\[settings\]$/&\nexec_mode = api/' "$conf/providers.d/docker.ini" &&
    grep -q '^exec_mode = api$' "$conf/providers.d/docker.ini" || exit 99
POLYSANDBOX_CONFIG_DIR=$conf "$top_builddir/polysandbox-conformance" docker
