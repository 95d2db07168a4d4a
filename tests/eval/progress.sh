#!/bin/sh
# tests/eval/progress.sh - progress on stderr: a bar redrawn in place on a
# terminal, plain lines otherwise, nothing with -q; stdout stays the summary
. "$top_srcdir/tests/eval/lib.sh"

plan 4

ds="$data/mbpp.jsonl"
cli eval --dataset "$ds" --canonical -k 1
check "not a terminal: plain lines, the last one 3/3 done" \
    eval 'is_rc 0 && err_has "eval: 3/3 done," && ! grep -q "$(printf "\r")" "$tmp/err"'
check "stdout holds only the summary" eval '! out_has "done," && out_has "pass@1:"'
cli -q eval --dataset "$ds" --canonical -k 1
check "-q: no progress at all" eval 'is_rc 0 && [ ! -s "$tmp/err" ]'
if command -v script >/dev/null 2>&1; then
    # script(1) gives polysandbox a terminal; its stdout goes to a file
    script -qec "\"$PS\" eval --dataset \"$ds\" --canonical -k 1 >\"$tmp/tty.out\"" /dev/null \
        </dev/null >"$tmp/tty" 2>&1
    check "a terminal: a bar redrawn with carriage returns, ending 3/3" \
        python3 -c 'import sys
t = open(sys.argv[1], "rb").read()
sys.exit(0 if t.startswith(b"\reval [") and b"] 3/3 " in t and b"pass 100.0%" in t else 1)' "$tmp/tty"
else
    echo "ok 4 # SKIP script(1) is not installed"
fi

done_testing
