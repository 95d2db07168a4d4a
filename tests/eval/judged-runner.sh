#!/bin/sh
# tests/eval/judged-runner.sh - a compiled program's tests after the first
# run in one exec of the runner (core/eval/eval-judge-runner.c) unless
# --exec-per-test: both paths give the same records (verdict, reason,
# tests passed, status, exit code, signal, output), fail-fast and with
# --all-tests, on tricky programs (a wrong answer, a crash, an endless
# loop, a non-zero exit, output over the cap, stderr, a process left
# running that must not outlive its test) and on the C++ samples of
# judged.jsonl; the runner is really used by default, and not with
# --exec-per-test; and the runner alone on the host: a bad header and
# input that ends early are refused, outputs are framed and capped.
. "$top_srcdir/tests/eval/lib.sh"

plan 10

ds="$data/judged-runner.jsonl"
smp="$data/judged-runner-samples.jsonl"

runner_both_ways runner "$ds" "$smp"

# the C++ samples of the judged dataset, both ways
grep '"language": "cpp"' "$data/judged-samples.jsonl" >"$tmp/cpp.jsonl"
cli eval --dataset "$data/judged.jsonl" --samples "$tmp/cpp.jsonl" --allow-partial \
    --out "$tmp/j1.jsonl" -k 1
cli eval --dataset "$data/judged.jsonl" --samples "$tmp/cpp.jsonl" --allow-partial \
    --out "$tmp/j2.jsonl" -k 1 --exec-per-test
check "judged.jsonl's C++ samples: their expected verdicts" \
    verdicts_as_expected "$tmp/j1.jsonl" "$tmp/cpp.jsonl"
check "judged.jsonl's C++ samples: the same records both ways" \
    same_records "$tmp/j1.jsonl" "$tmp/j2.jsonl"

# the runner alone, on the host: hostile input is refused, never run
runner="$top_builddir/core/eval-judge-runner"
m=0123456789abcdef0123456789abcdef
printf 'SBXJ1 %s 1 1000000000 100 100 2\n1\nx' "$m" | "$runner" -- cat >"$tmp/r1" 2>"$tmp/e1"
rc1=$?
check "the runner: a bad header (fail-fast 2) is refused, nothing run" \
    eval '[ $rc1 -eq 2 ] && [ ! -s "$tmp/r1" ] && grep -q "a bad header" "$tmp/e1"'
printf 'SBXJ1 %s 2 1000000000 100 100 0\n2\nab1000\nxyz' "$m" |
    "$runner" -- cat >"$tmp/r2" 2>"$tmp/e2"
rc2=$?
check "the runner: input that ends inside a test's is refused after the tests before" \
    eval '[ $rc2 -eq 2 ] && grep -q "^abT 0 1 " "$tmp/r2" && ! grep -q "^T 1 " "$tmp/r2" &&
          ! grep -q "judge-end" "$tmp/r2" && grep -q "stdin ended inside" "$tmp/e2"'
printf 'SBXJ1 %s 2 1000000000 2 100 0\n2\nab3\nxyz' "$m" | "$runner" -- cat >"$tmp/r3"
check "the runner: each test's own input, its output framed; past the cap (2) not clean" \
    eval 'grep -q "^D 2$" "$tmp/r3" && grep -q "^abT 0 1 " "$tmp/r3" &&
          grep -q "^xyzT 1 0 " "$tmp/r3" && grep -q "judge-end $m 2" "$tmp/r3"'
