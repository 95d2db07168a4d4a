#!/usr/bin/env python3
"""tests/bench/server-summary.py - the figures of tests/bench/server.sh and
the targets of issue 14, judged on medians.

Usage: server-summary.py [--load TEXT] FILE

FILE holds "key=value" lines, a key once per round: srv-load's
(srv.rt.*, srv.cN.*, ref.cN.*: rate, p50, p99, non2xx, unexpected,
errors; srv.rt.outside), bench-runs' (median.lib.t1, outside.lib.t1,
rate.lib.t1, rate.lib.t2), latency.py's (median.polysandbox) and the
soak's (soak.requests, soak.fds.before/after, soak.rss.before/after in
KiB, and srv-load's soak.*).  Each figure is the median of its rounds.
The soak is flat when the server holds the same fds after it as before
and at most SOAK_RSS_KIB more resident memory.  What the server adds to a run is
judged request by request: srv.rt.outside (a round trip less the run's
own total, as the reply gives it) less outside.lib.t1 (sbx_run's latency
less the same total), the median of the rounds' differences; the
difference of the plain medians (srv.rt.p50 - median.lib.t1), which
the sandbox's own time and the machine's load move far more, is shown
beside it.
Prints the figures, then each target with its verdict (met, NOT met, or
skipped when a figure is missing).  Informational: exits 0 whatever the
speed; 2 when FILE cannot be read.
"""
import statistics
import sys

ADDED_MS = 0.3       # the server adds at most this to a run
LIB_RATIO = 0.9      # at 64 clients, at least this times the library's 2-thread rate
REF_RATIO = 1.5      # ... and this times the reference's
P99_RATIO = 0.7      # ... with a p99 at most this times the reference's
SOAK_RSS_KIB = 4096  # the soak leaves the server's memory within this


def load(path):
    vals = {}
    with open(path) as f:
        for line in f:
            key, sep, val = line.strip().partition("=")
            if not sep:
                continue
            try:
                vals.setdefault(key, []).append(float(val))
            except ValueError:
                pass
    return vals


def main(args):
    load_avg = None
    if len(args) >= 2 and args[0] == "--load":
        load_avg, args = args[1], args[2:]
    if len(args) != 1:
        print("usage: server-summary.py [--load TEXT] FILE", file=sys.stderr)
        return 2
    try:
        v = load(args[0])
    except OSError as e:
        print(f"server-summary.py: {args[0]}: {e.strerror}", file=sys.stderr)
        return 2

    def med(key):
        return statistics.median(v[key]) if v.get(key) else None

    def total(key):
        return sum(v[key]) if key in v else None

    def fmt(x, unit, spec=".1f"):
        return "-" if x is None else f"{x:{spec}} {unit}"

    rounds = len(v.get("srv.c64.rate", []))
    print(f"== summary of polysandboxd's figures (issue 14; medians of {rounds} rounds"
          + (f"; load average {load_avg}" if load_avg else "") + ")")
    print("  round trip of /bin/true, one at a time (median):")
    print(f"    POST /v1/run            {fmt(med('srv.rt.p50'), 'ms', '.2f'):>10}   "
          f"outside the run's own total: {fmt(med('srv.rt.outside'), 'ms', '.3f')}")
    print(f"    sbx_run (library)       {fmt(med('median.lib.t1'), 'ms', '.2f'):>10}   "
          f"outside the run's own total: {fmt(med('outside.lib.t1'), 'ms', '.3f')}")
    print(f"    polysandbox run (CLI)   {fmt(med('median.polysandbox'), 'ms', '.2f')}")
    print("  throughput of /bin/true runs (requests or runs per second; p50 / p99 latency):")
    print(f"    {'':24}{'1 client':>26}{'8 clients':>26}{'64 clients':>26}")
    for who, name in (("srv", "polysandboxd /v1/run"), ("ref", "reference (FastAPI+bwrap)")):
        cells = []
        for c in (1, 8, 64):
            rate, p50, p99 = (med(f"{who}.c{c}.{k}") for k in ("rate", "p50", "p99"))
            cells.append("-" if None in (rate, p50, p99) else f"{rate:.1f} ({p50:.1f} / {p99:.1f} ms)")
        print(f"    {name:<24}" + "".join(f"{c:>26}" for c in cells))
    print(f"    {'sbx_run (library)':<24}{fmt(med('rate.lib.t1'), '(1 thread)'):>26}"
          f"{fmt(med('rate.lib.t2'), '(2 threads)'):>26}")

    rows = []

    def target(text, figure, met):
        rows.append((text, figure, "skipped" if met is None else "met" if met else "NOT met"))

    pairs = list(zip(v.get("srv.rt.outside", []), v.get("outside.lib.t1", [])))
    plain = list(zip(v.get("srv.rt.p50", []), v.get("median.lib.t1", [])))
    if pairs:
        added = statistics.median(a - b for a, b in pairs)
        target(f"the server adds at most {ADDED_MS} ms to a run",
               f"{added:+.3f} ms (request by request, {len(pairs)} rounds)",
               added <= ADDED_MS)
        if plain:
            rows.append(("  (the plain medians' difference)",
                         f"{statistics.median(a - b for a, b in plain):+.2f} ms", "figure"))
    else:
        target(f"the server adds at most {ADDED_MS} ms to a run", "not measured", None)
    srv64, lib2, ref64 = med("srv.c64.rate"), med("rate.lib.t2"), med("ref.c64.rate")
    if srv64 is not None and lib2:
        target(f"64 clients: at least {LIB_RATIO}x the library's 2-thread rate",
               f"{srv64 / lib2:.2f}x ({srv64:.1f} vs {lib2:.1f} runs/s)",
               srv64 >= LIB_RATIO * lib2)
    else:
        target(f"64 clients: at least {LIB_RATIO}x the library's 2-thread rate",
               "not measured", None)
    if srv64 is not None and ref64 is not None:
        # a reference finishing nothing in time is measured (0), not missing
        ratio = f"{srv64 / ref64:.2f}x " if ref64 else ""
        target(f"64 clients: at least {REF_RATIO}x the reference's rate",
               f"{ratio}({srv64:.1f} vs {ref64:.1f} requests/s)",
               srv64 > 0 and srv64 >= REF_RATIO * ref64)
    else:
        target(f"64 clients: at least {REF_RATIO}x the reference's rate",
               "not measured (no reference)", None)
    bad = [total(f"srv.c64.{k}") for k in ("non2xx", "unexpected", "errors")]
    if None not in bad:
        target("64 clients: no answer other than 2xx (nor a failed request)",
               f"non-2xx {bad[0]:.0f}, unexpected {bad[1]:.0f}, failed {bad[2]:.0f}",
               sum(bad) == 0)
    else:
        target("64 clients: no answer other than 2xx", "not measured", None)
    ref_bad = [total(f"ref.c64.{k}") for k in ("non2xx", "unexpected", "errors")]
    if None not in ref_bad:
        rows.append(("  (the reference's, for comparison)",
                     f"non-2xx {ref_bad[0]:.0f}, unexpected {ref_bad[1]:.0f}, "
                     f"failed {ref_bad[2]:.0f}", "figure"))
    s99, r99 = med("srv.c64.p99"), med("ref.c64.p99")
    if s99 is not None and r99:
        target(f"64 clients: p99 at most {P99_RATIO}x the reference's",
               f"{s99 / r99:.2f}x ({s99:.1f} vs {r99:.1f} ms)", s99 <= P99_RATIO * r99)
    else:
        target(f"64 clients: p99 at most {P99_RATIO}x the reference's",
               "not measured (no reference)", None)
    soak = [med(f"soak.{k}") for k in ("requests", "fds.before", "fds.after",
                                        "rss.before", "rss.after")]
    if None not in soak:
        n, f0, f1, m0, m1 = soak
        print(f"  soak: {n:.0f} requests from 64 clients at {fmt(med('soak.rate'), 'req/s')}"
              f" (p50 / p99 {fmt(med('soak.p50'), 'ms')} / {fmt(med('soak.p99'), 'ms')})")
        print(f"    polysandboxd's fds {f0:.0f} -> {f1:.0f}, resident memory "
              f"{m0 / 1024:.1f} -> {m1 / 1024:.1f} MiB")
        bad = [total(f"soak.{k}") or 0 for k in ("non2xx", "unexpected", "errors")]
        target(f"soak: {n:.0f} requests, no answer other than 2xx",
               f"non-2xx {bad[0]:.0f}, unexpected {bad[1]:.0f}, failed {bad[2]:.0f}",
               sum(bad) == 0)
        target("soak: the server's fds are flat", f"{f0:.0f} -> {f1:.0f}", f1 <= f0)
        target(f"soak: its memory grows at most {SOAK_RSS_KIB // 1024} MiB",
               f"{(m1 - m0) / 1024:+.1f} MiB", m1 - m0 <= SOAK_RSS_KIB)
    else:
        target("soak: the server's fds and memory are flat", "not measured", None)
    print("  targets:")
    w = max(len(r[0]) for r in rows)
    for text, figure, verdict in rows:
        print(f"    {text:<{w}}  {figure:<52} {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
