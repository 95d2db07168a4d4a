#!/bin/sh
# tests/eval/multipl-e.sh - MultiPL-E rows (name, language, prompt, tests,
# ...): prompt + completion + tests run in the template of the row's
# language code and graded by exit status 0, as MultiPL-E's evaluator
# does; samples as its completions files ("completions": [...]) or ours;
# a code with no template is a verdict of its own (no_template: named,
# not run, out of pass@k, run again by --resume), while the others are
# graded; pass@k hand-derived and computed again here
. "$top_srcdir/tests/eval/lib.sh"

plan 14

ds="$data/multipl-e.jsonl"
smp="$data/multipl-e-samples.jsonl"
# by sample: py x4, sh x2, js x2, cpp x2, cs (no template)
expect='passed failed passed failed passed failed passed failed passed signal no_template'

# generous: bounds a hang under load, not MultiPL-E's limit
cli eval --dataset "$ds" --samples "$smp" --allow-partial --out "$tmp/r.jsonl" -k 1,2 \
    --timeout 60s --json
cp "$tmp/out" "$tmp/sum.json"
check "the format is guessed; a sample that could not run makes exit 1" \
    eval 'is_rc 1 && jcheck "$tmp/sum.json" "j[\"format\"] == \"multipl-e\""'
check_verdicts() {
    python3 - "$tmp/r.jsonl" "$expect" <<'PY'
import json, sys
res = {}
for l in open(sys.argv[1]):
    r = json.loads(l); res.setdefault(r["sample"], []).append(r)
want = sys.argv[2].split()
bad = len(res) != len(want)
for i, v in enumerate(want):
    got = [r["verdict"] for r in res.get(i, [])]
    if got != [v]:
        print("# sample %d: %s, expected %s" % (i, got, v)); bad = 1
sys.exit(bad)
PY
}
check "python, bash, node and C++: a right completion passes, a wrong one fails" check_verdicts
check "the failures are the tests': Python's assert, Node's assert, C++'s assert" \
    eval 'grep "\"sample\":1," "$tmp/r.jsonl" | grep -q AssertionError &&
          grep "\"sample\":7," "$tmp/r.jsonl" | grep -q ERR_ASSERTION &&
          grep "\"sample\":9," "$tmp/r.jsonl" | grep -q "Assertion .candidate((1), (2)) == (3). failed"'
check "a language with no template: its sample's record names the code, nothing ran" \
    python3 -c 'import json, sys
r = [r for r in map(json.loads, open(sys.argv[1])) if r["sample"] == 10][0]
sys.exit(0 if (r["verdict"], r["status"], r["attempts"], r["exit_code"], r["provider"]) ==
         ("no_template", None, 0, None, "") and
         "MultiPL-E language \"cs\" has no template here" in r["reason"] else 1)' "$tmp/r.jsonl"
check "the summary counts it apart: not graded, not a sandbox error, listed with its reason" \
    jcheck "$tmp/sum.json" '(j["counts"]["no_template"] == 1 and j["counts"]["sandbox_error"] == 0 and
                             j["graded"] == 10 and j["sandbox_errors"] == [] and
                             [(e["sample"], e["task_id"]) for e in j["no_template"]] ==
                                 [(10, "HumanEval_1_add_cs")] and
                             "has no template here" in j["no_template"][0]["error"])'
check "--resume runs it again (a template may have come), and the text summary lists it" \
    eval 'cli eval --dataset "$ds" --samples "$smp" --allow-partial --out "$tmp/r.jsonl" -k 1 --resume \
          --timeout 60s &&
          is_rc 1 && out_has "graded 10, sandbox errors 0, no template 1" &&
          out_has "no template (not run, not graded, not in pass@k):" &&
          out_has "  sample 10 (HumanEval_1_add_cs): MultiPL-E language \"cs\" has no template" &&
          [ "$(grep -c "\"sample\":10," "$tmp/r.jsonl")" -eq 2 ]'
check "hand-derived: pass@1 = 4 x 1/2 / 4 = 0.5, pass@2 = (5/6 + 1 + 1 + 1) / 4" \
    jcheck "$tmp/sum.json" '(abs(j["pass_at_k"]["1"] - 0.5) < 1e-9 and
                             abs(j["pass_at_k"]["2"] - (5 / 6 + 3) / 4) < 1e-9)'
check_passk() {
    python3 - "$tmp/r.jsonl" "$tmp/sum.json" <<'PY'
import json, sys
from math import comb
res = [json.loads(l) for l in open(sys.argv[1])]; j = json.load(open(sys.argv[2]))
per = {}
for r in res:
    if r["verdict"] not in ("sandbox_error", "no_template"):
        n, c = per.get(r["task_id"], (0, 0))
        per[r["task_id"]] = (n + 1, c + (r["verdict"] == "passed"))
ok = True
for k in (1, 2):
    est = [1 - comb(n - c, k) / comb(n, k) for n, c in per.values() if n >= k]
    ok = ok and abs(sum(est) / len(est) - j["pass_at_k"][str(k)]) < 1e-9
sys.exit(0 if ok and len(per) == 4 else 1)
PY
}
check "pass@1 and pass@2 agree with the records (the unbiased estimator)" check_passk

cli eval --dataset "$ds" --samples "$smp" --allow-partial --show-program 4
check "the program is prompt + completion + newline + tests, as MultiPL-E builds it" \
    python3 -c 'import json, sys
row = [json.loads(l) for l in open(sys.argv[1])][1]
prog = open(sys.argv[2]).read()
sys.exit(0 if prog.startswith(row["prompt"] + "    echo $(( $1 + $2 ))\n" + row["tests"]) else 1)' \
    "$ds" "$tmp/out"

# Java: -ea, or every assert is a no-op and the wrong completion passes
if command -v javac >/dev/null 2>&1; then
    cli eval --dataset "$ds" --samples "$data/multipl-e-java-samples.jsonl" --allow-partial \
        --out "$tmp/java.jsonl" -k 1 --timeout 60s
    check "Java: class Problem with assertions on: the wrong completion fails" \
        eval 'is_rc 0 && grep "\"sample\":0," "$tmp/java.jsonl" | grep -q "\"verdict\":\"passed\"" &&
              grep "\"sample\":1," "$tmp/java.jsonl" | grep -q "java.lang.AssertionError"'
else
    echo "ok $((tap_n += 1)) # SKIP javac is not installed (default-jdk-headless)"
fi

# hostile rows and samples: FILE:LINE and the field, exit 65
printf '{"name": "A", "language": "py", "prompt": "", "tests": ["assert 1"]}\n' >"$tmp/bad.jsonl"
cli eval --dataset "$tmp/bad.jsonl" --format multipl-e --canonical
check "tests that are not a string: FILE:LINE and the field" \
    eval 'rc_and_err 65 "bad.jsonl:1: field \"tests\" is not a string (multipl-e format)"'
cli eval --dataset "$ds" --canonical
check "--canonical: MultiPL-E rows have no reference solution, and the message says so" \
    eval 'rc_and_err 65 "has no reference solution (\"MultiPL-E rows carry none: give --samples\")"'
printf '{"name": "HumanEval_1_add", "completions": ["    return a + b\\n", 7]}\n' >"$tmp/s1.jsonl"
cli eval --dataset "$ds" --samples "$tmp/s1.jsonl" --allow-partial
check "a completion that is not a string: FILE:LINE and the item" \
    eval 'rc_and_err 65 "s1.jsonl:1: item 1 of \"completions\" is not a string"'
printf '{"name": "HumanEval_404", "completion": ""}\n' >"$tmp/s2.jsonl"
cli eval --dataset "$ds" --samples "$tmp/s2.jsonl" --allow-partial
check "a sample of a task not in the dataset: named" \
    eval 'rc_and_err 65 "s2.jsonl:1: unknown name \"HumanEval_404\""'

done_testing
