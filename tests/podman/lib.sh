# tests/podman/lib.sh - Podman's Docker-compatible service for the docker
# provider's tests (sourced)
#
# podman_ready NAME: makes sure a rootful `podman system service` answers on
# $PODMAN_SOCK (started here when none does, with a configuration, storage
# and run state of its own, so it neither reads nor disturbs the host's
# Docker or Podman), that the test image exists in it (the same root file
# system tarball tests/docker/lib.sh builds for Docker, imported through the
# compatible API: no registry), and writes a configuration directory whose
# docker provider points at that socket.  It exports DOCKER_SOCK and
# DOCKER_HOST (so tests/docker/*.sh and the docker command talk to Podman),
# DOCKER_ENGINE=podman (tests/docker/lib.sh then never starts a dockerd on
# that socket) and POLYSANDBOX_CONFIG_DIR.
#
# tests/podman/config-NAME is that directory.
# Returns 0 when ready.  Otherwise it prints why and returns 77 (skip) -
# except with CI=true, where a missing Podman is a failure (returns 1).

: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
# Images and volumes persist (the import is done once per machine); the
# run state is under /run, as it must not survive a reboot.
: "${PODMAN_STORE:=/var/cache/polysandbox-test/podman}"
: "${PODMAN_RUN:=/run/polysandbox-test/podman}"
: "${PODMAN_SOCK:=$PODMAN_RUN/podman.sock}"
: "${PODMAN_EXIT_DELAY:=5}"
DOCKER_SOCK=$PODMAN_SOCK
DOCKER_ENGINE=podman
export DOCKER_SOCK DOCKER_ENGINE PODMAN_STORE PODMAN_RUN PODMAN_SOCK
. "$top_srcdir/tests/docker/lib.sh"

podman_unready() {
    echo "# podman: $*" >&2
    if [ "${CI:-}" = true ]; then
        echo "Bail out! podman: $* (CI=true: Podman is required)"
        return 1
    fi
    echo "1..0 # SKIP podman: $*"
    return 77
}

# The configuration of the test service: cgroupfs (no systemd needed),
# events to a file, and ulimits no higher than this process's hard limits:
# rootful Podman otherwise gives every container nofile and nproc of 2^20,
# which runc cannot set where the host withholds CAP_SYS_RESOURCE (as in
# containers and some CI machines).  Podman lowers its own nproc to
# kernel.pid_max, so that bounds nproc too.  exit_command_delay: each exec
# leaves two conmon processes behind for that many seconds (300 by
# default), thousands during the conformance kit.
podman_write_conf() {
    nofile=$(awk '/^Max open files/ {print $5}' /proc/self/limits)
    nproc=$(awk '/^Max processes/ {print $4}' /proc/self/limits)
    pidmax=$(cat /proc/sys/kernel/pid_max 2>/dev/null || echo 32768)
    case $nofile in '' | unlimited) nofile=1048576 ;; esac
    case $nproc in '' | unlimited) nproc=$pidmax ;; esac
    [ "$nproc" -gt "$pidmax" ] && nproc=$pidmax
    # overlay, except on an overlay file system (a containerised CI).
    driver=${PODMAN_STORAGE_DRIVER:-overlay}
    [ "$(stat -f -c %T "$PODMAN_STORE" 2>/dev/null)" = overlayfs ] && driver=vfs
    cat >"$PODMAN_RUN/containers.conf" <<EOF || return 1
# written by tests/podman/lib.sh
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
[network]
network_config_dir = "$PODMAN_RUN/networks"
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
exit_command_delay = $PODMAN_EXIT_DELAY
tmp_dir = "$PODMAN_RUN/libpod"
volume_path = "$PODMAN_STORE/volumes"
EOF
    # Loopback registries over plain HTTP (tests/docker/pull.sh), as Docker
    # allows by default; "127.0.0.1" matches every port (Podman 4.3).
    cat >"$PODMAN_RUN/registries.conf" <<EOF || return 1
# written by tests/podman/lib.sh
[[registry]]
location = "127.0.0.1"
insecure = true
EOF
    cat >"$PODMAN_RUN/storage.conf" <<EOF || return 1
# written by tests/podman/lib.sh
[storage]
driver = "$driver"
graphroot = "$PODMAN_STORE/storage"
runroot = "$PODMAN_RUN/storage"
EOF
}

# Starts the service when nothing answers on the socket; waits at most 60 s.
podman_start_service() {
    docker_ping && return 0
    [ "$(id -u)" -eq 0 ] ||
        { podman_unready "nothing answers on $PODMAN_SOCK and only root starts the test service"; return; }
    mkdir -p "$PODMAN_STORE" "$PODMAN_RUN" ||
        { podman_unready "cannot create $PODMAN_STORE or $PODMAN_RUN"; return; }
    (
        flock -w 120 9 || exit 1
        docker_ping && exit 0
        podman_write_conf || exit 1
        rm -f "$PODMAN_SOCK"
        log=$top_builddir/tests/podman.log
        echo "# podman: starting podman system service (log: $log)" >&2
        # setsid: the service must not die with this test's process group;
        # cd /: nor hold a build tree it may outlive (distcheck removes its
        # own, and containers fail to start from a deleted directory).
        cd / || exit 1
        CONTAINERS_CONF=$PODMAN_RUN/containers.conf \
        CONTAINERS_STORAGE_CONF=$PODMAN_RUN/storage.conf \
        CONTAINERS_REGISTRIES_CONF=$PODMAN_RUN/registries.conf \
            setsid podman --cgroup-manager cgroupfs system service --time=0 "unix://$PODMAN_SOCK" \
            >"$log" 2>&1 </dev/null 9>&- &
        pid=$!
        i=0
        while [ $i -lt 120 ]; do
            docker_ping && exit 0
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.5
            i=$((i + 1))
        done
        tail -n 20 "$log" | sed 's/^/# podman: /' >&2
        exit 1
    ) 9>"$PODMAN_RUN.lock" ||
        { podman_unready "podman system service did not come up (see tests/podman.log)"; return; }
}

# A configuration directory like tests/config, whose docker provider
# talks to the test service: tests/podman/config-NAME, one per test (they
# run in parallel), written afresh each run.
podman_config() {
    conf=$top_builddir/tests/podman/config-$1
    rm -rf "$conf" && mkdir -p "$top_builddir/tests/podman" &&
        cp -RL "$top_srcdir/tests/config" "$conf" && chmod -R u+w "$conf" &&
        sed "s|^socket = .*|socket = unix://$PODMAN_SOCK|" \
            "$top_srcdir/tests/config/providers.d/docker.ini" >"$conf/providers.d/docker.ini" &&
        POLYSANDBOX_CONFIG_DIR=$conf && export POLYSANDBOX_CONFIG_DIR
}

podman_ready() {
    command -v podman >/dev/null 2>&1 ||
        { podman_unready "no podman on this machine (apt-get install podman)"; return; }
    command -v "$DOCKER" >/dev/null 2>&1 ||
        { podman_unready "no docker client to drive it (apt-get install docker.io)"; return; }
    podman_start_service || return
    docker_build_image || return
    podman_config "$1" ||
        { podman_unready "cannot write $top_builddir/tests/podman/config-$1"; return; }
}
