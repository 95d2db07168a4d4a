#!/bin/sh
# tests/eval/passk.sh - pass@k per task and overall against Python's
# math.comb, computed independently here
. "$top_srcdir/tests/eval/lib.sh"

plan 6

# tasks with (n, c): samples that exit 0 pass, exit 1 fail (sh template)
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
nc = {"t0": (10, 0), "t1": (10, 1), "t2": (10, 4), "t3": (10, 10), "t4": (3, 2), "t5": (7, 3)}
with open(d + "/ds.jsonl", "w") as f:
    for t in nc:
        f.write(json.dumps({"task_id": t, "language": "sh", "canonical_solution": "exit 0"}) + "\n")
with open(d + "/s.jsonl", "w") as f:
    for t, (n, c) in nc.items():
        for i in range(n):
            f.write(json.dumps({"task_id": t, "completion": "exit 0" if i < c else "exit 1"}) + "\n")
json.dump(nc, open(d + "/nc.json", "w"))
PY

cli eval --dataset "$tmp/ds.jsonl" --samples "$tmp/s.jsonl" --out "$tmp/r.jsonl" -k 1,2,5,10 --json
check "eval --json: exit 0" is_rc 0
cp "$tmp/out" "$tmp/sum.json"

check_passk() {
    python3 - "$tmp/sum.json" "$tmp/nc.json" <<'PY'
import json, sys
from math import comb
j = json.load(open(sys.argv[1])); nc = json.load(open(sys.argv[2]))
def pk(n, c, k):
    if k > n: return None
    return 1.0 - comb(n - c, k) / comb(n, k)
bad = 0
for t in j["tasks"]:
    n, c = nc[t["task_id"]]
    if (t["n"], t["c"]) != (n, c):
        print("# %s: n, c = %d, %d; expected %d, %d" % (t["task_id"], t["n"], t["c"], n, c)); bad = 1
    for k in (1, 2, 5, 10):
        want, got = pk(n, c, k), t["pass_at_k"][str(k)]
        if (want is None) != (got is None) or (want is not None and abs(want - got) > 1e-9):
            print("# %s pass@%d = %r, expected %r" % (t["task_id"], k, got, want)); bad = 1
for k in (1, 2, 5, 10):
    vals = [pk(n, c, k) for n, c in nc.values() if k <= n]
    want = sum(vals) / len(vals)
    got = j["pass_at_k"][str(k)]
    if abs(want - got) > 1e-9 or j["pass_at_k_tasks"][str(k)] != len(vals):
        print("# overall pass@%d = %r over %r tasks, expected %r over %d" % (k, got, j["pass_at_k_tasks"][str(k)], want, len(vals))); bad = 1
sys.exit(bad)
PY
}
check "pass@1,2,5,10 per task and overall agree with math.comb" check_passk
check "pass@10 leaves out the tasks with fewer than 10 samples (4 of 6)" \
    jcheck "$tmp/sum.json" 'j["pass_at_k_tasks"]["10"] == 4 and j["tasks"][4]["pass_at_k"]["5"] is None'
check "hand-derived: 1 pass in 10 gives pass@5 = 1/2; 2 in 3 gives pass@2 = 1" \
    jcheck "$tmp/sum.json" 'abs(j["tasks"][1]["pass_at_k"]["5"] - 0.5) < 1e-12 and j["tasks"][4]["pass_at_k"]["2"] == 1.0'

cli eval --dataset "$tmp/ds.jsonl" --samples "$tmp/s.jsonl" --out "$tmp/r.jsonl" --force -k 100 --json
check "pass@100 with no task that large: null, not a number" \
    eval 'is_rc 0 && jcheck "$tmp/out" "j[\"pass_at_k\"][\"100\"] is None and j[\"pass_at_k_tasks\"][\"100\"] == 0"'
cli eval --dataset "$tmp/ds.jsonl" --samples "$tmp/s.jsonl" --out "$tmp/r.jsonl" --force -k 100
check "pass@100 in text: not computable" out_has "pass@100:   not computable"

done_testing
