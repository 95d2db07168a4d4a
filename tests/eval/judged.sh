#!/bin/sh
# tests/eval/judged.sh - judged problems on the local provider: stdin in,
# stdout compared outside the sandbox; C++ compiled once per sample;
# trailing whitespace, floating-point answers, a right but slow program
# against the relative limit, a compile error in C++ and in Java, a
# program reading more input than given; the CodeContests, APPS and
# LiveCodeBench readers; a samples file that leaves tasks out.
. "$top_srcdir/tests/eval/lib.sh"

plan 21

ds="$data/judged.jsonl"
# T_min 1 s, 2 x the reference's 1 s: the slow sample (3.5 s) is over;
# the C++ sample that checks it runs the first test's binary in each
cli eval --dataset "$ds" --samples "$data/judged-samples.jsonl" --out "$tmp/j.jsonl" \
    --min-time 1s --time-factor 2 -k 1
check "judged samples: exit 0" is_rc 0
check "judged samples: each verdict as expected" \
    verdicts_as_expected "$tmp/j.jsonl" "$data/judged-samples.jsonl"
rec() { grep "\"sample\":$1," "$tmp/j.jsonl"; }
check "a wrong answer says which test, keeps the output; fail-fast stopped there" \
    eval 'rec 5 | grep -q "\"reason\":\"test 2 of 3: wrong answer\"" &&
          rec 5 | grep -q "\"output\":\"31\\\\n\"" && rec 5 | grep -q "\"tests_passed\":1,"'
check "the slow program's reason gives the relative limit" \
    eval 'rec 7 | grep -q "test 1 of 3: wall-clock limit reached (2 s = max(minimum 1 s, 2 x reference 1 s))"'
check "a compile error keeps the compiler's message" \
    eval 'rec 4 | grep -q "\"verdict\":\"compile_error\"" && rec 4 | grep -q "error: expected"'
check "reading past the input is a failure (EOFError), not a hang" \
    eval 'rec 6 | grep -q EOFError'
# Java: its own sample file, as javac is not everywhere (and takes seconds)
if command -v javac >/dev/null 2>&1; then
    cli eval --dataset "$ds" --samples "$data/judged-java-samples.jsonl" --allow-partial \
        --out "$tmp/java.jsonl" -k 1
    check "a Java compile error: its verdict, and javac's message naming the line" \
        eval 'is_rc 0 && verdicts_as_expected "$tmp/java.jsonl" "$data/judged-java-samples.jsonl" &&
              grep -q "Main.java:5: error: '"';'"' expected" "$tmp/java.jsonl"'
else
    echo "ok $((tap_n += 1)) # SKIP javac is not installed (default-jdk-headless)"
fi
check "every record holds the completion, the attempts, the provider, the output" \
    python3 -c 'import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
ss = [json.loads(l) for l in open(sys.argv[2])]
sys.exit(0 if all(r["completion"] == ss[r["sample"]]["completion"] and r["attempts"] == 1
                  and r["provider"] == "local" and "output" in r for r in rs) and
         [r["output"] for r in rs if r["sample"] == 0] == ["3\n"] else 1)' \
    "$tmp/j.jsonl" "$data/judged-samples.jsonl"

# --all-tests runs on after a failure
grep '"wrong on the second test only"' "$data/judged-samples.jsonl" >"$tmp/wrong.jsonl"
cli eval --dataset "$ds" --samples "$tmp/wrong.jsonl" --allow-partial --all-tests \
    --out "$tmp/all.jsonl" -k 1
check "--all-tests: the third test ran too (2 of 3 passed), the verdict is still failed" \
    eval 'grep -q "\"tests_passed\":2," "$tmp/all.jsonl" && grep -q "\"verdict\":\"failed\"" "$tmp/all.jsonl"'

# the slow program passes when the factor allows it: the limit is relative
grep '"right but slow' "$data/judged-samples.jsonl" >"$tmp/slow.jsonl"
cli eval --dataset "$ds" --samples "$tmp/slow.jsonl" --allow-partial --min-time 1s \
    --time-factor 8 --out "$tmp/slow-out.jsonl" -k 1
check "the slow program passes under 8 x the reference time" eval 'is_rc 0 && out_has "passed 1"'

# a samples file that leaves tasks out
cli eval --dataset "$ds" --samples "$tmp/slow.jsonl" --out "$tmp/p.jsonl"
check "missing tasks: 65, naming how many and which" \
    eval 'rc_and_err 65 "2 of the 3 tasks of" && err_has "\"avg\", \"exact\"" && err_has "--allow-partial"'

cli eval --dataset "$ds" --canonical
check "judged --canonical: every reference passes" eval 'is_rc 0 && out_has "passed 3"'

cli eval --dataset "$data/humaneval.jsonl" --canonical --out "$tmp/he.jsonl"
check "HumanEval records too: the completion, and an output without the harness's marker" \
    python3 -c 'import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if len(rs) == 4 and all(r["completion"] and "output" in r and
         "__polysandbox_eval_done__" not in (r["output"] or "") for r in rs) else 1)' "$tmp/he.jsonl"

# the readers
cli eval --dataset "$data/codecontests.jsonl" --canonical --out "$tmp/cc.jsonl"
check "CodeContests: public, private and generated tests; Python and C++ references pass" \
    eval 'is_rc 0 && out_has "passed 2" && grep -q "\"tests_total\":3" "$tmp/cc.jsonl" &&
          grep -q "include <cstdio>" "$tmp/cc.jsonl"'
cli eval --dataset "$data/apps.jsonl" --canonical --out "$tmp/apps.jsonl"
check "APPS: input_output in a string, outputs as lists of lines; references pass" \
    eval 'is_rc 0 && out_has "passed 2" && grep -q "\"task_id\":\"8\"" "$tmp/apps.jsonl"'
cli eval --dataset "$data/livecodebench.jsonl" --samples "$data/livecodebench-samples.jsonl" \
    --out "$tmp/lcb.jsonl"
check "LiveCodeBench: public and private tests" \
    eval 'is_rc 0 && verdicts_as_expected "$tmp/lcb.jsonl" "$data/livecodebench-samples.jsonl"'

# hostile or unsupported records: refused, naming the file, line and field
printf '{"problem_id": 1, "question": "q", "input_output": "{\\"fn_name\\": \\"f\\", \\"inputs\\": [], \\"outputs\\": []}"}\n' >"$tmp/fn.jsonl"
cli eval --dataset "$tmp/fn.jsonl" --format apps --canonical
check "APPS call-based problem: 65, saying so" eval 'rc_and_err 65 "fn.jsonl:1: a call-based problem"'
printf '{"question_id": "q", "public_test_cases": "[]", "private_test_cases": "eJyLjgUAARUAuQ=="}\n' >"$tmp/enc.jsonl"
cli eval --dataset "$tmp/enc.jsonl" --samples "$data/livecodebench-samples.jsonl"
check "LiveCodeBench encoded private tests: 65, saying how to go on" \
    eval 'rc_and_err 65 "enc.jsonl:1: field \"private_test_cases\" is encoded"'
printf '{"task_id": "t", "language": "python", "tests": [{"input": "1"}]}\n' >"$tmp/noout.jsonl"
cli eval --dataset "$tmp/noout.jsonl" --canonical
check "a test without an output: 65, naming it" eval 'rc_and_err 65 "noout.jsonl:1: test 0 of \"tests\" has no output"'
printf '{"task_id": "t", "language": "python", "tests": [{"input": "", "output": ""}], "compare": "fuzzy"}\n' >"$tmp/cmp.jsonl"
cli eval --dataset "$tmp/cmp.jsonl" --canonical
check "an unknown compare mode: 65, naming the field" eval 'rc_and_err 65 "cmp.jsonl:1: field \"compare\""'
cli eval --dataset "$ds" --canonical --time-factor -1
check "--time-factor -1: usage error" eval 'rc_and_err 2 "invalid value '"'"'-1'"'"' for --time-factor"'
