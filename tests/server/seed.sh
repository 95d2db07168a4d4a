#!/bin/sh
# tests/server/seed.sh - the first sketch's routes: /run_single (one run
# on a chosen backend), /run_batch (runs on several backends side by side:
# timings per backend, agreement of status and output; local and docker,
# local alone when no Docker daemon can be had), /run_agent (steps in one
# stateful sandbox, destroyed or kept), their 4xx, and the switch.
. "$top_srcdir/tests/server/lib.sh"
. "$top_srcdir/tests/docker/lib.sh"
if docker_ready >"$tmp/docker.log" 2>&1; then
    backends='["local","docker"]'
else
    backends='["local"]'
    echo "# no Docker daemon ($(tail -n 1 "$tmp/docker.log")): /run_batch on local alone"
fi
multi() { [ "$backends" != '["local"]' ]; }

plan 28

check "polysandboxd starts" srv_start

post /run_single '{"backend":"local","language":"python","code":"print(6*7)"}'
check "/run_single: the result of /v1/run, on the backend named" \
    eval 'is 200 && json_check "j[\"stdout\"] == \"42\\n\" and j[\"provider\"] == \"local\" and \"timings_ns\" in j"'
post /run_single '{"backend":"nosuch","argv":["true"]}'
check "/run_single: an unknown backend is 422" err_is 422 not_found
post /run_single '{"backend":"local","provider":"local","argv":["true"]}'
check "/run_single: backend and provider both: 400" err_is 400 invalid

post /run_batch "{\"backends\":$backends,\"language\":\"python\",\"code\":\"print(sum(range(10)))\"}"
check "/run_batch: one run inline, a result per backend" \
    eval "is 200 && json_check 'j[\"backends\"] == $backends and len(j[\"runs\"]) == 1 and all(j[\"runs\"][0][\"results\"][b][\"stdout\"] == \"45\\n\" and j[\"runs\"][0][\"results\"][b][\"provider\"] == b for b in $backends)'"
check "/run_batch: timings per backend (runs, mean, median, p95)" \
    eval "json_check 'all(j[\"summary\"][b][\"runs\"] == 1 and j[\"summary\"][b][\"completed\"] == 1 and j[\"summary\"][b][\"statuses\"] == {\"ok\": 1} and j[\"summary\"][b][\"mean_ms\"] > 0 and j[\"summary\"][b][\"median_ms\"] == j[\"summary\"][b][\"max_ms\"] for b in $backends) and j[\"wall_ms\"] > 0'"
if multi; then
    check "/run_batch: the backends agree on status and output" \
        json_check 'j["runs"][0]["agree"] == {"compared": 2, "status": True, "output": True} and j["agreement"] == {"compared": 1, "status": 1.0, "output": 1.0}'
else
    check "/run_batch: with one backend there is nothing to compare" \
        json_check 'j["runs"][0]["agree"]["compared"] == 1 and j["runs"][0]["agree"]["status"] is None and j["agreement"]["compared"] == 0'
fi
post /run_batch "{\"backends\":$backends,\"runs\":[{\"shell\":\"exit 3\"},{\"shell\":\"cat /etc/hostname\"},{\"argv\":[\"nosuchcommand\"]}]}"
check "/run_batch: a list of runs, each on every backend, in order" \
    eval "is 200 && json_check 'len(j[\"runs\"]) == 3 and [r[\"index\"] for r in j[\"runs\"]] == [0, 1, 2] and all(j[\"runs\"][0][\"results\"][b][\"exit_code\"] == 3 for b in $backends) and all(j[\"runs\"][2][\"results\"][b][\"status\"] == \"not_found\" for b in $backends)'"
check "/run_batch: statuses counted per backend" \
    eval "json_check 'all(j[\"summary\"][b][\"statuses\"] == {\"nonzero_exit\": 1, \"ok\": 1, \"not_found\": 1} for b in $backends)'"
if multi; then
    check "/run_batch: outputs that differ (each sandbox's host name) are not in agreement" \
        json_check 'j["runs"][0]["agree"] == {"compared": 2, "status": True, "output": True} and j["runs"][1]["agree"] == {"compared": 2, "status": True, "output": False} and j["agreement"]["compared"] == 3 and j["agreement"]["status"] == 1.0 and j["agreement"]["output"] < 1'
else
    echo "ok $((tap_n + 1)) - /run_batch: disagreement between backends # SKIP one backend only"
    tap_n=$((tap_n + 1))
fi
post /run_batch '{"backends":"local","argv":["true"]}'
check "/run_batch: backends not a list: 400" err_is 400 invalid
post /run_batch '{"backends":["local","nosuch"],"argv":["true"]}'
check "/run_batch: an unknown backend: 422 naming it" eval 'err_is 422 not_found && json_check "\"nosuch\" in j[\"error\"][\"message\"]"'
post /run_batch '{"backends":["local"],"runs":[{"argv":["true"],"provider":"local"}]}'
check "/run_batch: a run naming its own provider: 400" err_is 400 invalid
post /run_batch '{"runs":[{"argv":"true"}]}'
check "/run_batch: a bad run: 400 naming the field" eval 'err_is 400 invalid && json_check "\"argv\" in j[\"error\"][\"message\"]"'
post /run_batch '{"runs":[]}'
check "/run_batch: no runs: 400" err_is 400 invalid

post /run_agent '{"steps":[{"write":{"path":"d/a.txt","content":"hello"}},{"exec":{"shell":"tr a-z A-Z < d/a.txt > b.txt; echo $((6*7)) > n"}},{"read":{"path":"b.txt"}},{"exec":{"language":"python","code":"print(int(open(\"n\").read()) + 1)"}},{"write":{"path":"bin","content_base64":"/wA="}},{"read":{"path":"bin"}},{"read":{"path":"nope"}}]}'
cp "$tmp/out" "$tmp/agent.json"
check "/run_agent: every step, in order, with its result" \
    eval 'is 200 && json_check "[s[\"type\"] for s in j[\"steps\"]] == [\"write\", \"exec\", \"read\", \"exec\", \"write\", \"read\", \"read\"] and j[\"completed\"] == j[\"total\"] == 7 and j[\"kept\"] is False"'
check "/run_agent: state carried between steps (files written, then read and used)" \
    json_check 'j["steps"][2]["content"] == "HELLO" and j["steps"][3]["result"]["stdout"] == "43\n" and j["steps"][0]["bytes"] == 5'
check "/run_agent: bytes that are not UTF-8 come back as base64" \
    json_check 'j["steps"][5]["content_base64"] == "/wA=" and j["steps"][5]["bytes"] == 2'
check "/run_agent: a step that fails says why, and the others go on" \
    json_check 'j["steps"][6]["error"]["code"] == "not_found" and "nope" in j["steps"][6]["error"]["message"]'
sid=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["sandbox_id"])' "$tmp/agent.json")
req GET "/v1/sandboxes/$sid"
check "/run_agent: the sandbox is destroyed at the end" err_is 404 not_found

post /run_agent '{"keep":true,"ttl":"5m","labels":{"agent":"t1"},"steps":[{"exec":{"shell":"echo kept > k"}}]}'
sid=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["sandbox_id"])' "$tmp/out")
check "/run_agent keep: kept, and an exec of /v1 finds its files" \
    eval 'json_check "j[\"kept\"] is True" && post "/v1/sandboxes/$sid/exec" "{\"shell\":\"cat k\"}" && is 200 && json_check "j[\"stdout\"] == \"kept\\n\""'
post /run_agent '{"keep":true,"labels":{"agent":"t1"},"get_or_create":true,"steps":[{"read":{"path":"k"}}]}'
check "/run_agent keep + get_or_create by labels: the same sandbox again" \
    eval "is 200 && json_check 'j[\"sandbox_id\"] == \"$sid\" and j[\"created\"] is False and j[\"steps\"][0][\"content\"] == \"kept\\n\"'"
req DELETE "/v1/sandboxes/$sid"
check "a kept sandbox is destroyed through /v1" is 200

post /run_agent '{"stop_on_error":true,"steps":[{"exec":{"shell":"exit 2"}},{"exec":{"shell":"echo never"}}]}'
check "/run_agent stop_on_error: stops after the first step that is not ok" \
    eval 'is 200 && json_check "j[\"completed\"] == 1 and j[\"total\"] == 2 and j[\"steps\"][0][\"result\"][\"exit_code\"] == 2"'
post /run_agent '{"steps":[{"run":{"shell":"true"}}]}'
check "/run_agent: a step of no known kind: 400 naming it" eval 'err_is 400 invalid && json_check "\"steps[0]\" in j[\"error\"][\"message\"]"'
post /run_agent '{"steps":[{"read":{"path":"../etc/passwd"}}]}'
check "/run_agent: a path with ..: 400" err_is 400 path
post /run_agent '{"ttl":"1m","steps":[{"exec":{"shell":"true"}}]}'
check "/run_agent: ttl without keep: 400" err_is 400 invalid

srv_stop TERM
check "switched off ([server] compat_seed = false): 404 on all three" \
    eval 'srv_start -o server.compat_seed=false && post /run_single "{}" && err_is 404 not_found && post /run_batch "{}" && err_is 404 not_found && post /run_agent "{}" && err_is 404 not_found'
done_testing
