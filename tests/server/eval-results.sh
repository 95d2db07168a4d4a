#!/bin/sh
# tests/server/eval-results.sh - POST /v1/eval with "results": the records
# of an earlier, partial run of the same evaluation (as `polysandbox eval
# --out` wrote them) are kept, only the other samples run, and the final
# pass@k is that of an uninterrupted run; results of another run are
# refused with a 400 naming the difference, malformed ones too, and the
# server goes on.
. "$top_srcdir/tests/server/lib.sh"
. "$top_srcdir/tests/server/jobs-lib.sh"

plan 16

mkdir -p "$tmp/evals"
"$PY" - "$tmp/evals" <<'PY'
import json, sys
d = sys.argv[1]
with open(d + "/ds.jsonl", "w") as f:
    for t in range(4):
        f.write(json.dumps({"task_id": "t/%d" % t, "language": "sh"}) + "\n")
with open(d + "/s.jsonl", "w") as f:
    for i in range(8):
        f.write(json.dumps({"task_id": "t/%d" % (i % 4),
                            "completion": "exit %d" % (i % 3 == 0)}) + "\n")
PY
args="-o server.state_dir=$state -o server.job_workers=2 -o server.eval_dir=$tmp/evals"

# the uninterrupted run, and the first 3 of its records as a partial one's;
# their time_ns marks them: a sample run again would get its own
cli eval --dataset "$tmp/evals/ds.jsonl" --samples "$tmp/evals/s.jsonl" -k 1,2 --json \
    --out "$tmp/full.jsonl"
cp "$tmp/out" "$tmp/full.json"
check "the uninterrupted run: 8 records" eval '[ "$(wc -l <"$tmp/full.jsonl")" -eq 8 ]'
"$PY" - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
recs = [json.loads(l) for l in open(d + "/full.jsonl")]
part = sorted(recs, key=lambda r: r["sample"])[:3]
for r in part:
    r["time_ns"] = 7
body = {"dataset": "ds.jsonl", "samples": "s.jsonl", "k": [1, 2]}
json.dump(dict(body, results=part), open(d + "/resume.json", "w"))
json.dump(dict(body, results="\n".join(json.dumps(r) for r in part)),
          open(d + "/resume-text.json", "w"))
json.dump(dict(body, results=part, timeout="5s"), open(d + "/timeout.json", "w"))
other = dict(body, results=part)
other["samples"] = [{"task_id": "t/%d" % (i % 4), "completion": "exit 2"} for i in range(8)]
json.dump(other, open(d + "/other.json", "w"))
torn = dict(body, results=[part[0], {"task_id": "t/1", "sample": 1}])
json.dump(torn, open(d + "/norecord.json", "w"))
json.dump(dict(body, results="{\"task_id\": \n"), open(d + "/badjson.json", "w"))
json.dump(dict(body, results=[part[0], 5]), open(d + "/notobject.json", "w"))
json.dump(dict(body, results=5), open(d + "/number.json", "w"))
PY

check "polysandboxd starts" srv_start $args
post /v1/eval "@$tmp/resume.json"
id=$(jq_out 'j["id"]')
check "POST /v1/eval with the partial run's records: 202" is 202
check "the job ends: succeeded" \
    eval 'wait_job "$id" && json_check "j[\"state\"] == \"succeeded\" and j[\"progress\"][\"done\"] == 8"'
req GET "/v1/jobs/$id?limit=0"
cp "$tmp/out" "$tmp/job.json"
check "... the engine resumed the 3 records and ran only the 5 others" \
    json_check_file "$tmp/job.json" "j['summary']['resumed'] == 3 and j['summary']['ran'] == 5"
check "... the 3 records are kept as they came (none of them ran again)" \
    "$PY" -c 'import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
kept = [r for r in recs if r["time_ns"] == 7]
sys.exit(0 if sorted(r["sample"] for r in kept) == [0, 1, 2] and len(recs) == 8 else 1)' \
    "$state/jobs/$id/results.jsonl"
check "... every sample has exactly one record" once "$state/jobs/$id/results.jsonl" sample 8
check "... pass@k and the verdicts equal the uninterrupted run's" \
    "$PY" -c 'import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
sys.exit(0 if a["pass_at_k"] == b["pass_at_k"] and a["summary"]["counts"] == b["counts"] else 1)' \
    "$tmp/job.json" "$tmp/full.json"

post /v1/eval "@$tmp/resume-text.json"
id2=$(jq_out 'j["id"]')
check "the records as JSON Lines in a string (no newline at its end): taken alike" \
    eval 'is 202 && wait_job "$id2" && req GET "/v1/jobs/$id2?limit=0" && json_check "j[\"summary\"][\"resumed\"] == 3 and j[\"pass_at_k\"] == json.load(open(\"$tmp/job.json\"))[\"pass_at_k\"]"'

jobs_before=$(ls "$state/jobs" | wc -l)
post /v1/eval "@$tmp/timeout.json"
check "another timeout: 400 naming the field, the line and the difference" \
    eval 'err_is 400 invalid && json_check "j[\"error\"][\"message\"].startswith(\"field '"'"'results'"'"', line 1: these results were graded with another timeout\") and \"5000000000 now\" in j[\"error\"][\"message\"]"'
post /v1/eval "@$tmp/other.json"
check "other samples: 400 naming them" \
    eval 'err_is 400 invalid && json_check "\"graded with other samples\" in j[\"error\"][\"message\"]"'
post /v1/eval "@$tmp/norecord.json"
check "a line that is no record: 400 naming its line" \
    eval 'err_is 400 invalid && json_check "j[\"error\"][\"message\"].startswith(\"field '"'"'results'"'"', line 2: not a result record\")"'
post /v1/eval "@$tmp/badjson.json"
check "bad JSON in the string: 400 naming the line" \
    eval 'err_is 400 invalid && json_check "j[\"error\"][\"message\"].startswith(\"field '"'"'results'"'"', line 1\")"'
post /v1/eval "@$tmp/notobject.json"
check "an item that is no object: 400 naming it" \
    eval 'err_is 400 invalid && json_check "\"results[1]\" in j[\"error\"][\"message\"]"'
post /v1/eval "@$tmp/number.json"
check "\"results\" that is neither: 400" err_is 400 invalid
check "the refusals made no job and the server goes on" \
    eval '[ "$(ls "$state/jobs" | wc -l)" -eq "$jobs_before" ] && req GET /v1/status && is 200'
srv_stop TERM
done_testing
