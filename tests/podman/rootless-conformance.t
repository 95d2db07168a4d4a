#!/bin/sh
# tests/podman/rootless-conformance.t - the conformance kit against the
# docker provider on rootless Podman (tests/podman/lib.sh sets the test
# user and its service up).  On cgroup v1 rootless Podman applies no
# memory, pids or CPU limit, so the provider refuses its sandboxes unless
# unenforced_limits = allow: the kit runs with it, and without
# memory_limit, the one test that needs a limit enforced (the refusal
# itself is tests/podman/rootless.sh).
PODMAN_SOCK=${PODMAN_RL_RUN:-/run/polysandbox-test/podman-rootless}/podman.sock
. "$top_srcdir/tests/podman/lib.sh"
podman_rootless_ready rootless-conformance; rc=$?
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || exit "$rc"
K=$top_builddir/polysandbox-conformance
cgv=$(curl -s --unix-socket "$PODMAN_SOCK" http://d/v4.0.0/libpod/info |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["host"]["cgroupVersion"])' 2>/dev/null)
[ "$cgv" = v2 ] && exec "$K" docker
sed -i 's/^\[settings\]$/&\nunenforced_limits = allow/' "$POLYSANDBOX_CONFIG_DIR/providers.d/docker.ini" || exit 99
only=$("$K" --list | awk '/^[a-z_]/ && $1 != "memory_limit" { printf "%s%s", s, $1; s = "," }')
echo "# memory_limit not run: rootless Podman on cgroup $cgv applies no memory limit"
exec "$K" --only "$only" docker
