#!/usr/bin/env python3
"""tests/lib/eval-faults.py - the pieces of the providers' eval-faults tests
(through tests/lib/eval-faults.sh, and the failover tests): an evaluation run
once calm and once under injected faults must account for every sample
once, with the same verdicts.

  eval-faults.py samples DATASET
      two samples per task to stdout: the reference solution and, for
      every third task, a wrong one (else the reference again), so pass@1
      is neither 0 nor 1
  eval-faults.py same CALM.json STORMY.json CALM.jsonl STORMY.jsonl WHAT PROVIDER N
      exit 0 when WHAT holds: passk (pass@1 and the verdict counts equal),
      once (every one of the N samples has exactly one record), verdicts
      (every sample got the same verdict), provider (every sample ran on
      PROVIDER)
"""
import json
import sys


def samples(dataset):
    for i, line in enumerate(open(dataset)):
        t = json.loads(line)
        print(json.dumps({"task_id": t["task_id"], "completion": t["canonical_solution"]}))
        wrong = "    return None\n" if i % 3 == 0 else t["canonical_solution"]
        print(json.dumps({"task_id": t["task_id"], "completion": wrong}))


def records(path):
    out = {}
    for line in open(path):
        r = json.loads(line)
        out.setdefault(r["sample"], []).append(r)
    return out


def same(calm_json, stormy_json, calm_jsonl, stormy_jsonl, what, provider, n):
    calm, stormy = json.load(open(calm_json)), json.load(open(stormy_json))
    rc, rs = records(calm_jsonl), records(stormy_jsonl)
    if what == "passk":
        print("# pass@1 %s vs %s" % (calm["pass_at_k"]["1"], stormy["pass_at_k"]["1"]))
        return calm["pass_at_k"]["1"] == stormy["pass_at_k"]["1"] and \
            calm["counts"] == stormy["counts"]
    if what == "once":
        return sorted(rs) == list(range(int(n))) and all(len(v) == 1 for v in rs.values())
    if what == "verdicts":
        diff = [s for s in rc if s not in rs or rc[s][0]["verdict"] != rs[s][0]["verdict"]]
        print("# differing samples: %s" % diff[:10])
        return not diff
    if what == "provider":
        return all(r[0]["provider"] == provider for r in rs.values())
    sys.exit("eval-faults.py: unknown check %r" % what)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "samples":
        samples(sys.argv[2])
    elif len(sys.argv) == 9 and sys.argv[1] == "same":
        sys.exit(0 if same(*sys.argv[2:]) else 1)
    else:
        sys.exit(__doc__)
