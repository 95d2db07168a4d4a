#!/bin/sh
# tests/clouds/failover-modal.sh - Modal goes down mid-evaluation and the
# run finishes on the next cloud: `eval --provider modal --fallback
# cloudflare` with the modal fake told (fault injection, "after") to fail
# every call with UNAVAILABLE from its 6th sandbox create on, so the cut
# falls at the same call in every run, whatever the load.  Every
# sample is graded once with its expected verdict, the early ones on modal,
# the rest on cloudflare, nothing left behind on cloudflare; then `run`
# with --fallback while modal is still down, and again once it is back.
. "$top_srcdir/tests/clouds/lib.sh"
for c in modal cloudflare; do
    clouds_ready "$c" || { echo "1..0 # SKIP the $c provider (or its fake's needs) is not built"; exit 0; }
done
plan 8

clouds_failover_ini
clouds_start modal
clouds_start cloudflare

# modal_faults JSON: set the modal fake's faults.
modal_faults() {
    "$PY" - "$CONTROL_modal/_fake/faults" "$1" <<'PYEOF'
import sys, urllib.request
rq = urllib.request.Request(sys.argv[1], data=sys.argv[2].encode(), method="POST",
                            headers={"Content-Type": "application/json"})
urllib.request.urlopen(rq, timeout=10).read()
PYEOF
}

. "$top_srcdir/tests/lib/eval-faults.sh"
ef_data 24

# Down (every call UNAVAILABLE) from the 6th SandboxCreate on: five of
# the 24 samples start on modal (the ones running when it went down, two
# at most, end on cloudflare), the others run on cloudflare.
modal_faults '{"after": 5, "after_methods": "^SandboxCreate$", "error_rate": 1,
               "code": "UNAVAILABLE"}' || exit 99
timeout -k 5 600 "$PS" -q eval --provider modal --fallback cloudflare -j 2 --json \
    --timeout 10s --dataset "$tmp/data.jsonl" --samples "$tmp/samples.jsonl" \
    --out "$tmp/r.jsonl" </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
check "modal went down mid-run (its fake failed calls)" \
    test "$(clouds_q modal /_fake/state 'j["injected"]["errors"]')" -gt 0
check "the run finished: exit 0, 24 samples graded, no sandbox error" \
    eval 'is_rc 0 && json_check "j[\"done\"] == 24 and j[\"graded\"] == 24 and not j[\"sandbox_errors\"]"'
check "every sample has exactly one record" clouds_verdicts once
check "every sample got its expected verdict" clouds_verdicts verdicts
check "the first samples ran on modal, the rest on cloudflare" clouds_verdicts providers modal:3:5 cloudflare:19
check "no sandbox is left in the cloudflare fake" \
    test "$(clouds_q cloudflare /_fake/stats 'len(j["live"])')" = 0

cli run --json --provider modal --fallback cloudflare -- echo over
check "run --provider modal --fallback cloudflare with modal down: ran on cloudflare" \
    json_check "j['status'] == 'ok' and j['stdout'] == 'over\\n' and j['provider'] == 'cloudflare'"
modal_faults '{}' || exit 99
cli run --json --provider modal -- echo back
check "modal back (no fault; a new process, a closed breaker): a run on modal" \
    json_check "j['status'] == 'ok' and j['stdout'] == 'back\\n' and j['provider'] == 'modal'"
done_testing
