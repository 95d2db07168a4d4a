#!/usr/bin/env python3
"""tests/bench/eval-baseline.py - the reference harness's way of scoring.

The peer of `polysandbox eval` in tests/bench/eval.sh, written for this
project after the approach of the reference HumanEval harness: a thread
pool of N workers; for every sample a multiprocessing Manager (for the
result) and one fresh multiprocessing Process that chdirs into a new
temporary directory and exec()s prompt + completion + test +
check(entry_point) with a 3 s timer, output swallowed; the parent joins it
with a grace second and kills it if still alive.  No isolation: the code
runs as this user, on this host.

Usage: eval-baseline.py [-j N] [--timeout S] DATASET.jsonl
Prints one JSON object: wall seconds, samples, passed.
"""
import argparse
import concurrent.futures
import contextlib
import io
import json
import multiprocessing
import os
import signal
import sys
import tempfile
import time


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout()


def _execute(program, timeout, out):
    with tempfile.TemporaryDirectory() as d:
        os.chdir(d)
        sink = io.StringIO()
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                exec(program, {})
            out.append("passed")
        except _Timeout:
            out.append("timed out")
        except BaseException as e:  # SystemExit too, as the reference
            out.append("failed: %s" % type(e).__name__)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)


def check(task, completion, timeout):
    program = (task["prompt"] + completion + "\n" + task["test"] + "\n" +
               "check(%s)" % task["entry_point"])
    with multiprocessing.Manager() as manager:
        out = manager.list()
        p = multiprocessing.Process(target=_execute, args=(program, timeout, out))
        p.start()
        p.join(timeout=timeout + 1)
        if p.is_alive():
            p.kill()
        verdict = out[0] if out else "timed out"
    return verdict == "passed"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=3.0)
    ap.add_argument("dataset")
    a = ap.parse_args()
    tasks = [json.loads(l) for l in open(a.dataset) if l.strip()]
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as ex:
        futs = [ex.submit(check, t, t["canonical_solution"], a.timeout) for t in tasks]
        passed = sum(f.result() for f in futs)
    wall = time.monotonic() - t0
    json.dump({"wall_s": wall, "samples": len(tasks), "passed": passed}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
