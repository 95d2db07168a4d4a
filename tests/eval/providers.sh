#!/bin/sh
# tests/eval/providers.sh - sandbox errors are retried, then moved to the
# next provider, and one that persists is reported apart: never a pass,
# never a failure, never in pass@k
. "$top_srcdir/tests/eval/lib.sh"

plan 8

ds="$data/generic.jsonl"
cli eval --dataset "$ds" --canonical --provider evalfail --retries 1 --out "$tmp/r.jsonl" --json
check "every sandbox failing: exit 1" is_rc 1
check "persistent sandbox errors are counted apart, graded 0, pass@1 not computable" \
    jcheck "$tmp/out" 'j["counts"]["sandbox_error"] == 3 and j["graded"] == 0 and j["counts"]["passed"] == 0 and j["counts"]["failed"] == 0 and j["pass_at_k"]["1"] is None and len(j["sandbox_errors"]) == 3'
check "each was tried 1 + --retries times, its error kept (refused, or the circuit breaker open)" \
    python3 -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if all(x["attempts"] == 2 and x["verdict"] == "sandbox_error" and "evalfail" in x["reason"] and x["provider"] == "evalfail" for x in r) else 1)' "$tmp/r.jsonl"
cli eval --dataset "$ds" --canonical --provider evalfail --retries 0
check "text summary lists the sandbox errors apart" \
    eval 'is_rc 1 && out_has "sandbox errors (retried, not graded, not in pass@k):" && out_has "on evalfail after 1 attempts: evalfail: create number"'

cli eval --dataset "$ds" --canonical --provider evalfail,local --out "$tmp/r2.jsonl" --json
check "--provider evalfail,local: the next provider grades every sample" \
    eval 'is_rc 0 && jcheck "$tmp/out" "j[\"counts\"][\"passed\"] == 3 and j[\"counts\"][\"sandbox_error\"] == 0"'
check "... after 3 attempts on evalfail and 1 on local" \
    python3 -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if all(x["attempts"] == 4 and x["provider"] == "local" for x in r) else 1)' "$tmp/r2.jsonl"

cli eval --dataset "$ds" --canonical --provider evalflaky -j 1 --out "$tmp/r3.jsonl"
check "a flaky provider: each sample passes on its retry (2 attempts)" \
    eval 'is_rc 0 && python3 -c "import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if all(x[\"attempts\"] == 2 and x[\"verdict\"] == \"passed\" for x in r) else 1)" "$tmp/r3.jsonl"'

cli eval --dataset "$ds" --canonical --provider nosuch
check "an unknown provider is refused up front" \
    eval 'is_rc 125 && err_has "unknown provider '"'"'nosuch'"'"'"'

done_testing
