#!/bin/sh
# tests/bench/eval.sh - scoring a HumanEval-format dataset with --canonical:
# polysandbox eval through the local provider (every program isolated)
# against the reference harness's way (eval-baseline.py: one
# multiprocessing process per sample, 3 s timeout, no isolation), in the
# same run, on the same cores.  Prints both wall times and their ratio
# (target: at most 0.5 on 2 cores), and the CPU time per sample of each
# (user + system of the whole process tree), steadier than wall time on
# a machine shared with other work.  Speed is never asserted.
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

if [ $# -ge 1 ]; then
    ds=$1
else
    ds="$work/synthetic.jsonl"
    python3 "$bench/eval-gen.py" -n 164 "$ds" || exit 1
fi
n=$(grep -c . "$ds")
# The baseline runs on the system's python, the one the python template
# runs in the sandbox (never a pyenv or venv shim).
py=/usr/bin/python3
[ -x "$py" ] || py=python3
echo "== scoring $n tasks with --canonical on $jobs workers (median of $reps)"

now() { python3 -c 'import time; print(time.monotonic())'; }
# timed OUT CPUFILE CMD...: run CMD with stdout to OUT; append the CPU
# seconds it and every process it waited for used to CPUFILE.
timed() {
    python3 -c 'import resource, subprocess, sys
with open(sys.argv[1], "w") as f:
    rc = subprocess.call(sys.argv[3:], stdout=f)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[2], "a") as f:
    f.write("%f\n" % (r.ru_utime + r.ru_stime))
sys.exit(rc)' "$@"
}
status=0
: >"$work/psb.times"
: >"$work/base.times"
: >"$work/psb.cpu"
: >"$work/base.cpu"
i=0
while [ "$i" -lt "$reps" ]; do
    i=$((i + 1))
    # alternate which goes first, so neither always gets a warmer cache
    for who in psb base; do
        [ $((i % 2)) -eq 0 ] && who=$( [ "$who" = psb ] && echo base || echo psb )
        if [ "$who" = psb ]; then
            t0=$(now)
            timed "$work/psb.json" "$work/psb.cpu" \
                "$psb" -q eval --dataset "$ds" --canonical -j "$jobs" -k 1 --json ||
                { echo "bench: polysandbox eval failed"; status=1; }
            t1=$(now)
            python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
if j["counts"]["passed"] != j["samples"]:
    print("bench: polysandbox eval: only %d of %d canonical solutions passed" % (j["counts"]["passed"], j["samples"]))' "$work/psb.json"
            echo "$t0 $t1" | awk '{ print $2 - $1 }' >>"$work/psb.times"
        else
            timed "$work/base.json" "$work/base.cpu" "$py" "$bench/eval-baseline.py" -j "$jobs" "$ds" ||
                { echo "bench: the baseline failed"; status=1; }
            python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(j["wall_s"])
if j["passed"] != j["samples"]:
    print("bench: baseline: only %d of %d passed" % (j["passed"], j["samples"]), file=sys.stderr)' "$work/base.json" >>"$work/base.times"
        fi
    done
done
python3 - "$work/psb.times" "$work/base.times" "$n" "${BENCH_SAVE:-}" "$work/psb.cpu" "$work/base.cpu" <<'PY'
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
if sys.argv[4]:
    with open(sys.argv[4], "a") as f:
        f.write("eval_ratio=%.3f\n" % (mp / mb))
PY
exit "$status"
