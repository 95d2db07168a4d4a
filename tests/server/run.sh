#!/bin/sh
# tests/server/run.sh - polysandboxd end to end: it starts on a free
# loopback port, POST /v1/run answers the object `polysandbox run --json`
# prints (the same keys, the same status), /healthz answers, errors come
# in the one shape with the status that fits, and SIGTERM stops it with 0.
. "$top_srcdir/tests/server/lib.sh"

plan 14

check "polysandboxd starts and logs the address it listens on" srv_start

req GET /healthz
check "GET /healthz: 200 {\"status\":\"ok\"}" eval 'is 200 && json_check "j == {\"status\": \"ok\"}"'

post /v1/run '{"language":"python","code":"print(6*7)"}'
check "POST /v1/run python: 200, stdout 42, status ok" \
    eval 'is 200 && json_check "j[\"stdout\"] == \"42\\n\" and j[\"status\"] == \"ok\" and j[\"exit_code\"] == 0 and j[\"provider\"] == \"local\""'
cp "$tmp/out" "$tmp/run.json"
"$PS" run --json --lang python -c 'print(6*7)' >"$tmp/cli.json" 2>"$tmp/err"
check "the result has exactly the keys of 'polysandbox run --json'" \
    "$PY" -c 'import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
sys.exit(0 if set(a) == set(b) and set(a["timings_ns"]) == set(b["timings_ns"]) and a["status"] == b["status"] else 1)' \
    "$tmp/run.json" "$tmp/cli.json"

post /v1/run '{"argv":["sh","-c","echo out; echo err >&2; exit 3"]}'
check "argv: 200, status nonzero_exit, exit 3, both streams" \
    eval 'is 200 && json_check "j[\"status\"] == \"nonzero_exit\" and j[\"exit_code\"] == 3 and j[\"stdout\"] == \"out\\n\" and j[\"stderr\"] == \"err\\n\""'

post /v1/run '{"shell":"printf \"\\377\\376\""}'
check "output that is not UTF-8 comes back as base64" \
    eval 'is 200 && json_check "j[\"stdout_encoding\"] == \"base64\" and base64.b64decode(j[\"stdout\"]) == b\"\\xff\\xfe\""'

post /v1/run '{"language":"python","code":"print(1)",'
check "truncated JSON: 400 bad_request naming where" \
    eval 'err_is 400 bad_request && json_check "\"line 1\" in j[\"error\"][\"message\"]"'

post /v1/run '{"language":"cobol","code":"x"}'
check "an unknown language: 422 naming it" \
    eval 'err_is 422 not_found && json_check "\"cobol\" in j[\"error\"][\"message\"]"'

post /v1/run '{"argv":"true"}'
check "a field of the wrong type: 400 naming the field" \
    eval 'err_is 400 invalid && json_check "\"argv\" in j[\"error\"][\"message\"]"'

req GET /v1/nothing
check "an unknown route: 404 in the error shape" err_is 404 not_found

req GET /v1/run
check "a wrong method: 405 with Allow: POST" eval 'err_is 405 method_not_allowed && [ "$(header Allow)" = POST ]'

req GET /healthz -H 'X-Request-ID: test-42'
check "X-Request-ID is echoed" eval '[ "$(header X-Request-ID)" = test-42 ]'
check "the log names the request id" grep -q '\[test-42\] GET /healthz 200' "$tmp/server.log"

srv_stop TERM
check "SIGTERM: exit 0" eval '[ "$srv_rc" = 0 ] || { sed "s/^/# /" "$tmp/server.log"; false; }'
done_testing
