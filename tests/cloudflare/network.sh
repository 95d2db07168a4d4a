#!/bin/sh
# tests/cloudflare/network.sh - network = none on a provider that cannot
# enforce it (the cloudflare bridge has no network policy): refused before
# the bridge is asked for anything, unless unenforced_limits allows it,
# and then named "network" in the JSON, the CLI note, an eval's records
# and summary, and the Python binding's Result.
. "$top_srcdir/tests/cloudflare/lib.sh"
tmp=$CF_DIR
PS="$top_builddir/polysandbox"
CLI_TIMEOUT=120
PY=$CF_PYTHON
. "$top_srcdir/tests/lib/tap.sh"
plan 12
# Every limit the bridge cannot hold but the network: what is left to
# decide is the network policy alone.
SIZED="cpu, memory, pids, nofile, fsize, disk"
CF_UNENFORCED=$SIZED
cf_start
requests() { cf_ctl GET /_fake/requests | cf_jq 'len(j)'; }

n0=$(requests)
cli run -- echo hi
n1=$(requests)
check "network = none (the default) not allowed: refused naming the network and why" \
    eval 'rc_and_err 125 "cannot enforce the network (none) limit" && err_has "no network policy" && err_has "unenforced_limits = allow (or = network)"'
check "...before the bridge was asked for anything" test "$n0" = "$n1"
check "...and nothing on stdout" out_is ""

cli run --network host --json -- echo hi
check "--network host: nothing to enforce, it runs; network not among the limits it ran without" \
    json_check "j['status'] == 'ok' and j['stdout'] == 'hi\\n' and 'network' not in j['unenforced_limits']"

cli -o "provider.cloudflare.unenforced_limits=$SIZED, network" run --json -- echo hi
check "unenforced_limits lists network: it runs, --json names network and why" \
    json_check "j['status'] == 'ok' and j['unenforced_limits'][-1] == 'network' and 'network: the provider has no network policy' in j['unenforced_reason']"
cp "$tmp/out" "$tmp/allowed.json"

cli -o provider.cloudflare.unenforced_limits=allow run -- echo hi
check "unenforced_limits = allow: the CLI note names the network limit" \
    eval 'rc_and_out 0 hi && err_has "note: the sandbox ran without the" && err_has "disk and network limits"'
cli -q -o provider.cloudflare.unenforced_limits=allow run -- echo hi
check "...and -q keeps it quiet" eval 'rc_and_out 0 hi && ! err_has "network"'

# The Python binding reads the field from the same JSON.
check "Python Result.unenforced_limits names network" \
    env PYTHONPATH="$top_srcdir/python" "$PY" -c '
import json, sys
from polysandbox.result import Result
r = Result.from_json(json.load(open(sys.argv[1])))
assert r.unenforced_limits[-1] == "network", r.unenforced_limits
assert "no network policy" in r.unenforced_reason
' "$tmp/allowed.json"

# An eval: each record and the summary name network; without the
# allowance no sample runs.
"$PY" "$top_srcdir/tests/bench/eval-gen.py" -n 2 "$tmp/data.jsonl" >/dev/null || exit 99
# run_eval NAME [GLOBAL-OPTION]...: the records into NAME.jsonl, the
# summary on out.
run_eval() {
    n=$1
    shift
    timeout -k 5 300 "$PS" "$@" eval -j 2 --json --timeout 20s --canonical \
        --dataset "$tmp/data.jsonl" --out "$tmp/$n.jsonl" </dev/null >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
run_eval allowed -o provider.cloudflare.unenforced_limits=allow
check "eval, allowed: every record names network" \
    eval 'is_rc 0 && "$PY" -c "
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 2 and all(r[\"unenforced_limits\"][-1] == \"network\" for r in recs), recs
" "$tmp/allowed.jsonl"'
check "...the summary too" json_check "j['unenforced_limits'][-1] == 'network' and j['pass_at_k']['1'] == 1"
check "...and the text report says so" \
    eval '"$PS" -q -o provider.cloudflare.unenforced_limits=allow eval --canonical --timeout 20s \
        --dataset "$tmp/data.jsonl" --out "$tmp/allowed.jsonl" --resume </dev/null 2>/dev/null | grep -q "unenforced: .*network"'
run_eval refused
check "eval, network not allowed: no sample passes, each refused naming network" \
    eval '! is_rc 0 && grep -q "network" "$tmp/refused.jsonl" && ! grep -q "\"status\": *\"ok\"" "$tmp/refused.jsonl"'
