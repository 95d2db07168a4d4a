#!/bin/sh
# tests/server/jobs.sh - batch and eval jobs end to end: 202 and a
# Location, progress and per-item results with paging, the events in
# order (and resumed with Last-Event-ID), providers side by side with
# their agreement, pass@k equal to `polysandbox eval`'s, the output cap,
# cancel, Idempotency-Key, bad input as a 4xx naming the field, and a
# judged dataset with the judge's options.
. "$top_srcdir/tests/server/lib.sh"
. "$top_srcdir/tests/server/jobs-lib.sh"

plan 53

mkdir -p "$tmp/evals"
check "polysandboxd starts with jobs in a state directory of the test's" \
    srv_start -o server.state_dir="$state" -o server.workers=4 -o server.job_workers=2 \
    -o server.job_items_max=40 -o server.job_output_max=16 -o server.eval_dir="$tmp/evals"

# ---- a batch -------------------------------------------------------------------------

post /v1/batch '{"items":[{"shell":"echo one"},{"argv":["sh","-c","echo err >&2; exit 3"]},
  {"language":"python","code":"print(6*7)"},{"shell":"head -c 100 /dev/zero | tr \"\\\\0\" x"},
  {"shell":"printf \"a\\\\000b\""}]}'
check "POST /v1/batch: 202 with a Location and the job" \
    eval 'is 202 && [ "$(header Location)" = "/v1/jobs/$(jq_out "j[\"id\"]")" ] &&
          json_check "j[\"kind\"] == \"batch\" and j[\"progress\"][\"total\"] == 5 and j[\"state\"] in (\"queued\", \"running\")"'
batch=$(jq_out 'j["id"]')
check "the batch ends: succeeded, 5 done, counts by status" \
    eval 'wait_job "$batch" && json_check "j[\"state\"] == \"succeeded\" and j[\"progress\"] == {\"done\": 5, \"total\": 5, \"passed\": 4} and j[\"counts\"] == {\"ok\": 4, \"nonzero_exit\": 1} and j[\"rate\"] > 0 and j[\"finished_at\"]"'
req GET "/v1/jobs/$batch"
check "GET /v1/jobs/{id}: every item with its record, the /v1/run result" \
    json_check '[i["index"] for i in j["items"]] == [0, 1, 2, 3, 4] and all(i["state"] == "done" for i in j["items"]) and j["items"][0]["record"]["result"]["stdout"] == "one\n" and j["items"][1]["record"]["result"]["exit_code"] == 3 and j["items"][2]["record"]["result"]["stdout"] == "42\n" and j["next"] is None'
cp "$tmp/out" "$tmp/batch.json"
post /v1/run '{"shell":"echo one"}'
check "... a record's result has the keys of POST /v1/run's answer" \
    "$PY" -c 'import json, sys
a = json.load(open(sys.argv[1]))["items"][0]["record"]["result"]; b = json.load(open(sys.argv[2]))
sys.exit(0 if set(a) == set(b) else 1)' "$tmp/batch.json" "$tmp/out"
check "... output holding a NUL byte is kept as it is" \
    json_check_file "$tmp/batch.json" 'j["items"][4]["record"]["result"]["stdout"] == "a\x00b"'
check "... stdout is cut to job_output_max (16 bytes) and says so" \
    json_check_file "$tmp/batch.json" 'j["items"][3]["record"]["result"]["stdout"] == "x" * 16 and j["items"][3]["record"]["result"]["stdout_truncated"] is True and j["items"][0]["record"]["result"]["stdout_truncated"] is False'
req GET "/v1/jobs/$batch?offset=1&limit=2"
check "paging: offset 1, limit 2 gives items 1 and 2 and the next offset" \
    eval 'is 200 && json_check "[i[\"index\"] for i in j[\"items\"]] == [1, 2] and j[\"offset\"] == 1 and j[\"next\"] == 3"'
check "results.jsonl holds one line per run" \
    eval '[ "$(wc -l <"$state/jobs/$batch/results.jsonl")" = 5 ]'

# ---- events ------------------------------------------------------------------------------

events "$batch"
check "events: item and progress for each run, ids 1..5, then done" \
    json_check_file "$tmp/events" '[e["event"] for e in j] == ["item", "progress"] * 5 + ["done"] and [e["id"] for e in j] == ["1", "1", "2", "2", "3", "3", "4", "4", "5", "5", "6"]'
check "... progress in order, 1 to 5, and done is the job, succeeded" \
    json_check_file "$tmp/events" '[e["data"]["done"] for e in j if e["event"] == "progress"] == [1, 2, 3, 4, 5] and j[-1]["data"]["state"] == "succeeded" and sorted(e["data"]["index"] for e in j if e["event"] == "item") == [0, 1, 2, 3, 4]'
events "$batch" -H 'Last-Event-ID: 2'
check "Last-Event-ID: 2 resumes with event 3" \
    json_check_file "$tmp/events" '[e["id"] for e in j] == ["3", "3", "4", "4", "5", "5", "6"]'
events "$batch" "--get" "-d" "after=5"
check "?after=5: only done" json_check_file "$tmp/events" '[e["event"] for e in j] == ["done"]'
req GET "/v1/jobs/$batch/events" -H 'Last-Event-ID: x'
check "a Last-Event-ID that is not a number: 400" err_is 400 invalid

# An event stream opened before the job ends sees the items as they come.
post /v1/batch '{"items":[{"shell":"sleep 0.3; echo a"},{"shell":"sleep 0.6; echo b"}]}'
live=$(jq_out 'j["id"]')
events "$live"
check "a stream opened while the job runs: both items as they end, then done" \
    json_check_file "$tmp/events" '[e["event"] for e in j] == ["item", "progress", "item", "progress", "done"] and j[-1]["data"]["progress"]["done"] == 2'

# ---- providers side by side -----------------------------------------------------------------

post /v1/batch '{"items":[{"shell":"echo hi"},{"argv":["true"]},{"shell":"exit 3"}],"providers":["local","evalnop"]}'
side=$(jq_out 'j["id"]')
check "providers: each item on each provider (3 x 2 runs)" \
    eval 'is 202 && json_check "j[\"progress\"][\"total\"] == 6"'
wait_job "$side"
check "... per-provider counts and the items that differ (0 and 2)" \
    json_check '[p["provider"] for p in j["providers"]] == ["local", "evalnop"] and j["providers"][0]["counts"] == {"ok": 2, "nonzero_exit": 1} and j["providers"][1]["counts"] == {"ok": 3} and j["agreement"] == {"compared": 3, "agree": 1, "differ": [0, 2]}'
req GET "/v1/jobs/$side?limit=2"
check "... run i * 2 + p is item i on provider p" \
    json_check '[(i["record"]["item"], i["record"]["provider"]) for i in j["items"]] == [(0, "local"), (0, "evalnop")]'

# ---- eval -------------------------------------------------------------------------------------

"$PY" - "$tmp/evals" <<'PY'
import json, sys
d = sys.argv[1]
with open(d + "/ds.jsonl", "w") as f:
    for t in range(3):
        f.write(json.dumps({"task_id": "sh/%d" % t, "language": "sh",
                            "canonical_solution": "exit 0"}) + "\n")
with open(d + "/s.jsonl", "w") as f:
    for i in range(9):
        f.write(json.dumps({"task_id": "sh/%d" % (i % 3), "completion": "exit %d" % (i % 4 == 1)}) + "\n")
with open(d + "/bad.jsonl", "w") as f:
    f.write(json.dumps({"task_id": "sh/0", "completion": "exit 0"}) + "\n{not json\n")
with open(d + "/missing.jsonl", "w") as f:
    f.write(json.dumps({"task_id": "sh/0", "completion": "exit 0"}) + "\n")
    f.write(json.dumps({"task_id": "sh/9", "completion": "exit 0"}) + "\n")
PY
post /v1/eval '{"dataset":"ds.jsonl","samples":"s.jsonl","k":[1,2,3]}'
check "POST /v1/eval with files under eval_dir: 202 and a Location" \
    eval 'is 202 && [ -n "$(header Location)" ] && json_check "j[\"kind\"] == \"eval\" and j[\"progress\"][\"total\"] == 9"'
ev=$(jq_out 'j["id"]')
wait_job "$ev"
cp "$tmp/out" "$tmp/ev.json"
cli eval --dataset "$tmp/evals/ds.jsonl" --samples "$tmp/evals/s.jsonl" -k 1,2,3 --json --out "$tmp/cli.jsonl"
check "the eval ends with the verdicts and pass@k of 'polysandbox eval'" \
    "$PY" -c 'import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
sys.exit(0 if a["state"] == "succeeded" and a["pass_at_k"] == b["pass_at_k"] and a["summary"]["counts"] == b["counts"] and a["counts"] == {k: v for k, v in b["counts"].items() if v} else 1)' \
    "$tmp/ev.json" "$tmp/out"
req GET "/v1/jobs/$ev?limit=1"
check "... its items are the engine's records" \
    json_check 'j["items"][0]["record"]["sample"] == 0 and j["items"][0]["record"]["task_id"] == "sh/0" and j["items"][0]["record"]["verdict"] == "passed"'
post /v1/eval '{"dataset":[{"task_id":"a","language":"sh","canonical_solution":"exit 0"},{"task_id":"b","language":"sh","canonical_solution":"exit 1"}],"canonical":true,"k":[1]}'
can=$(jq_out 'j["id"]')
check "an inline dataset's canonical solutions: pass@1 0.5" \
    eval 'is 202 && wait_job "$can" && json_check "j[\"state\"] == \"succeeded\" and j[\"pass_at_k\"] == {\"1\": 0.5} and j[\"summary\"][\"dataset\"] == \"(inline)\""'

# ---- cancel ---------------------------------------------------------------------------------

post /v1/batch '{"items":[{"argv":["true"]},{"argv":["true"]},{"argv":["sleep","30"]},{"argv":["sleep","30"]},{"argv":["sleep","30"]}]}'
slow=$(jq_out 'j["id"]')
wait_done "$slow" 2
req DELETE "/v1/jobs/$slow"
check "DELETE a running job: 200, cancelled, the 2 finished items kept" \
    eval 'is 200 && json_check "j[\"state\"] == \"cancelled\" and j[\"progress\"][\"done\"] == 2"'
check "... the runs it stopped left no record and no sandbox" \
    eval '[ "$(wc -l <"$state/jobs/$slow/results.jsonl")" = 2 ] && [ -z "$(sandboxes_left)" ]'
req GET "/v1/jobs/$slow?limit=5"
check "... its items: 2 done, 3 pending" \
    json_check '[i["state"] for i in j["items"]] == ["done", "done", "pending", "pending", "pending"]'
req DELETE "/v1/jobs/$slow"
check "DELETE again: 200, the job as it was" \
    eval 'is 200 && json_check "j[\"state\"] == \"cancelled\" and j[\"progress\"][\"done\"] == 2"'
events "$slow"
check "a cancelled job's events end with done, cancelled" \
    json_check_file "$tmp/events" '[e["event"] for e in j] == ["item", "progress"] * 2 + ["done"] and j[-1]["data"]["state"] == "cancelled"'

# ---- the list -----------------------------------------------------------------------------------

req GET '/v1/jobs?kind=eval'
check "GET /v1/jobs?kind=eval: the two evals, newest first, without their summary" \
    eval 'is 200 && json_check "[x[\"id\"] for x in j[\"jobs\"]] == [\"$can\", \"$ev\"] and j[\"total\"] == 2 and \"summary\" not in j[\"jobs\"][0] and j[\"job_workers\"] == 2"'
req GET '/v1/jobs?state=cancelled&limit=1'
check "GET /v1/jobs?state=cancelled" \
    eval 'is 200 && json_check "[x[\"id\"] for x in j[\"jobs\"]] == [\"$slow\"] and j[\"next\"] is None"'

# ---- Idempotency-Key ---------------------------------------------------------------------------

key="jobs-test-$$"
post /v1/batch '{"items":[{"argv":["true"]}]}' -H "Idempotency-Key: $key"
first=$(jq_out 'j["id"]')
post /v1/batch '{"items":[{"argv":["true"]}]}' -H "Idempotency-Key: $key"
check "the same Idempotency-Key again: the same job and its Location, not a second one" \
    eval 'is 202 && [ "$(jq_out "j[\"id\"]")" = "$first" ] && [ "$(header Idempotent-Replayed)" = true ] && [ "$(header Location)" = "/v1/jobs/$first" ] && [ "$(ls "$state/jobs" | wc -l)" = 7 ]'
post /v1/batch '{"items":[{"argv":["false"]}]}' -H "Idempotency-Key: $key"
check "... with another body: 422" err_is 422 idempotency_mismatch

# ---- bad input ------------------------------------------------------------------------------------

post /v1/batch '{"items":[]}'
check "no items: 400 naming 'items'" eval 'err_is 400 invalid && json_check "\"items\" in j[\"error\"][\"message\"]"'
post /v1/batch '{"items":[{"argv":["true"]},{"argv":"true"}]}'
check "a bad item: 400 naming items[1] and its field" \
    eval 'err_is 400 invalid && json_check "\"items[1]\" in j[\"error\"][\"message\"] and \"argv\" in j[\"error\"][\"message\"]"'
post /v1/batch '{"items":[{"language":"cobol","code":"x"}]}'
check "an unknown language: 422 naming items[0]" \
    eval 'err_is 422 not_found && json_check "\"items[0]\" in j[\"error\"][\"message\"] and \"cobol\" in j[\"error\"][\"message\"]"'
post /v1/batch "{\"items\":[$("$PY" -c 'print(",".join(["{\"argv\":[\"true\"]}"] * 41))')]}"
check "41 items over job_items_max 40: 422 naming the setting" \
    eval 'err_is 422 limit && json_check "\"job_items_max\" in j[\"error\"][\"message\"] and \"items\" in j[\"error\"][\"message\"]"'
post /v1/batch '{"items":[{"argv":["true"]}],"providers":["nosuch"]}'
check "an unknown provider: 422 naming providers[0]" \
    eval 'err_is 422 not_found && json_check "\"providers[0]\" in j[\"error\"][\"message\"]"'
post /v1/eval '{"dataset":"nosuch.jsonl","samples":"s.jsonl"}'
check "an unknown dataset: 422 naming 'dataset'" \
    eval 'err_is 422 not_found && json_check "\"dataset\" in j[\"error\"][\"message\"] and \"nosuch.jsonl\" in j[\"error\"][\"message\"]"'
post /v1/eval '{"dataset":"/etc/passwd","samples":"s.jsonl"}'
check "a file outside eval_dir: 403 naming the setting" \
    eval 'err_is 403 forbidden && json_check "\"eval_dir\" in j[\"error\"][\"message\"]"'
ln -s /etc/hostname "$tmp/evals/link.jsonl"
post /v1/eval '{"dataset":"link.jsonl","samples":"s.jsonl"}'
check "a link in eval_dir to a file outside it: 403" err_is 403 forbidden
mkfifo "$tmp/evals/fifo.jsonl"
post /v1/eval '{"dataset":"fifo.jsonl","samples":"s.jsonl"}'
check "a FIFO in eval_dir: 422, not a regular file (and no wait for a writer)" \
    eval 'err_is 422 not_found && json_check "\"not a regular file\" in j[\"error\"][\"message\"]"'
post /v1/eval '{"dataset":"ds.jsonl","samples":"missing.jsonl"}'
check "samples of a task not in the dataset: 400 naming 'samples', line 2" \
    eval 'err_is 400 invalid && json_check "j[\"error\"][\"message\"].startswith(\"field '"'"'samples'"'"', line 2\") and \"sh/9\" in j[\"error\"][\"message\"]"'
post /v1/eval '{"dataset":"ds.jsonl","samples":"bad.jsonl"}'
check "malformed JSONL: 400 naming 'samples', line 2" \
    eval 'err_is 400 invalid && json_check "j[\"error\"][\"message\"].startswith(\"field '"'"'samples'"'"', line 2\")"'
post /v1/eval '{"dataset":"ds.jsonl","samples":"s.jsonl","canonical":true}'
check "samples and canonical together: 400" err_is 400 invalid
post /v1/eval '{"dataset":"ds.jsonl","samples":"s.jsonl","format":"nosuch"}'
check "an unknown format: 400 naming every format, the judged ones too" \
    eval 'err_is 400 invalid && json_check "\"nosuch\" in j[\"error\"][\"message\"] and \"livecodebench\" in j[\"error\"][\"message\"]"'
post /v1/eval '{"dataset":"ds.jsonl","samples":"s.jsonl","time_factor":-1}'
check "a negative time_factor: 400 naming it" \
    eval 'err_is 400 invalid && json_check "\"time_factor\" in j[\"error\"][\"message\"]"'
post /v1/eval '{"dataset":"ds.jsonl","samples":"s.jsonl","evalplus_time_factor":2000}'
check "an evalplus_time_factor past 1000: 400 naming it" \
    eval 'err_is 400 invalid && json_check "\"evalplus_time_factor\" in j[\"error\"][\"message\"]"'
check "no job was made for any of the refused requests" \
    eval '[ "$(ls "$state/jobs" | wc -l)" = 7 ]'
req GET /v1/jobs/j000000000000000000000000
check "GET of an unknown job: 404" err_is 404 not_found
req DELETE /v1/jobs/j000000000000000000000000
check "DELETE of an unknown job: 404" err_is 404 not_found
req GET '/v1/jobs?state=sleeping'
check "GET /v1/jobs?state=sleeping: 400" err_is 400 invalid

# ---- a judged dataset ---------------------------------------------------------------------------

# The second sample is wrong on the second of three tests: all_tests runs
# the third too (2 passed; without it the job would stop at 1).
post /v1/eval '{"format":"judged","all_tests":true,"min_time":"2s","time_factor":2,"compile_timeout":"20s","k":[1],
  "dataset":[{"task_id":"add","language":"sh","reference_time":0.1,"canonical_solution":"read a b; echo $((a + b))",
    "tests":[{"input":"1 2\n","output":"3\n"},{"input":"2 2\n","output":"4\n"},{"input":"5 1","output":"6"}]}],
  "samples":[{"task_id":"add","completion":"read a b; echo $((a + b))"},
    {"task_id":"add","completion":"read a b; [ $a = 2 ] && echo 0 || echo $((a + b))"}]}'
jd=$(jq_out 'j["id"]')
check "format judged: 202, and the job ends with pass@1 0.5" \
    eval 'is 202 && wait_job "$jd" && json_check "j[\"state\"] == \"succeeded\" and j[\"pass_at_k\"] == {\"1\": 0.5}"'
req GET "/v1/jobs/$jd"
check "... all_tests reached the judge: the wrong sample passed 2 of 3 tests" \
    json_check '[(i["record"]["verdict"], i["record"]["tests_passed"], i["record"]["tests_total"]) for i in j["items"]] == [("passed", 3, 3), ("failed", 2, 3)]'

srv_stop TERM
check "SIGTERM: exit 0" eval '[ "$srv_rc" = 0 ]'
done_testing
