# tests/docker/lib.sh - a running dockerd and the test image (sourced)
#
# docker_ready: makes sure a Docker daemon answers on $DOCKER_SOCK (starts
# `dockerd` in the background when none does, log under the build tree) and
# that the test image $DOCKER_TEST_IMAGE exists (built here, without any
# registry: a debootstrap root file system of Debian bookworm with python3,
# from this machine's Debian mirror, then `docker import`).  The root file
# system tarball is cached in $DOCKER_CACHE so it is built once per machine.
#
# Returns 0 when ready.  Otherwise it prints why and returns 77 (skip) -
# except with CI=true, where a missing Docker is a failure (returns 1): CI
# must never skip these tests silently.
#
# Parallel tests share one daemon and one image: both steps run under
# flock(1).

: "${DOCKER_SOCK:=/var/run/docker.sock}"
: "${DOCKER_TEST_IMAGE:=polysandbox-test/python:bookworm}"
: "${DOCKER_CACHE:=/var/cache/polysandbox-test}"
# The Debian client (20.10) matches the Debian daemon's API; a newer client
# earlier on PATH may not.
if [ -z "${DOCKER:-}" ]; then
    if [ -x /usr/bin/docker ]; then DOCKER=/usr/bin/docker; else DOCKER=docker; fi
fi
DOCKER_HOST="unix://$DOCKER_SOCK"
export DOCKER_HOST

docker_unready() {
    echo "# docker: $*" >&2
    if [ "${CI:-}" = true ]; then
        echo "Bail out! docker: $* (CI=true: Docker is required)"
        return 1
    fi
    echo "1..0 # SKIP docker: $*"
    return 77
}

docker_ping() {
    "$DOCKER" version --format '{{.Server.Version}}' >/dev/null 2>&1
}

# Starts dockerd when nothing answers on the socket; waits at most 60 s.
docker_start_daemon() {
    docker_ping && return 0
    # Another engine's socket (tests/podman/lib.sh): never a dockerd there.
    [ "${DOCKER_ENGINE:-docker}" = docker ] ||
        { docker_unready "$DOCKER_ENGINE does not answer on $DOCKER_SOCK"; return; }
    command -v dockerd >/dev/null 2>&1 ||
        { docker_unready "no dockerd on this machine (apt-get install docker.io)"; return; }
    [ "$(id -u)" -eq 0 ] ||
        { docker_unready "no daemon answers on $DOCKER_SOCK and only root may start one"; return; }
    mkdir -p "$DOCKER_CACHE" || { docker_unready "cannot create $DOCKER_CACHE"; return; }
    (
        flock -w 120 9 || exit 1
        docker_ping && exit 0
        log=${top_builddir:-.}/tests/dockerd.log
        echo "# docker: starting dockerd (log: $log)" >&2
        # setsid: the daemon must not die with this test's process group.
        # 9>&-: the daemon must not hold the start lock for its lifetime.
        setsid dockerd --host "unix://$DOCKER_SOCK" >"$log" 2>&1 </dev/null 9>&- &
        i=0
        while [ $i -lt 120 ]; do
            docker_ping && exit 0
            sleep 0.5
            i=$((i + 1))
        done
        tail -n 20 "$log" | sed 's/^/# dockerd: /' >&2
        exit 1
    ) 9>"$DOCKER_CACHE/daemon.lock" ||
        { docker_unready "dockerd did not come up within 60 s (see tests/dockerd.log)"; return; }
}

# The first deb.debian.org-style mirror of this machine's apt sources.
docker_mirror() {
    m=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' \
            /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
        grep -v security | head -n1)
    [ -n "$m" ] || m=$(sed -n 's/^deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]\{1,\}\)\{0,1\}\([^[:space:]]*\)[[:space:]].*/\2/p' \
            /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        grep -v security | head -n1)
    echo "${m:-http://deb.debian.org/debian}"
}

# docker_rootfs NAME PACKAGES: sets DOCKER_ROOTFS to the tarball of a
# debootstrap (minbase) root of Debian bookworm with the Debian PACKAGES
# (comma-separated), $DOCKER_CACHE/rootfs-bookworm-NAME.tar, built once per
# machine (no Docker needed: tests/image/kit.sh pushes it to a registry).
# Returns 1 after saying why on stderr when it cannot be built.
docker_rootfs() {
    DOCKER_ROOTFS=$DOCKER_CACHE/rootfs-bookworm-$1.tar
    [ -s "$DOCKER_ROOTFS" ] && return 0
    mkdir -p "$DOCKER_CACHE" || { echo "# docker: cannot create $DOCKER_CACHE" >&2; return 1; }
    (
        flock -w 1200 9 || { echo "# docker: image lock not taken in 20 min" >&2; exit 1; }
        tarball=$DOCKER_ROOTFS
        [ -s "$tarball" ] && exit 0
        command -v debootstrap >/dev/null 2>&1 ||
            { echo "# docker: no debootstrap (apt-get install debootstrap)" >&2; exit 1; }
        root=$DOCKER_CACHE/rootfs.tmp
        rm -rf "$root"
        mirror=$(docker_mirror)
        echo "# docker: building $tarball with debootstrap from $mirror (once per machine)" >&2
        debootstrap --variant=minbase --include="$2" bookworm "$root" "$mirror" \
            >"$DOCKER_CACHE/debootstrap.log" 2>&1 ||
            { tail -n 20 "$DOCKER_CACHE/debootstrap.log" | sed 's/^/# debootstrap: /' >&2; exit 1; }
        # What a container needs no copy of.
        rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
        mkdir -p "$root/work"
        tar -C "$root" --numeric-owner -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball" || exit 1
        rm -rf "$root"
    ) 9>"$DOCKER_CACHE/image.lock"
}

# docker_build_image [IMAGE PACKAGES NAME]: the test image (by default
# $DOCKER_TEST_IMAGE: python3), or IMAGE with the Debian PACKAGES
# (comma-separated), imported from docker_rootfs NAME PACKAGES.
docker_build_image() {
    image=${1:-$DOCKER_TEST_IMAGE} pkgs=${2:-python3} name=${3:-python3}
    "$DOCKER" image inspect "$image" >/dev/null 2>&1 && return 0
    docker_rootfs "$name" "$pkgs" || { docker_unready "could not build the test image $image"; return; }
    (
        flock -w 1200 9 || { echo "# docker: image lock not taken in 20 min" >&2; exit 1; }
        "$DOCKER" image inspect "$image" >/dev/null 2>&1 && exit 0
        "$DOCKER" import "$DOCKER_ROOTFS" "$image" >/dev/null
    ) 9>"$DOCKER_CACHE/image.lock" ||
        { docker_unready "could not build the test image $image"; return; }
}

docker_ready() {
    command -v "$DOCKER" >/dev/null 2>&1 ||
        { docker_unready "no docker client (apt-get install docker.io)"; return; }
    docker_start_daemon || return
    docker_build_image || return
}
