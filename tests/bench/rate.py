#!/usr/bin/env python3
"""tests/bench/rate.py - sustained runs per second of commands.

Usage: rate.py [-n RUNS] [-j WORKERS] [--save FILE] [--peer NAME ...]
               NAME=COMMAND ...

Runs each command RUNS times in all (after 5 warm-up runs), shared by
WORKERS workers that each start the next run as soon as theirs ends, and
prints runs per second.  Commands are measured one after the other, in
the same run.  A command that fails is reported and makes the script
exit 1, unless it is a --peer: a peer's failed run is retried (twice),
and a peer that keeps failing is reported as skipped.  --save appends "rate.NAME.jWORKERS=VALUE" lines to FILE for the
summary.  A benchmark: it prints figures and asserts nothing about speed.
"""
import shlex
import subprocess
import sys
import threading
import time


def run_once(argv, tries=1):
    for _ in range(tries):
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        if p.returncode == 0:
            break
    return p.returncode, p.stderr


def measure(argv, runs, workers, tries):
    """Runs per second, or an error message."""
    for _ in range(5):
        rc, err = run_once(argv, tries)
        if rc != 0:
            return None, f"exit {rc}: {err.decode(errors='replace').strip()[:300]}"
    lock = threading.Lock()
    left = [runs]
    errors = []

    def work():
        while True:
            with lock:
                if left[0] <= 0 or errors:
                    return
                left[0] -= 1
            rc, err = run_once(argv, tries)
            if rc != 0:
                with lock:
                    errors.append(f"exit {rc}: {err.decode(errors='replace').strip()[:300]}")
                return

    t0 = time.perf_counter()
    threads = [threading.Thread(target=work) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    secs = time.perf_counter() - t0
    if errors:
        return None, errors[0]
    return runs / secs, None


def main(args):
    runs, workers, save = 500, 1, None
    peers = set()
    cmds = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-n", "-j", "--save", "--peer") and i + 1 < len(args):
            if a == "--peer":
                peers.add(args[i + 1])
            elif a == "-n":
                runs = int(args[i + 1])
            elif a == "-j":
                workers = int(args[i + 1])
            else:
                save = args[i + 1]
            i += 2
            continue
        name, _, cmd = a.partition("=")
        if not name or not cmd:
            print(f"rate.py: '{a}': give NAME=COMMAND", file=sys.stderr)
            return 2
        cmds.append((name, shlex.split(cmd)))
        i += 1
    if runs < 1 or workers < 1:
        print("rate.py: -n and -j must be at least 1", file=sys.stderr)
        return 2
    bad = False
    for name, argv in cmds:
        tries = 3 if name in peers else 1
        rate, err = measure(argv, runs, workers, tries)
        if err and name in peers:
            print(f"{name}: skipped: failed {tries} times in a row: {err}")
            continue
        if err:
            print(f"{name}: {err}")
            bad = True
            continue
        print(f"{name:>12}: {rate:8.1f} runs/s   ({runs} runs, {workers} worker"
              f"{'s' if workers > 1 else ''})")
        if save:
            with open(save, "a") as f:
                f.write(f"rate.{name}.j{workers}={rate:.3f}\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
