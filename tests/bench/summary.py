#!/usr/bin/env python3
"""tests/bench/summary.py - the summary block printed at the end of run.sh.

Usage: summary.py FILE [LOCALD-FILE]

FILE holds the "key=value" lines latency.py, rate.py and bench-runs saved
during the run (in-process: daemon = off); LOCALD-FILE, where given and
readable, those of the runs through polysandbox-locald (daemon = auto,
the default).  Prints each target of issue 3 with the figure measured
and whether it is met: the latency targets are judged on the default
path where it was measured, the other path's figures shown beside them.
Informational: the exit status is 0 whatever the speed; only a missing or
unreadable FILE is an error.
"""
import sys


def load(path):
    vals = {}
    with open(path) as f:
        for line in f:
            key, sep, val = line.strip().partition("=")
            if sep:
                try:
                    vals[key] = float(val)
                except ValueError:
                    pass
    return vals


def main(args):
    if len(args) not in (1, 2):
        print("usage: summary.py FILE [LOCALD-FILE]", file=sys.stderr)
        return 2
    try:
        v = load(args[0])
    except OSError as e:
        print(f"summary.py: {args[0]}: {e.strerror}", file=sys.stderr)
        return 2
    try:
        d = load(args[1]) if len(args) == 2 else {}
    except OSError:
        d = {}  # the daemon's section was skipped (not built, not root)
    rows = []

    def figure(vals, key):
        a, b = key[len("ratio."):].split("/")
        return (f"{vals[key]:.2f}x ({vals.get('median.' + a, 0):.2f} ms vs "
                f"{vals.get('median.' + b, 0):.2f} ms)")

    def ratio(target, key, dkey, limit, strict=False):
        """Judged on the daemon's figure (dkey in d) where measured, else
        on the in-process one (key in v); the other shown beside."""
        vals, k, path = (d, dkey, "daemon") if dkey in d else (v, key, "in-process")
        if k not in vals:
            rows.append((target, "not measured (peer missing or a run failed)", "skipped"))
            return
        x = vals[k]
        met = x < limit if strict else x <= limit
        rows.append((f"{target} ({path})", figure(vals, k), "met" if met else "NOT met"))
        if path == "daemon" and key in v:
            rows.append(("  (in-process, daemon = off)", figure(v, key), "figure"))

    ratio("run /bin/true: median below bwrap's", "ratio.polysandbox/bwrap",
          "ratio.polysandbox-locald/bwrap", 1.0, strict=True)
    ratio("run /bin/true: within 1.5x of unshare", "ratio.polysandbox/unshare",
          "ratio.polysandbox-locald/unshare", 1.5)
    ratio("python3 -c pass: within 1.3x of bare", "ratio.sbx-python/python",
          "ratio.sbx-locald-python/python", 1.3)

    def rate(target, key):
        rows.append((target, f"{v[key]:.0f} runs/s" if key in v else "not measured",
                     "figure" if key in v else "skipped"))

    rate("sustained /bin/true, library, serial", "rate.lib.t1")
    rate("sustained /bin/true, library, 2 threads", "rate.lib.t2")
    if "rate.lib.leak.t2" in v:
        rate(f"  (library, 2 threads, over the {v.get('leak.runs', 0):.0f} runs of the leak check)",
             "rate.lib.leak.t2")
    rate("sustained /bin/true, CLI, serial (in-process)", "rate.polysandbox.j1")
    rate("sustained /bin/true, CLI, 2 workers (in-process)", "rate.polysandbox.j2")
    for peer in ("bwrap", "unshare"):
        for j in (1, 2):
            key = f"rate.{peer}.j{j}"
            if key in v:
                rate(f"  (peer {peer}, {'serial' if j == 1 else '2 workers'})", key)

    if "leak.ok" in v:
        growth = v.get("leak.rss_kib_per_1000", 0.0)
        rows.append((f"no leak after {v.get('leak.runs', 0):.0f} runs",
                     f"fds, mounts, cgroups, dirs, processes; RSS {growth:+.1f} KiB/1000 runs",
                     "met" if v["leak.ok"] else "NOT met (LEAKED)"))
    else:
        rows.append(("no leak after many runs", "not measured", "skipped"))

    print("== summary (targets of issue 3; informational)")
    w = max(len(r[0]) for r in rows)
    for target, figure, verdict in rows:
        print(f"  {target:<{w}}  {figure:<58} {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
