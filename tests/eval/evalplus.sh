#!/bin/sh
# tests/eval/evalplus.sh - HumanEval+ / MBPP+ rows (EvalPlus): expected
# outputs from the canonical solution run on base_input and plus_input in
# the sandbox, a verdict on "base" and one on "base + extra" per sample,
# atol for float answers, and pass@1 of each (hand-derived, and computed
# here again from the records)
. "$top_srcdir/tests/eval/lib.sh"

plan 16

ds="$data/evalplus.jsonl"
smp="$data/evalplus-samples.jsonl"

cli eval --dataset "$ds" --canonical -k 1 --timeout 10s
check "evalplus --canonical: the format is guessed, every reference passes base and plus" \
    eval 'is_rc 0 && out_has "passed 4" && out_has "pass@1:     1.0000 (base; 4 of 4 tasks)" &&
          out_has "pass@1:     1.0000 [1.0000, 1.0000] (base + extra; 4 of 4 tasks"'

cli eval --dataset "$ds" --samples "$smp" --out "$tmp/r.jsonl" -k 1 --timeout 10s --json
check "evalplus samples: exit 0" is_rc 0
cp "$tmp/out" "$tmp/sum.json"
check "each verdict (base + extra) as expected" verdicts_as_expected "$tmp/r.jsonl" "$smp"
check_base() {
    python3 - "$tmp/r.jsonl" "$smp" <<'PY'
import json, sys
res = {json.loads(l)["sample"]: json.loads(l) for l in open(sys.argv[1])}
bad = 0
for i, l in enumerate(open(sys.argv[2])):
    s = json.loads(l); r = res[i]
    if r.get("base_verdict") != s["expect_base"] or r.get("base_passed") != (s["expect_base"] == "passed"):
        print("# sample %d (%s): base %r, expected %s" % (i, s["case"], r.get("base_verdict"), s["expect_base"])); bad = 1
sys.exit(bad)
PY
}
check "each base verdict as expected (one sample passes base and fails plus)" check_base
check "the sample that fails plus only says so, naming the input" \
    eval 'grep "\"sample\":4," "$tmp/r.jsonl" | grep -q "passed the base inputs, failed on an extra (plus) input" &&
          grep "\"sample\":4," "$tmp/r.jsonl" | grep -q "plus input 1 of 4: is_prime returned True, expected False"'
check "atol: 3.14159 r^2 is within 1e-4 of pi r^2, 3.14 r^2 is not" \
    eval 'grep "\"sample\":2," "$tmp/r.jsonl" | grep -q "\"verdict\":\"passed\"" &&
          grep "\"sample\":3," "$tmp/r.jsonl" | grep -q "circle_area returned 3.14, expected 3.14159"'
check "hand-derived: pass@1 base = (1/3 + 1/2 + 2/3 + 1) / 4 = 0.625, base + extra = 13/24" \
    jcheck "$tmp/sum.json" '(j["format"] == "evalplus" and abs(j["pass_at_k_base"]["1"] - 0.625) < 1e-9 and
                             abs(j["pass_at_k"]["1"] - 13 / 24) < 1e-9)'
check_passk() {
    python3 - "$tmp/r.jsonl" "$tmp/sum.json" <<'PY'
import json, sys
res = [json.loads(l) for l in open(sys.argv[1])]; j = json.load(open(sys.argv[2]))
def mean_p1(key):
    per = {}
    for r in res:
        n, c = per.get(r["task_id"], (0, 0))
        per[r["task_id"]] = (n + 1, c + (r[key] == "passed"))
    return sum(c / n for n, c in per.values()) / len(per), per
base, pb = mean_p1("base_verdict"); plus, pp = mean_p1("verdict")
ok = abs(base - j["pass_at_k_base"]["1"]) < 1e-9 and abs(plus - j["pass_at_k"]["1"]) < 1e-9
ok = ok and all(t["c_base"] == pb[t["task_id"]][1] and t["c"] == pp[t["task_id"]][1] for t in j["tasks"])
sys.exit(0 if ok else 1)
PY
}
check "pass@1 base and base + extra, per task and overall, agree with the records" check_passk

cli eval --dataset "$ds" --samples "$smp" --out "$tmp/r.jsonl" -k 1 --timeout 10s --resume --json
check "--resume: nothing runs again, the base verdicts are read back" \
    eval 'is_rc 0 && jcheck "$tmp/out" "j[\"ran\"] == 0 and abs(j[\"pass_at_k_base\"][\"1\"] - 0.625) < 1e-9"'

cp "$tmp/r.jsonl" "$tmp/r2.jsonl"
cli compare --dataset "$ds" --samples "$smp" --from "$tmp/r.jsonl,$tmp/r2.jsonl" --report "$tmp/rep" -k 1
check "compare --from: the report has pass@1 base and base + extra, in Markdown and HTML" \
    eval 'is_rc 0 && grep -qF "| pass@1 base | 0.6250 | 0.6250 |" "$tmp/rep.md" &&
          grep -qF "| pass@1 base + extra | 0.5417 [" "$tmp/rep.md" &&
          grep -qF "pass@1 base</td><td class=\"passk\">0.6250<" "$tmp/rep.html"'

cli eval --dataset "$ds" --samples "$smp" --show-program 4
check "--show-program: prompt + completion, check.py the reference, the inputs in the runner, no marker" \
    eval 'out_has "def is_prime(n: int) -> bool:" && out_has "# ---- check.py" &&
          out_has "int(n ** 0.5) + 1" && out_has "_INPUTS = json.loads(\"[[[2],[3],[4],[9],[13]],[[1],[0],[25],[97]]]\")" &&
          ! grep -Eq "__polysandbox_eval_done__ (base )?[0-9a-f]{32}" "$tmp/out"'

# EvalPlus's own samples: "solution" (the whole program) wins over "completion"
printf '%s\n' '{"task_id": "HumanEval/0", "solution": "def add(a, b):\n    return a + b\n", "completion": "    return 0\n"}' \
    '{"task_id": "HumanEval/0", "solution": "def add(a, b):\n    return a * b\n"}' >"$tmp/sol.jsonl"
cli eval --dataset "$ds" --samples "$tmp/sol.jsonl" --allow-partial --out "$tmp/sol-r.jsonl" -k 1 --timeout 10s
check "a sample's \"solution\" is the whole program, as EvalPlus takes it" \
    eval 'is_rc 0 && grep "\"sample\":0," "$tmp/sol-r.jsonl" | grep -q "\"verdict\":\"passed\"" &&
          grep "\"sample\":1," "$tmp/sol-r.jsonl" | grep -q "add returned 2, expected 3"'

# hostile rows: a clear error naming FILE:LINE and the field, exit 65
row='{"task_id": "A", "prompt": "", "entry_point": "f", "canonical_solution": "def f(): pass\n"'
printf '%s, "base_input": [[1]], "plus_input": [[2]]}\n%s, "base_input": [1], "plus_input": []}\n' "$row" "$row" >"$tmp/bad.jsonl"
cli eval --dataset "$tmp/bad.jsonl" --canonical
check "an input that is not an argument list: FILE:LINE and the field" \
    eval 'rc_and_err 65 "bad.jsonl:2: item 0 of \"base_input\" is not a list of arguments (evalplus format)"'
printf '{"task_id": "A", "prompt": "", "entry_point": "f\\"); import os #", "canonical_solution": "", "base_input": [[1]], "plus_input": []}\n' >"$tmp/entry.jsonl"
cli eval --dataset "$tmp/entry.jsonl" --canonical
check "an entry_point that is no identifier is refused (it goes into the runner)" \
    eval 'rc_and_err 65 "entry.jsonl:1: field \"entry_point\" is not a Python identifier"'
printf '%s, "base_input": [[1]], "plus_input": [], "atol": -1}\n' "$row" >"$tmp/atol.jsonl"
cli eval --dataset "$tmp/atol.jsonl" --canonical
check "a negative atol is refused" eval 'rc_and_err 65 "atol.jsonl:1: field \"atol\" is not a finite number >= 0"'
python3 - "$tmp/quote.jsonl" <<'PY'
import json, sys
v = '"\\")\n\u00e9 #'     # a quote, a backslash, a newline, non-ASCII
ref = "def f(x):\n    assert x == %r\n    return len(x)\n" % v
json.dump({"task_id": "Q", "prompt": "", "entry_point": "f", "canonical_solution": ref,
           "base_input": [[v]], "plus_input": []}, open(sys.argv[1], "w"))
PY
cli eval --dataset "$tmp/quote.jsonl" --canonical --timeout 10s
check "quotes, backslashes and non-ASCII in an input reach the function intact" \
    eval 'is_rc 0 && out_has "passed 1"'

done_testing
