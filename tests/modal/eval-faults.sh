#!/bin/sh
# tests/modal/eval-faults.sh - an evaluation of MODAL_EVAL_SAMPLES samples
# (60 in make check, which keeps CI's time; 200 with MODAL_EVAL_SAMPLES=200)
# on the modal
# provider, once on a healthy fake and once with 30% of its gRPC calls
# failing UNAVAILABLE and 10% of its output streams cut mid-way: every
# sample is accounted for exactly once, with the same verdict, and pass@1
# is the same (end to end: the fake's wire faults, the provider's status
# mapping and stream resumption, the core's retries and the eval's own
# retry of sandbox errors).
. "$top_srcdir/tests/modal/lib.sh"

ns=${MODAL_EVAL_SAMPLES:-60}
case $ns in ''|*[!0-9]*|*[13579]) echo "MODAL_EVAL_SAMPLES=$ns: an even number, please" >&2; exit 99;; esac
[ "$ns" -ge 6 ] || { echo "MODAL_EVAL_SAMPLES=$ns: 6 at least" >&2; exit 99; }
plan 8

# Short waits: the core's backoff is not what is under test here.
MODAL_EXTRA_INI='[retry]
attempts = 10
base = 5ms
cap = 100ms'
start_fake --seed 3

# ns/2 tasks, 2 samples each: the reference solution and, for every third
# task, a wrong one (else the reference again), so pass@1 is neither 0 nor 1.
"$PY" "$top_srcdir/tests/bench/eval-gen.py" -n $((ns / 2)) "$tmp/data.jsonl" >/dev/null || exit 99
"$PY" "$top_srcdir/tests/lib/eval-faults.py" samples "$tmp/data.jsonl" >"$tmp/samples.jsonl" || exit 99

run_eval() {
    timeout -k 5 600 "$PS" -q eval --provider modal -j 2 --json --timeout 10s \
        --dataset "$tmp/data.jsonl" --samples "$tmp/samples.jsonl" --out "$1" \
        </dev/null >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

run_eval "$tmp/calm.jsonl"
cp "$tmp/out" "$tmp/calm.json"
check "$ns samples scored on a healthy fake" \
    eval 'is_rc 0 && json_check "j[\"done\"] == $ns and j[\"graded\"] == $ns and 0 < j[\"pass_at_k\"][\"1\"] < 1"'

faults '{"error_rate": 0.3, "code": "UNAVAILABLE", "drop_stream_rate": 0.1, "seed": 5}' || exit 99
run_eval "$tmp/stormy.jsonl"
cp "$tmp/out" "$tmp/stormy.json"
check "the same $ns samples under 30% UNAVAILABLE and 10% dropped streams: exit 0, all graded" \
    eval 'is_rc 0 && json_check "j[\"done\"] == $ns and j[\"graded\"] == $ns and not j[\"sandbox_errors\"]"'
fake_state 's["injected"]["errors"] >= 10 and s["injected"]["drops"] >= 1'
check "the fake did inject them ($(cat "$tmp/fake_answer" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["injected"])'))" \
    fake_state 's["injected"]["errors"] >= 10 and s["injected"]["drops"] >= 1'

same() {
    "$PY" "$top_srcdir/tests/lib/eval-faults.py" same "$tmp/calm.json" "$tmp/stormy.json" \
        "$tmp/calm.jsonl" "$tmp/stormy.jsonl" "$1" modal "$ns"
}
check "pass@1 and the verdict counts are the same with and without faults" same passk
check "every sample has exactly one record in the results file" same once
check "every sample got the same verdict" same verdicts
check "every sample ran on modal" same provider
check "no sandbox is left on the fake" fake_state 'not s["sandboxes"]'
done_testing
