#!/bin/sh
# tests/daytona/fake.sh - the daytona provider through the polysandbox
# command, against the local Daytona fake: run, create/exec/destroy,
# files, labels and list (paged), env, timeouts, ttl, failure states,
# error mapping under injected 5xx/429/drops/slow bodies, a wrong key, and
# the older wire shapes (exit "code", bare list array).
. "$top_srcdir/tests/daytona/lib.sh"

PS="$top_builddir/polysandbox"
T="$DT_DIR/t"
mkdir -p "$T"
tmp=$T
CLI_TIMEOUT=120
. "$top_srcdir/tests/lib/tap.sh"
# ps ARGS...: polysandbox with a bound on its time; stdout/stderr in $T.
ps() { cli "$@"; }
# The API bodies the fake received, for checks on the wire.
reqs() { dt_ctl GET /_fake/requests; }
live() { dt_ctl GET /_fake/stats | dt_jq 'len(j["live"])'; }

plan 59
# Short waits: the faults below each run the core's retries out, and at
# the default backoff (100 ms-5 s, Retry-After up to 30 s) they slept for
# some 35 s.  What is asserted is what the provider says, not the waits.
DT_EXTRA_INI='[retry]
base = 5ms
cap = 100ms
max_retry_after = 50ms'
dt_start --page-size 2

# ---- basics ----
ps providers
check "providers: daytona is ready with its capabilities" \
    eval 'grep -q "^daytona  *ready" "$T/out" && out_has "files,persistent,labels,stdin,network_policy,list,concurrent"'

ps -q run -- sh -c 'echo out; echo err >&2; exit 3'  # -q: no note of the unenforced limits
check "run: exit status 3 kept" [ "$rc" -eq 3 ]
check "run: stdout and stderr apart" eval 'out_is out && [ "$(cat "$T/err")" = err ]'
# Daytona sizes a sandbox for its life: refused unless allowed (lib.sh
# allows it), and then said.
ps -o provider.daytona.unenforced_limits=refuse run -- true
check "unenforced_limits = refuse: refused, naming memory" \
    eval '[ "$rc" -eq 125 ] && grep -q "memory (512 MiB)" "$T/err"'
ps run --json -- true
check "allowed: the result names the limits it ran without" \
    json_check '"memory" in j["unenforced_limits"] and "wall" not in j["unenforced_limits"]'
check "run: the sandbox is destroyed afterwards" [ "$(live)" -eq 0 ]

reqs >"$T/reqs"
check "create sends labels (owner), env, networkBlockAll, a stop interval above the wall limit, delete on stop" \
    eval '[ "$(dt_jq "[r[\"body\"] for r in j if r[\"method\"] == \"POST\" and r[\"path\"] == \"/api/sandbox\"][-1]" <"$T/reqs" | dt_jq "(\"polysandbox.owner\" in j[\"labels\"], j[\"networkBlockAll\"], j[\"autoStopInterval\"] >= 2, j[\"autoDeleteInterval\"])")" = "(True, True, True, 0)" ]'

ps run --json -- sh -c 'printf "\377\000x"; kill -KILL $$'
check "run: a signal is a signal (SIGKILL), binary stdout exact" \
    eval '[ "$rc" -eq 137 ] && dt_jq "(j[\"status\"], j[\"signal\"], j[\"stdout\"], j[\"stdout_encoding\"])" <"$T/out" | grep -q "signal.*9.*/wB4.*base64"'

ps run --json -t 1s -- sh -c 'echo before; sleep 30'
check "run: wall timeout is status timeout, exit 124" \
    eval '[ "$rc" -eq 124 ] && dt_jq "j[\"status\"]" <"$T/out" | grep -qx timeout'

printf 'line one\nline two\n' >"$T/in"
timeout 120 "$PS" run -i -- wc -l <"$T/in" >"$T/out" 2>"$T/err"; rc=$?
check "run: stdin is delivered" eval '[ "$rc" -eq 0 ] && out_is 2'

ps run --lang python -c 'print(6 * 7)'
check "run --lang python (a template's file placed in the sandbox)" eval '[ "$rc" -eq 0 ] && out_is 42'
ps run --image python:3.11-slim -- true
check "an image is built (buildInfo FROM python:3.11-slim)" \
    eval 'reqs | dt_jq "[r[\"body\"] for r in j if r[\"path\"] == \"/api/sandbox\" and r[\"method\"] == \"POST\"][-1][\"buildInfo\"][\"dockerfileContent\"]" | grep -q "^FROM python:"'
ps -o provider.daytona.images=ignore run --image python:3.11-slim -- true
check "images = ignore: an image asked for is refused (2), naming daytona and it" \
    eval '[ "$rc" -eq 2 ] && grep -q "daytona cannot run image .python:3.11-slim." "$T/err"'
ps -o provider.daytona.images=ignore run --template python -- echo ran
check "images = ignore: a template's plain image is ignored, and the run goes on" \
    eval '[ "$rc" -eq 0 ] && out_is ran'
ps -o provider.daytona.images=ignore doctor --provider daytona
check "images = ignore: doctor says images are refused or ignored" \
    grep -q "daytona: images: none (images = ignore)" "$T/out"

ps run -e FROM_RUN=yes -- sh -c 'echo "$FROM_RUN|${HOME:+home}"'
check "run -e: the variable is seen, the sandbox has its own HOME" eval '[ "$rc" -eq 0 ] && out_is "yes|home"'

ps run --json -- no-such-command-xyz
check "run: a missing command is status not_found, exit 127" \
    eval '[ "$rc" -eq 127 ] && dt_jq "j[\"status\"]" <"$T/out" | grep -qx not_found'
ps run --json -- sh -c 'exit 127'
check "run: a command exiting 127 is not 'not found'" \
    eval '[ "$rc" -eq 127 ] && dt_jq "j[\"status\"]" <"$T/out" | grep -qx nonzero_exit'


# networkBlockAll (network none, the default) against network host.
port=${DT_URL##*:}
conn="import socket; s = socket.socket(); s.settimeout(3); print('up' if s.connect_ex(('127.0.0.1', $port)) == 0 else 'down')"
ps run -- python3 -c "$conn"
check "network none (networkBlockAll): the host's loopback is out of reach" eval '[ "$rc" -eq 0 ] && out_is down'
ps run --network host -- python3 -c "$conn"
check "network host: it is reachable" eval '[ "$rc" -eq 0 ] && out_is up'

# ---- a persistent sandbox ----
ps create --label suite=daytona --label color=blue -e CREATED=at-create
id=$(cat "$T/out")
check "create prints an id" eval '[ "$rc" -eq 0 ] && [ -n "$id" ]'
[ -n "$id" ] || id=none

ps exec "$id" -- sh -c 'echo kept >state.txt; echo "$CREATED"'
check "exec: create-time environment" eval '[ "$rc" -eq 0 ] && out_is at-create'
ps exec "$id" -- cat state.txt
check "exec: files persist between execs" eval '[ "$rc" -eq 0 ] && out_is kept'

"$DT_PYTHON" -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 400)' >"$T/big.bin"
ps upload "$id" "$T/big.bin" sub/dir/big.bin
check "upload of 100 KiB (multipart) exits 0" [ "$rc" -eq 0 ]
check "the upload went through /files/upload as multipart" \
    eval 'reqs | dt_jq "[r for r in j if \"/files/upload\" in r[\"path\"]]" | grep -q upload'
ps download "$id" sub/dir/big.bin "$T/big.out"
check "download gives every byte back" eval '[ "$rc" -eq 0 ] && cmp -s "$T/big.bin" "$T/big.out"'
printf 'small' >"$T/small"
ps upload "$id" "$T/small" small.txt
ps exec "$id" -- cat small.txt
check "a small upload (inline) is seen by commands" eval '[ "$rc" -eq 0 ] && out_is small'
ps download "$id" no-such-file
check "download of a missing file fails, naming it" eval '[ "$rc" -ne 0 ] && err_has no-such-file'
ps exec "$id" -- ln -s /etc/passwd link
ps download "$id" link "$T/x"
check "download through a link the sandbox made is refused" eval '[ "$rc" -ne 0 ] && err_has "symbolic link"'

# Listing pages through the fake's 2-item pages.
for i in 1 2 3; do ps create --label suite=daytona-extra; echo "$(cat "$T/out")" >>"$T/extra"; done
ps list --json
check "list: every sandbox, across pages" \
    eval '[ "$rc" -eq 0 ] && [ "$(dt_jq "len(j)" <"$T/out")" -eq 4 ]'
check "list: labels come back" eval 'out_has "color=blue" || out_has "\"color\""'
check "list: followed nextCursor" \
    eval '[ "$(reqs | dt_jq "len([r for r in j if r[\"path\"] == \"/api/sandbox\" and r[\"method\"] == \"GET\"])")" -ge 2 ]'

# An auto-stopped sandbox is started again on the next use.
dt_ctl GET /_fake/stats >/dev/null
"$DT_PYTHON" - "$DT_URL" "$DT_KEY" "$id" <<'EOF'
import sys, urllib.request
url, key, sid = sys.argv[1:4]
req = urllib.request.Request(url + "/api/sandbox/" + sid + "/stop", method="POST",
                             headers={"Authorization": "Bearer " + key})
urllib.request.urlopen(req, timeout=10).read()
EOF
sleep 0.3
ps exec "$id" -- cat state.txt
check "exec in a stopped sandbox starts it again" eval '[ "$rc" -eq 0 ] && out_is kept'

ps destroy "$id"
check "destroy exits 0" [ "$rc" -eq 0 ]
ps exec "$id" -- true
check "exec in a destroyed sandbox fails" [ "$rc" -ne 0 ]
for x in $(cat "$T/extra"); do ps destroy "$x"; done
ps list --json
check "list: destroyed sandboxes are gone" eval '[ "$rc" -eq 0 ] && [ "$(dt_jq "len(j)" <"$T/out")" -eq 0 ]'

# ---- failure states ----
ps run --image fake-error -- true
check "a sandbox ending in state error is a clear sandbox error" \
    eval '[ "$rc" -eq 125 ] && err_has "state '"'"'error'"'"'" && err_has "failed to start"'
check "...and is deleted, not leaked" eval '[ "$(live)" -eq 0 ]'

# ---- injected faults ----
dt_faults '{"error_rate": 1, "status": 503, "path": "/api/sandbox", "method": "POST"}'
ps run -- true
check "503 on create: server error naming the call" eval '[ "$rc" -eq 125 ] && err_has 503'
dt_faults '{"error_rate": 1, "status": 429, "retry_after": 2, "path": "/api/sandbox", "method": "POST"}'
ps run -- true
check "429 on create: rate limited, Retry-After passed on" \
    eval '[ "$rc" -eq 125 ] && err_has 429 && err_has "retry after 2000 ms"'
dt_faults '{"drop_rate": 1, "drop_mode": "before", "path": "/api/sandbox", "method": "POST"}'
ps run -- true
check "connection closed before an answer: a network error, no hang" \
    eval '[ "$rc" -eq 125 ] && [ -s "$T/err" ]'
dt_faults '{"drop_rate": 1, "drop_mode": "mid", "path": "/toolbox/", "method": "POST"}'
ps run --json -- echo never-seen
check "connection dropped mid-answer during exec: a sandbox error, not a result" \
    eval '[ "$rc" -eq 125 ] && ! out_has never-seen'
check "...and the sandbox is still destroyed" eval '[ "$(live)" -eq 0 ]'
dt_faults '{"error_rate": 1, "status": 503, "count": 1, "path": "/api/sandbox", "method": "POST"}'
ps run -- echo after-one-503
check "one 503 on create: retryable, the core's retry gets through" \
    eval '[ "$rc" -eq 0 ] && out_is after-one-503'
dt_faults '{"error_rate": 1, "status": 429, "retry_after": 1, "count": 1, "path": "/toolbox/", "method": "POST"}'
c0=$(dt_ctl GET /_fake/stats | dt_jq 'j["created"]')
ps run -- echo after-one-429
c1=$(dt_ctl GET /_fake/stats | dt_jq 'j["created"]')
check "one 429 on execute: marked not started, so the exec is retried in the same sandbox" \
    eval '[ "$rc" -eq 0 ] && out_is after-one-429 && [ $((c1 - c0)) -eq 1 ]'
dt_faults '{"slow_body_ms": 600, "latency_ms": 50}'
ps run -- echo slow-but-whole
check "latency and slow bodies: still the whole answer" eval '[ "$rc" -eq 0 ] && out_is slow-but-whole'
dt_faults '{"error_rate": 0.3, "status": 502, "seed": 7, "path": "/api/sandbox/", "method": "GET"}'
ps run -- echo through-the-polls
check "502s while waiting for the start are waited out" eval '[ "$rc" -eq 0 ] && out_is through-the-polls'
dt_faults '{}'

# ---- credentials ----
dt_config "env:DAYTONA_WRONG_KEY"
DAYTONA_WRONG_KEY=not-the-key; export DAYTONA_WRONG_KEY
ps run -- true
check "a wrong key: refused as an auth error" eval '[ "$rc" -eq 125 ] && err_has 401 && err_has api_key'
check "...and the key is in no message" eval '! grep -q not-the-key "$T/err" "$T/out"'
dt_config "env:DAYTONA_UNSET_VARIABLE_XYZ"
ps providers
check "an unset key reference makes the provider unavailable, naming the variable" \
    eval 'out_has DAYTONA_UNSET_VARIABLE_XYZ || err_has DAYTONA_UNSET_VARIABLE_XYZ'
dt_config "env:DAYTONA_TEST_KEY"

# ---- older wire shapes ----
# A work directory with a space in it (the fake's sandboxes live under
# TMPDIR), and a script too long for one argument, which the provider
# uploads and names in the command: read alike by a shell and by an older
# daemon's word splitting.
BIG=$("$DT_PYTHON" -c 'print("a" * 80000)')
mkdir -p "$DT_DIR/tmp dir"
TMPDIR_WAS=${TMPDIR-}
TMPDIR="$DT_DIR/tmp dir"
export TMPDIR
kill "$DT_PID" 2>/dev/null; wait "$DT_PID" 2>/dev/null
rm -f "$DT_DIR/port"
dt_start --legacy-daemon --legacy-list
ps run -- sh -c 'exit 4'
check "older daemon (no shell, \"code\" for the exit status)" [ "$rc" -eq 4 ]
ps run -e BIG="$BIG" -e Q="it's \$HOME" -- sh -c 'echo "${#BIG} $Q $(pwd)"'
check "older daemon: a script past one argument runs from a file, in a work dir with a space" \
    eval '[ "$rc" -eq 0 ] && out_has "80000 it'"'"'s \$HOME " && out_has "/tmp dir/"'
ps create --label suite=legacy
lid=$(cat "$T/out")
ps list --json
check "older API (list as a bare array)" eval '[ "$rc" -eq 0 ] && out_has "$lid"'
ps destroy "$lid"
check "destroy on the older API" [ "$rc" -eq 0 ]

kill "$DT_PID" 2>/dev/null; wait "$DT_PID" 2>/dev/null
rm -f "$DT_DIR/port"
dt_start --minute-ms 400
ps run -e BIG="$BIG" -e Q="it's \$HOME" -- sh -c 'echo "${#BIG} $Q $(pwd)"'
check "current daemon: the same long script, the same work dir" \
    eval '[ "$rc" -eq 0 ] && out_has "80000 it'"'"'s \$HOME " && out_has "/tmp dir/"'
if [ -n "$TMPDIR_WAS" ]; then TMPDIR=$TMPDIR_WAS; else unset TMPDIR; fi
# ---- time-to-live: a fake minute is 0.4 s here ----
ps create --ttl 1m --label suite=ttl
tid=$(cat "$T/out")
check "create --ttl 1m sends autoStopInterval 2 (the 10 s wall limit + 1), autoDeleteInterval 0" \
    eval 'reqs | dt_jq "[r[\"body\"] for r in j if r[\"path\"] == \"/api/sandbox\" and r[\"method\"] == \"POST\"][-1]" | dt_jq "(j[\"autoStopInterval\"], j[\"autoDeleteInterval\"], \"polysandbox.expires\" in j[\"labels\"])" | grep -qx "(2, 0, True)"'
i=0
while [ "$i" -lt 100 ] && dt_ctl GET /_fake/stats | grep -q "$tid"; do sleep 0.1; i=$((i + 1)); done
check "an idle sandbox past its ttl is stopped and deleted by the service" \
    eval '! dt_ctl GET /_fake/stats | grep -q "$tid"'

# The core reads the settings (host->settings_read): a bad one is named
# with where it came from, the key and what is accepted.
cli -o provider.daytona.images=copy run -- true
check "images = copy: refused naming the command line, the key and the choices" \
    rc_and_err 125 "command line: images = 'copy': use build, snapshot or ignore"
cli -o provider.daytona.auto_delete=-2 run -- true
check "auto_delete below -1: refused naming its bounds" \
    rc_and_err 125 "auto_delete = '-2': must be from -1 to 525600"

done_testing
