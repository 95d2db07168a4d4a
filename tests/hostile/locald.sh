#!/bin/sh
# tests/hostile/locald.sh - the life of polysandbox-locald (TAP)
#
# With daemon = auto the local provider hands execs to sandboxes that
# polysandbox-locald prepared (plugins/local/daemon/).  Checked here:
# the first use starts it; two concurrent first uses start one; another
# build (the executable changed) makes the next run start a new one and
# the old one go; a SIGKILLed daemon is replaced (its stale socket and
# lock handled) and takes its prepared sandboxes with it; a client killed
# mid-exec takes its exec with it; another uid cannot reach the socket;
# it exits when idle, with its sandboxes; an exec it ran gives the same
# answers as one run in-process.  Waits are loops with a bound, never
# timed assertions.  Needs root and cgroup v1 (the pool); skips otherwise.

: "${top_srcdir:?top_srcdir is not set (run through make check)}"
. "$top_srcdir/tests/hostile/lib.sh"

if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP needs root"; exit 0; fi
DAEMON_BIN="$top_builddir/plugins/local/polysandbox-locald"
hostile_need locald "$DAEMON_BIN"
if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] ||
    [ ! -d /sys/fs/cgroup/freezer ]; then
    echo "1..0 # SKIP no cgroup v1 freezer hierarchy: the daemon is not used"
    exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-locald.XXXXXX") || exit 99
# A copy of the daemon: touching it is "another build".
cp "$DAEMON_BIN" "$tmp/polysandbox-locald" || exit 99
POLYSANDBOX_LOCALD="$tmp/polysandbox-locald"
POLYSANDBOX_LOCAL_DAEMON=auto
POLYSANDBOX_LOCALD_STRICT=1
POLYSANDBOX_LOCALD_IDLE=30
export POLYSANDBOX_LOCALD POLYSANDBOX_LOCAL_DAEMON POLYSANDBOX_LOCALD_STRICT POLYSANDBOX_LOCALD_IDLE
POLYSANDBOX_STATE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ps-locald-state.XXXXXX") || exit 99
export POLYSANDBOX_STATE_DIR
# The run directory: a random name kept in <state>/local/run-dir
# (plugins/local/local-rundir.c), drawn by the first run.
run_dir_now() { readlink "$POLYSANDBOX_STATE_DIR/local/run-dir"; }
bg=""
cleanup() {
    for p in $bg; do kill -9 "$p" 2>/dev/null; done
    for p in $(daemons); do kill -TERM "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$tmp" "$POLYSANDBOX_STATE_DIR"
}
trap cleanup EXIT

# children PID: its children's pids (its prepared sandboxes).
# dead PID: gone, or a zombie nobody reaps (pid 1 of a container may not).
dead() { [ ! -e "/proc/$1/stat" ] || [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" = Z ]; }
children() {
    for c in /proc/[0-9]*/stat; do
        [ "$(awk '{print $4}' "$c" 2>/dev/null)" = "$1" ] && { c=${c#/proc/}; echo "${c%/stat}"; }
    done 2>/dev/null
}
count() { daemons | wc -l | tr -d ' '; }
# wait_for CMD...: until CMD succeeds, 20 s at most.
wait_for() {
    i=0
    while ! "$@"; do
        i=$((i + 1))
        [ $i -gt 200 ] && return 1
        sleep 0.1
    done
}
run() { # run OPTIONS... -- COMMAND...: JSON in $tmp/out.json
    # shellcheck disable=SC2086 # SANENV is a word list
    "$PS" run --json $SANENV "$@" </dev/null >"$tmp/out.json" 2>"$tmp/err"
}
no_daemon() { [ "$(count)" = 0 ]; }
one_daemon() { [ "$(count)" = 1 ]; }

echo "1..11"

# 1. The first use starts it (strict: that run waits for it).
run -- sh -c 'echo hello'
run_dir=$(run_dir_now)
if [ "$(jget "$tmp/out.json" status)" = ok ] && [ "$(jget "$tmp/out.json" stdout)" = hello ] &&
    one_daemon && [ -S "$run_dir/locald.sock" ] && [ "$(cat "$run_dir/locald.lock")" = "$(daemons)" ]; then
    ok "the first use starts one daemon (socket and lock in the run directory)"
else
    not_ok "the first use starts one daemon" "$(cat "$tmp/out.json" "$tmp/err")" \
        "daemons: $(daemons)" "$(ls -la "$run_dir" 2>&1)"
fi
first=$(daemons)

# 2. The socket and the run directory are ours only; another uid cannot connect.
mode=$(stat -c %a "$run_dir" 2>/dev/null)
if [ "$mode" = 700 ] && [ "$(stat -c %a "$run_dir/locald.sock")" = 600 ] &&
    ! setpriv --reuid 65534 --regid 65534 --clear-groups python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])' "$run_dir/locald.sock" 2>/dev/null; then
    ok "another uid cannot connect to the socket"
else
    not_ok "another uid cannot connect to the socket" "run dir mode $mode"
fi

# 3. Same answers as in-process: exit codes, signals, stdin, output caps,
# not found, the sandbox's view.
same=true
view='id -u; hostname; cat /proc/self/mountinfo | wc -l; ls /; ls -a /work; ulimit -n; ulimit -s; umask; nice; echo $PATH'
for mode in auto off; do
    # Another umask than the daemon's starter: the payload still gets ours.
    r=$(umask 027; POLYSANDBOX_LOCAL_DAEMON=$mode "$PS" run -- sh -c "$view" 2>/dev/null; echo "rc=$?")
    eval "view_$mode=\$r"
done
# shellcheck disable=SC2154 # set by the eval above
[ "$view_auto" = "$view_off" ] || same=false
# case N: the Nth command line, run in both modes.
case_cmd() {
    case $1 in
    1) set -- sh -c 'exit 3' ;;
    2) set -- sh -c 'kill -9 $$' ;;
    3) set -- no-such-command ;;
    4) set -- sh -c cat ;;
    5) set -- sh -c 'yes | head -c 100000' ;;
    esac
    echo "input" | POLYSANDBOX_LOCAL_DAEMON=$mode "$PS" run -i --json --output-limit 1000 -- "$@" \
        >"$tmp/$mode.json" 2>/dev/null
}
for k in 1 2 3 4 5; do
    for mode in auto off; do
        case_cmd "$k"
        python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(j.get("status"), j.get("exit_code"), j.get("signal"), j.get("stdout"), j.get("stdout_truncated"))' \
            "$tmp/$mode.json" >"$tmp/$mode.txt"
    done
    cmp -s "$tmp/auto.txt" "$tmp/off.txt" || { same=false; echo "# case $k: $(cat "$tmp/auto.txt") / $(cat "$tmp/off.txt")"; }
done
if $same; then
    ok "the daemon's execs answer as in-process ones (view, status, stdin, caps)"
else
    not_ok "the daemon's execs answer as in-process ones" "auto: $view_auto" "off: $view_off"
fi

# 4. A timeout through the daemon: killed, status timeout, nothing left.
run -t 1s -- sh -c 'sleep 4139; echo no'
if [ "$(jget "$tmp/out.json" status)" = timeout ] && ! pgrep -x -f "sleep 4139" >/dev/null; then
    ok "a timeout through the daemon kills the exec"
else
    not_ok "a timeout through the daemon" "$(cat "$tmp/out.json")"
fi

# 5. A client killed mid-exec takes its exec with it.
"$PS" run -t 120s -- sleep 4321 >/dev/null 2>&1 &
client=$!
bg="$bg $client"
running() { pgrep -x -f "sleep 4321" >/dev/null; }
if wait_for running; then
    kill -9 "$client"
    wait "$client" 2>/dev/null
    if wait_for eval '! running'; then
        ok "a client killed mid-exec: its exec is killed"
    else
        not_ok "a client killed mid-exec: its exec is still running" "$(pgrep -a -f 'sleep 4321')"
    fi
else
    not_ok "a client killed mid-exec: the exec never started"
fi

# 6. Another build: the next run makes the old daemon go and a new one start.
touch -d '2001-01-01' "$POLYSANDBOX_LOCALD"
run -- true
old_gone() { dead "$first"; }
if [ "$(jget "$tmp/out.json" status)" = ok ] && wait_for old_gone && wait_for one_daemon &&
    [ "$(daemons)" != "$first" ]; then
    ok "an upgraded daemon executable replaces the running daemon"
else
    not_ok "an upgraded daemon executable replaces the running daemon" \
        "first $first, now $(daemons)" "$(cat "$tmp/out.json" "$tmp/err")"
fi
second=$(daemons)

# 7. A SIGKILLed daemon takes its prepared sandboxes with it; its stale
# socket and lock do not stop the next one.
sandboxes=$(children "$second" | tr '\n' ' ')
[ -n "$second" ] && kill -9 "$second"
gone() { for p in $sandboxes; do dead "$p" || return 1; done; return 0; }
if [ -n "$sandboxes" ] && wait_for gone && [ -S "$run_dir/locald.sock" ]; then
    ok "a killed daemon's prepared sandboxes die with it"
else
    not_ok "a killed daemon's prepared sandboxes die with it" "left: $sandboxes"
fi
run -- sh -c 'echo again'
if [ "$(jget "$tmp/out.json" stdout)" = again ] && one_daemon && [ "$(daemons)" != "$second" ]; then
    ok "a killed daemon is replaced on the next use"
else
    not_ok "a killed daemon is replaced on the next use" "$(cat "$tmp/out.json" "$tmp/err")"
fi

# 8. Two concurrent first uses start one daemon.
for p in $(daemons); do kill -TERM "$p"; done
wait_for no_daemon
rm -f "$run_dir/locald.sock"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
    "$run_dir/locald.sock" 2>/dev/null   # a stale socket nobody listens on
pids=""
for k in 1 2 3 4; do
    "$PS" run -- sh -c "echo $k" >"$tmp/c$k" 2>&1 &
    pids="$pids $!"
done
allok=true
for p in $pids; do wait "$p" || allok=false; done
if $allok && one_daemon; then
    ok "concurrent first uses (and a stale socket) start one daemon"
else
    not_ok "concurrent first uses start one daemon" "daemons: $(daemons)" "$(cat "$tmp"/c*)"
fi

# 8b. A client of other settings makes the daemon retire: the clients
# already queued behind it are answered (they run in-process), never
# reset with their exec in doubt.  The daemon is stopped while they
# queue, the other settings' client first (the pause orders them; if the
# order came out otherwise this checks less, never fails wrongly).
cur=$(daemons)
kill -STOP "$cur"
"$PS" -o provider.local.work_inodes=4096 run --json -- sh -c 'echo other' \
    >"$tmp/q0" 2>"$tmp/q0.err" &
qpids=$!
sleep 1
for k in 1 2 3; do
    "$PS" run --json -- sh -c "echo q$k" >"$tmp/q$k" 2>"$tmp/q$k.err" &
    qpids="$qpids $!"
done
sleep 1
kill -CONT "$cur"
for p in $qpids; do wait "$p"; done
qok=true
for k in 0 1 2 3; do
    want=q$k
    [ $k = 0 ] && want=other
    [ "$(jget "$tmp/q$k" status)" = ok ] && [ "$(jget "$tmp/q$k" stdout)" = "$want" ] ||
        { qok=false; echo "# client $k: $(cat "$tmp/q$k" "$tmp/q$k.err")"; }
done
cur_gone() { dead "$cur"; }
if $qok && wait_for cur_gone && wait_for one_daemon; then
    ok "a retiring daemon answers the clients queued on its socket"
else
    not_ok "a retiring daemon answers the clients queued on its socket" "daemons: $(daemons)"
fi

# 9. Idle: it exits, its prepared sandboxes and socket with it.
last=$(daemons)
sandboxes=$(children "$last" | tr '\n' ' ')
POLYSANDBOX_LOCALD_IDLE=1 POLYSANDBOX_LOCALD="$DAEMON_BIN" "$PS" run -- true >/dev/null 2>&1
if wait_for no_daemon && gone && [ ! -e "$run_dir/locald.sock" ]; then
    ok "an idle daemon exits with its prepared sandboxes"
else
    not_ok "an idle daemon exits" "daemons: $(daemons)" "$(ls -la "$run_dir" 2>&1)"
fi
