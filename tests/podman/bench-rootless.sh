#!/bin/sh
# tests/podman/bench-rootless.sh - tests/bench/docker.sh on rootless
# Podman (`make bench-podman-rootless`): the docker provider against the
# docker command, both talking to the test user's service of
# tests/podman/lib.sh.  On cgroup v1 its sandboxes need unenforced_limits
# = allow (set here): the figures are of sandboxes without memory, pids
# and CPU limits, and so are the peer's containers.
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
export top_builddir top_srcdir
PODMAN_SOCK=${PODMAN_RL_RUN:-/run/polysandbox-test/podman-rootless}/podman.sock
CI= . "$top_srcdir/tests/podman/lib.sh"
if ! podman_rootless_ready bench-rootless >/dev/null; then
    echo "podman rootless bench: skipped (rootless Podman or the test image is not available)"
    exit 0
fi
sed -i 's/^\[settings\]$/&\nunenforced_limits = allow/' "$POLYSANDBOX_CONFIG_DIR/providers.d/docker.ini" || exit 1
echo "== rootless Podman $(podman --version | sed 's/.* //') (the figures below are rootless Podman's)"
BENCH_DOCKER_CONFIG_DIR=$POLYSANDBOX_CONFIG_DIR /bin/sh "$top_srcdir/tests/bench/docker.sh" 2>&1 |
    grep -v 'runs without the memory'
