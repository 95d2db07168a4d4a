#!/bin/sh
# tests/bench/eval.sh - scoring a HumanEval-format dataset with --canonical:
# polysandbox eval through the local provider (every program isolated)
# against the reference harness's way (eval-baseline.py: one
# multiprocessing process per sample, 3 s timeout, no isolation), in the
# same run, on the same cores.  Prints both wall times and their ratio
# (target: at most 0.5 on 2 cores), each the wall time of the whole
# process measured the same way by one wrapper; the CPU time per sample
# of each (user + system of the whole process tree), steadier than wall
# time on a machine shared with other work; and the whole machine's busy
# CPU meanwhile (which also holds kernel work charged to no process of
# either side, and any other load).  Speed is never asserted.
#
# Usage: eval.sh [DATASET.jsonl]   (default: a synthetic 164-task dataset
# written by eval-gen.py).  Knobs: BENCH_EVAL_REPS (3; the median is
# reported), BENCH_EVAL_JOBS (the number of cores).
set -u
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
bench="$top_srcdir/tests/bench"
reps=${BENCH_EVAL_REPS:-3}
jobs=${BENCH_EVAL_JOBS:-$(nproc 2>/dev/null || echo 2)}

: "${POLYSANDBOX_PROVIDER_PATH:=$top_builddir/plugins/local/.libs}"
: "${POLYSANDBOX_CONFIG_DIR:=$top_srcdir/tests/config}"
export POLYSANDBOX_PROVIDER_PATH POLYSANDBOX_CONFIG_DIR
work=$(mktemp -d "${TMPDIR:-/tmp}/polysandbox-bench-eval.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
: "${POLYSANDBOX_STATE_DIR:=$work/state}"
export POLYSANDBOX_STATE_DIR

psb="$top_builddir/polysandbox"
[ -d "$top_builddir/core/.libs" ] &&
    export LD_LIBRARY_PATH="$top_builddir/core/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -x "$top_builddir/.libs/polysandbox" ] && psb="$top_builddir/.libs/polysandbox"
[ -x "$psb" ] || { echo "bench: build first ($psb missing)"; exit 1; }

# The baseline and every helper run on the system's python, the one the
# python template runs in the sandbox (never a pyenv or venv shim: one
# of those costs ~100 ms a start).
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if [ $# -ge 1 ]; then
    ds=$1
else
    ds="$work/synthetic.jsonl"
    "$py" "$bench/eval-gen.py" -n 164 "$ds" || exit 1
fi
n=$(grep -c . "$ds")
echo "== scoring $n tasks with --canonical on $jobs workers (median of $reps)"

# timed NAME OUT CMD...: run CMD with stdout to OUT and append to
# $work/NAME.times its wall time, to NAME.cpu the CPU seconds it and
# every process it waited for used, and to NAME.sys the busy CPU seconds
# of the whole machine meanwhile (/proc/stat: all but idle and iowait).
# Both sides are timed the same way, here, around the whole process
# (interpreter start and dataset load included): the clock starts after
# this wrapper's own start-up, which is charged to neither side.
timed() {
    "$py" -c 'import os, resource, subprocess, sys, time
def busy():
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return 0.0
    return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")
name, out, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(out, "w") as f:
    b0, t0 = busy(), time.monotonic()
    rc = subprocess.call(cmd, stdout=f)
    t1, b1 = time.monotonic(), busy()
r = resource.getrusage(resource.RUSAGE_CHILDREN)
for ext, val in (("times", t1 - t0), ("cpu", r.ru_utime + r.ru_stime), ("sys", b1 - b0)):
    with open(name + "." + ext, "a") as f:
        f.write("%f\n" % val)
sys.exit(rc)' "$@"
}
status=0
for who in psb base; do
    for ext in times cpu sys; do : >"$work/$who.$ext"; done
done
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo ?)
i=0
while [ "$i" -lt "$reps" ]; do
    i=$((i + 1))
    # alternate which goes first, so neither always gets a warmer cache
    for who in psb base; do
        [ $((i % 2)) -eq 0 ] && who=$( [ "$who" = psb ] && echo base || echo psb )
        if [ "$who" = psb ]; then
            timed "$work/psb" "$work/psb.json" \
                "$psb" -q eval --dataset "$ds" --canonical -j "$jobs" -k 1 --json ||
                { echo "bench: polysandbox eval failed"; status=1; }
            "$py" -c 'import json, sys
j = json.load(open(sys.argv[1]))
if j["counts"]["passed"] != j["samples"]:
    print("bench: polysandbox eval: only %d of %d canonical solutions passed" % (j["counts"]["passed"], j["samples"]))' "$work/psb.json"
        else
            timed "$work/base" "$work/base.json" "$py" "$bench/eval-baseline.py" -j "$jobs" "$ds" ||
                { echo "bench: the baseline failed"; status=1; }
            "$py" -c 'import json, sys
j = json.load(open(sys.argv[1]))
if j["passed"] != j["samples"]:
    print("bench: baseline: only %d of %d passed" % (j["passed"], j["samples"]), file=sys.stderr)' "$work/base.json"
        fi
    done
done
echo "load average before: $load, after: $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo ?)"
"$py" - "$work/psb.times" "$work/base.times" "$n" "${BENCH_SAVE:-}" "$work/psb.cpu" "$work/base.cpu" \
    "$work/psb.sys" "$work/base.sys" <<'PY'
import statistics, sys
p = [float(x) for x in open(sys.argv[1]) if x.strip()]
b = [float(x) for x in open(sys.argv[2]) if x.strip()]
n = int(sys.argv[3])
pc = [float(x) for x in open(sys.argv[5]) if x.strip()]
bc = [float(x) for x in open(sys.argv[6]) if x.strip()]
if not p or not b:
    sys.exit(1)
mp, mb = statistics.median(p), statistics.median(b)
print("polysandbox eval (local, isolated)  %7.2f s  %6.1f samples/s   runs: %s" % (mp, n / mp, " ".join("%.2f" % x for x in p)))
print("reference way (no isolation)        %7.2f s  %6.1f samples/s   runs: %s" % (mb, n / mb, " ".join("%.2f" % x for x in b)))
print("ratio polysandbox/reference: %.2fx  (target <= 0.50x)" % (mp / mb))
if pc and bc:
    mpc, mbc = statistics.median(pc), statistics.median(bc)
    print("CPU per sample: polysandbox %.1f ms, reference %.1f ms, ratio %.2fx" %
          (mpc / n * 1e3, mbc / n * 1e3, mpc / mbc))
ps = [float(x) for x in open(sys.argv[7]) if x.strip()]
bs = [float(x) for x in open(sys.argv[8]) if x.strip()]
if ps and bs and min(bs) > 0:
    # kernel work not charged to either side (e.g. a kworker tearing a
    # network namespace down) is here, and so is other load's
    mps, mbs = statistics.median(ps), statistics.median(bs)
    print("machine busy CPU per sample (other load included): polysandbox %.1f ms, "
          "reference %.1f ms, ratio %.2fx" % (mps / n * 1e3, mbs / n * 1e3, mps / mbs))
if sys.argv[4]:
    with open(sys.argv[4], "a") as f:
        f.write("eval_ratio=%.3f\n" % (mp / mb))
PY
exit "$status"
