#!/bin/sh
# tests/clouds/failover.sh - one cloud goes down mid-evaluation and the run
# finishes on the next (--fallback), as the sandboxes library fails over
# between clouds: `eval --provider cloudflare --fallback volcengine` with
# the cloudflare fake stopped once a quarter of the samples are in; every
# sample graded once with its expected verdict, the early ones on
# cloudflare, the rest on volcengine, nothing left behind.  Then `run`
# with --fallback while the first cloud is still down.
. "$top_srcdir/tests/clouds/lib.sh"
for c in cloudflare volcengine; do
    clouds_ready "$c" || { echo "1..0 # SKIP the $c provider is not built"; exit 0; }
done
plan 9

clouds_failover_ini
clouds_start cloudflare
clouds_start volcengine

. "$top_srcdir/tests/lib/eval-faults.sh"
ef_data 60

# Stop the cloudflare fake once 15 of the 60 samples have their record.
(
    i=0
    while [ "$(cat "$tmp/r.jsonl" 2>/dev/null | wc -l)" -lt 15 ] && [ $i -lt 3000 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    clouds_stop cloudflare
    echo stopped >"$tmp/stopped"
) &
watcher=$!
timeout -k 5 600 "$PS" -q eval --provider cloudflare --fallback volcengine -j 2 --json \
    --timeout 10s --dataset "$tmp/data.jsonl" --samples "$tmp/samples.jsonl" \
    --out "$tmp/r.jsonl" </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
wait $watcher
check "the cloudflare fake was stopped mid-run" test -s "$tmp/stopped"
check "the run finished: exit 0, 60 samples graded, no sandbox error" \
    eval 'is_rc 0 && json_check "j[\"done\"] == 60 and j[\"graded\"] == 60 and not j[\"sandbox_errors\"]"'
check "every sample has exactly one record" clouds_verdicts once
check "every sample got its expected verdict" clouds_verdicts verdicts
check "the first samples ran on cloudflare, the rest on volcengine" clouds_verdicts providers cloudflare:10 volcengine:20
check "no sandbox is left in the volcengine fake" \
    test "$(clouds_q volcengine /_fake/stats 'len(j["live"])')" = 0

cli run --json --provider cloudflare --fallback volcengine -- echo over
check "run --provider cloudflare --fallback volcengine with cloudflare down: ran on volcengine" \
    json_check "j['status'] == 'ok' and j['stdout'] == 'over\\n' and j['provider'] == 'volcengine'"
cli run --json --provider cloudflare -- echo over
check "...and without --fallback: a sandbox error naming cloudflare" \
    eval 'is_rc 125 && json_check "j[\"provider\"] == \"cloudflare\" and j[\"error_code\"] == 14"'
clouds_start cloudflare
cli run --json --provider cloudflare --fallback volcengine -- echo back
check "cloudflare back: a run with --fallback goes to it first again" \
    json_check "j['status'] == 'ok' and j['provider'] == 'cloudflare'"
done_testing
