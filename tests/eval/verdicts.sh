#!/bin/sh
# tests/eval/verdicts.sh - verdicts of tricky samples in every dataset
# format: the reference solutions pass; an infinite loop, an exception, a
# wrong answer, a huge output, sys.exit(0) or os._exit(0) before the
# asserts, printing "passed", redefining check, ... do not.
. "$top_srcdir/tests/eval/lib.sh"

plan 17

he="$data/humaneval.jsonl"
cli eval --dataset "$he" --canonical
check "humaneval --canonical: every reference solution passes" \
    eval 'is_rc 0 && out_has "passed 4" && out_has "pass@1:     1.0000 [1.0000, 1.0000] (4 of 4 tasks; 95% bootstrap interval)"'
check "--canonical writes no results file by default" \
    eval '! out_has "results:"'

cli eval --dataset "$he" --samples "$data/humaneval-samples.jsonl" --out "$tmp/he.jsonl" --timeout 2s --memory 128M
check "humaneval samples: exit 0" is_rc 0
check "humaneval samples: each verdict as expected" \
    verdicts_as_expected "$tmp/he.jsonl" "$data/humaneval-samples.jsonl"
check "sys.exit(0) before the asserts is a failure that says why" \
    eval 'grep "\"sample\":5," "$tmp/he.jsonl" | grep -q "exited 0 before its tests completed"'
check "a failure keeps the end of stderr (the AssertionError)" \
    eval 'grep "\"sample\":1," "$tmp/he.jsonl" | grep -q AssertionError'

# the same dataset and samples gzip-compressed
gzip -c "$he" >"$tmp/he.jsonl.gz"
gzip -c "$data/humaneval-samples.jsonl" >"$tmp/samples.jsonl.gz"
cli eval --dataset "$tmp/he.jsonl.gz" --samples "$tmp/samples.jsonl.gz" --out "$tmp/gz.jsonl" --timeout 2s --memory 128M
check "humaneval .jsonl.gz: the same verdicts" \
    eval 'is_rc 0 && verdicts_as_expected "$tmp/gz.jsonl" "$data/humaneval-samples.jsonl"'
check "the default results file is SAMPLES_results.jsonl" \
    eval 'cli eval --dataset "$he" --canonical --out "$tmp/x.jsonl" && [ ! -e "$tmp/samples.jsonl.gz_results.jsonl" ] &&
          cli eval --dataset "$he" --samples "$tmp/samples.jsonl.gz" -k 1 --timeout 1s && [ -s "$tmp/samples.jsonl.gz_results.jsonl" ]'

# the program's layout: prompt, completion, test, check(entry_point), then the runner
cli eval --dataset "$he" --samples "$data/humaneval-samples.jsonl" --show-program 7
check "--show-program: prompt + completion + test + check(entry_point), then the runner, in that order" \
    python3 -c 'import sys
p = open(sys.argv[1]).read()
a = p.index("def add(a, b):"); b = p.index("def check(candidate):\n    pass"); c = p.index("METADATA")
d = p.index("\ncheck(add)\n"); e = p.index("exec(_code, {})")
sys.exit(0 if a < b < c < d < e and p.count("def check") == 2 else 1)' "$tmp/out"
check "--show-program: the runner holds no marker (it comes on its stdin)" \
    eval 'out_has "_m = _marker()" && ! grep -q "__polysandbox_eval_done__ [0-9a-fx]" "$tmp/out"'
check "--show-program: the runner runs program.py with exec in fresh globals" \
    eval 'out_has "# ---- main.py, the runner that runs program.py ----" && out_has "exec(_code, {})"'


# MBPP: integer task ids, test_setup_code, sys.exit(0) in the code
cli eval --dataset "$data/mbpp.jsonl" --canonical
check "mbpp --canonical: every reference solution passes" eval 'is_rc 0 && out_has "passed 3"'
cli eval --dataset "$data/mbpp.jsonl" --samples "$data/mbpp-samples.jsonl" --out "$tmp/mbpp.jsonl"
check "mbpp samples: each verdict as expected" \
    eval 'is_rc 0 && verdicts_as_expected "$tmp/mbpp.jsonl" "$data/mbpp-samples.jsonl"'
cli eval --dataset "$data/mbpp.jsonl" --samples "$data/mbpp-samples.jsonl" --show-program 2
check "mbpp program: setup code, the code, the asserts, then the runner" \
    python3 -c 'import sys
p = open(sys.argv[1]).read()
sys.exit(0 if p.index("PRICES = ") < p.index("def total") < p.index("assert total(PRICES)") < p.index("exec(_code, {})") else 1)' "$tmp/out"

# generic: sh, c (compiled), a test command with extra files
cli eval --dataset "$data/generic.jsonl" --canonical
check "generic --canonical: sh, c and a test command pass" eval 'is_rc 0 && out_has "passed 3"'
cli eval --dataset "$data/generic.jsonl" --samples "$data/generic-samples.jsonl" --out "$tmp/gen.jsonl" --timeout 2s
check "generic samples: each verdict as expected (compile error, signal, timeout)" \
    eval 'is_rc 0 && verdicts_as_expected "$tmp/gen.jsonl" "$data/generic-samples.jsonl"'
cli eval --dataset "$data/generic.jsonl" --samples "$data/generic-samples.jsonl" --show-program 0
check "generic program: prompt + completion + test, no runner" \
    eval 'out_has "# add A B" && out_has "add() {" && ! out_has "__polysandbox_eval_done__"'

done_testing
