#!/bin/sh
# tests/eval/judged-driver.sh - a Python program's tests after the first
# run in one exec of the Python runner (core/eval/eval-judge-driver.py: one
# interpreter forked per test) unless --exec-per-test: both paths give the
# same records (verdict, reason, tests passed, status, exit code, signal,
# output), fail-fast and with --all-tests, on tricky programs (a wrong
# answer, an exception, an endless loop, sys.exit with 7 and with 0, output
# over the cap, stderr, output flushed at exit or by an atexit handler, a
# process left running, __name__/argv/__file__ as `python3 main.py` has
# them, state that must not leak from one test to the next); the runner is
# really used by default, and not with --exec-per-test; and the runner
# alone on the host: a bad header and input that ends early are refused,
# outputs are framed and capped.
. "$top_srcdir/tests/eval/lib.sh"

plan 9

ds="$data/judged-driver.jsonl"
smp="$data/judged-driver-samples.jsonl"

runner_both_ways "Python runner" "$ds" "$smp"

# the runner alone, on the host: hostile input is refused, never run
drv="$top_srcdir/core/eval/eval-judge-driver.py"
m=0123456789abcdef0123456789abcdef
printf 'SBXJ1 %s 1 1000000000 100 100 2\n1\nx' "$m" |
    python3 "$drv" -- "$tmp/cat.py" >"$tmp/r1" 2>"$tmp/e1"
rc1=$?
check "the Python runner: a bad header (fail-fast 2) is refused, nothing run" \
    eval '[ $rc1 -eq 2 ] && [ ! -s "$tmp/r1" ] && grep -q "a bad number" "$tmp/e1"'
printf 'import sys\nsys.stdout.write(sys.stdin.read())\n' >"$tmp/cat.py"
printf 'SBXJ1 %s 2 1000000000 100 100 0\n2\nab1000\nxyz' "$m" |
    python3 "$drv" -- "$tmp/cat.py" >"$tmp/r2" 2>"$tmp/e2"
rc2=$?
check "the Python runner: input that ends inside a test's is refused after the tests before" \
    eval '[ $rc2 -eq 2 ] && grep -q "^abT 0 1 " "$tmp/r2" && ! grep -q "^T 1 " "$tmp/r2" &&
          ! grep -q "judge-end" "$tmp/r2" && grep -q "stdin ended" "$tmp/e2"'
printf 'SBXJ1 %s 2 1000000000 2 100 0\n2\nab3\nxyz' "$m" |
    python3 "$drv" -- "$tmp/cat.py" >"$tmp/r3"
check "the Python runner: each test's own input, its output framed; past the cap (2) not clean" \
    eval 'grep -q "^D 2$" "$tmp/r3" && grep -q "^abT 0 1 " "$tmp/r3" &&
          grep -q "^xyzT 1 0 " "$tmp/r3" && grep -q "judge-end $m 2" "$tmp/r3"'
printf 'import sys\nsys.exit(3)\n' >"$tmp/three.py"
printf 'SBXJ1 %s 2 1000000000 100 100 1\n0\n0\n' "$m" |
    python3 "$drv" -- "$tmp/three.py" >"$tmp/r4"
check "the Python runner: a non-zero exit is not clean, and fail-fast stops there" \
    eval 'grep -q "^T 0 0 " "$tmp/r4" && ! grep -q "^T 1 " "$tmp/r4" &&
          grep -q "judge-end $m 1" "$tmp/r4"'
