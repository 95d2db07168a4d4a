#!/bin/sh
# tests/bench/judged.sh - judged problems (stdin/expected output): polysandbox
# eval through the local provider, every sample isolated, against a plain
# Python judge that compiles and runs them with subprocess and no
# isolation (judged-baseline.py), in the same run, on the same cores,
# alternating, on a generated dataset (judged-gen.py: 10 tests per task,
# one Python and one C++ solution per task).  Prints each side's wall time
# (median of the repetitions) and the ratio (target: at most 0.7).  Both
# must pass every sample.  Speed is never asserted.  polysandbox runs
# twice per repetition: as by default (a compiled program's tests after
# the first in one exec of the runner, a Python script's in one exec of
# the Python runner) and with --exec-per-test (the fallback: an exec per
# test), to show what the runners save.
#
# Knobs: BENCH_JUDGED_TASKS (100: 200 samples), BENCH_JUDGED_REPS (3),
# BENCH_JUDGED_JOBS (the number of cores).
set -u
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
bench="$top_srcdir/tests/bench"
tasks=${BENCH_JUDGED_TASKS:-100}
reps=${BENCH_JUDGED_REPS:-3}
jobs=${BENCH_JUDGED_JOBS:-$(nproc 2>/dev/null || echo 2)}

: "${POLYSANDBOX_PROVIDER_PATH:=$top_builddir/plugins/local/.libs}"
: "${POLYSANDBOX_CONFIG_DIR:=$top_srcdir/tests/config}"
export POLYSANDBOX_PROVIDER_PATH POLYSANDBOX_CONFIG_DIR
work=$(mktemp -d "${TMPDIR:-/tmp}/polysandbox-bench-judged.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
: "${POLYSANDBOX_STATE_DIR:=$work/state}"
export POLYSANDBOX_STATE_DIR
psb="$top_builddir/polysandbox"
[ -x "$psb" ] || { echo "bench: build first ($psb missing)"; exit 1; }
py=/usr/bin/python3
[ -x "$py" ] || py=python3

"$py" "$bench/judged-gen.py" -n "$tasks" "$work/ds.jsonl" "$work/s.jsonl" || exit 1
n=$(grep -c . "$work/s.jsonl")
echo "== judged problems: $n samples ($tasks tasks x Python and C++, 10 tests each) on $jobs workers (median of $reps)"

# wall SECONDS of CMD... into $work/NAME.times; its stdout into $work/NAME.out
timed() {
    name=$1
    shift
    "$py" -c 'import subprocess, sys, time
t0 = time.monotonic()
with open(sys.argv[1] + ".out", "w") as f:
    rc = subprocess.call(sys.argv[2:], stdout=f)
with open(sys.argv[1] + ".times", "a") as f:
    f.write("%f\n" % (time.monotonic() - t0))
sys.exit(rc)' "$work/$name" "$@"
}
status=0
i=0
while [ "$i" -lt "$reps" ]; do
    timed ours "$psb" -q eval --dataset "$work/ds.jsonl" --samples "$work/s.jsonl" \
        --out "$work/r.jsonl" --force -j "$jobs" -k 1 || status=1
    grep -q "passed $n\$" "$work/ours.out" ||
        { echo "bench: polysandbox did not pass every sample:"; cat "$work/ours.out"; status=1; }
    timed each "$psb" -q eval --dataset "$work/ds.jsonl" --samples "$work/s.jsonl" \
        --out "$work/r1.jsonl" --force -j "$jobs" -k 1 --exec-per-test || status=1
    grep -q "passed $n\$" "$work/each.out" ||
        { echo "bench: polysandbox --exec-per-test did not pass every sample:"; cat "$work/each.out"; status=1; }
    timed peer "$py" "$bench/judged-baseline.py" "$work/ds.jsonl" "$work/s.jsonl" "$jobs" || status=1
    grep -q "passed $n of $n" "$work/peer.out" ||
        { echo "bench: the plain judge did not pass every sample:"; cat "$work/peer.out"; status=1; }
    i=$((i + 1))
done
"$py" - "$work" <<'PY'
import statistics, sys
w = sys.argv[1]
ours = [float(x) for x in open(w + "/ours.times")]
peer = [float(x) for x in open(w + "/peer.times")]
each = [float(x) for x in open(w + "/each.times")]
mo, mp, me = statistics.median(ours), statistics.median(peer), statistics.median(each)
print("polysandbox eval (isolated):      %7.2f s   runs %s" % (mo, " ".join("%.2f" % x for x in ours)))
print("  --exec-per-test (isolated):     %7.2f s   runs %s   ratio %.2f" % (me, " ".join("%.2f" % x for x in each), me / mp))
print("plain subprocess judge (none):    %7.2f s   runs %s" % (mp, " ".join("%.2f" % x for x in peer)))
print("ratio (polysandbox / plain):      %7.2f   (target <= 0.70)" % (mo / mp))
PY
exit $status
