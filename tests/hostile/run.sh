#!/bin/sh
# tests/hostile/run.sh - hostile programs against the local provider (TAP)
#
# Each row of the table runs one subcommand of tests/hostile/hostile
# inside a sandbox through `polysandbox run --json` (the binary is copied
# in with --file; it never runs bare on the host), checks the run status
# and exit code, then checks the host: no cgroup of the sandbox left, no
# process of it alive, nothing written outside, no connection received.
#
# With HOSTILE_PROVIDER=docker (tests/hostile/run-docker.sh) the same
# rows run in containers of the docker provider: the host check is then
# that the container and its volume are gone, and the rows that make no
# sense in a container are skipped, each with its reason (docker_skip).
#
# Needs: the local provider built, python3 on the host (to read JSON and
# to listen on loopback); skips otherwise.  The host-side cgroup checks
# need root.

. "${top_srcdir:?top_srcdir is not set (run through make check)}/tests/hostile/lib.sh"
HOSTILE="$top_builddir/tests/hostile/hostile"
hostile_need hostile "$HOSTILE"
in_process

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-hostile.XXXXXX") || exit 99
listener_pid=
cleanup() {
    [ -n "$listener_pid" ] && kill "$listener_pid" 2>/dev/null
    [ -n "$sentinel_pid" ] && kill "$sentinel_pid" 2>/dev/null
    [ -n "$persist_id" ] && "$PS" destroy "$persist_id" >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT
token="hx$$"                   # short: also a process name (15 chars max)

# A loopback listener on the host: records any connection it receives.
python3 - "$tmp/port" "$tmp/connected" <<'EOF' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.settimeout(600)
try:
    c, a = s.accept()
    open(sys.argv[2], "w").write("connection from %s\n" % (a,))
except Exception:
    pass
EOF
listener_pid=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$tmp/port" 2>/dev/null || echo 1)

# As root /work is a tmpfs; otherwise a directory of the run dir in
# /dev/shm (plugins/local/local-rundir.c), whose path mountinfo shows.
mi_run_dir=
[ "$(id -u)" = 0 ] && [ "$HOSTILE_PROVIDER" = local ] && mi_run_dir=/polysandbox-

# The table: name | polysandbox options | hostile arguments | status |
# exit code ("null" when the program did not exit by itself, * = any)
table() {
    cat <<EOF
fork bomb (pids limit)|--pids 16 -t 20s|forkbomb|pids_limit|*
memory bomb (memory limit)|--memory 64M -t 20s|membomb|memory_limit|null
CPU spin (timeout)|-t 1s|spin|timeout|null
CPU spin (CPU limit)|--cpu 1s -t 30s|spin|cpu_limit|null
sleep past the timeout|-t 1s|sleep|timeout|null
ignoring SIGTERM|-t 1s|ignore-term|timeout|null
SIGSTOP of itself (still times out)|-t 1s|sigstop|timeout|null
closed stdio (still times out)|-t 1s|close-stdio|timeout|null
double-forked daemon (must not survive)|-t 10s|daemon $token|ok|0
stdout flood (output limit)|--output-limit 64K -t 20s|flood|output_limit|null
reading stdin without input (gets EOF)|--no-stdin -t 10s|stdin|ok|0
write to host paths (fails)|-t 10s|write-host $token|ok|0
read /etc/shadow and private trees (absent)|-t 10s|read-secrets|ok|0
TCP connect to a host loopback listener (fails)|-t 10s|connect $port|ok|0
ptrace (denied)|-t 10s|ptrace|ok|0
mount (denied)|-t 10s|mount|ok|0
unshare, clone with namespaces, setns (denied)|-t 10s|unshare|ok|0
keyctl, add_key, request_key (denied)|-t 10s|keyctl|ok|0
io_uring, bpf, perf, userfaultfd, TIOCSTI, AF_VSOCK, AF_ALG, clock (denied)|-t 10s|misc|ok|0
init_module (killed by the filter)|-t 10s|kmod|seccomp|null
one 50 MiB line without a newline (output limit)|--output-limit 1M -t 60s|huge-line|output_limit|null
kill -1 from inside (only the sandbox's processes die)|-t 10s|kill-all|ok|0
kill 0: its own process group only (it dies of SIGKILL)|-t 10s|kill-group|signal|null
SIGKILL and SIGSTOP to its parent (refused or dropped)|-t 10s|kill-parent|ok|0
SIGIO aimed at its parent (refused or ignored)|-t 10s|sigio-parent|ok|0
raising its parent's oom_score_adj (refused)|-t 10s|oom-parent|ok|0
every descriptor closed (its own status still arrives)|-t 10s|close-all|nonzero_exit|5
filling /work (ENOSPC at the disk size)|--disk 8M -t 60s|fill-disk /work 8|ok|0
filling /tmp (ENOSPC at the disk size)|--disk 8M -t 60s|fill-disk /tmp 8|ok|0
filling /dev/shm (ENOSPC at the disk size)|--disk 8M -t 60s|fill-disk /dev/shm 8|ok|0
inode exhaustion of /work (ENOSPC)|-t 60s|fill-inodes /work 16384|ok|0
inode exhaustion of /tmp (ENOSPC)|-t 60s|fill-inodes /tmp 16384|ok|0
10,000 nested directories in /work (destroy removes them)|-t 60s|deep-dirs|ok|0
mknod of devices (denied)|-t 10s|mknod|ok|0
the orchestrator's config, state and working directories (invisible)|-t 10s|read-paths $POLYSANDBOX_CONFIG_DIR $POLYSANDBOX_STATE_DIR $PWD $tmp|ok|0
/proc entries facing the host kernel (masked)|-t 10s|proc-masked|ok|0
mountinfo names no host path of ours|-t 10s|mountinfo-clean $POLYSANDBOX_STATE_DIR $POLYSANDBOX_CONFIG_DIR $mi_run_dir|ok|0
EOF
}

n_rows=$(table | wc -l)
# per row: status, exit code, host check; plus binary, stdin data, flood
# and huge-line truncation, listener, sentinel, pty, planted symlinks (8),
# image root (3)
echo "1..$((n_rows * 3 + 18))"

# A host process of ours that kill(-1) inside a sandbox must not reach.
sleep 3600 &
sentinel_pid=$!

# Host side: nothing of sandbox $1 may be left: no cgroup in any
# hierarchy (and so no process), no mount, no state directory.
cgroups_clean() {
    id=$1
    [ -n "$id" ] || return 0
    if grep -F "/$id" /proc/self/mountinfo >/dev/null 2>&1; then
        echo "mounts left: $(grep -F "/$id" /proc/self/mountinfo | cut -d' ' -f5 | tr '\n' ' ')"
        return 1
    fi
    if [ -e "$POLYSANDBOX_STATE_DIR/local/$id" ] || [ -e "$POLYSANDBOX_STATE_DIR/$id" ]; then
        echo "the sandbox's state directory is left"
        return 1
    fi
    # Non-persistent sandboxes live in /dev/shm (plugins/local/local-rundir.c).
    for d in /dev/shm/polysandbox-*/"$id"; do
        [ -e "$d" ] || continue
        echo "the sandbox's directory $d is left"
        return 1
    done
    for d in /sys/fs/cgroup/*/polysandbox/"$id"-* /sys/fs/cgroup/polysandbox/"$id"-*; do
        [ -e "$d" ] || continue
        if [ -s "$d/cgroup.procs" ]; then
            echo "processes left in $d: $(tr '\n' ' ' < "$d/cgroup.procs")"
            return 1
        fi
        echo "cgroup left behind: $d"
        return 1
    done
    return 0
}

# The docker provider: nothing of container $1 may be left (container,
# work volume).
docker_clean() {
    id=$1
    [ -n "$id" ] || return 0
    if "$DOCKER" inspect "$id" >/dev/null 2>&1; then echo "the container $id is left"; return 1; fi
    if "$DOCKER" volume inspect "$id-work" >/dev/null 2>&1; then echo "the volume $id-work is left"; return 1; fi
    return 0
}
sandbox_clean() {
    if [ "$HOSTILE_PROVIDER" = docker ]; then docker_clean "$1"; else cgroups_clean "$1"; fi
}

# Why a row makes no sense in a container of the docker provider (empty:
# it runs).
docker_skip() {
    [ "$HOSTILE_PROVIDER" = docker ] || return 0
    case $1 in
    read-secrets) echo "the container's /etc/shadow, /root and /run are the image's own files, not the host's" ;;
    write-host*) echo "/dev is the container's own tmpfs (Docker's) and /var/tmp lies on its read-only root: neither is the host's" ;;
    proc-masked) echo "/proc is Docker's, with its masks and no hidepid: PID 1 (the helper, of another uid) is visible" ;;
    esac
}

# Host side: the row's own check.
host_check() {
    case $1 in
    daemon*)
        if pgrep -x "$token" >/dev/null 2>&1; then echo "a process named $token survived"; return 1; fi ;;
    write-host*)
        for f in /etc/hostile-$token /usr/hostile-$token /usr/bin/hostile-$token \
                 /hostile-$token /var/hostile-$token /lib/hostile-$token \
                 /tmp/hostile-$token-0 /work/hostile-$token-1 /var/tmp/hostile-$token-2 \
                 /dev/shm/hostile-$token-3; do
            if [ -e "$f" ]; then echo "$f exists on the host"; return 1; fi
        done ;;
    kill-all)
        if ! kill -0 "$sentinel_pid" 2>/dev/null; then echo "a host process died"; return 1; fi
        if ! kill -0 "$listener_pid" 2>/dev/null; then echo "the host listener died"; return 1; fi ;;
    connect*)
        if [ -s "$tmp/connected" ]; then echo "the host listener got: $(cat "$tmp/connected")"; return 1; fi ;;
    esac
    return 0
}

table | while IFS='|' read -r name opts args want_status want_exit; do
    why=$(docker_skip "$args")
    if [ -n "$why" ]; then
        for what in "status $want_status" "exit code $want_exit" "nothing left on the host"; do
            skip "$name: $what" "$why"
        done
        continue
    fi
    # shellcheck disable=SC2086 # opts and args are word lists by design
    "$PS" run --json $opts $SANENV --file "$HOSTILE:hostile" -- ./hostile $args \
        </dev/null >"$tmp/out.json" 2>"$tmp/err"
    status=$(jget "$tmp/out.json" status)
    code=$(jget "$tmp/out.json" exit_code)
    id=$(jget "$tmp/out.json" sandbox_id)
    what="stdout: $(jget "$tmp/out.json" stdout | head -c 600 | tr '\n' ' ')"
    if [ "$status" = "$want_status" ]; then ok "$name: status $want_status"
    else not_ok "$name: status $want_status" "got status '$status'" "$what" "stderr: $(head -c 600 "$tmp/err" | tr '\n' ' ')"; fi
    if [ "$want_exit" = "*" ] || [ "$code" = "$want_exit" ]; then ok "$name: exit code $want_exit"
    else not_ok "$name: exit code $want_exit" "got '$code'" "$what"; fi
    if [ "$(id -u)" != 0 ]; then
        skip "$name: nothing left on the host" "cgroup checks need root"
    elif why=$(sandbox_clean "$id" && host_check "$args"); then ok "$name: nothing left on the host"
    else not_ok "$name: nothing left on the host" "$(echo "$why" | tr '\n' ' ')"; fi
    # the flood row also checks the truncation flag
    if [ "$args" = flood ]; then jget "$tmp/out.json" stdout_truncated >"$tmp/flood_trunc"; fi
    if [ "$args" = huge-line ]; then jget "$tmp/out.json" stdout_truncated >"$tmp/huge_trunc"; fi
done > "$tmp/tap"
cat "$tmp/tap"
t=$(grep -c '^\(not \)\{0,1\}ok ' "$tmp/tap")

# stdout_truncated of the flood
if [ "$(cat "$tmp/flood_trunc" 2>/dev/null)" = true ]; then ok "stdout flood: stdout_truncated is true"
else not_ok "stdout flood: stdout_truncated is true" "got '$(cat "$tmp/flood_trunc" 2>/dev/null)'"; fi

if [ "$(cat "$tmp/huge_trunc" 2>/dev/null)" = true ]; then ok "one 50 MiB line: stdout_truncated is true"
else not_ok "one 50 MiB line: stdout_truncated is true" "got '$(cat "$tmp/huge_trunc" 2>/dev/null)'"; fi

if kill -0 "$sentinel_pid" 2>/dev/null; then ok "a host process outlives every sandbox's kill(-1)"
else not_ok "a host process outlives every sandbox's kill(-1)"; fi

# Programs that open a pty (a private devpts instance) work.
"$PS" run --json -t 10s -- python3 -c 'import os, pty; m, s = pty.openpty(); os.write(s, b"pty-ok\n"); print(os.read(m, 64).decode().strip(), os.ttyname(s))' \
    </dev/null >"$tmp/out.json" 2>"$tmp/err"
got=$(jget "$tmp/out.json" stdout)
case $got in
"pty-ok /dev/pts/"*) ok "a pty opens in the sandbox (devpts newinstance)" ;;
*) not_ok "a pty opens in the sandbox (devpts newinstance)" "got '$got'" "stderr: $(head -c 300 "$tmp/err" | tr '\n' ' ')" ;;
esac

# Symlinks planted in a persistent sandbox for a later download/upload:
# the host side must refuse them (SBX_E_PATH: the CLI fails and says the
# path was refused) and write nothing outside.
persist_id=$("$PS" create -t 10s 2>"$tmp/err")
if [ -n "$persist_id" ] && "$PS" exec "$persist_id" -- sh -c 'ln -s /etc/passwd link && ln -s / dir && mkdir d && ln -s /tmp d/t' \
        </dev/null >/dev/null 2>>"$tmp/err"; then
    ok "planted symlinks: a persistent sandbox with link -> /etc/passwd, dir -> /"
else
    not_ok "planted symlinks: a persistent sandbox with link -> /etc/passwd, dir -> /" "stderr: $(head -c 300 "$tmp/err" | tr '\n' ' ')"
fi
refused() { # name, then the command: it must fail, saying the path was refused
    name=$1; shift
    "$@" >"$tmp/dl.out" 2>"$tmp/dl.err" </dev/null
    rc=$?
    if [ $rc != 0 ] && grep -q refused "$tmp/dl.err" && ! grep -q root: "$tmp/dl.out"; then
        ok "planted symlinks: $name"
    else not_ok "planted symlinks: $name" "exit $rc" "stdout: $(head -c 200 "$tmp/dl.out" | tr '\n' ' ')" "stderr: $(head -c 300 "$tmp/dl.err" | tr '\n' ' ')"; fi
}
refused "download of link refused" "$PS" download "$persist_id" link -
refused "download of dir/etc/passwd refused" "$PS" download "$persist_id" dir/etc/passwd -
echo "hostile-$token" >"$tmp/payload"
refused "upload onto link refused" "$PS" upload "$persist_id" "$tmp/payload" link
refused "upload to dir/tmp/hostile-$token refused" "$PS" upload "$persist_id" "$tmp/payload" "dir/tmp/hostile-$token"
refused "upload to d/t/hostile-$token refused" "$PS" upload "$persist_id" "$tmp/payload" "d/t/hostile-$token"
# /etc/passwd is checked for the payload, not for any change: tests run
# beside this one add and remove users of their own.
if ! grep -q "hostile-$token" /etc/passwd && [ ! -e "/tmp/hostile-$token" ]; then
    ok "planted symlinks: /etc/passwd unchanged, nothing written in /tmp"
else
    not_ok "planted symlinks: /etc/passwd unchanged, nothing written in /tmp"
fi
"$PS" destroy "$persist_id" >/dev/null 2>&1
if [ "$(id -u)" != 0 ]; then skip "planted symlinks: nothing left after destroy" "cgroup checks need root"
elif why=$(sandbox_clean "$persist_id"); then ok "planted symlinks: nothing left after destroy"
else not_ok "planted symlinks: nothing left after destroy" "$why"; fi
persist_id=

# An image that is a directory is the sandbox's root, read-only: a tiny
# root made of the host's /bin/sh and its libraries.
if [ "$HOSTILE_PROVIDER" = docker ]; then
    why="an image that is a directory is the local provider's (the docker provider's are the daemon's)"
    skip "image directory: it is the root, read-only, with a writable /work and /tmp" "$why"
    skip "image directory: a private host tree (/etc) is refused" "$why"
    skip "image name that is not a path: refused (exit 2), never ignored" "$why"
else
rootfs="$tmp/rootfs"
mkdir -p "$rootfs/bin" "$rootfs/etc" && cp /bin/sh "$rootfs/bin/sh" &&
    echo "image-$token" >"$rootfs/etc/marker" &&
    for lib in $(ldd /bin/sh 2>/dev/null | grep -o '/[^ ]*'); do
        mkdir -p "$rootfs$(dirname "$lib")" && cp "$lib" "$rootfs$lib" || break
    done
chmod -R a+rX "$tmp"
"$PS" run --json -t 10s --image "$rootfs" -- /bin/sh -c \
    'read m </etc/marker; echo "$m"; if test -e /usr/bin/python3; then echo host-usr; fi; echo >/etc/x || echo ro; echo >/work/x && echo >/tmp/x && echo rw' \
    </dev/null >"$tmp/out.json" 2>"$tmp/err"
got=$(jget "$tmp/out.json" stdout)
got=$(printf '%s' "$got" | tr '\n' ' ')
if [ "$got" = "image-$token ro rw" ]; then ok "image directory: it is the root, read-only, with a writable /work and /tmp"
else not_ok "image directory: it is the root, read-only, with a writable /work and /tmp" "got '$got'" "stderr: $(head -c 300 "$tmp/err" | tr '\n' ' ')"; fi
if "$PS" run -t 10s --image /etc -- /bin/true </dev/null >/dev/null 2>&1; then
    not_ok "image directory: a private host tree (/etc) is refused"
else ok "image directory: a private host tree (/etc) is refused"; fi
"$PS" run --json -t 10s --image gcc:12 -- sh -c 'echo ran' </dev/null >"$tmp/out.json" 2>"$tmp/err"
st=$?
if [ "$st" = 2 ] && [ ! -s "$tmp/out.json" ] && grep -q -- '--image gcc:12' "$tmp/err"; then
    ok "image name that is not a path: refused (exit 2), never ignored"
else not_ok "image name that is not a path: refused (exit 2), never ignored" "status $st, stdout '$(head -c 300 "$tmp/out.json")'" "stderr: $(head -c 300 "$tmp/err" | tr '\n' ' ')"; fi
fi

# Binary output with NUL bytes, byte for byte (raw mode, no JSON).
"$PS" run --no-stdin -t 10s --file "$HOSTILE:hostile" -- ./hostile binary >"$tmp/bin.out" 2>"$tmp/err"
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 256)' >"$tmp/bin.want"
if cmp -s "$tmp/bin.out" "$tmp/bin.want"; then ok "binary output with NUL bytes arrives byte for byte"
else not_ok "binary output with NUL bytes arrives byte for byte" \
    "got $(wc -c < "$tmp/bin.out") bytes" "stderr: $(head -c 300 "$tmp/err" | tr '\n' ' ')"; fi

# stdin is delivered, then EOF.
printf 'abcdefg' >"$tmp/in"
"$PS" run -i --json -t 10s $SANENV --file "$HOSTILE:hostile" -- ./hostile stdin <"$tmp/in" >"$tmp/out.json" 2>"$tmp/err"
got=$(jget "$tmp/out.json" stdout)
if [ "$got" = 7 ]; then ok "stdin data is delivered, then EOF"
else not_ok "stdin data is delivered, then EOF" "got '$got'" "stderr: $(head -c 300 "$tmp/err" | tr '\n' ' ')"; fi

# The listener must have received nothing during the whole run.
if [ -s "$tmp/connected" ]; then not_ok "no sandbox reached the host's loopback listener" "$(cat "$tmp/connected")"
else ok "no sandbox reached the host's loopback listener"; fi
