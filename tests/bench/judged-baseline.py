#!/usr/bin/env python3
"""tests/bench/judged-baseline.py - the plain judge the judged-problems
benchmark compares with: per sample a temporary directory, g++ (the same
flags as the cpp template) for C++, then each test through
subprocess.run with its stdin and a timeout, the output compared per line
with whitespace alike, up to the first failure; JOBS samples at a time
in threads.  No isolation at all.  Prints "passed N of M".

Usage: judged-baseline.py DATASET SAMPLES JOBS
"""
import concurrent.futures, json, os, subprocess, sys, tempfile

ds = {}
for l in open(sys.argv[1]):
    if l.strip():
        r = json.loads(l)
        ds[r["task_id"]] = r
samples = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
jobs = int(sys.argv[3])


def norm(s):
    lines = [l.split() for l in s.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def judge(s):
    t = ds[s["task_id"]]
    lang = s.get("language", t["language"])
    with tempfile.TemporaryDirectory() as d:
        if lang == "cpp":
            with open(os.path.join(d, "main.cpp"), "w") as f:
                f.write(s["completion"])
            c = subprocess.run(["g++", "-std=gnu++17", "-O2", "-pipe", "-o", "main", "main.cpp"],
                               cwd=d, capture_output=True, timeout=30)
            if c.returncode:
                return False
            argv = ["./main"]
        else:
            with open(os.path.join(d, "main.py"), "w") as f:
                f.write(s["completion"])
            argv = [sys.executable, "main.py"]
        for tc in t["tests"]:
            try:
                r = subprocess.run(argv, cwd=d, input=tc["input"].encode(),
                                   capture_output=True, timeout=3)
            except subprocess.TimeoutExpired:
                return False
            if r.returncode or norm(r.stdout.decode(errors="replace")) != norm(tc["output"]):
                return False
    return True


with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
    ok = sum(ex.map(judge, samples))
print("passed %d of %d" % (ok, len(samples)))
