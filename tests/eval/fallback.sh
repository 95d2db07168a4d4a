#!/bin/sh
# tests/eval/fallback.sh - a sample that fails on one provider and is
# graded on the next: each record lists its attempts with the provider of
# each, and each attempt's sandbox, time, cost and sandbox error count on
# the provider that spent it (JSON, the text summary, Markdown), not on
# the one that graded it
. "$top_srcdir/tests/eval/lib.sh"

plan 8

ds="$data/generic.jsonl"
# evalfail refuses every create after 100 ms (its breaker may open first:
# then refused at once), each priced apart
cli -o provider.evalfail.fail_delay_ms=100 -o provider.evalfail.price_per_second=1 \
    -o provider.evalfail.price_per_sandbox=0.5 -o provider.local.price_per_second=2 \
    -o provider.local.price_per_sandbox=0.25 \
    eval --dataset "$ds" --canonical --provider evalfail,local --retries 1 \
    --out "$tmp/r.jsonl" --json
cp "$tmp/out" "$tmp/sum.json"
check "evalfail then local: every sample passes on local" \
    eval 'is_rc 0 && jcheck "$tmp/sum.json" "j[\"counts\"][\"passed\"] == 3"'

# attempts_ok: each record's attempt_log is 2 sandbox errors on evalfail,
# each with its reason, then a pass on local; their times add up.
check "each record lists its attempts: provider, verdict, reason, time" \
    python3 - "$tmp/r.jsonl" <<'PY'
import json, sys
bad = 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    log = r.get("attempt_log")
    want = [("evalfail", "sandbox_error"), ("evalfail", "sandbox_error"), ("local", "passed")]
    if (not log or [(a["provider"], a["verdict"]) for a in log] != want or
            r["attempts"] != 3 or r["provider"] != "local" or
            not all(a["reason"] and "evalfail" in a["reason"] for a in log[:2]) or
            log[2]["reason"] is not None or
            sum(a["time_ns"] for a in log) != r["attempts_time_ns"]):
        print("# %r" % r); bad = 1
sys.exit(bad)
PY

# usage_ok SUMMARY RESULTS: per provider, the sandboxes, sandbox errors,
# seconds and cost of its own attempts; the samples on the grading one.
usage_ok() {
    python3 - "$1" "$2" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
recs = [json.loads(l) for l in open(sys.argv[2])]
price = {"evalfail": (1.0, 0.5), "local": (2.0, 0.25)}
total = 0.0
bad = 0
for name, (pps, ppb) in price.items():
    tries = [a for r in recs for a in r["attempt_log"] if a["provider"] == name]
    secs = sum(a["time_ns"] for a in tries) / 1e9
    u = s["providers"][name]
    errs = sum(a["verdict"] == "sandbox_error" for a in tries)
    cost = ppb * len(tries) + pps * secs
    total += cost
    if (u["sandboxes"] != len(tries) or u["sandbox_errors"] != errs or
            abs(u["sandbox_seconds"] - secs) > 1e-6 or abs(u["cost"]["total"] - cost) > 1e-6 or
            u["samples"] != (3 if name == "local" else 0)):
        print("# %s: %r, expected %d sandboxes, %d errors, %g s, cost %g" %
              (name, u, len(tries), errs, secs, cost)); bad = 1
u = s["usage"]
if u["sandboxes"] != 9 or u["sandbox_errors"] != 6 or abs(u["cost"]["total"] - total) > 1e-6:
    print("# usage %r" % u); bad = 1
sys.exit(bad)
PY
}
check "JSON: each provider's sandboxes, sandbox errors, seconds and cost are its own" \
    usage_ok "$tmp/sum.json" "$tmp/r.jsonl"
check "... and evalfail's failed attempts took their 100 ms there, not on local" \
    jcheck "$tmp/sum.json" 'j["providers"]["evalfail"]["sandbox_seconds"] >= 0.1 and j["providers"]["local"]["sandbox_seconds"] < j["usage"]["sandbox_seconds"]'

cli -o provider.evalfail.price_per_second=1 -o provider.evalfail.price_per_sandbox=0.5 \
    -o provider.local.price_per_second=2 -o provider.local.price_per_sandbox=0.25 \
    eval --dataset "$ds" --canonical --provider evalfail,local --out "$tmp/r.jsonl" --resume
check "resumed, the text summary: each provider's sandboxes, errors, time and cost" \
    eval 'is_rc 0 && grep -q "^usage:      evalfail: CPU not measured (0 samples, 6 sandboxes, 6 sandbox errors, [0-9.]* [ms]* in sandboxes)" "$tmp/out" &&
          grep -q "^usage:      local: .*(3 samples, 3 sandboxes, [0-9.]* [ms]* in sandboxes)" "$tmp/out" &&
          grep -q "^cost:       evalfail: [0-9.e-]* USD, no sample graded there$" "$tmp/out" && grep -q "^cost:       local: " "$tmp/out"'

cp "$tmp/r.jsonl" "$tmp/s.jsonl"
cli -o provider.evalfail.price_per_second=1 -o provider.evalfail.price_per_sandbox=0.5 \
    compare --dataset "$ds" --canonical --from "$tmp/r.jsonl,$tmp/s.jsonl" --report "$tmp/cmp"
check "Markdown: a table of attempts per provider, with each one's errors and cost" \
    eval 'is_rc 0 && grep -q "^## Attempts per provider" "$tmp/cmp.md" &&
          grep -q "^| local | evalfail | 0 | 6 | 6 | [0-9.]* m*s | [0-9.e-]* USD |" "$tmp/cmp.md" &&
          grep -q "^| local | local | 3 | 3 | 0 | [0-9.]* m*s | n/a |" "$tmp/cmp.md" &&
          [ "$(grep -c "^| local#2 | " "$tmp/cmp.md")" = 2 ]'
check "HTML: the same table" \
    grep -q "<td class=\"l\">local</td><td>evalfail</td><td>0</td><td>6</td><td>6</td>" \
    "$tmp/cmp.html"

# the default provider's [core] fallback chain: sbx_run moves down it
# within one attempt, and that attempt's failed create is evalfail's
chain_ok() { # chain_ok RESULTS SUMMARY
    python3 - "$1" "$2" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
s = json.load(open(sys.argv[2]))
bad = 0
for r in recs:
    log = r["attempt_log"]
    want = [("evalfail", "sandbox_error"), ("local", "passed")]
    if ([(a["provider"], a["verdict"]) for a in log] != want or r["attempts"] != 2 or
            log[0]["time_ns"] < 1e8 or r["time_ns"] >= r["attempts_time_ns"] or
            sum(a["time_ns"] for a in log) != r["attempts_time_ns"]):
        print("# %r" % r); bad = 1
u = s["providers"]
if (u["evalfail"]["sandbox_errors"] != 3 or u["evalfail"]["sandbox_seconds"] < 0.3 or
        u["local"]["sandboxes"] != 3 or u["local"]["sandbox_errors"] != 0):
    print("# %r" % u); bad = 1
sys.exit(bad)
PY
}
cli -o core.default_provider=evalfail -o core.fallback=local \
    -o provider.evalfail.fail_delay_ms=100 eval --dataset "$ds" --canonical \
    --out "$tmp/c.jsonl" --json
check "[core] fallback: the create left behind on evalfail is an attempt there, its time too" \
    eval 'is_rc 0 && chain_ok "$tmp/c.jsonl" "$tmp/out"'

done_testing
