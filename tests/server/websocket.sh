#!/bin/sh
# tests/server/websocket.sh - the WebSocket routes: Piston's WS
# /api/v2/connect (its messages and close codes) and the native
# GET /v1/sandboxes/{id}/exec/ws, driven by the npm `ws` client (pinned in
# tests/server/npm); frames no client library sends come from a raw
# socket (ws-raw.py).  The server's idle-connection timeout is 2 s: a
# session outlives it.
. "$top_srcdir/tests/server/lib.sh"
. "$top_srcdir/tests/server/npm.sh"
npm_clients

plan 43

check "polysandboxd starts" srv_start -o server.connection_timeout=2s
. "$top_srcdir/tests/server/ws-lib.sh"
hostport=${base#http://}
n=0
types='[m["data"]["type"] for m in j["messages"]]'
pinit() { printf '{"type":"init","language":"%s","version":"*","files":[{"content":%s}]%s}' "$1" "$2" "${3:-}"; }

# ---- Piston ----------------------------------------------------------------------------------

ws /api/v2/connect "$(pinit python '"import time\nprint(input())\ntime.sleep(3)\nprint(\"late\")"' ',"stdin":"hey\n"')"
check "piston: runtime, stage, data, exit, close 4999 Job Completed" \
    wj "$types[:2] == ['runtime', 'stage'] and $types[-1] == 'exit' and set($types[2:-1]) == {'data'} and j['messages'][0]['data']['language'] == 'python' and j['messages'][1]['data']['stage'] == 'run' and j['close'] == {'code': 4999, 'reason': 'Job Completed', 't': j['close']['t']}"
check "piston: data as produced, stdin from init, exit code 0; the session outlived the idle timeout" \
    wj "(lambda d: ''.join(m['data']['data'] for m in d) == 'hey\nlate\n' and d[0]['data']['stream'] == 'stdout' and [m for m in d if 'late' in m['data']['data']][0]['t'] - d[0]['t'] > 2500)([m for m in j['messages'] if m['data']['type'] == 'data']) and j['messages'][-1]['data'] == {'type': 'exit', 'stage': 'run', 'code': 0, 'signal': None}"
ws /api/v2/connect "$(pinit c '"#include <stdio.h>\nint main(void) { puts(\"c!\"); return 2; }"')"
check "piston: a compiled runtime: compile stage and its exit, then the run stage" \
    wj "$types[:4] == ['runtime', 'stage', 'exit', 'stage'] and $types[-1] == 'exit' and j['messages'][1]['data']['stage'] == 'compile' and j['messages'][2]['data'] == {'type': 'exit', 'stage': 'compile', 'code': 0, 'signal': None} and j['messages'][3]['data']['stage'] == 'run' and ''.join(m['data']['data'] for m in j['messages'][4:-1]) == 'c!\n' and j['messages'][-1]['data']['code'] == 2"
ws /api/v2/connect "$(pinit c '"int main(void) { return }"')"
check "piston: a compile error: the compiler's output and the compile stage's exit, no run" \
    wj "$types[:2] == ['runtime', 'stage'] and $types[-1] == 'exit' and len($types) > 3 and all(m['data']['type'] == 'data' and m['data']['stream'] == 'stderr' for m in j['messages'][2:-1]) and j['messages'][-1]['data']['stage'] == 'compile' and j['messages'][-1]['data']['code'] not in (0, None) and j['close']['code'] == 4999"
ws /api/v2/connect "$(pinit python '"import time\nprint(1, flush=True)\ntime.sleep(30)"')" @300 '{"type":"signal","signal":"SIGKILL"}'
check "piston: a SIGKILL from the client ends it at once, the exit says so" \
    wj "j['messages'][-1]['data'] == {'type': 'exit', 'stage': 'run', 'code': None, 'signal': 'SIGKILL'} and j['close']['code'] == 4999 and j['close']['t'] < 10000"
ws /api/v2/connect "$(pinit python '"while True: pass"' ',"run_timeout":400')"
check "piston: a run_timeout: the exit says SIGKILL" \
    wj "j['messages'][-1]['data']['signal'] == 'SIGKILL' and j['messages'][-1]['data']['code'] is None"
ws /api/v2/connect
check "piston: no init within a second: 4001" wj "j['close']['code'] == 4001 and j['close']['reason'] == 'Initialization Timeout'"
ws /api/v2/connect '{"type":"data","stream":"stdin","data":"x"}'
check "piston: data before init: 4003" wj "j['close']['code'] == 4003"
ws /api/v2/connect "$(pinit python '"import time\ntime.sleep(5)"')" @200 "$(pinit python '"1"')"
check "piston: a second init: 4000" wj "j['close']['code'] == 4000 and j['close']['t'] < 4000"
ws /api/v2/connect "$(pinit python '"import time\ntime.sleep(5)"')" @200 '{"type":"data","stream":"stdout","data":"x"}'
check "piston: writing to stdout: 4004" wj "j['close']['code'] == 4004"
ws /api/v2/connect "$(pinit python '"import time\ntime.sleep(5)"')" @200 '{"type":"signal","signal":"SIGNOPE"}'
check "piston: an invalid signal: 4005" wj "j['close']['code'] == 4005"
# Signals reach the program (local delivers them): its handlers run, a
# signal that cannot be delivered is refused by name, the program going on.
trap_py='"import signal, sys, time\ndef h(s, f):\n    print(\"caught\", signal.Signals(s).name, flush=True)\n    if s == signal.SIGINT:\n        sys.exit(3)\nsignal.signal(signal.SIGUSR1, h)\nsignal.signal(signal.SIGINT, h)\nprint(\"ready\", flush=True)\nwhile True:\n    time.sleep(0.1)"'
ws /api/v2/connect "$(pinit python "$trap_py" ',"run_timeout":30000')" '@seen:ready' '{"type":"signal","signal":"SIGUSR1"}' '@seen:caught SIGUSR1' '{"type":"signal","signal":"SIGSTOP"}' '{"type":"signal","signal":"SIGINT"}'
check "piston: SIGUSR1 then SIGINT reach the program's handlers, the exit is its own" \
    wj "''.join(m['data']['data'] for m in j['messages'] if m['data']['type'] == 'data') == 'ready\ncaught SIGUSR1\ncaught SIGINT\n' and j['messages'][-1]['data'] == {'type': 'exit', 'stage': 'run', 'code': 3, 'signal': None} and j['close']['code'] == 4999"
check "piston: a signal no provider delivers (SIGSTOP): an error naming it, the program goes on" \
    wj "[m['data']['message'] for m in j['messages'] if m['data']['type'] == 'error'] == ['SIGSTOP cannot be delivered to a running program: SIGKILL, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGTERM, SIGALRM and SIGWINCH can']"
ws /api/v2/connect "$(pinit python '"import time\nprint(\"up\", flush=True)\ntime.sleep(30)"')" '@seen:up' '{"type":"signal","signal":"SIGTERM"}'
check "piston: SIGTERM to a program without a handler: it dies of it, the exit says so" \
    wj "j['messages'][-1]['data'] == {'type': 'exit', 'stage': 'run', 'code': None, 'signal': 'SIGTERM'} and j['close']['code'] == 4999 and j['close']['t'] < 20000"
ws /api/v2/connect "$(pinit python '"import sys\nfor line in sys.stdin:\n    print(\"got\", line.strip(), flush=True)\n    if line.strip() == \"stop\": break"' ',"stdin":"first\n","run_timeout":30000')" '@seen:got first' '{"type":"data","stream":"stdin","data":"a\n"}' '@seen:got a' @500 '{"type":"data","stream":"stdin","data":"stop\n"}'
check "piston: stdin data messages reach the program as it runs (after the init's)" \
    wj "(lambda d: ''.join(m['data']['data'] for m in d) == 'got first\ngot a\ngot stop\n' and None not in (t_of(d, 'got stop'), t_of(d, 'got a\n')) and t_of(d, 'got stop') - t_of(d, 'got a\n') > 400)([m for m in j['messages'] if m['data']['type'] == 'data']) and j['messages'][-1]['data']['code'] == 0"
ws /api/v2/connect "$(pinit cobol '"x"')"
check "piston: an unknown runtime: an error message, then 4002 Notified Error" \
    wj "j['messages'] == [{'t': j['messages'][0]['t'], 'data': {'type': 'error', 'message': 'cobol-* runtime is unknown'}}] and j['close'] == {'code': 4002, 'reason': 'Notified Error', 't': j['close']['t']}"
req GET /api/v2/connect
check "piston: a GET that is not a WebSocket handshake: 400 {message}" \
    eval 'is 400 && json_check "set(j) == {\"message\"}"'
req GET /api/v2/connect -H 'Upgrade: websocket' -H 'Connection: Upgrade' -H 'Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAAAA==' -H 'Sec-WebSocket-Version: 8'
check "a WebSocket version other than 13: 426 naming 13" eval 'is 426 && [ "$(header Sec-WebSocket-Version)" = 13 ]'

# ---- native ------------------------------------------------------------------------------------

post /v1/sandboxes '{}'
sid=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["id"])' "$tmp/out")
ws "/v1/sandboxes/$sid/exec/ws" '{"type":"init","shell":"echo a; read x; echo got $x; echo kept > f","stdin":"line\n"}'
check "exec/ws: start, output as it comes, exit with the result, close 1000" \
    wj "$types[0] == 'start' and $types[-1] == 'exit' and j['messages'][0]['data']['sandbox_id'] == '$sid' and ''.join(m['data']['data'] for m in j['messages'] if m['data']['type'] == 'stdout') == 'a\ngot line\n' and j['messages'][-1]['data']['result']['status'] == 'ok' and j['close']['code'] == 1000"
post "/v1/sandboxes/$sid/exec" '{"shell":"cat f"}'
check "exec/ws: it ran in the sandbox (its file is there for /v1's exec)" eval 'is 200 && json_check "j[\"stdout\"] == \"kept\\n\""'
ws "/v1/sandboxes/$sid/exec/ws" '{"type":"init","shell":"printf \"\\377\\376\""}'
check "exec/ws: output that is not UTF-8 comes as base64" \
    wj "[m['data'] for m in j['messages'] if m['data']['type'] == 'stdout'][0] == {'type': 'stdout', 'data': '//4=', 'encoding': 'base64'}"
ws "/v1/sandboxes/$sid/exec/ws" '{"type":"init","language":"python","code":"import sys; print(sys.argv[1:])","args":["x"]}'
check "exec/ws: code of a template, with args" \
    wj "j['messages'][-1]['data']['result']['stdout'] == \"['x']\n\""
# The local provider delivers signals (its signal capability): a trap
# runs, a command without one dies of it; SIGSTOP is refused by name.
ws "/v1/sandboxes/$sid/exec/ws" '{"type":"init","shell":"echo up; sleep 30"}' '@seen:up' '{"type":"signal","signal":"SIGTERM"}'
check "exec/ws: SIGTERM to a command without a handler: it dies of it, the result says so" \
    wj "j['messages'][-1]['data']['type'] == 'exit' and 'signal' not in j['messages'][-1]['data'] and j['messages'][-1]['data']['result']['signal'] == 15 and j['close']['code'] == 1000 and j['close']['t'] < 20000"
ws "/v1/sandboxes/$sid/exec/ws" '{"type":"init","shell":"echo up; sleep 30"}' '@seen:up' '{"type":"signal","signal":"SIGSTOP"}' @200 '{"type":"signal","signal":"SIGKILL"}'
check "exec/ws: a signal that cannot be delivered (SIGSTOP): an error naming it, the command goes on" \
    wj "$types == ['start', 'stdout', 'error', 'exit'] and j['messages'][2]['data']['error']['code'] == 'invalid' and j['messages'][2]['data']['error']['message'].startswith('SIGSTOP cannot be delivered') and j['messages'][3]['data']['signal'] == 'SIGKILL'"
trap_sh='trap \"echo caught USR1\" USR1; trap \"echo caught TERM; exit 3\" TERM; echo ready; while :; do sleep 0.1; done'
ws "/v1/sandboxes/$sid/exec/ws" "{\"type\":\"init\",\"shell\":\"$trap_sh\"}" '@seen:ready' '{"type":"signal","signal":"SIGUSR1"}' '@seen:caught USR1' '{"type":"signal","signal":"SIGTERM"}'
check "exec/ws: a trapped SIGUSR1 reaches the command, which goes on" \
    wj "''.join(m['data']['data'] for m in j['messages'] if m['data']['type'] == 'stdout').startswith('ready\\ncaught USR1\\n') and 'error' not in $types"
check "exec/ws: a trapped SIGTERM reaches the command; the exit is its own" \
    wj "''.join(m['data']['data'] for m in j['messages'] if m['data']['type'] == 'stdout') == 'ready\\ncaught USR1\\ncaught TERM\\n' and j['messages'][-1]['data']['result']['exit_code'] == 3 and 'signal' not in j['messages'][-1]['data'] and j['close']['code'] == 1000"
ws "/v1/sandboxes/$sid/exec/ws" '{"type":"init","shell":"sleep 30; echo late > late"}' @300 @close
t0=$(date +%s)
post "/v1/sandboxes/$sid/exec" '{"shell":"ls"}'
t1=$(date +%s)
check "exec/ws: a client that closes kills its command (the sandbox is free at once)" \
    eval 'is 200 && [ $((t1 - t0)) -lt 10 ] && json_check "\"late\" not in j[\"stdout\"]"'
ws "/v1/sandboxes/$sid/exec/ws" '{"type":"init","argv":"true"}'
check "exec/ws: a bad init: an error naming the field, close 1008" \
    wj "j['messages'][0]['data']['type'] == 'error' and 'argv' in j['messages'][0]['data']['error']['message'] and j['close']['code'] == 1008"
ws "/v1/sandboxes/$sid/exec/ws" '{"type":"hello"}'
check "exec/ws: a first message that is not init: an error, 1008" \
    wj "j['messages'][0]['data']['type'] == 'error' and j['close']['code'] == 1008"
ws "/v1/sandboxes/$sid/exec/ws" '{"type":"init","shell":"while read l; do echo \"got $l\"; done; echo end","stdin_stream":true,"stdin":"one\n"}' @300 '{"type":"stdin","data":"two\n"}' @500 '{"type":"stdin","data":"dGhyZWUK","encoding":"base64"}' @300 '{"type":"stdin_close"}'
check "exec/ws stdin_stream: the init's stdin, then stdin messages as they come, the end at stdin_close" \
    wj "(lambda d: ''.join(m['data']['data'] for m in d) == 'got one\ngot two\ngot three\nend\n' and [m for m in d if 'three' in m['data']['data']][0]['t'] - [m for m in d if 'two' in m['data']['data']][0]['t'] > 300)([m for m in j['messages'] if m['data']['type'] == 'stdout']) and j['messages'][-1]['data']['result']['status'] == 'ok'"
ws "/v1/sandboxes/$sid/exec/ws" '{"type":"init","shell":"sleep 2"}' @200 '{"type":"stdin","data":"x"}'
check "exec/ws: stdin messages without stdin_stream: not_supported, 1008" \
    wj "[m['data'] for m in j['messages'] if m['data']['type'] == 'error'][0]['error']['code'] == 'not_supported' and j['close']['code'] == 1008"
ws "/v1/sandboxes/$sid/exec/ws" '{"type":"init","shell":"read a; echo \"[$a]\"; sleep 1","stdin_stream":true}' @200 '{"type":"stdin_close"}' @200 '{"type":"stdin","data":"late\n"}'
check "exec/ws: stdin after stdin_close: an error; the command saw the end" \
    wj "any(m['data']['type'] == 'error' and 'closed' in m['data']['error']['message'] for m in j['messages']) and j['messages'][-1]['data']['result']['stdout'] == '[]\n'"
ws /v1/sandboxes/lcl-0000000000000000/exec/ws '{"type":"init","argv":["true"]}'
check "exec/ws: an unknown sandbox: 404 before any upgrade" wj "j['status'] == 404"
req GET "/v1/sandboxes/$sid/exec/ws"
check "exec/ws: not a handshake: 400 in the error shape" err_is 400 invalid

# ---- frames no client library sends -----------------------------------------------------------

raw() { "$PY" "$top_srcdir/tests/server/ws-raw.py" "${hostport%:*}" "${hostport#*:}" "$@"; }
check "an unmasked client frame: close 1002" eval '[ "$(raw /api/v2/connect unmasked)" = "101 close 1002" ]'
check "a ping is answered with a pong of its payload" eval '[ "$(raw /api/v2/connect ping)" = "101 pong hello" ]'
check "reserved bits set: close 1002" eval '[ "$(raw /v1/sandboxes/$sid/exec/ws rsv)" = "101 close 1002" ]'
check "a control frame over 125 bytes: close 1002" eval '[ "$(raw /api/v2/connect bigcontrol)" = "101 close 1002" ]'
check "a continuation with nothing to continue: close 1002" eval '[ "$(raw /api/v2/connect cont)" = "101 close 1002" ]'
check "a text message that is not UTF-8: close 1007" eval '[ "$(raw /api/v2/connect badutf8)" = "101 close 1007" ]'

srv_stop TERM
check "SIGTERM: exit 0 after the sessions" eval '[ "$srv_rc" = 0 ]'
check "switched off ([server] compat_piston = false): /api/v2/connect is 404" \
    eval 'srv_start -o server.compat_piston=false && req GET /api/v2/connect && err_is 404 not_found'
done_testing
