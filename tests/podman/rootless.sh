#!/bin/sh
# tests/podman/rootless.sh - the docker provider on rootless Podman (a
# `podman system service` of an unprivileged test user, started by
# tests/podman/lib.sh).  On cgroup v1 rootless Podman creates containers
# without their memory, pids and CPU limits and says nothing through the
# API: the provider must see it and refuse (or, with unenforced_limits =
# allow, run them and warn).  On a host where rootless Podman does apply
# them, sandboxes are made as usual.
PODMAN_SOCK=${PODMAN_RL_RUN:-/run/polysandbox-test/podman-rootless}/podman.sock
. "$top_srcdir/tests/podman/lib.sh"
podman_rootless_ready rootless; r=$?
[ "$r" -eq 77 ] && exit 0
[ "$r" -eq 0 ] || exit "$r"
. "$top_srcdir/tests/cli/lib.sh"
D=$DOCKER
plan 9

allow=$tmp/conf-allow
cp -R "$POLYSANDBOX_CONFIG_DIR/." "$allow/" && chmod -R u+w "$allow" &&
    sed -i 's/^\[settings\]$/&\nunenforced_limits = allow/' "$allow/providers.d/docker.ini" || exit 99
ids=
cleanup() {
    for i in $ids; do POLYSANDBOX_CONFIG_DIR=$allow "$PS" destroy --provider docker "$i" >/dev/null 2>&1; done
    rm -rf "$tmp"
}
trap cleanup EXIT

cgv=$(curl -s --unix-socket "$PODMAN_SOCK" http://d/v4.0.0/libpod/info |
    python3 -c 'import json,sys; h=json.load(sys.stdin)["host"]; print(h["cgroupVersion"], h["security"]["rootless"])' 2>/dev/null)
echo "# the service: cgroup ${cgv% *}, rootless ${cgv#* }"
check "the service runs rootless" [ "${cgv#* }" = True ]
# The kit may run on the same service meanwhile: count only ours.
mine=rootless-refused-$$

if [ "${cgv% *}" = v1 ]; then
    cli create --provider docker --label "test=$mine"
    check "cgroup v1: create is refused (SBX_E_PERM, 125)" is_rc 125
    check "the error names the limits and why" sh -c "grep -q 'did not apply the memory (512 MiB), pids (128), cpus (1.00) limits' $tmp/err && grep -q 'rootless Podman on cgroup v1' $tmp/err && grep -q 'unenforced_limits = allow' $tmp/err"
    left=$($D ps -aq --filter "label=test=$mine" | wc -l)
    check "no container is left behind ($left)" [ "$left" -eq 0 ]
    "$PS" doctor >"$tmp/doctor" 2>&1
    check "doctor: the limits are missing, and why" grep -q 'MISSING  docker: limits: rootless Podman on cgroup v1' "$tmp/doctor"
    POLYSANDBOX_CONFIG_DIR=$allow "$PS" create --provider docker --label "test=$mine" >"$tmp/out" 2>"$tmp/err"; rc=$?
    id=$(out)
    ids="$ids $id"
    # (And the count above could see one: this one is there.)
    seen=$($D ps -aq --filter "label=test=$mine" | wc -l)
    check "unenforced_limits = allow: created ($seen), with a warning naming the limits" sh -c "[ $rc -eq 0 ] && [ $seen -eq 1 ] && grep -q 'runs without the memory (512 MiB), pids (128), cpus (1.00) limits' $tmp/err"
    lim=$($D inspect -f '{{.HostConfig.Memory}} {{.HostConfig.PidsLimit}}' "$id" 2>/dev/null)
    check "and the warning is true: the daemon applied none ($lim)" [ "$lim" = "0 0" ]
else
    # Rootless Podman that applies limits (cgroup v2 with delegation):
    # sandboxes as usual, the limits in place.
    cli create --provider docker
    id=$(out)
    ids="$ids $id"
    check "cgroup v2: created" is_rc 0
    lim=$($D inspect -f '{{.HostConfig.Memory}} {{.HostConfig.PidsLimit}}' "$id" 2>/dev/null)
    check "with its limits ($lim)" [ "$lim" = "536870912 128" ]
    ok "# SKIP no refusal to see on cgroup ${cgv% *}"
    ok "# SKIP no refusal to see on cgroup ${cgv% *}"
    ok "# SKIP unenforced_limits unused on cgroup ${cgv% *}"
fi

POLYSANDBOX_CONFIG_DIR=$allow cli_in /dev/null exec --provider docker "$id" -- sh -c 'echo "$(id -u) $(head -n1 /proc/self/uid_map | tr -s " " | cut -d" " -f3)"; exit 3'
# Root in the container is the test user outside.
uid=$(id -u "$PODMAN_RL_USER")
check "exec: exit code and output; root inside is the test user ($uid) outside" sh -c "[ $rc -eq 3 ] && [ \"\$(cat $tmp/out)\" = \"0 $uid\" ]"
POLYSANDBOX_CONFIG_DIR=$allow cli destroy --provider docker "$id"
check "destroy" sh -c "[ $rc -eq 0 ] && ! $D inspect $id >/dev/null 2>&1"
