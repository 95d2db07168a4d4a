#!/bin/sh
# tests/hostile/run.sh - hostile programs against the local provider (TAP)
#
# Each row of the table runs one subcommand of tests/hostile/hostile
# inside a sandbox through `polysandbox run --json` (the binary is copied
# in with --file; it never runs bare on the host), checks the run status
# and exit code, then checks the host: no cgroup of the sandbox left, no
# process of it alive, nothing written outside, no connection received.
#
# Needs: the local provider built, python3 on the host (to read JSON and
# to listen on loopback); skips otherwise.  The host-side cgroup checks
# need root.

: "${top_builddir:?top_builddir is not set (run through make check)}"
PS="$top_builddir/polysandbox"
HOSTILE="$top_builddir/tests/hostile/hostile"
# In a sanitizer build the hostile program is instrumented too, and its
# leak checker needs ptrace, which the sandbox rightly denies.
SANENV="-e ASAN_OPTIONS=detect_leaks=0"

if ! command -v python3 >/dev/null 2>&1; then
    echo "1..0 # SKIP python3 is needed to read the JSON results"
    exit 0
fi
if [ ! -x "$PS" ] || [ ! -x "$HOSTILE" ]; then
    echo "1..0 # SKIP polysandbox or tests/hostile/hostile not built"
    exit 0
fi
if [ -z "${POLYSANDBOX_STATE_DIR:-}" ]; then
    POLYSANDBOX_STATE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ps-hostile-state.XXXXXX") || exit 99
    export POLYSANDBOX_STATE_DIR
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-hostile.XXXXXX") || exit 99
listener_pid=
cleanup() {
    [ -n "$listener_pid" ] && kill "$listener_pid" 2>/dev/null
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

# jget FILE KEY: a field of the JSON result (true/false/null as such).
jget() {
    python3 -c '
import json, sys
v = json.load(open(sys.argv[1])).get(sys.argv[2])
print(json.dumps(v) if isinstance(v, bool) or v is None else v)' "$1" "$2" 2>/dev/null
}

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
EOF
}

n_rows=$(table | wc -l)
# per row: status, exit code, host check; plus binary, stdin data, flood truncation, listener
echo "1..$((n_rows * 3 + 4))"
t=0
ok() { t=$((t + 1)); echo "ok $t - $1"; }
not_ok() { t=$((t + 1)); echo "not ok $t - $1"; shift; for l in "$@"; do echo "# $l"; done; }
skip() { t=$((t + 1)); echo "ok $t - $1 # SKIP $2"; }

# Host side: nothing of sandbox $1 may be left in any cgroup hierarchy.
cgroups_clean() {
    id=$1
    [ -n "$id" ] || return 0
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
    connect*)
        if [ -s "$tmp/connected" ]; then echo "the host listener got: $(cat "$tmp/connected")"; return 1; fi ;;
    esac
    return 0
}

table | while IFS='|' read -r name opts args want_status want_exit; do
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
    elif why=$(cgroups_clean "$id" && host_check "$args"); then ok "$name: nothing left on the host"
    else not_ok "$name: nothing left on the host" "$(echo "$why" | tr '\n' ' ')"; fi
    # the flood row also checks the truncation flag
    if [ "$args" = flood ]; then jget "$tmp/out.json" stdout_truncated >"$tmp/flood_trunc"; fi
done > "$tmp/tap"
cat "$tmp/tap"
t=$(grep -c '^\(not \)\{0,1\}ok ' "$tmp/tap")

# stdout_truncated of the flood
if [ "$(cat "$tmp/flood_trunc" 2>/dev/null)" = true ]; then ok "stdout flood: stdout_truncated is true"
else not_ok "stdout flood: stdout_truncated is true" "got '$(cat "$tmp/flood_trunc" 2>/dev/null)'"; fi

# Binary output with NUL bytes, byte for byte (raw mode, no JSON).
"$PS" run --no-stdin -t 10s --file "$HOSTILE:hostile" -- ./hostile binary >"$tmp/bin.out" 2>"$tmp/err"
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 256)' >"$tmp/bin.want"
if cmp -s "$tmp/bin.out" "$tmp/bin.want"; then ok "binary output with NUL bytes arrives byte for byte"
else not_ok "binary output with NUL bytes arrives byte for byte" \
    "got $(wc -c < "$tmp/bin.out") bytes" "stderr: $(head -c 300 "$tmp/err" | tr '\n' ' ')"; fi

# stdin is delivered, then EOF.
printf 'abcdefg' >"$tmp/in"
"$PS" run --json -t 10s $SANENV --file "$HOSTILE:hostile" -- ./hostile stdin <"$tmp/in" >"$tmp/out.json" 2>"$tmp/err"
got=$(jget "$tmp/out.json" stdout)
if [ "$got" = 7 ]; then ok "stdin data is delivered, then EOF"
else not_ok "stdin data is delivered, then EOF" "got '$got'" "stderr: $(head -c 300 "$tmp/err" | tr '\n' ' ')"; fi

# The listener must have received nothing during the whole run.
if [ -s "$tmp/connected" ]; then not_ok "no sandbox reached the host's loopback listener" "$(cat "$tmp/connected")"
else ok "no sandbox reached the host's loopback listener"; fi
