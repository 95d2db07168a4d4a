#!/bin/sh
# tests/kube/server-ws-signal.sh - polysandboxd's exec WebSocket delivers
# signals to a command on the kubernetes provider (its signal capability:
# a second exec of kill per signal) against the Kubernetes fake: traps for
# SIGUSR1, SIGHUP, SIGINT and SIGWINCH run and the command goes on, its
# SIGTERM trap ends it with its own exit; SIGTERM to a sleep and SIGINT to
# a python loop kill them and the result says so, with the status and
# signal the local provider gives for the same session; SIGSTOP is refused
# by name and SIGKILL ends the command, as on local.  (docker:
# tests/docker/server-ws-signal.sh; local: tests/server/websocket.sh.)
. "$top_srcdir/tests/kube/lib.sh"
ktmp=$tmp
. "$top_srcdir/tests/server/lib.sh"
rm -rf "$ktmp"
trap 'stop_fake; srv_cleanup' EXIT
. "$top_srcdir/tests/server/npm.sh"
npm_clients

plan 10

start_provider_fake
cp "$top_srcdir/tests/config/providers.d/local.ini" "$tmp/config/providers.d/"
check "polysandboxd starts" srv_start --config-dir "$tmp/config"
. "$top_srcdir/tests/server/ws-lib.sh"
types='[m["data"]["type"] for m in j["messages"]]'
stdout="''.join(m['data']['data'] for m in j['messages'] if m['data']['type'] == 'stdout')"
# sandbox PROVIDER: a sandbox's id on stdout.
sandbox() {
    post /v1/sandboxes "{\"provider\":\"$1\"}"
    "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["id"])' "$tmp/out" ||
        { echo "Bail out! no $1 sandbox: $(head -c 400 "$tmp/out")"; exit 1; }
}
# fate: the exit message's signal, and its result's status, signal, exit code.
fate() {
    "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))["messages"][-1]["data"]
r = d.get("result", {})
print(d.get("type"), d.get("signal"), r.get("status"), r.get("signal"), r.get("exit_code"))' "$tmp/ws.json"
}
# both NAME INIT STEP...: the session on local, then on kubernetes (its
# record left in $tmp/ws.json); their fates in $tmp/NAME.local, .kube.
both() {
    n=$1
    shift
    ws "/v1/sandboxes/$lsid/exec/ws" "$@"
    fate >"$tmp/$n.local"
    ws "/v1/sandboxes/$ksid/exec/ws" "$@"
    fate >"$tmp/$n.kube"
}
same() {
    echo "# local: $(cat "$tmp/$1.local"); kubernetes: $(cat "$tmp/$1.kube")"
    cmp -s "$tmp/$1.local" "$tmp/$1.kube"
}

ksid=$(sandbox kubernetes)
lsid=$(sandbox local)
trap_sh='for s in USR1 HUP INT WINCH; do trap \"echo caught $s\" $s; done; trap \"echo caught TERM; exit 3\" TERM; echo ready; while :; do sleep 0.1; done'
ws "/v1/sandboxes/$ksid/exec/ws" "{\"type\":\"init\",\"shell\":\"$trap_sh\"}" '@seen:ready' \
    '{"type":"signal","signal":"SIGUSR1"}' '@seen:caught USR1' '{"type":"signal","signal":"SIGHUP"}' \
    '@seen:caught HUP' '{"type":"signal","signal":"SIGINT"}' '@seen:caught INT' \
    '{"type":"signal","signal":"SIGWINCH"}' '@seen:caught WINCH' '{"type":"signal","signal":"SIGTERM"}'
check "exec/ws on kubernetes: trapped SIGUSR1, SIGHUP, SIGINT, SIGWINCH reach the command, which goes on" \
    wj "$stdout.startswith('ready\\ncaught USR1\\ncaught HUP\\ncaught INT\\ncaught WINCH\\n') and 'error' not in $types"
check "exec/ws on kubernetes: a trapped SIGTERM reaches the command; the exit is its own" \
    wj "$stdout == 'ready\\ncaught USR1\\ncaught HUP\\ncaught INT\\ncaught WINCH\\ncaught TERM\\n' and j['messages'][-1]['data']['result']['exit_code'] == 3 and 'signal' not in j['messages'][-1]['data'] and j['close']['code'] == 1000"

both term '{"type":"init","shell":"echo up; sleep 30"}' '@seen:up' '{"type":"signal","signal":"SIGTERM"}'
check "exec/ws on kubernetes: SIGTERM to a sleep: it dies of it, the result says so" \
    wj "j['messages'][-1]['data']['type'] == 'exit' and 'signal' not in j['messages'][-1]['data'] and j['messages'][-1]['data']['result']['signal'] == 15 and j['close']['code'] == 1000"
check "exec/ws: SIGTERM's result on kubernetes is local's (status, signal)" same term

py_loop='"import time\nprint(\"up\", flush=True)\nwhile True:\n    time.sleep(0.05)"'
both int "{\"type\":\"init\",\"language\":\"python\",\"code\":$py_loop}" '@seen:up' '{"type":"signal","signal":"SIGINT"}'
check "exec/ws on kubernetes: SIGINT to a python loop: it dies of it, the result says so" \
    wj "j['messages'][-1]['data']['type'] == 'exit' and j['messages'][-1]['data']['result']['signal'] == 2"
check "exec/ws: SIGINT's result on kubernetes is local's (status, signal)" same int

both kill '{"type":"init","shell":"echo up; sleep 30; echo late"}' '@seen:up' '{"type":"signal","signal":"SIGSTOP"}' @200 '{"type":"signal","signal":"SIGKILL"}'
check "exec/ws on kubernetes: SIGSTOP refused by name, the command goes on until SIGKILL" \
    wj "$types == ['start', 'stdout', 'error', 'exit'] and j['messages'][2]['data']['error']['code'] == 'invalid' and j['messages'][2]['data']['error']['message'].startswith('SIGSTOP cannot be delivered') and j['messages'][3]['data']['signal'] == 'SIGKILL' and 'late' not in j['messages'][3]['data']['result']['stdout']"
check "exec/ws: SIGKILL's result on kubernetes is local's" same kill

req DELETE "/v1/sandboxes/$ksid"
k=$code
req DELETE "/v1/sandboxes/$lsid"
check "both sandboxes are deleted" eval '{ [ "$k" = 200 ] || [ "$k" = 204 ]; } && { is 200 || is 204; }'
srv_stop
done_testing
