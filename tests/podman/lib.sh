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

# podman_wait_service PID LOG PREFIX: exit 0 once the service PID
# answers (at most 60 s), else exit 1 with its log's tail; for the
# subshells that start a service.
podman_wait_service() {
    i=0
    while [ $i -lt 120 ]; do
        docker_ping && exit 0
        kill -0 "$1" 2>/dev/null || break
        sleep 0.5
        i=$((i + 1))
    done
    tail -n 20 "$2" | sed "s/^/# $3: /" >&2
    exit 1
}

# podman_stale_service: the pid of a service on our socket that an older
# lib.sh started without today's configuration (its environment lacks
# the registries.conf), else nothing.
podman_stale_service() {
    for p in $(pgrep -f "system service --time=0 unix://$PODMAN_SOCK\$"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
            grep -qx "CONTAINERS_REGISTRIES_CONF=$PODMAN_RUN/registries.conf" || echo "$p"
    done
}

# Starts the service when nothing answers on the socket, or replaces one
# an older lib.sh started; waits at most 60 s.
podman_start_service() {
    if [ "$(id -u)" -eq 0 ] && [ -n "$(podman_stale_service)" ]; then
        (
            flock -w 120 9 || exit 1
            for p in $(podman_stale_service); do
                echo "# podman: replacing the service $p started with an older configuration" >&2
                kill "$p" 2>/dev/null
                i=0
                # (gone, or a zombie: pid 1 of a container may not reap)
                while [ -e "/proc/$p/status" ] && ! grep -q '^State:.*Z' "/proc/$p/status" &&
                    [ $i -lt 100 ]; do
                    sleep 0.1
                    i=$((i + 1))
                done
                kill -9 "$p" 2>/dev/null
            done
            exit 0
        ) 9>"$PODMAN_RUN.lock"
    fi
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
        podman_wait_service $! "$log" podman
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

# ---- rootless Podman ----
#
# podman_rootless_ready NAME: like podman_ready, for a `podman system
# service` run by an unprivileged user of the tests' own
# ($PODMAN_RL_USER, created here with a /etc/subuid and /etc/subgid range
# of 65536 ids when it has none), with its storage in $PODMAN_RL_STORE,
# its run state and socket in $PODMAN_RL_RUN (its XDG_RUNTIME_DIR), and
# the test image imported for that user.  The tests run as root and talk
# to it over its socket.  Sourcing this file set DOCKER_SOCK to the
# rootful service: source it with PODMAN_SOCK=$PODMAN_RL_RUN/podman.sock
# (tests/podman/rootless.sh does).
#
# What cannot be had here (not root, no user namespaces) is a skip with
# the reason, even with CI=true; a missing package is a failure there.
: "${PODMAN_RL_USER:=polysandbox-rl}"
: "${PODMAN_RL_STORE:=/var/cache/polysandbox-test/podman-rootless}"
: "${PODMAN_RL_RUN:=/run/polysandbox-test/podman-rootless}"

podman_rl_skip() {
    echo "# podman rootless: $*" >&2
    echo "1..0 # SKIP podman rootless: $*"
    return 77
}

# A free range of 65536 subordinate ids for the user (after every range
# /etc/subuid and /etc/subgid already hand out, from 1100000 on).
podman_rl_ids() {
    grep -q "^$PODMAN_RL_USER:" /etc/subuid 2>/dev/null &&
        grep -q "^$PODMAN_RL_USER:" /etc/subgid 2>/dev/null && return 0
    start=$(cat /etc/subuid /etc/subgid 2>/dev/null |
        awk -F: 'BEGIN { m = 1100000 } NF == 3 && $2 + $3 > m { m = $2 + $3 } END { print m }')
    usermod --add-subuids "$start-$((start + 65535))" \
        --add-subgids "$start-$((start + 65535))" "$PODMAN_RL_USER"
}

podman_rl_user() {
    id -u "$PODMAN_RL_USER" >/dev/null 2>&1 ||
        useradd --system --user-group --home-dir "$PODMAN_RL_STORE/home" --no-create-home \
            --shell /usr/sbin/nologin "$PODMAN_RL_USER" || return 1
    podman_rl_ids || return 1
    # A store of an earlier user of that name (another uid) is of no use.
    if [ -d "$PODMAN_RL_STORE" ] && [ "$(stat -c %u "$PODMAN_RL_STORE")" != "$(id -u "$PODMAN_RL_USER")" ]; then
        rm -rf "$PODMAN_RL_STORE" || return 1
    fi
    mkdir -p "$PODMAN_RL_STORE/home" "$PODMAN_RL_RUN" || return 1
    chown "$PODMAN_RL_USER:" "$PODMAN_RL_STORE" "$PODMAN_RL_STORE/home" "$PODMAN_RL_RUN" &&
        chmod 0700 "$PODMAN_RL_RUN"
}

# The user's containers.conf and storage.conf (as for the rootful
# service: cgroupfs, file events, exit_command_delay; nofile no higher
# than this process's hard limit, which the user keeps: setpriv, no PAM).
podman_rl_conf() {
    nofile=$(awk '/^Max open files/ {print $5}' /proc/self/limits)
    case $nofile in '' | unlimited) nofile=1048576 ;; esac
    driver=${PODMAN_STORAGE_DRIVER:-overlay}
    [ "$(stat -f -c %T "$PODMAN_RL_STORE" 2>/dev/null)" = overlayfs ] && driver=vfs
    cat >"$PODMAN_RL_RUN/containers.conf" <<EOC || return 1
# written by tests/podman/lib.sh (rootless)
[containers]
default_ulimits = ["nofile=$nofile:$nofile"]
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
exit_command_delay = $PODMAN_EXIT_DELAY
EOC
    cat >"$PODMAN_RL_RUN/storage.conf" <<EOC || return 1
# written by tests/podman/lib.sh (rootless)
[storage]
driver = "$driver"
graphroot = "$PODMAN_RL_STORE/storage"
runroot = "$PODMAN_RL_RUN/storage"
EOC
    # Kernels before 5.13 mount overlay in a user namespace only through FUSE.
    kv=$(uname -r | awk -F. '{ printf "%d%03d", $1, $2 }')
    if [ "$driver" = overlay ] && [ "$kv" -lt 5013 ] && command -v fuse-overlayfs >/dev/null; then
        printf '[storage.options.overlay]\nmount_program = "%s"\n' "$(command -v fuse-overlayfs)" \
            >>"$PODMAN_RL_RUN/storage.conf" || return 1
    fi
    chown "$PODMAN_RL_USER:" "$PODMAN_RL_RUN/containers.conf" "$PODMAN_RL_RUN/storage.conf"
}

# The user's service, started when nothing answers on its socket.
podman_rl_start() {
    docker_ping && return 0
    (
        flock -w 120 9 || exit 1
        docker_ping && exit 0
        # Under the lock: tests run in parallel, and useradd twice fails.
        podman_rl_user || exit 2
        podman_rl_conf || exit 1
        rm -f "$PODMAN_SOCK"
        log=$top_builddir/tests/podman-rootless.log
        echo "# podman rootless: starting podman system service as $PODMAN_RL_USER (log: $log)" >&2
        cd / || exit 1
        # setpriv, not su or runuser: no PAM session (none is needed, and
        # it would reset the limits); env -i: nothing of root's leaks in.
        setsid setpriv --reuid="$PODMAN_RL_USER" --regid="$PODMAN_RL_USER" --init-groups \
            env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$PODMAN_RL_STORE/home" \
            XDG_RUNTIME_DIR="$PODMAN_RL_RUN" CONTAINERS_CONF="$PODMAN_RL_RUN/containers.conf" \
            CONTAINERS_STORAGE_CONF="$PODMAN_RL_RUN/storage.conf" \
            podman system service --time=0 "unix://$PODMAN_SOCK" \
            >"$log" 2>&1 </dev/null 9>&- &
        podman_wait_service $! "$log" "podman rootless"
    ) 9>"$PODMAN_RL_RUN.lock"
}

podman_rootless_ready() {
    [ "$PODMAN_SOCK" = "$PODMAN_RL_RUN/podman.sock" ] ||
        { podman_unready "tests/podman/lib.sh sourced without PODMAN_SOCK=$PODMAN_RL_RUN/podman.sock"; return; }
    command -v podman >/dev/null 2>&1 ||
        { podman_unready "no podman on this machine (apt-get install podman)"; return; }
    command -v "$DOCKER" >/dev/null 2>&1 ||
        { podman_unready "no docker client to drive it (apt-get install docker.io)"; return; }
    for c in newuidmap newgidmap setpriv; do
        command -v $c >/dev/null 2>&1 ||
            { podman_unready "no $c for rootless Podman (apt-get install uidmap util-linux)"; return; }
    done
    if ! docker_ping; then
        [ "$(id -u)" -eq 0 ] ||
            { podman_rl_skip "nothing answers on $PODMAN_SOCK and only root sets the test user up"; return; }
        [ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" -gt 0 ] ||
            { podman_rl_skip "user namespaces are disabled (user.max_user_namespaces = 0)"; return; }
        [ "$(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null || echo 1)" = 1 ] ||
            { podman_rl_skip "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0)"; return; }
        mkdir -p "$(dirname "$PODMAN_RL_RUN")" ||
            { podman_rl_skip "cannot create $(dirname "$PODMAN_RL_RUN")"; return; }
        podman_rl_start; r=$?
        [ "$r" -eq 2 ] &&
            { podman_rl_skip "cannot set up the test user $PODMAN_RL_USER (useradd, usermod --add-subuids)"; return; }
        [ "$r" -eq 0 ] ||
            { podman_rl_skip "rootless podman system service did not come up (see tests/podman-rootless.log)"; return; }
    fi
    docker_build_image || return
    podman_config "$1" ||
        { podman_unready "cannot write $top_builddir/tests/podman/config-$1"; return; }
}
