#!/bin/sh
# tests/conformance/kit.sh - the conformance kit against one provider, or
# one launch path of it: the LOG_COMPILER of every tests/conformance/*.kit
# test (tests/conformance/local.mk makes those one-line files, its list
# KIT_TESTS).
#
# Usage: kit.sh tests/conformance/TARGET.kit, where TARGET is a provider's
# name, or PROVIDER-VARIANT for another way of running it (local-locald:
# the local provider with execs in sandboxes polysandbox-locald prepared;
# docker-podman: the docker provider on Podman).
# What a target needs first (its fake, its daemon) is one arm of the case
# below; a provider that needs nothing needs no arm.  The kit prints TAP
# itself; a target whose needs are absent prints "1..0 # SKIP reason".
: "${top_builddir:=.}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
target=$(basename "${1:?usage: kit.sh tests/conformance/TARGET.kit}" .kit)
provider=${target%%-*}
kit="$top_builddir/polysandbox-conformance"
set --   # the sourced libraries see no arguments, as from a script of their own

# Leaves network_none out where the fake cannot make network namespaces.
only_without_netns() {
    set --
    if [ "$netns" != yes ]; then
        echo "# the fake cannot make network namespaces here: network_none left out"
        set -- --only "$("$kit" --list |
            awk '/^[a-z]/ && $1 != "network_none" { print $1 }' | paste -sd, -)"
    fi
    timeout -k 5 900 "$kit" -t 300 "$@" "$provider"
}

case $target in
local)
    # in-process (daemon = off) unless the environment chose
    POLYSANDBOX_LOCAL_DAEMON=${POLYSANDBOX_LOCAL_DAEMON:-off}
    export POLYSANDBOX_LOCAL_DAEMON
    exec "$kit" local ;;
local-locald)
    # daemon = auto, strict: every exec it can take waits for it
    . "$top_srcdir/tests/hostile/lib.sh"
    if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP the daemon serves root only"; exit 0; fi
    locald_on
    "$kit" local
    rc=$?
    rm -rf "$POLYSANDBOX_STATE_DIR"
    exit $rc ;;
docker)
    # a real dockerd (started, and the test image built, by
    # tests/docker/lib.sh when needed; skipped outside CI without Docker)
    . "$top_srcdir/tests/docker/lib.sh"
    docker_ready; rc=$?
    [ "$rc" -eq 77 ] && exit 0   # the skip was printed as TAP
    [ "$rc" -eq 0 ] || exit "$rc"
    exec "$kit" docker ;;
docker-podman)
    # the docker provider on Podman's Docker-compatible service (started,
    # and the test image imported, by tests/podman/lib.sh)
    . "$top_srcdir/tests/podman/lib.sh"
    podman_ready conformance; rc=$?
    [ "$rc" -eq 77 ] && exit 0   # the skip was printed as TAP
    [ "$rc" -eq 0 ] || exit "$rc"
    exec "$kit" docker ;;
docker-podman-rootless)
    # on rootless Podman (tests/podman/lib.sh sets the test user and its
    # service up).  On cgroup v1 rootless Podman applies no memory, pids or
    # CPU limit, so the provider refuses its sandboxes unless
    # unenforced_limits = allow: the kit runs with it, and without
    # memory_limit, the one test that needs a limit enforced (the refusal
    # itself is tests/podman/rootless.sh).
    PODMAN_SOCK=${PODMAN_RL_RUN:-/run/polysandbox-test/podman-rootless}/podman.sock
    . "$top_srcdir/tests/podman/lib.sh"
    podman_rootless_ready rootless-conformance; rc=$?
    [ "$rc" -eq 77 ] && exit 0
    [ "$rc" -eq 0 ] || exit "$rc"
    cgv=$(curl -s --unix-socket "$PODMAN_SOCK" http://d/v4.0.0/libpod/info |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["host"]["cgroupVersion"])' 2>/dev/null)
    [ "$cgv" = v2 ] && exec "$kit" docker
    sed -i 's/^\[settings\]$/&\nunenforced_limits = allow/' "$POLYSANDBOX_CONFIG_DIR/providers.d/docker.ini" || exit 99
    only=$("$kit" --list | awk '/^[a-z_]/ && $1 != "memory_limit" { printf "%s%s", s, $1; s = "," }')
    echo "# memory_limit not run: rootless Podman on cgroup $cgv applies no memory limit"
    exec "$kit" --only "$only" docker ;;
daytona)
    # the local Daytona fake (tests/fakes/daytona.py)
    . "$top_srcdir/tests/daytona/lib.sh"
    dt_start
    "$kit" --test-timeout 120 daytona ;;
cloudflare)
    # the local fake of the bridge Worker (tests/fakes/cloudflare.py)
    . "$top_srcdir/tests/cloudflare/lib.sh"
    cf_start
    "$kit" --test-timeout 120 cloudflare ;;
volcengine)
    # the local fake of veFaaS and the AIO sandbox (tests/fakes/volcengine.py)
    . "$top_srcdir/tests/volcengine/lib.sh"
    vc_start
    "$kit" --test-timeout 120 volcengine ;;
e2b)
    # the E2B fake (tests/fakes/e2b.py) on 127.0.0.1; it enforces "no
    # internet access" with a network namespace
    . "$top_srcdir/tests/e2b/lib.sh"
    start_fake
    only_without_netns ;;
modal)
    # gRPC to the Modal fake (tests/fakes/modal.py) on 127.0.0.1; it
    # enforces a blocked network with a network namespace
    . "$top_srcdir/tests/modal/lib.sh"
    start_fake
    only_without_netns ;;
kubernetes)
    # the Kubernetes fake (tests/fakes/kube.py) over TLS on 127.0.0.1, with
    # a token whose only rights are the Role of plugins/kubernetes/README.md
    . "$top_srcdir/tests/kube/lib.sh"
    start_provider_fake
    timeout -k 5 900 "$kit" -t 300 kubernetes ;;
kubernetes-agent)
    # agent-sandbox mode: sandboxes are SandboxClaims on warm pools of the
    # fake's agent-sandbox controller; exec and files go to the claimed pods
    . "$top_srcdir/tests/kube/lib.sh"
    start_fake --agent-sandbox
    kube_rbac && kube_agent_rbac || { echo "Bail out! cannot make the namespace and Roles"; exit 99; }
    KUBE_SETTINGS="mode = agent-sandbox
warm_pool = 2" write_config
    timeout -k 5 900 "$kit" -t 300 kubernetes ;;
microvm)
    # VMs of QEMU's microvm machine (TCG here, KVM where a guest really
    # boots) on the suite's cached guest image, each restored from the
    # snapshot the microvm tests share (tests/microvm/guest.sh: its skips,
    # the image, the configuration).  What the provider does not claim
    # (zygote) the kit skips, naming it.
    . "$top_srcdir/tests/cli/lib.sh"
    . "$top_srcdir/tests/microvm/guest.sh"
    t0=$(date +%s)
    timeout -k 5 1800 "$kit" -t 600 microvm
    rc=$?
    echo "# the microvm kit took $(($(date +%s) - t0)) s"
    exit $rc ;;
*)
    exec "$kit" "$provider" ;;
esac
