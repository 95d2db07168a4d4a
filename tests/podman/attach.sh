#!/bin/sh
# tests/podman/attach.sh - why attach mode (the exec server fed through
# the container's stdin, tests/docker/attach.sh) cannot work on Podman 4.3,
# and that the provider does not try it there.
#
# Podman starts a container's conmon with -i and never with
# --leave-stdin-open, and conmon closes the container's stdin for good when
# any attach connection ends (even one that asked for no stdin): so the
# exec server of a sandbox goes deaf when the first process that attached
# to it exits.  Checked here on the daemon itself, so that a Podman that
# changes this is noticed; then the provider's choice (the daemon's exec)
# with the default exec_mode = attach.
. "$top_srcdir/tests/podman/lib.sh"
podman_ready attach; r=$?
[ "$r" -eq 77 ] && exit 0
[ "$r" -eq 0 ] || exit "$r"
. "$top_srcdir/tests/cli/lib.sh"
D=$DOCKER
plan 8
ids=
cid=
cleanup() {
    for i in $ids; do "$PS" destroy --provider docker "$i" >/dev/null 2>&1; done
    [ -n "$cid" ] && $D rm -f "$cid" >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT

# A container whose PID 1 notes the end of its stdin.
cid=$($D run -d -i --network none "$DOCKER_TEST_IMAGE" \
    sh -c 'cat >/dev/null; echo eof >/tmp/stdin-ended; sleep 600' 2>"$tmp/err")
check "a container with stdin open (docker run -d -i)" [ -n "$cid" ]
sleep 0.5
check "its stdin is open while nobody attached" sh -c "! $D exec $cid test -e /tmp/stdin-ended"
full=$($D inspect -f '{{.Id}}' "$cid")
args=$(ps -eo args | grep "conmon .*-c $full" | grep -v grep | head -n1)
check "conmon runs with -i and without --leave-stdin-open" sh -c \
    "printf '%s\n' '$args' | tr ' ' '\n' | grep -qx -- -i && ! printf '%s\n' '$args' | grep -q -- --leave-stdin-open"
# An attach that asks for output only, and ends after a second: what a
# provider process exiting does to its attach connection.
curl -s --max-time 1 --unix-socket "$PODMAN_SOCK" -X POST \
    "http://d/v1.41/containers/$full/attach?stream=1&stdout=1" >/dev/null 2>&1
i=0
while [ $i -lt 20 ] && ! $D exec "$cid" test -e /tmp/stdin-ended 2>/dev/null; do
    sleep 0.2
    i=$((i + 1))
done
check "an attach that ended closed the container's stdin for good" $D exec "$cid" test -e /tmp/stdin-ended

# The provider: exec_mode = attach (the default) on Podman makes
# sandboxes for the daemon's exec, whose PID 1 reads no stdin.
cli create --provider docker
id=$(out)
ids="$ids $id"
cmd0=$($D inspect -f '{{index .Config.Cmd 0}}' "$id")
check "exec_mode = attach on Podman: PID 1 idles ($cmd0), no attach label" sh -c \
    "[ '$cmd0' = --idle ] && ! $D inspect -f '{{json .Config.Labels}}' $id | grep -q io.polysandbox.exec"
cli exec --provider docker "$id" -- sh -c 'echo one; exit 4'
check "an exec from one process" rc_and_out 4 one
# Someone attaches and goes away (docker attach, or a provider of an
# older version): the sandbox's execs do not depend on its stdin.
curl -s --max-time 1 --unix-socket "$PODMAN_SOCK" -X POST \
    "http://d/v1.41/containers/$id/attach?stream=1&stdin=1&stdout=1" </dev/null >/dev/null 2>&1
cli exec --provider docker "$id" -- sh -c 'echo two'
check "an exec from another process, after an attach came and went" rc_and_out 0 two
echo data | cli_in /dev/stdin exec -i --provider docker "$id" -- cat
check "stdin of an exec still arrives" rc_and_out 0 data
