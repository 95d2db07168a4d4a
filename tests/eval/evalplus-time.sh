#!/bin/sh
# tests/eval/evalplus-time.sh - EvalPlus's per-input time limits: the
# reference is timed on each input in the sample's run and the
# completion's call may take max(--evalplus-min-time, --evalplus-time-factor
# x that time); a right answer found far slower than the reference (a
# quadratic loop against a linear one) is a timeout naming the input and
# the times, a linear one passes, the factor changes the verdict, and the
# verdicts agree with EvalPlus's rule worked out by evalplus-ref.py
# outside any sandbox.  The floor is set low so that the slow inputs stay
# small; the slow samples are stopped at their limit, not run to the end.
. "$top_srcdir/tests/eval/lib.sh"

plan 11

ds="$data/evalplus-time.jsonl"
smp="$data/evalplus-time-samples.jsonl"
floor=0.1

cli eval --dataset "$ds" --samples "$smp" --out "$tmp/r.jsonl" -k 1 --timeout 60s --json \
    --evalplus-min-time ${floor}s
check "samples: exit 0" is_rc 0
check "the report's limits carry the floor and the factor (EvalPlus's 4 by default)" \
    jcheck "$tmp/out" 'j["meta"]["limits"]["evalplus_min_time_s"] == 0.1 and j["meta"]["limits"]["evalplus_time_factor"] == 4'
check "each verdict as the case was designed (linear passes, slower ones time out)" \
    verdicts_as_expected "$tmp/r.jsonl" "$smp"

rec() { grep "\"sample\":$1," "$tmp/r.jsonl"; }
check "the quadratic sample's reason names base input 3 of 3, its limit, the floor and the factor" \
    eval 'rec 1 | grep -q "base input 3 of 3: total ran past its limit 0.1s = max(min 0.1s, 4 x reference [0-9.e-]*s)"'
check "60 x the reference's work: base passed, timeout on plus input 1" \
    eval 'rec 2 | grep -q "\"base_verdict\":\"passed\"" &&
          rec 2 | grep -q "plus input 1 of 1: work ran past its limit"'

python3 "$top_srcdir/tests/eval/evalplus-ref.py" "$ds" "$smp" $floor 4 >"$tmp/ref.jsonl"
agree() {
    python3 - "$1" "$tmp/ref.jsonl" <<'PY'
import json, sys
res = {json.loads(l)["sample"]: json.loads(l) for l in open(sys.argv[1])}
bad = False
for l in open(sys.argv[2]):
    e = json.loads(l)
    r = res[e["sample"]]
    want = "timeout" if e["timeout"] else "passed" if e["base"] and e["plus"] else "failed"
    if r["verdict"] != want:
        print("# sample %d: %s; EvalPlus's rule says %s" % (e["sample"], r["verdict"], want))
        bad = True
sys.exit(1 if bad else 0)
PY
}
check "the verdicts agree with EvalPlus's rule, worked out outside the sandbox" agree "$tmp/r.jsonl"

# the same work is within 1000 x the reference's time
cli eval --dataset "$ds" --samples "$smp" --out "$tmp/k.jsonl" -k 1 --timeout 60s --json \
    --evalplus-min-time ${floor}s --evalplus-time-factor 1000
check "--evalplus-time-factor 1000: the 60 x sample passes" \
    eval 'grep "\"sample\":2," "$tmp/k.jsonl" | grep -q "\"verdict\":\"passed\""'
check "--evalplus-time-factor 1000: the linear sample still passes" \
    eval 'grep "\"sample\":0," "$tmp/k.jsonl" | grep -q "\"verdict\":\"passed\""'

cli eval --dataset "$ds" --samples "$smp" --out "$tmp/k.jsonl" -k 1 --timeout 60s \
    --evalplus-min-time ${floor}s --resume
check "--resume with another --evalplus-time-factor: exit 65, naming it" \
    eval 'is_rc 65 && err_has "graded with another evalplus_time_factor (\"evalplus_time_factor\": 1000.0 in the results, 4.0 now)"'

cli eval --dataset "$ds" --samples "$smp" --show-program 0 --evalplus-min-time 50ms \
    --evalplus-time-factor 2.5
check "--show-program: the runner carries the floor and the factor" \
    eval 'out_has "TMIN = float(\"0.050000000000000003\")" && out_has "TFACTOR = float(\"2.5\")"'
cli eval --dataset "$ds" --samples "$smp" --evalplus-time-factor -1
check "--evalplus-time-factor -1: a usage error" eval 'is_rc 2 && err_has "evalplus-time-factor"'

done_testing
