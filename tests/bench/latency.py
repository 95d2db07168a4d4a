#!/usr/bin/env python3
"""tests/bench/latency.py - median latency of commands, measured in one run.

Usage: latency.py [-n RUNS] [--save FILE] [--peer NAME ...] NAME=COMMAND ...
                  [--ratio A/B ...]

Runs the commands interleaved (so machine noise hits all alike), RUNS times
each after 3 warm-up runs, and prints per command the median, p10 and p90 in
milliseconds, then each requested ratio of medians.  A command that fails is
reported and makes the script exit 1.  This is a benchmark, not a test: it
prints figures and asserts nothing about speed.
"""
import shlex
import statistics
import subprocess
import sys
import time


def run_once(argv):
    t0 = time.perf_counter_ns()
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    t1 = time.perf_counter_ns()
    return t1 - t0, p.returncode, p.stderr


def main(args):
    runs = 50
    save = None
    peers = set()
    cmds, ratios = [], []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-n":
            runs = int(args[i + 1]); i += 2; continue
        if a == "--peer":
            peers.add(args[i + 1]); i += 2; continue
        if a == "--save":
            save = args[i + 1]; i += 2; continue
        if a == "--ratio":
            ratios.append(args[i + 1].split("/", 1)); i += 2; continue
        name, _, cmd = a.partition("=")
        cmds.append((name, shlex.split(cmd)))
        i += 1
    times = {name: [] for name, _ in cmds}
    bad, skipped = set(), set()
    for r in range(runs + 3):
        for name, argv in cmds:
            if name in bad or name in skipped:
                continue
            tries = 3 if name in peers else 1
            for _ in range(tries):
                ns, rc, err = run_once(argv)
                if rc == 0:
                    break
            if rc != 0:
                msg = err.decode(errors='replace').strip()[:300]
                if name in peers:
                    print(f"{name}: skipped: failed {tries} times in a row: exit {rc}: {msg}")
                    skipped.add(name)
                else:
                    print(f"{name}: exit {rc}: {msg}")
                    bad.add(name)
                continue
            if r >= 3:
                times[name].append(ns / 1e6)
    med = {}
    for name, _ in cmds:
        t = sorted(times[name])
        if not t or name in bad or name in skipped:
            continue
        med[name] = statistics.median(t)
        q = statistics.quantiles(t, n=10) if len(t) >= 10 else [t[0]] * 8 + [t[-1]]
        print(f"{name:>12}: median {med[name]:8.2f} ms   p10 {q[0]:8.2f}   p90 {q[-1]:8.2f}   ({len(t)} runs)")
    saved = [f"median.{name}={m:.3f}" for name, m in med.items()]
    for a, b in ratios:
        if a in med and b in med:
            print(f"ratio {a}/{b}: {med[a] / med[b]:.2f}")
            saved.append(f"ratio.{a}/{b}={med[a] / med[b]:.3f}")
    if save:
        with open(save, "a") as f:
            f.write("".join(s + "\n" for s in saved))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
