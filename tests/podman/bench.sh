#!/bin/sh
# tests/podman/bench.sh - tests/bench/docker.sh on Podman's Docker-compatible
# service (`make bench-podman`): the docker provider against the docker
# command, both talking to the test service of tests/podman/lib.sh.
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
export top_builddir top_srcdir
CI= . "$top_srcdir/tests/podman/lib.sh"
if ! podman_ready bench >/dev/null; then
    echo "podman bench: skipped (Podman or the test image is not available)"
    exit 0
fi
echo "== Podman $(podman --version | sed 's/.* //') (the figures below are Podman's, not Docker's)"
BENCH_DOCKER_CONFIG_DIR=$POLYSANDBOX_CONFIG_DIR exec /bin/sh "$top_srcdir/tests/bench/docker.sh"
