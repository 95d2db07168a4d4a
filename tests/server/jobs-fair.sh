#!/bin/sh
# tests/server/jobs-fair.sh - jobs share the server with interactive
# requests: while a 10,000-item batch runs, POST /v1/run answers at once
# (the batch is far from done when it does), the batch never has more
# than [server] job_workers items running, and a small job made after it
# ends long before it.
. "$top_srcdir/tests/server/lib.sh"
. "$top_srcdir/tests/server/jobs-lib.sh"

plan 8

check "polysandboxd starts: 2 workers, 1 job worker" \
    srv_start -o server.state_dir="$state" -o server.workers=2 -o server.job_workers=1
"$PY" -c 'import json
print(json.dumps({"items": [{"argv": ["sleep", "0.05"]}] * 10000}))' >"$tmp/big.json"
req POST /v1/batch -H 'Content-Type: application/json' --data-binary @"$tmp/big.json"
check "a batch of 10,000 runs: 202" eval 'is 202 && json_check "j[\"progress\"][\"total\"] == 10000"'
big=$(jq_out 'j["id"]')
wait_done "$big" 3

ok_runs=0
for n in 1 2 3 4 5 6; do
    post /v1/run '{"argv":["sh","-c","echo $((6*7))"]}'
    [ "$code" = 200 ] && json_check 'j["stdout"] == "42\n"' && ok_runs=$((ok_runs + 1))
done
check "6 POST /v1/run while the batch runs: each answered 200 with its output" \
    eval '[ "$ok_runs" = 6 ]'
req GET "/v1/jobs/$big?limit=0"
check "... and the batch is still running, far from done" \
    json_check 'j["state"] == "running" and j["progress"]["done"] < 1000'

post /v1/batch '{"items":[{"argv":["true"]},{"argv":["true"]},{"argv":["true"]}]}'
small=$(jq_out 'j["id"]')
check "a small batch made after it ends while the big one runs" \
    eval 'wait_job "$small" 60 && json_check "j[\"state\"] == \"succeeded\"" && req GET "/v1/jobs/$big?limit=0" && json_check "j[\"state\"] == \"running\""'

# job_workers holds: never more than one job item at a time
max=0
seen=0
for n in $(seq 1 30); do
    req GET /v1/jobs
    r=$(jq_out 'j["items_running"]')
    [ "$r" -gt "$max" ] && max=$r
    [ "$r" -ge 1 ] && seen=$((seen + 1))
    sleep 0.02
done
check "at most job_workers (1) items of jobs run at once ($max seen, $seen of 30 looks busy)" \
    eval '[ "$max" = 1 ] && [ "$seen" -gt 0 ]'

req DELETE "/v1/jobs/$big"
check "DELETE the big batch: cancelled, most of it never ran" \
    eval 'is 200 && json_check "j[\"state\"] == \"cancelled\" and j[\"progress\"][\"done\"] < 1000"'
srv_stop TERM
check "SIGTERM: exit 0, no sandbox left" eval '[ "$srv_rc" = 0 ] && [ -z "$(sandboxes_left)" ]'
done_testing
