#!/usr/bin/env python3
"""tests/bench/judged-gen.py - a synthetic stdin/stdout dataset for the
judged-problems benchmark: N tasks (sum of a list, with a per-task
offset) of 10 tests each, in the judged format, and two samples per task,
one in Python and one in C++ (both right).

Usage: judged-gen.py [-n TASKS] DATASET SAMPLES
"""
import argparse, json, random

PY = """import sys
d = sys.stdin.read().split()
n = int(d[0])
print(sum(int(x) for x in d[1:1 + n]) + %d)
"""
CPP = """#include <cstdio>
int main() {
    long n, x, s = 0;
    if (scanf("%%ld", &n) != 1) return 1;
    for (long i = 0; i < n; i++) { if (scanf("%%ld", &x) != 1) return 1; s += x; }
    printf("%%ld\\n", s + %d);
}
"""

ap = argparse.ArgumentParser()
ap.add_argument("-n", type=int, default=100)
ap.add_argument("dataset")
ap.add_argument("samples")
a = ap.parse_args()
rnd = random.Random(20261127)
with open(a.dataset, "w") as ds, open(a.samples, "w") as sm:
    for t in range(a.n):
        tests = []
        for _ in range(10):
            v = [rnd.randint(-1000, 1000) for _ in range(rnd.randint(1, 50))]
            tests.append({"input": "%d\n%s\n" % (len(v), " ".join(map(str, v))),
                          "output": "%d\n" % (sum(v) + t)})
        ds.write(json.dumps({"task_id": "sum/%d" % t, "language": "python",
                             "tests": tests}) + "\n")
        sm.write(json.dumps({"task_id": "sum/%d" % t, "completion": PY % t}) + "\n")
        sm.write(json.dumps({"task_id": "sum/%d" % t, "language": "cpp",
                             "completion": CPP % t}) + "\n")
