#!/bin/sh
# tests/docker/cli.sh - the docker provider through the polysandbox
# command, on a real dockerd: what the conformance kit does not look at
# (the container's configuration, its volume's removal, the language
# templates, the kill of a forked sleeper seen from the daemon's side).
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/docker/lib.sh"
docker_ready; r=$?
[ "$r" -eq 77 ] && exit 0   # the skip was printed as TAP
[ "$r" -eq 0 ] || exit "$r"
D=/usr/bin/docker
[ -x "$D" ] || D=docker
plan 19

cli run --provider docker --lang python -c 'print(6*7)'
check "a python template run (image mapped by image_aliases)" rc_and_out 0 42

cli create --provider docker --label suite=docker-cli --label run=$$
id=$(out)
check "create prints a sandbox id" is_rc 0
check "the container carries the label and the sandbox mark" sh -c \
    "$D inspect -f '{{index .Config.Labels \"run\"}}|{{index .Config.Labels \"io.polysandbox.sandbox\"}}' $id | grep -qx '$$|1'"
# Podman reports CapDrop ALL as the list of its default capabilities, and
# its top takes format descriptors, not ps(1) options.
caps='\[ALL\]' top='-o pid,args'
[ "${DOCKER_ENGINE:-docker}" = podman ] && caps='\[AUDIT_WRITE CHOWN [A-Z_ ]*\]' top='pid,args'
check "HostConfig: no network, read-only root, CapDrop ALL, no-new-privileges, memory = swap" sh -c \
    "$D inspect -f '{{.HostConfig.NetworkMode}} {{.HostConfig.ReadonlyRootfs}} {{.HostConfig.CapDrop}} {{index .HostConfig.SecurityOpt 0}} {{eq .HostConfig.Memory .HostConfig.MemorySwap}}' $id | grep -qx 'none true $caps no-new-privileges true'"
# The provider's own seccomp profile (docker-seccomp.c), and the helper's
# capabilities (init/sep.c: dropped from every command).  Podman
# takes the profile as a file, read when the container is created.
prof='^seccomp={.*io_uring_setup'
[ "${DOCKER_ENGINE:-docker}" = podman ] && prof='^seccomp=/.*/polysandbox-seccomp-[^/]*/seccomp.json$'
# Podman's inspect shows CapAdd as [] whatever it applied: the helper's
# capabilities are checked from inside below, on both.
capadd="$D inspect -f '{{.HostConfig.CapAdd}}' $id | grep -q 'SETUID'"
[ "${DOCKER_ENGINE:-docker}" = podman ] && capadd=true
check "HostConfig: the provider's seccomp profile, CapAdd the helper's three" sh -c \
    "$D inspect -f '{{index .HostConfig.SecurityOpt 1}}' $id | grep -q '$prof' && $capadd"
cli exec --provider docker "$id" -- sh -c 'grep "^CapEff" /proc/$PPID/status | tr -d "\t"'
check "the command's supervisor holds only CAP_KILL and CAP_SETUID" rc_and_out 0 "CapEff:00000000000000a0"

# ... and in force (on Podman the file is gone by now: it was read at create).
cli exec --provider docker "$id" -- python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); print(l.syscall(425, 1, 0), ctypes.get_errno())'
check "io_uring_setup is refused inside (ENOSYS)" rc_and_out 0 "-1 38"

cli list --provider docker
check "list shows the sandbox" out_has "$id"

cli exec --provider docker "$id" -- sh -c 'touch /rootfs-write 2>/dev/null && echo wrote || echo refused'
check "the root file system is read-only" rc_and_out 0 refused

cli exec --provider docker "$id" -- sh -c 'grep -E "^Cap(Eff|Bnd)" /proc/self/status | tr -d "\t"'
check "no capability in the sandbox" rc_and_out 0 "$(printf 'CapEff:0000000000000000\nCapBnd:0000000000000000')"

# The work directory is a tmpfs of the disk limit (tests/config: 256M).
cli exec --provider docker "$id" -- sh -c 'df -k /work | awk "NR == 2 {print \$1, \$2}"'
check "/work is a tmpfs of the disk limit" rc_and_out 0 "tmpfs 262144"

# A sleeper forked by the command (and one in its own session) must die
# with the timeout: seen from the daemon's side, nothing but PID 1 (the
# idle init, or the exec server in attach mode) is left.
cli exec --provider docker -t 1s "$id" -- sh -c 'sleep 1234 & setsid sleep 1235 & sleep 1236'
check "timeout status" is_rc 124
left=$($D top "$id" $top 2>/dev/null | grep -c 'sleep 123')
check "no sleeper survives the timeout (docker top: $left, and it lists PID 1)" \
    sh -c "[ $left -eq 0 ] && $D top $id $top | grep -qE -- '--idle|--serve'"

cli exec --provider docker "$id" -- sh -c 'sleep 1237 >/dev/null 2>&1 & echo started'
left=$($D top "$id" $top 2>/dev/null | grep -c 'sleep 1237')
check "background processes end with their exec" [ "$left" -eq 0 ]

printf 'from stdin' >"$tmp/in"
cli_in "$tmp/in" exec -i --provider docker "$id" -- sh -c 'cat > f.txt; wc -c < f.txt'
check "stdin reaches the command" rc_and_out 0 10

cli destroy --provider docker "$id"
check "destroy" is_rc 0
check "the container is gone" sh -c "! $D inspect $id >/dev/null 2>&1"
check "its work volume is gone" sh -c "! $D volume inspect $id-work >/dev/null 2>&1"

cli exec --provider docker "$id" -- true
check "exec in a destroyed sandbox: exit 2 naming it" rc_and_err 2 "$id"
done_testing
