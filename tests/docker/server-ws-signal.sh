#!/bin/sh
# tests/docker/server-ws-signal.sh - the native exec/ws delivers signals
# to a command on docker (its signal capability, through the helper's
# 'S' control frames): traps for SIGUSR1, SIGHUP, SIGINT and SIGWINCH run
# and the command goes on, its SIGTERM trap ends it with its own exit
# code; a command without a handler dies of SIGTERM and the result says
# so; SIGSTOP is refused by name.  (The same on local:
# tests/server/websocket.sh.)
. "$top_srcdir/tests/server/lib.sh"
. "$top_srcdir/tests/docker/lib.sh"
docker_ready
rc=$?
[ "$rc" = 0 ] || exit "$([ "$rc" = 77 ] && echo 0 || echo 1)"
. "$top_srcdir/tests/server/npm.sh"
npm_clients

plan 6

check "polysandboxd starts" srv_start
. "$top_srcdir/tests/server/ws-lib.sh"
types='[m["data"]["type"] for m in j["messages"]]'
stdout="''.join(m['data']['data'] for m in j['messages'] if m['data']['type'] == 'stdout')"

post /v1/sandboxes "{\"provider\":\"docker\",\"image\":\"$DOCKER_TEST_IMAGE\"}"
sid=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["id"])' "$tmp/out") ||
    { echo "Bail out! no docker sandbox: $(head -c 400 "$tmp/out")"; exit 1; }
trap_sh='for s in USR1 HUP INT WINCH; do trap \"echo caught $s\" $s; done; trap \"echo caught TERM; exit 3\" TERM; echo ready; while :; do sleep 0.1; done'
ws "/v1/sandboxes/$sid/exec/ws" "{\"type\":\"init\",\"shell\":\"$trap_sh\"}" '@seen:ready' \
    '{"type":"signal","signal":"SIGUSR1"}' '@seen:caught USR1' '{"type":"signal","signal":"SIGHUP"}' \
    '@seen:caught HUP' '{"type":"signal","signal":"SIGINT"}' '@seen:caught INT' \
    '{"type":"signal","signal":"SIGWINCH"}' '@seen:caught WINCH' '{"type":"signal","signal":"SIGTERM"}'
check "exec/ws on docker: trapped SIGUSR1, SIGHUP, SIGINT, SIGWINCH reach the command, which goes on" \
    wj "$stdout.startswith('ready\\ncaught USR1\\ncaught HUP\\ncaught INT\\ncaught WINCH\\n') and 'error' not in $types"
check "exec/ws on docker: a trapped SIGTERM reaches the command; the exit is its own" \
    wj "$stdout == 'ready\\ncaught USR1\\ncaught HUP\\ncaught INT\\ncaught WINCH\\ncaught TERM\\n' and j['messages'][-1]['data']['result']['exit_code'] == 3 and 'signal' not in j['messages'][-1]['data'] and j['close']['code'] == 1000"
ws "/v1/sandboxes/$sid/exec/ws" '{"type":"init","shell":"echo up; sleep 30"}' '@seen:up' '{"type":"signal","signal":"SIGTERM"}'
check "exec/ws on docker: SIGTERM to a command without a handler: it dies of it, the result says so" \
    wj "j['messages'][-1]['data']['type'] == 'exit' and 'signal' not in j['messages'][-1]['data'] and j['messages'][-1]['data']['result']['signal'] == 15 and j['close']['code'] == 1000 and j['close']['t'] < 20000"
ws "/v1/sandboxes/$sid/exec/ws" '{"type":"init","shell":"echo up; sleep 30; echo late"}' '@seen:up' '{"type":"signal","signal":"SIGSTOP"}' @200 '{"type":"signal","signal":"SIGKILL"}'
check "exec/ws on docker: SIGSTOP refused by name, the command goes on until SIGKILL" \
    wj "$types == ['start', 'stdout', 'error', 'exit'] and j['messages'][2]['data']['error']['code'] == 'invalid' and j['messages'][2]['data']['error']['message'].startswith('SIGSTOP cannot be delivered') and j['messages'][3]['data']['signal'] == 'SIGKILL' and 'late' not in j['messages'][3]['data']['result']['stdout']"
req DELETE "/v1/sandboxes/$sid"
check "the docker sandbox is deleted" eval 'is 200 || is 204'
