#!/bin/sh
# tests/clouds/eval-faults.sh - an evaluation of CLOUDS_EVAL_SAMPLES samples
# (60 in make check, about 40 s; issue 23's 200 with
# CLOUDS_EVAL_SAMPLES=200, 240 s on two cores under a load of 25) on the
# cloudflare and on the volcengine provider, each with 30% of its fake's
# answers 5xx and 10% of its execs cut mid-answer, against a calm run:
# every sample accounted for exactly once, with the verdict of the calm
# run, and the same pass@1 (as tests/e2b/eval-faults.sh does for e2b: the
# fakes' wire faults, the providers' error mapping, the core's retries
# and the eval's own retry of sandbox errors, end to end).  One calm run
# serves both: a verdict does not depend on the provider.
. "$top_srcdir/tests/clouds/lib.sh"
for c in cloudflare volcengine; do
    clouds_ready "$c" || { echo "1..0 # SKIP the $c provider is not built"; exit 0; }
done
ns=$(eval_samples CLOUDS_EVAL_SAMPLES 60) || exit 99
plan 15

# Short waits: the core's backoff is not what is under test here.
clouds_ini '[retry]
attempts = 10
base = 5ms
cap = 100ms'
clouds_start cloudflare
clouds_start volcengine

. "$top_srcdir/tests/lib/eval-faults.sh"
ef_data "$ns"

ef_eval cloudflare calm
ef_check_calm "cloudflare fake"

for c in cloudflare volcengine; do
    case $c in
    cloudflare) cut='{"drop_rate": 0.1, "drop_mode": "mid", "path": "/v1/sandbox/", "method": "POST"}' ;;
    volcengine) cut='{"drop_rate": 0.1, "drop_mode": "mid", "path": "/v1/bash/exec"}' ;;
    esac
    eval "u=\$URL_$c"
    "$PY" - "$u" "[{\"error_rate\": 0.3, \"status\": 503, \"seed\": 5}, $cut]" <<'PYEOF' || exit 99
import sys, urllib.request
urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/_fake/faults", method="POST",
                                              data=sys.argv[2].encode()), timeout=10)
PYEOF
    ef_eval "$c" "$c" --retries 5
    ef_check_stormy "$c: the $ns samples under 30% 5xx and 10% cut execs"
    case $c in
    cloudflare) inj=$(clouds_q "$c" /_fake/stats '[j["injected"] - j["dropped"], j["dropped"]]') ;;
    volcengine) inj=$(clouds_q "$c" /_fake/stats '[j["injected"]["errors"], j["injected"]["drops"]]') ;;
    esac
    check "$c: the fake did inject them (errors, cuts: $inj)" \
        "$PY" -c 'import json, sys; e, d = json.loads(sys.argv[1]); sys.exit(0 if e >= int(sys.argv[2]) // 2 and d >= 1 else 1)' "$inj" "$ns"
    ef_check_same "$c" "$c" "$c: "
done
for c in cloudflare volcengine; do
    check "no sandbox is left in the $c fake" test "$(clouds_q $c /_fake/stats 'len(j["live"])')" = 0
done
done_testing
