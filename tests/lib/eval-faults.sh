# tests/lib/eval-faults.sh - an evaluation run once calm and once under
# injected faults, the common part of the providers' eval-faults tests
# (tests/e2b, tests/modal, tests/kube, tests/clouds; ef_data also for the
# failover and compare tests of tests/clouds; sourced after the
# provider's lib.sh, which sets PS, PY and tmp and sources tap.sh)
#
#   ef_data N        N/2 tasks of tests/bench/eval-gen.py, 2 samples each
#       (tests/lib/eval-faults.py samples: the reference solution and, for
#       every third task, a wrong one, so pass@1 is neither 0 nor 1);
#       $ef_n is N
#   ef_eval PROVIDER NAME [EVAL-OPTION]...   the evaluation, -j 4: one
#       sample's waits on the fake overlap another's work; the records in
#       $tmp/NAME.jsonl, the summary in $tmp/NAME.json (and $tmp/out),
#       the status in $rc.  The calm run is NAME "calm".
#   ef_check_calm WHERE        check: all $ef_n samples scored, 0 < pass@1 < 1
#   ef_check_stormy DESC       check: exit 0, all graded, no sandbox error
#   ef_check_same NAME PROVIDER [PREFIX]   4 checks: run NAME against the
#       calm run (pass@1 and the verdict counts, one record a sample, the
#       same verdicts), every sample ran on PROVIDER

ef_data() {
    ef_n=$1
    "$PY" "$top_srcdir/tests/bench/eval-gen.py" -n $((ef_n / 2)) "$tmp/data.jsonl" >/dev/null || exit 99
    "$PY" "$top_srcdir/tests/lib/eval-faults.py" samples "$tmp/data.jsonl" >"$tmp/samples.jsonl" || exit 99
}

ef_eval() {
    ef_p=$1 ef_name=$2
    shift 2
    timeout -k 5 900 "$PS" -q eval --provider "$ef_p" -j 4 --json --timeout 10s \
        --dataset "$tmp/data.jsonl" --samples "$tmp/samples.jsonl" --out "$tmp/$ef_name.jsonl" \
        "$@" </dev/null >"$tmp/$ef_name.json" 2>"$tmp/err"
    rc=$?
    cp "$tmp/$ef_name.json" "$tmp/out"
}

ef_check_calm() {
    check "$ef_n samples scored on a calm $1" \
        eval 'is_rc 0 && json_check "j[\"done\"] == $ef_n and j[\"graded\"] == $ef_n and 0 < j[\"pass_at_k\"][\"1\"] < 1"'
}

ef_check_stormy() {
    check "$1: exit 0, all graded" \
        eval 'is_rc 0 && json_check "j[\"done\"] == $ef_n and j[\"graded\"] == $ef_n and not j[\"sandbox_errors\"]"'
}

# ef_same WHAT NAME PROVIDER: tests/lib/eval-faults.py's check WHAT.
ef_same() {
    "$PY" "$top_srcdir/tests/lib/eval-faults.py" same "$tmp/calm.json" "$tmp/$2.json" \
        "$tmp/calm.jsonl" "$tmp/$2.jsonl" "$1" "$3" "$ef_n"
}

ef_check_same() {
    check "${3:-}pass@1 and the verdict counts are those of the calm run" ef_same passk "$1" "$2"
    check "${3:-}every sample has exactly one record in the results file" ef_same once "$1" "$2"
    check "${3:-}every sample got the calm run's verdict" ef_same verdicts "$1" "$2"
    check "${3:-}every sample ran on $2" ef_same provider "$1" "$2"
}
