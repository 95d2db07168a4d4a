#!/bin/sh
# tests/server/jobs-resume.sh - a server killed with kill -9 in the middle
# of an eval and a batch resumes both at its next start: from the records
# on disk, no sample and no run ran twice, the records written before the
# kill are kept as they were, the final pass@k is that of an uninterrupted
# `polysandbox eval`, the events go on with the numbers they had, and an
# Idempotency-Key still names the job it made.
. "$top_srcdir/tests/server/lib.sh"
. "$top_srcdir/tests/server/jobs-lib.sh"

plan 17

mkdir -p "$tmp/evals"
"$PY" - "$tmp/evals" <<'PY'
import json, sys
d = sys.argv[1]
with open(d + "/ds.jsonl", "w") as f:
    for t in range(4):
        f.write(json.dumps({"task_id": "slow/%d" % t, "language": "sh"}) + "\n")
with open(d + "/s.jsonl", "w") as f:
    for i in range(16):
        f.write(json.dumps({"task_id": "slow/%d" % (i % 4),
                            "completion": "sleep 0.2; exit %d" % (i % 3 == 0)}) + "\n")
PY
# (no blank in $tmp: mktemp's name)
args="-o server.state_dir=$state -o server.workers=2 -o server.job_workers=2 -o server.eval_dir=$tmp/evals"
check "polysandboxd starts" srv_start $args
key="resume-$$"
post /v1/eval '{"dataset":"ds.jsonl","samples":"s.jsonl","k":[1,2,4]}' -H "Idempotency-Key: $key"
ev=$(jq_out 'j["id"]')
post /v1/batch "{\"items\":[$("$PY" -c 'print(",".join("{\"shell\":\"sleep 0.2; echo %d\"}" % i for i in range(12)))')]}"
batch=$(jq_out 'j["id"]')
lines() { wc -l <"$state/jobs/$1/results.jsonl" 2>/dev/null || echo 0; }
i=0
while { [ "$(lines "$ev")" -lt 4 ] || [ "$(lines "$batch")" -lt 3 ]; } && [ $i -lt 300 ]; do
    sleep 0.05
    i=$((i + 1))
done
srv_stop KILL
ev_before=$(lines "$ev")
batch_before=$(lines "$batch")
check "killed mid-way: the eval has $ev_before of 16 records, the batch $batch_before of 12" \
    eval '[ "$ev_before" -ge 4 ] && [ "$ev_before" -lt 16 ] && [ "$batch_before" -ge 3 ] && [ "$batch_before" -lt 12 ]'
cp "$state/jobs/$ev/results.jsonl" "$tmp/ev-before.jsonl"
cp "$state/jobs/$batch/results.jsonl" "$tmp/batch-before.jsonl"
# a torn last line, as if the kill came in the middle of a write
printf '{"index":11,"item":11,"provider":null,"res' >>"$state/jobs/$batch/results.jsonl"

check "the server starts again and runs on both jobs" \
    eval 'srv_start $args && grep -q "2 jobs kept in .*, 2 to run on" "$tmp/server.log"'
events "$ev" -H "Last-Event-ID: $ev_before"
check "the eval's events go on after the last one before the kill" \
    json_check_file "$tmp/events" "[e['id'] for e in j if e['event'] == 'item'] == [str(n) for n in range($ev_before + 1, 17)] and j[-1]['event'] == 'done'"
check "the eval ends: succeeded" \
    eval 'wait_job "$ev" && json_check "j[\"state\"] == \"succeeded\" and j[\"progress\"][\"done\"] == 16"'
cp "$tmp/out" "$tmp/ev.json"
check "... the engine resumed the $ev_before records and ran only the rest" \
    json_check_file "$tmp/ev.json" "j['summary']['resumed'] == $ev_before and j['summary']['ran'] == 16 - $ev_before"
check "... every sample has exactly one record: none ran twice" \
    once "$state/jobs/$ev/results.jsonl" sample 16
check "... the records from before the kill are kept as they were" \
    eval 'head -n "$ev_before" "$state/jobs/$ev/results.jsonl" | cmp -s - "$tmp/ev-before.jsonl"'
cli eval --dataset "$tmp/evals/ds.jsonl" --samples "$tmp/evals/s.jsonl" -k 1,2,4 --json \
    --out "$tmp/cli.jsonl"
check "... pass@k and the verdicts equal an uninterrupted 'polysandbox eval'" \
    "$PY" -c 'import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
sys.exit(0 if a["pass_at_k"] == b["pass_at_k"] and a["summary"]["counts"] == b["counts"] else 1)' \
    "$tmp/ev.json" "$tmp/out"

check "the batch ends: succeeded" \
    eval 'wait_job "$batch" && json_check "j[\"state\"] == \"succeeded\" and j[\"counts\"] == {\"ok\": 12}"'
check "... every run has exactly one record: none ran twice" \
    once "$state/jobs/$batch/results.jsonl" index 12
check "... the records from before are kept, the torn line is gone" \
    eval 'head -n "$batch_before" "$state/jobs/$batch/results.jsonl" | cmp -s - "$tmp/batch-before.jsonl" && ! grep -q "res$" "$state/jobs/$batch/results.jsonl"'
req GET "/v1/jobs/$batch?limit=12"
check "... each run's output is its own" \
    json_check 'all(i["record"]["result"]["stdout"] == "%d\n" % i["index"] for i in j["items"])'

post /v1/eval '{"dataset":"ds.jsonl","samples":"s.jsonl","k":[1,2,4]}' -H "Idempotency-Key: $key"
check "the Idempotency-Key of before the kill: the same job again, no new one" \
    eval 'is 202 && [ "$(jq_out "j[\"id\"]")" = "$ev" ] && [ "$(ls "$state/jobs" | wc -l)" = 2 ]'

srv_stop TERM
check "SIGTERM: exit 0" eval '[ "$srv_rc" = 0 ]'
check "the server started again gives both jobs as they ended" \
    eval 'srv_start $args && grep -q "2 jobs kept in .*, 0 to run on" "$tmp/server.log" && req GET "/v1/jobs/$ev?limit=0" && json_check "j[\"state\"] == \"succeeded\" and j[\"pass_at_k\"] == json.load(open(\"$tmp/ev.json\"))[\"pass_at_k\"]"'
srv_stop TERM
check "only the sandboxes of the killed server's runs were left behind" \
    eval 'left=$(sandboxes_left); [ "$(echo $left | wc -w)" -le 4 ]'
# A killed server leaves the sandboxes it was running in, as a crash does.
[ -z "$left" ] || "$PS" destroy --provider local $left >/dev/null 2>&1
done_testing
