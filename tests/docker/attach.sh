#!/bin/sh
# tests/docker/attach.sh - attach mode (the helper's exec server as PID 1)
# on a real dockerd, through the polysandbox command: the container's
# configuration, a command that attacks the server (writes to its
# descriptors, signals it, kills every process it can), concurrent execs
# from several processes, a timeout that must kill every process, a
# provider killed during an exec, the server dying during an exec, and
# both exec modes on each other's sandboxes.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/docker/lib.sh"
docker_ready; r=$?
[ "$r" -eq 77 ] && exit 0   # the skip was printed as TAP
[ "$r" -eq 0 ] || exit "$r"
D=/usr/bin/docker
[ -x "$D" ] || D=docker
plan 24

# A configuration with exec_mode = api, for the fallback path.
api=$tmp/conf-api
cp -R "$POLYSANDBOX_CONFIG_DIR/." "$api/" && chmod -R u+w "$api" &&
    sed -i 's/^\[settings\]$/&\nexec_mode = api/' "$api/providers.d/docker.ini" || exit 99
cli_api() { POLYSANDBOX_CONFIG_DIR=$api "$PS" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"; rc=$?; }
ids=
cleanup() {
    for i in $ids; do "$PS" destroy --provider docker "$i" >/dev/null 2>&1; done
    rm -rf "$tmp"
}
trap cleanup EXIT

cli create --provider docker
id=$(out)
ids="$ids $id"
check "PID 1 serves execs: --serve, stdin open, no log of the output, the mode label" sh -c \
    "$D inspect -f '{{index .Config.Cmd 0}} {{.Config.OpenStdin}} {{.Config.StdinOnce}} {{.HostConfig.LogConfig.Type}} {{index .Config.Labels \"io.polysandbox.exec\"}}' $id | grep -qx -- '--serve true false none attach'"

cli exec --provider docker "$id" -- sh -c 'echo out; echo err >&2; exit 3'
check "output, error output and exit code" sh -c "[ $rc -eq 3 ] && [ \"\$(cat $tmp/out)\" = out ] && grep -qx err $tmp/err"

# The command cannot reach the server's descriptors or memory: it runs as
# another uid and the container has no CAP_SYS_PTRACE.
cli exec --provider docker "$id" -- sh -c \
    'for f in /proc/1/fd/0 /proc/1/fd/1 /proc/1/fd/2 /proc/1/mem; do
         (printf "\123\330X\0garbage" >"$f") 2>/dev/null && echo "wrote $f"
     done; readlink /proc/1/fd/1 >/dev/null 2>&1 && echo "read a link"; echo end'
check "the command cannot write to the server's stdin, stdout or memory, nor read its links" rc_and_out 0 end
cli exec --provider docker "$id" -- sh -c 'echo fine'
check "the next exec is served as before" rc_and_out 0 fine

# The command holds no descriptor but its stdio: not the supervisor's
# report pipe (a report written there and the supervisor killed would
# otherwise be taken for the real one).
cli exec --provider docker "$id" -- sh -c \
    'for fd in 3 4 5 6 7 8 9; do (echo "x=0 cpu=0 rss=0" >&$fd) 2>/dev/null && echo "fd$fd"; done; exit 7'
check "no descriptor beyond stdio reaches the command; the real status stays" rc_and_out 7 ""

# Signals to PID 1 from inside the container are dropped, SIGKILL included.
cli exec --provider docker "$id" -- sh -c 'kill -TERM 1; kill -INT 1; kill -KILL 1; sleep 0.3; echo alive'
check "signals to the server do nothing" rc_and_out 0 alive
cli exec --provider docker "$id" -- sh -c 'echo still'
check "and it serves the next exec" rc_and_out 0 still

# kill -9 -1: every process the command may signal.  Its supervisor is
# of another uid (init/sep.c): the command's own status arrives,
# nothing it started survives, and the server goes on.
cli exec --provider docker "$id" -- sh -c 'setsid sleep 1240 & kill -9 -1; kill -9 $PPID; echo survived; exit 4'
check "kill -9 -1 and kill -9 of its supervisor: the command's own status" rc_and_out 4 survived
left=$($D top "$id" -o pid,args 2>/dev/null | grep -c 'sleep 124')
check "none of its processes is left (docker top: $left)" [ "$left" -eq 0 ]
cli exec --provider docker "$id" -- sh -c 'echo after'
check "the server serves the next exec" rc_and_out 0 after

# A timeout kills every process of the exec, those in new sessions too.
cli exec --provider docker -t 1s "$id" -- sh -c 'sleep 1250 & setsid sh -c "sleep 1251 & sleep 1252" & sleep 1253'
check "timeout status" is_rc 124
left=$($D top "$id" -o pid,args 2>/dev/null | grep -c 'sleep 125')
check "no process of the timed-out exec is left (docker top: $left)" [ "$left" -eq 0 ]

# Execs from several processes at once: one drives the server, the
# others take the API path; each gets its own output.
for k in 1 2 3 4; do
    "$PS" exec --provider docker "$id" -- sh -c "sleep 1; echo n$k; exit $k" \
        </dev/null >"$tmp/c$k" 2>&1 &
    eval "p$k=\$!"
done
good=0
for k in 1 2 3 4; do
    eval "wait \$p$k"; st=$?
    [ "$st" -eq "$k" ] && [ "$(cat "$tmp/c$k")" = "n$k" ] && good=$((good + 1))
done
check "four concurrent execs from four processes: each its own output and code ($good/4)" \
    [ "$good" -eq 4 ]

# A request larger than a frame (1 MiB) goes through the daemon's exec.
big=$(head -c 110000 /dev/zero | tr '\0' x)
set --
for k in 0 1 2 3 4 5 6 7 8 9; do set -- "$@" -e "BIG$k=$big"; done
cli exec --provider docker "$@" "$id" -- sh -c 'echo $((${#BIG0} + ${#BIG9}))'
check "1.1 MB of environment (more than a frame) reaches the command" rc_and_out 0 220000
set --

# A provider that dies during an exec: its lease runs out and the server
# kills the command (long before its time limit of 60 s).
"$PS" exec --provider docker -t 60s "$id" -- sleep 1260 </dev/null >/dev/null 2>&1 &
pid=$!
i=0
while [ $i -lt 200 ] && ! $D top "$id" -o pid,args 2>/dev/null | grep -q ' sleep 1260$'; do
    sleep 0.1
    i=$((i + 1))
done
kill -9 $pid
wait $pid 2>/dev/null
i=0
while [ $i -lt 30 ] && $D top "$id" -o pid,args 2>/dev/null | grep -q ' sleep 1260$'; do
    sleep 1
    i=$((i + 1))
done
left=$($D top "$id" -o pid,args 2>/dev/null | grep -c ' sleep 1260$')
check "an exec whose provider was killed is ended by the server (left: $left)" [ "$left" -eq 0 ]

started=$($D inspect -f '{{.State.StartedAt}}' "$id")

# A provider killed while its exec floods the output: the next process
# attaches in the middle of that output (the lease ends it only later)
# and must find its place in the stream.
"$PS" exec --provider docker -t 60s "$id" -- sh -c 'while :; do echo 0123456789abcdefghijklmnopqrstuvwxyz; done' \
    </dev/null >/dev/null 2>&1 &
pid=$!
sleep 1
kill -9 $pid
wait $pid 2>/dev/null
cli exec --provider docker "$id" -- sh -c 'echo joined'
check "an exec while a dead provider's exec floods the output" rc_and_out 0 joined

# A provider killed while it sends a large stdin (most likely inside a
# frame): the next connection ends that frame and syncs again.
head -c 24000000 /dev/zero >"$tmp/big"
"$PS" exec -i --provider docker -t 60s "$id" -- sleep 1261 <"$tmp/big" >/dev/null 2>&1 &
pid=$!
sleep 1
kill -9 $pid
wait $pid 2>/dev/null
rm -f "$tmp/big"
cli exec --provider docker "$id" -- sh -c 'echo synced'
check "an exec after a provider died sending a large stdin" rc_and_out 0 synced
check "and the sandbox was not restarted meanwhile" \
    [ "$($D inspect -f '{{.State.StartedAt}}' "$id")" = "$started" ]

# The fallback: exec_mode = api on a sandbox of attach mode, and attach
# mode on a sandbox of api mode.
cli_api exec --provider docker "$id" -- sh -c 'echo via-api; exit 5'
check "exec_mode = api runs in an attach-mode sandbox" rc_and_out 5 via-api
cli_api create --provider docker
aid=$(out)
ids="$ids $aid"
check "exec_mode = api creates the idle PID 1" sh -c \
    "$D inspect -f '{{index .Config.Cmd 0}}' $aid | grep -qx -- --idle"
cli exec --provider docker "$aid" -- sh -c 'echo old; exit 6'
check "attach mode runs in an api-mode sandbox (through the API)" rc_and_out 6 old

# The server dies during an exec (the container is killed): an error that
# says so, not a hang.
"$PS" exec --provider docker "$id" -- sleep 60 </dev/null >"$tmp/out" 2>"$tmp/err" &
pid=$!
i=0
while [ $i -lt 200 ] && ! $D top "$id" -o pid,args 2>/dev/null | grep -q ' sleep 60$'; do
    sleep 0.1
    i=$((i + 1))
done
$D kill "$id" >/dev/null
wait $pid; rc=$?
check "the container killed during an exec: a sandbox error naming the exec server" \
    rc_and_err 125 "exec server"
# A stopped sandbox is started again when opened by id.
cli exec --provider docker "$id" -- sh -c 'echo back'
check "the next exec starts the sandbox again and is served" rc_and_out 0 back

cli destroy --provider docker "$id"
check "destroy" is_rc 0
done_testing
