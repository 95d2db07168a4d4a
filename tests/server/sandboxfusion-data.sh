#!/bin/sh
# tests/server/sandboxfusion-data.sh - SandboxFusion's dataset routes:
# problems given in config.provided_data (HumanEval and MBPP rows),
# completions extracted as SandboxFusion does and judged by the engine of
# `polysandbox eval` (the same verdict as the command on the same files),
# prompts, ids, metrics, FastAPI's 422 for bad input, and the switch.
# The shapes follow SandboxFusion's models (SubmitRequest, EvalResult,
# TestConfig, Prompt): its client is on PyPI only.
. "$top_srcdir/tests/server/lib.sh"

plan 28

check "polysandboxd starts" srv_start
MB='{"task_id":2,"text":"Write a function to find the shared elements from the given two lists.","code":"def similar_elements(a, b):\n    return tuple(set(a) & set(b))","test_list":["assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))","assert set(similar_elements((1, 2, 3, 4),(5, 4, 3, 7))) == set((3, 4))"],"test_setup_code":""}'
MB3='{"task_id":3,"text":"Write a python function to identify non-prime numbers.","code":"","test_list":["assert is_not_prime(2) == False","assert is_not_prime(10) == True"],"test_setup_code":""}'
HE='{"task_id":"HumanEval/0","prompt":"def add(a, b):\n    \"\"\"Add two numbers.\"\"\"\n","canonical_solution":"    return a + b\n","test":"def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n","entry_point":"add"}'
submit() { post /submit "{\"dataset\":\"$1\",\"id\":$2,\"completion\":$3,\"config\":{\"provided_data\":$4${5:-}}}"; }
er='set(j) == {"id", "accepted", "extracted_code", "full_code", "test_code", "tests", "extracted_type", "extra"}'

# A client that goes away cancels its /submit, as on /v1/run: the run
# stops (a sleep no other test uses is gone) and the log says why.
secs=$((3000 + $$ % 5000))
client "$base/submit" -H 'Content-Type: application/json' -d "{\"dataset\":\"humaneval_python\",\"id\":\"HumanEval/0\",\"completion\":\"    import subprocess; subprocess.run(['sleep', '$secs'])\\n\",\"config\":{\"run_timeout\":120,\"provided_data\":$HE}}"
check "a /submit that runs sleep $secs is under way" within 20 sleeping "$secs"
leave
check "its client leaves: the sleep is gone within 5 s and the log says so" \
    eval 'gone_within 5 sleeping "$secs" && grep -q "the client closed its connection: cancelling" "$tmp/server.log"'

req GET /list_datasets
check "/list_datasets: the dataset ids judged from provided_data" \
    eval 'is 200 && json_check "j == [\"humaneval_python\", \"mbpp\"]"'
submit mbpp 2 '"Here it is:\n```python\ndef similar_elements(a, b):\n    return tuple(set(a) & set(b))\n```\n[DONE] trailing"' "$MB"
check "/submit mbpp: a fenced completion is extracted and accepted" \
    eval "is 200 && json_check '$er and j[\"accepted\"] is True and j[\"extracted_type\"] == \"fenced\" and j[\"extracted_code\"].startswith(\"def similar_elements\") and \"[DONE]\" not in j[\"extracted_code\"]'"
check "/submit: one test, its exec_info a RunCodeResponse (Success)" \
    json_check 'j["tests"][0]["passed"] is True and j["tests"][0]["exec_info"]["status"] == "Success" and j["tests"][0]["exec_info"]["run_result"]["status"] == "Finished" and j["tests"][0]["exec_info"]["run_result"]["return_code"] == 0'
check "/submit: full_code is the program with the tests, test_code the asserts" \
    json_check 'j["full_code"].startswith("def similar_elements") and "assert set(similar_elements" in j["full_code"] and j["test_code"].count("assert") == 2 and "main.py" not in j["full_code"]'
submit mbpp 2 '"def similar_elements(a, b):\n    return ()\nassert similar_elements(1, 2) == 3"' "$MB"
check "/submit mbpp: a wrong answer is not accepted; its own asserts are cut off" \
    json_check 'j["accepted"] is False and "assert similar_elements(1, 2)" not in j["extracted_code"] and j["tests"][0]["exec_info"]["status"] == "Failed" and "AssertionError" in j["tests"][0]["exec_info"]["run_result"]["stderr"] and j["extra"]["verdict"] == "failed"'
submit humaneval_python '"HumanEval/0"' '"    return a + b\n"' "$HE"
check "/submit humaneval: a completion of the prompt is accepted" \
    eval 'is 200 && json_check "j[\"accepted\"] is True and j[\"id\"] == \"HumanEval/0\" and j[\"full_code\"].startswith(\"def add(a, b):\")"'
submit humaneval_python '"HumanEval/0"' '"```python\ndef add(a, b):\n    return a - b\n```"' "$HE"
check "/submit humaneval: a fenced whole function that is wrong is not accepted" \
    json_check 'j["accepted"] is False and j["extracted_type"] == "fenced"'
submit humaneval_python '"HumanEval/0"' '"    while True: pass\n"' "$HE" ',"run_timeout":1'
check "/submit: a time limit (config.run_timeout) is TimeLimitExceeded" \
    json_check 'j["accepted"] is False and j["tests"][0]["exec_info"]["run_result"]["status"] == "TimeLimitExceeded" and j["extra"]["verdict"] == "timeout"'
submit humaneval_python '"HumanEval/0"' '"    import os; os._exit(0)\n"' "$HE"
check "/submit: a program that exits 0 before its tests ran is not accepted (the engine's marker)" \
    json_check 'j["accepted"] is False and j["tests"][0]["exec_info"]["run_result"]["return_code"] == 0'
submit mbpp 3 '"```python\ndef is_not_prime(n):\n    return n == 10\n```"' "[$MB,$MB3]"
check "/submit: the row of the id among several" json_check 'j["accepted"] is True and j["id"] == 3'
submit mbpp 3 '"```\ndef is_not_prime(n):\n    return n > 2"' "$MB3"
check "/submit: an unclosed fence is incomplete_fenced" json_check 'j["extracted_type"] == "incomplete_fenced" and j["accepted"] is True'

# The same verdicts as `polysandbox eval` on the same problem and samples.
printf '%s\n' "$HE" >"$tmp/he.jsonl"
printf '%s\n' '{"task_id":"HumanEval/0","completion":"    return a + b\n"}' \
    '{"task_id":"HumanEval/0","completion":"    return a * b\n"}' >"$tmp/samples.jsonl"
"$PS" eval --dataset "$tmp/he.jsonl" --samples "$tmp/samples.jsonl" --out "$tmp/results.jsonl" \
    >/dev/null 2>"$tmp/err"
submit humaneval_python '"HumanEval/0"' '"    return a * b\n"' "$HE"
cp "$tmp/out" "$tmp/wrong.json"
submit humaneval_python '"HumanEval/0"' '"    return a + b\n"' "$HE"
check "/submit and 'polysandbox eval' give the same verdicts" \
    "$PY" -c 'import json, sys
cli = [r["verdict"] for r in sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda r: r["sample"])]
srv = [json.load(open(sys.argv[2]))["extra"]["verdict"], json.load(open(sys.argv[3]))["extra"]["verdict"]]
sys.exit(0 if cli == ["passed", "failed"] and srv == cli else 1)' "$tmp/results.jsonl" "$tmp/out" "$tmp/wrong.json"

post /get_prompts "{\"dataset\":\"mbpp\",\"config\":{\"provided_data\":[$MB,$MB3]},\"offset\":1,\"limit\":5}"
check "/get_prompts: offset and limit, SandboxFusion's MBPP prompt" \
    eval 'is 200 && json_check "len(j) == 1 and j[0][\"id\"] == 3 and \"is_not_prime(10)\" in j[0][\"prompt\"] and j[0][\"labels\"] == {}"'
post /get_prompt_by_id "{\"dataset\":\"humaneval_python\",\"id\":\"HumanEval/0\",\"config\":{\"provided_data\":[$HE]}}"
check "/get_prompt_by_id: the HumanEval prompt" eval 'is 200 && json_check "j[\"prompt\"].startswith(\"def add(a, b):\") and j[\"id\"] == \"HumanEval/0\""'
post /list_ids "{\"dataset\":\"mbpp\",\"config\":{\"provided_data\":[$MB,$MB3]}}"
check "/list_ids" eval 'is 200 && json_check "j == [2, 3]"'
post /get_metrics '{"dataset":"mbpp","config":{},"results":[{"id":1,"accepted":true},{"id":1,"accepted":false},{"id":2,"accepted":true},{"id":2,"accepted":true}]}'
check "/get_metrics: pass@1 over the ids (the engine's estimator)" \
    eval 'is 200 && json_check "abs(j[\"pass@1\"] - 0.75) < 1e-9 and \"pass@5\" not in j"'

detail() { [ "$code" = 422 ] && json_check "set(j) == {'detail'} and j['detail'][0]['loc'] == $1 and j['detail'][0]['type'] == '$2'"; }
post /get_metrics_function '{"dataset":"mbpp","config":{}}'
check "/get_metrics_function: null for the kinds judged here, as SandboxFusion's" \
    eval 'is 200 && json_check "j == {\"function\": None}"'
post /get_metrics_function '{"dataset":"mbpp"}'
check "/get_metrics_function without config: 422 naming it" detail '["body", "config"]' missing
post /submit '{"dataset":"mbpp","id":2,"completion":"x","config":{}}'
check "/submit without provided_data: 422 naming config" detail '["body", "config"]' missing
post /submit "{\"dataset\":\"mbpp\",\"id\":2,\"config\":{\"provided_data\":$MB}}"
check "/submit without completion: 422" detail '["body", "completion"]' missing
post /submit "{\"dataset\":\"mbpp\",\"id\":9,\"completion\":\"x\",\"config\":{\"provided_data\":[$MB,$MB3]}}"
check "/submit of an id not in the rows: 422" detail '["body", "id"]' value_error
post /submit "{\"dataset\":\"humaneval_cpp\",\"id\":\"HumanEval/0\",\"completion\":\"x\",\"config\":{\"language\":\"cpp\",\"provided_data\":$HE}}"
check "/submit humaneval in C++: 422 (judged in python here)" detail '["body", "config"]' literal_error
post /submit '{"dataset":"humaneval_python","id":"X","completion":"x","config":{"provided_data":{"task_id":"X","prompt":"","test":""}}}'
check "/submit of a row missing a field: 422 naming it" \
    eval 'detail "[\"body\", \"config\"]" value_error && json_check "\"entry_point\" in j[\"detail\"][0][\"msg\"]"'
post /submit '{"dataset":'
check "/submit of malformed JSON: 422 json_invalid" detail '["body"]' json_invalid

srv_stop TERM
check "switched off ([server] compat_sandboxfusion = false): 404" \
    eval 'srv_start -o server.compat_sandboxfusion=false && post /submit "{}" && err_is 404 not_found'
done_testing
