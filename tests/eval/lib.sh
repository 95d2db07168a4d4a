# tests/eval/lib.sh - helpers of the evaluation tests (sourced)
#
# The CLI tests' TAP helpers, plus a configuration with the fake
# providers of tests/provider/evalfake.c next to the local one.
. "$top_srcdir/tests/cli/lib.sh"

POLYSANDBOX_CONFIG_DIR="$top_srcdir/tests/eval/config"
POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/local/.libs:$top_builddir/tests/eval/.libs"
export POLYSANDBOX_CONFIG_DIR POLYSANDBOX_PROVIDER_PATH
data="$top_srcdir/tests/eval/data"

# verdicts_as_expected RESULTS SAMPLES: every sample has exactly one
# record, with the verdict its "expect" field names.
verdicts_as_expected() {
    python3 - "$1" "$2" <<'PY'
import json, sys
res = [json.loads(l) for l in open(sys.argv[1])]
samples = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
seen = {}
for r in res:
    seen.setdefault(r["sample"], []).append(r)
bad = 0
for i, s in enumerate(samples):
    rs = seen.get(i, [])
    if len(rs) != 1:
        print("# sample %d (%s): %d records" % (i, s["case"], len(rs))); bad = 1
    elif rs[0]["verdict"] != s["expect"] or rs[0]["task_id"] != str(s["task_id"]):
        print("# sample %d (%s): %s, expected %s" % (i, s["case"], rs[0]["verdict"], s["expect"])); bad = 1
    elif (rs[0]["verdict"] == "passed") != rs[0]["passed"]:
        print("# sample %d: passed flag disagrees" % i); bad = 1
sys.exit(bad or len(res) != len(samples))
PY
}

# jcheck FILE PYTHON-EXPR: EXPR with j = the JSON object in FILE.
jcheck() {
    python3 -c 'import json, sys, math
j = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}

# same_records A B [SKIP_TASK]: the records of A and B agree, sample by
# sample, on everything but times and usage (the task SKIP_TASK left out)
same_records() {
    python3 - "$@" <<'PY'
import json, sys
keys = ("task_id", "verdict", "passed", "reason", "tests_passed", "tests_total", "status",
        "exit_code", "signal", "output", "provider", "attempts")
skip = sys.argv[3] if len(sys.argv) > 3 else None
def load(p):
    return {r["sample"]: r for r in map(json.loads, open(p)) if r["task_id"] != skip}
a, b = load(sys.argv[1]), load(sys.argv[2])
bad = sorted(a) != sorted(b) or not a
for s in sorted(a):
    if s in b and any(a[s].get(k) != b[s].get(k) for k in keys):
        print("# sample %d: %s / %s" % (s, {k: a[s].get(k) for k in keys},
                                         {k: b[s].get(k) for k in keys}))
        bad = True
sys.exit(1 if bad else 0)
PY
}

# runner_both_ways NAME DATASET SAMPLES: five checks of a judged runner
# (NAME, as the checks name it) against --exec-per-test, fail-fast and
# --all-tests: every verdict as SAMPLES expects; with --exec-per-test the
# task "runner" (whose second test prints "runner" only under the runner)
# fails its second test; the same records both ways (that task left out);
# sample 2 (failing its second test only) passed 3 of 4 with --all-tests.
# Leaves $tmp/one.jsonl, each, one-all and each-all.
runner_both_ways() {
    _rb_smp=$3          # check runs its eval words in a function of its own
    cli eval --dataset "$2" --samples "$3" --out "$tmp/one.jsonl" --timeout 1s -k 1
    check "through the $1: every verdict as expected (the $1 was there)" \
        eval 'is_rc 0 && verdicts_as_expected "$tmp/one.jsonl" "$_rb_smp"'
    cli eval --dataset "$2" --samples "$3" --out "$tmp/each.jsonl" --timeout 1s -k 1 \
        --exec-per-test
    check "--exec-per-test: the $1 is not used" \
        eval 'is_rc 0 && grep "\"task_id\":\"runner\"" "$tmp/each.jsonl" |
              grep -q "\"reason\":\"test 2 of 2: wrong answer\""'
    check "fail-fast: the same records through the $1 as with an exec per test" \
        same_records "$tmp/one.jsonl" "$tmp/each.jsonl" runner
    cli eval --dataset "$2" --samples "$3" --out "$tmp/one-all.jsonl" --timeout 1s -k 1 \
        --all-tests
    cli eval --dataset "$2" --samples "$3" --out "$tmp/each-all.jsonl" --timeout 1s -k 1 \
        --all-tests --exec-per-test
    check "--all-tests: the same records both ways ($1)" \
        same_records "$tmp/one-all.jsonl" "$tmp/each-all.jsonl" runner
    check "--all-tests: the tests after a failed second test still ran (3 of 4 passed)" \
        eval 'grep "\"sample\":2," "$tmp/one-all.jsonl" | grep -q "\"tests_passed\":3,"'
}
