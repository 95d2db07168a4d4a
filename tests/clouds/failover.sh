#!/bin/sh
# tests/clouds/failover.sh - one cloud goes down mid-evaluation and the run
# finishes on the next (--fallback), as the sandboxes library fails over
# between clouds: `eval --provider FIRST --fallback NEXT` with the FIRST
# fake stopped once a quarter of the samples are in; every sample graded
# once with its expected verdict, the early ones on FIRST, the rest on
# NEXT, nothing left behind.  Then `run` with --fallback while the first
# cloud is still down, and once it is back.  FIRST and NEXT: cloudflare and
# volcengine, or FAILOVER_FIRST and FAILOVER_NEXT (failover-volcengine.sh
# takes volcengine down instead).
. "$top_srcdir/tests/clouds/lib.sh"
first=${FAILOVER_FIRST:-cloudflare}
next=${FAILOVER_NEXT:-volcengine}
for c in "$first" "$next"; do
    clouds_ready "$c" || { echo "1..0 # SKIP the $c provider is not built"; exit 0; }
done
plan 9

clouds_failover_ini
clouds_start "$first"
clouds_start "$next"

. "$top_srcdir/tests/lib/eval-faults.sh"
ef_data 60

# Stop the first cloud's fake once 15 of the 60 samples have their record.
(
    i=0
    while [ "$(cat "$tmp/r.jsonl" 2>/dev/null | wc -l)" -lt 15 ] && [ $i -lt 3000 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    clouds_stop "$first"
    echo stopped >"$tmp/stopped"
) &
watcher=$!
timeout -k 5 600 "$PS" -q eval --provider "$first" --fallback "$next" -j 2 --json \
    --timeout 10s --dataset "$tmp/data.jsonl" --samples "$tmp/samples.jsonl" \
    --out "$tmp/r.jsonl" </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
wait $watcher
check "the $first fake was stopped mid-run" test -s "$tmp/stopped"
check "the run finished: exit 0, 60 samples graded, no sandbox error" \
    eval 'is_rc 0 && json_check "j[\"done\"] == 60 and j[\"graded\"] == 60 and not j[\"sandbox_errors\"]"'
check "every sample has exactly one record" clouds_verdicts once
check "every sample got its expected verdict" clouds_verdicts verdicts
check "the first samples ran on $first, the rest on $next" clouds_verdicts providers "$first:10" "$next:20"
check "no sandbox is left in the $next fake" \
    test "$(clouds_q "$next" /_fake/stats 'len(j["live"])')" = 0

cli run --json --provider "$first" --fallback "$next" -- echo over
check "run --provider $first --fallback $next with $first down: ran on $next" \
    json_check "j['status'] == 'ok' and j['stdout'] == 'over\\n' and j['provider'] == '$next'"
cli run --json --provider "$first" -- echo over
check "...and without --fallback: a sandbox error naming $first" \
    eval 'is_rc 125 && json_check "j[\"provider\"] == \"$first\" and j[\"error_code\"] == 14"'
clouds_start "$first"
cli run --json --provider "$first" --fallback "$next" -- echo back
check "$first back: a run with --fallback goes to it first again" \
    json_check "j['status'] == 'ok' and j['provider'] == '$first'"
done_testing
