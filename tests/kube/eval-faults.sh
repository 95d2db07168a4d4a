#!/bin/sh
# tests/kube/eval-faults.sh - an evaluation on the kubernetes provider
# (KUBE_EVAL_SAMPLES samples: 60 in make check, which keeps it under a
# minute; issue 22's 500 with KUBE_EVAL_SAMPLES=500, about seven
# minutes), once on a calm fake and once with 30% of the API's answers
# 5xx or 429 (with Retry-After), 10% of readiness watches and exec streams
# cut and 5% of watches answered 410 Gone: every sample is accounted for
# exactly once with the same verdict, pass@1 is the same, and no pod is
# left behind (issue 22's criterion: the fake's faults, the provider's
# error mapping and persistence where it must not leave things half done,
# the core's retries, the eval's retry of sandbox errors).
. "$top_srcdir/tests/kube/lib.sh"

plan 8
n=${KUBE_EVAL_SAMPLES:-60}
case $n in ''|*[!0-9]*|*[13579]) echo "KUBE_EVAL_SAMPLES=$n: an even number, please" >&2; exit 99;; esac
[ "$n" -ge 6 ] || { echo "KUBE_EVAL_SAMPLES=$n: 6 at least" >&2; exit 99; }

# Short waits: the core's backoff is not what is under test here.
KUBE_EXTRA_INI='[retry]
attempts = 10
base = 5ms
cap = 100ms
max_retry_after = 1s'
start_provider_fake --seed 3

# n/2 tasks, 2 samples each: the reference solution and, for every third
# task, a wrong one (else the reference again), so pass@1 is neither 0 nor 1.
"$PY" "$top_srcdir/tests/bench/eval-gen.py" -n $((n / 2)) "$tmp/data.jsonl" >/dev/null || exit 99
"$PY" - "$tmp/data.jsonl" >"$tmp/samples.jsonl" <<'EOF' || exit 99
import json, sys
for i, line in enumerate(open(sys.argv[1])):
    t = json.loads(line)
    print(json.dumps({"task_id": t["task_id"], "completion": t["canonical_solution"]}))
    wrong = "    return None\n" if i % 3 == 0 else t["canonical_solution"]
    print(json.dumps({"task_id": t["task_id"], "completion": wrong}))
EOF

run_eval() {
    timeout -k 5 900 "$PS" -q eval --provider kubernetes -j 4 --json --timeout 10s \
        --dataset "$tmp/data.jsonl" --samples "$tmp/samples.jsonl" --out "$1" \
        </dev/null >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

run_eval "$tmp/calm.jsonl"
cp "$tmp/out" "$tmp/calm.json"
check "$n samples scored on a calm fake" \
    eval 'is_rc 0 && json_check "j[\"done\"] == $n and j[\"graded\"] == $n and 0 < j[\"pass_at_k\"][\"1\"] < 1"'

faults '{"error_rate": 0.3, "status": 503, "drop_watch_rate": 0.1, "drop_exec_rate": 0.1, "gone_rate": 0.05, "seed": 5}' || exit 99
run_eval "$tmp/stormy.jsonl"
cp "$tmp/out" "$tmp/stormy.json"
check "the same $n samples under 30% 503s, cut streams and 410s: exit 0, all graded" \
    eval 'is_rc 0 && json_check "j[\"done\"] == $n and j[\"graded\"] == $n and not j[\"sandbox_errors\"]"'
check "the fake did inject them ($(fake_call GET /_fake/state >/dev/null; "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["injected"])' "$tmp/fake_answer"))" \
    fake_state 's["injected"]["errors"] >= '"$n"' * 3 // 5 and s["injected"]["drops"] >= '"$n"' // 50 and s["injected"]["exec_drops"] >= '"$n"' // 50'

same() {
    "$PY" - "$tmp/calm.json" "$tmp/stormy.json" "$tmp/calm.jsonl" "$tmp/stormy.jsonl" "$1" "$n" <<'EOF'
import json, sys
calm, stormy = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def records(p):
    out = {}
    for line in open(p):
        r = json.loads(line)
        out.setdefault(r["sample"], []).append(r)
    return out
rc, rs = records(sys.argv[3]), records(sys.argv[4])
what = sys.argv[5]
if what == "passk":
    ok = calm["pass_at_k"]["1"] == stormy["pass_at_k"]["1"] and calm["counts"] == stormy["counts"]
    print("# pass@1 %s vs %s" % (calm["pass_at_k"]["1"], stormy["pass_at_k"]["1"]))
elif what == "once":
    ok = sorted(rs) == list(range(int(sys.argv[6]))) and all(len(v) == 1 for v in rs.values())
elif what == "verdicts":
    diff = [s for s in rc if rc[s][0]["verdict"] != rs[s][0]["verdict"]]
    print("# differing samples: %s" % diff[:10])
    ok = not diff
elif what == "provider":
    ok = all(r[0]["provider"] == "kubernetes" for r in rs.values())
sys.exit(0 if ok else 1)
EOF
}
check "pass@1 and the verdict counts are the same with and without faults" same passk
check "every sample has exactly one record in the results file" same once
check "every sample got the same verdict" same verdicts
check "every sample ran on kubernetes" same provider
no_faults
no_pods() { [ "$(pods_left)" = 0 ]; }
check "no pod is left on the fake" no_pods
done_testing
