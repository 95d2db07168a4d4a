#!/bin/sh
# tests/eval/json.sh - the shape of eval --json and of a results record
. "$top_srcdir/tests/eval/lib.sh"

plan 6

cli eval --dataset "$data/mbpp.jsonl" --samples "$data/mbpp-samples.jsonl" --out "$tmp/r.jsonl" -k 1,2 --json
check "--json: exit 0, one object on stdout" eval 'is_rc 0 && jcheck "$tmp/out" "isinstance(j, dict)"'
check "--json: every summary field" \
    jcheck "$tmp/out" 'all(k in j for k in ("dataset", "format", "samples", "done", "resumed", "ran", "counts", "graded", "pass_at_k", "pass_at_k_tasks", "tasks", "latency_ns", "wall_ns", "throughput_per_s", "sandbox_errors", "no_template", "results", "jobs"))'
check "--json: counts name every verdict and add up to done" \
    jcheck "$tmp/out" 'set(j["counts"]) == {"passed", "failed", "timeout", "cpu_limit", "memory_limit", "output_limit", "compile_error", "signal", "seccomp", "pids_limit", "sandbox_error", "no_template"} and sum(j["counts"].values()) == j["done"] == 6'
check "--json: pass_at_k has the -k values; tasks in dataset order with n, c" \
    jcheck "$tmp/out" 'sorted(j["pass_at_k"]) == ["1", "2"] and [t["task_id"] for t in j["tasks"]] == ["11", "12", "13"] and all(t["n"] == 2 for t in j["tasks"]) and j["format"] == "mbpp"'
check "--json: latency percentiles ordered, throughput positive" \
    jcheck "$tmp/out" '0 < j["latency_ns"]["p50"] <= j["latency_ns"]["p95"] <= j["latency_ns"]["p99"] and j["throughput_per_s"] > 0'
check "a record: every field, with types" \
    python3 -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    assert set(r) >= {"task_id", "sample", "verdict", "passed", "status", "exit_code", "signal", "time_ns", "provider", "attempts", "reason"}, r
    assert isinstance(r["task_id"], str) and isinstance(r["sample"], int) and isinstance(r["passed"], bool)
    assert r["provider"] == "local" and r["attempts"] == 1 and r["time_ns"] > 0
    assert (r["reason"] is None) == r["passed"]' "$tmp/r.jsonl"

done_testing
