#!/bin/sh
# tests/eval/evalplus-oracles.sh - EvalPlus's comparison rules: atol and
# the 1e-6 of float answers (flat, nested, kept for the rest of a phase,
# inf), the special oracles of HumanEval/32 and of MBPP+ tasks, and the
# MBPP+ inputs made tuples or complex numbers; every verdict agrees with
# what EvalPlus's rules say, worked out again by evalplus-ref.py outside
# any sandbox
. "$top_srcdir/tests/eval/lib.sh"

plan 9

ds="$data/evalplus-oracles.jsonl"
smp="$data/evalplus-oracles-samples.jsonl"

cli eval --dataset "$ds" --canonical -k 1 --timeout 10s
check "--canonical: every reference passes base and plus under its own oracle" \
    eval 'is_rc 0 && out_has "pass@1:     1.0000 (base; 15 of 15 tasks)"'

cli eval --dataset "$ds" --samples "$smp" --out "$tmp/r.jsonl" -k 1 --timeout 10s --json
check "samples: exit 0" is_rc 0
check "each verdict (base + extra) as the case was designed" verdicts_as_expected "$tmp/r.jsonl" "$smp"

python3 "$top_srcdir/tests/eval/evalplus-ref.py" "$ds" "$smp" >"$tmp/ref.jsonl"
agree() {
    python3 - "$tmp/r.jsonl" "$tmp/ref.jsonl" "$smp" <<'PY'
import json, sys
res = {json.loads(l)["sample"]: json.loads(l) for l in open(sys.argv[1])}
ref = [json.loads(l) for l in open(sys.argv[2])]
case = [json.loads(l)["case"] for l in open(sys.argv[3])]
bad = len(ref) != len(case) or len(res) != len(case)
for e in ref:
    r = res[e["sample"]]
    want = ("passed" if e["base"] else "failed", "passed" if e["base"] and e["plus"] else "failed")
    if (r.get("base_verdict"), r["verdict"]) != want:
        print("# sample %d (%s): base %s, base + extra %s; EvalPlus's rules say %s, %s" %
              ((e["sample"], case[e["sample"]], r.get("base_verdict"), r["verdict"]) + want))
        bad = True
sys.exit(1 if bad else 0)
PY
}
check "base and base + extra verdicts agree with EvalPlus's rules, worked out outside the sandbox" agree

rec() { grep "\"sample\":$1," "$tmp/r.jsonl"; }
check "find_zero: a root 1e-3 off fails on |poly(x)|, not on equality with the reference's root" \
    eval 'rec 2 | grep -q "find_zero returned [0-9.e-]*, |poly(x)| = [0-9.e-]* > atol 1e-06"'
check "a float answer sets atol 1e-6 for the rest of the phase: base passes, plus fails on input 1" \
    eval 'rec 10 | grep -q "\"base_verdict\":\"passed\"" &&
          rec 10 | grep -q "plus input 1 of 2: scale returned 100000001, expected 100000000"'

cli eval --dataset "$ds" --samples "$smp" --show-program 13
check "--show-program: the oracle is named in the runner (not_none for Mbpp/794)" \
    eval 'out_has "ORACLE = \"not_none\"" && out_has "ATOL = float(\"0\")" && out_has "SHAPE = None"'
cli eval --dataset "$ds" --samples "$smp" --show-program 3
check "--show-program: a task with no oracle of its own says None" out_has "ORACLE = None"
cli eval --dataset "$ds" --samples "$smp" --show-program 23
check "--show-program: Mbpp/616's inputs are made tuples" out_has "SHAPE = \"tuples\""

done_testing
