#!/bin/sh
# tests/eval/site.sh - Python programs start without importing site
# (python -S, see SPEED in polysandbox-eval(1)), yet behave as with it:
# site's work is done on the first import the standard library does not
# satisfy, and exit and quit are site's.
. "$top_srcdir/tests/eval/lib.sh"

plan 5

python3 - "$tmp/s.jsonl" <<'PY'
import json, sys
add = "    return a + b\n"
cases = [
    # a stdlib-only program: site never imported
    add + "\n\nimport sys, json, collections\nassert 'site' not in sys.modules, sorted(sys.modules)\n",
    # a missed import brings site's paths, as if it had run at start-up
    add + "\n\nimport sys\ntry:\n    import polysandbox_no_such_module\nexcept ImportError:\n    pass\n"
          "assert 'site' in sys.modules\n"
          "assert any(p.endswith(('site-packages', 'dist-packages')) for p in sys.path), sys.path\n",
    # site's exit and quit: SystemExit(0) before the asserts, not a NameError
    "    return a - b\n\n\nexit(0)\n",
    "    return a - b\n\n\nquit()\n",
]
with open(sys.argv[1], "w") as f:
    for c in cases:
        f.write(json.dumps({"task_id": "Toy/0", "completion": c}) + "\n")
PY
cli eval --dataset "$data/humaneval.jsonl" --allow-partial --samples "$tmp/s.jsonl" --out "$tmp/r.jsonl"
check "the run: 2 passed, 2 failed" eval 'is_rc 0 && out_has "passed 2, failed 2"'
verdict() {
    python3 -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
r = {x["sample"]: x for x in r}[int(sys.argv[2])]
sys.exit(0 if r["verdict"] == sys.argv[3] and (len(sys.argv) < 5 or sys.argv[4] in (r["reason"] or "")) else 1)' \
        "$tmp/r.jsonl" "$@"
}
check "a stdlib-only program runs without site imported" verdict 0 passed
check "an import the standard library misses imports site first: its paths are there" \
    verdict 1 passed
check "exit(0) is site's exit: the program ends with status 0 before its tests" \
    verdict 2 failed "exited 0 before its tests completed"
check "quit() too" verdict 3 failed "exited 0 before its tests completed"

done_testing
