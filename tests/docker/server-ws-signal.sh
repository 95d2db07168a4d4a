#!/bin/sh
# tests/docker/server-ws-signal.sh - the native exec/ws on a provider that
# cannot deliver signals to a running command (docker: no signal
# capability): SIGTERM still kills the command, an error (not_supported)
# saying it was killed instead; SIGUSR1 is refused (not_supported), the
# command going on until SIGKILL.  (The delivering side, on local, is
# tests/server/websocket.sh.)
. "$top_srcdir/tests/server/lib.sh"
. "$top_srcdir/tests/docker/lib.sh"
docker_ready
rc=$?
[ "$rc" = 0 ] || exit "$([ "$rc" = 77 ] && echo 0 || echo 1)"
. "$top_srcdir/tests/server/npm.sh"
npm_clients

plan 4

check "polysandboxd starts" srv_start
. "$top_srcdir/tests/server/ws-lib.sh"
errors='[m["data"]["error"] for m in j["messages"] if m["data"]["type"] == "error"]'

post /v1/sandboxes "{\"provider\":\"docker\",\"image\":\"$DOCKER_TEST_IMAGE\"}"
sid=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["id"])' "$tmp/out") ||
    { echo "Bail out! no docker sandbox: $(head -c 400 "$tmp/out")"; exit 1; }
ws "/v1/sandboxes/$sid/exec/ws" '{"type":"init","shell":"echo up; sleep 30"}' '@seen:up' '{"type":"signal","signal":"SIGTERM"}'
check "exec/ws on docker: SIGTERM kills the command instead, the error and the exit say so" \
    wj "[(e['code'], e['provider']) for e in $errors] == [('not_supported', 'docker')] and 'killed instead' in $errors[0]['message'] and j['messages'][-1]['data']['signal'] == 'SIGTERM' and j['close']['code'] == 1000 and j['close']['t'] < 20000"
ws "/v1/sandboxes/$sid/exec/ws" '{"type":"init","shell":"echo up; sleep 30; echo late"}' '@seen:up' '{"type":"signal","signal":"SIGUSR1"}' @300 '{"type":"signal","signal":"SIGKILL"}'
check "exec/ws on docker: SIGUSR1 refused by name, the command goes on until SIGKILL" \
    wj "[e['code'] for e in $errors] == ['not_supported'] and $errors[0]['message'].startswith('SIGUSR1 cannot be delivered: provider docker') and j['messages'][-1]['data']['signal'] == 'SIGKILL' and 'late' not in j['messages'][-1]['data']['result']['stdout']"
req DELETE "/v1/sandboxes/$sid"
check "the docker sandbox is deleted" eval 'is 200 || is 204'
