#!/bin/sh
# tests/clouds/compare.sh - polysandbox compare across the cloud
# providers, each against its fake with a latency profile of its own
# injected: one column per cloud, the same verdicts on every one (exit 0),
# and the side-by-side report (Markdown, HTML with its charts, JSON) where
# the slower clouds show as slower.
. "$top_srcdir/tests/clouds/lib.sh"

# The clouds compared, and the latency each fake adds to every answer, in
# ms.
CLOUDS="e2b daytona cloudflare volcengine modal"
latency_of() {
    case $1 in
    e2b) echo 0 ;;
    daytona) echo 20 ;;
    cloudflare) echo 40 ;;
    volcengine) echo 150 ;;
    modal) echo 30 ;;
    *) echo 0 ;;
    esac
}
for c in $CLOUDS; do
    clouds_ready "$c" || { echo "1..0 # SKIP the $c provider is not built"; exit 0; }
done
plan 9

list=
for c in $CLOUDS; do
    clouds_start "$c" --faults "{\"latency_ms\": $(latency_of "$c")}"
    list="$list${list:+,}$c"
done
cli providers --json
check "providers lists every cloud ready against its fake" \
    json_check "all(any(p['name'] == c and p['state'] == 'ready' for p in j) for c in '$CLOUDS'.split())"
cli providers --check --json
check "...and --check finds each healthy" \
    eval 'is_rc 0 && json_check "all(any(p[\"name\"] == c and p[\"status\"] == \"healthy\" for p in j) for c in \"$CLOUDS\".split())"'
. "$top_srcdir/tests/lib/eval-faults.sh"
ef_data 16

cli -q compare --dataset "$tmp/data.jsonl" --samples "$tmp/samples.jsonl" --providers "$list" \
    -j 2 --timeout 10s --json --report "$tmp/rep"
check "compare across $list: every sample the same verdict everywhere (exit 0)" \
    eval 'is_rc 0 && json_check "j[\"agree\"] is True and j[\"differences\"] == []"'
check "one column per cloud, in order, each provider its own" \
    json_check "[(c['label'], c['provider']) for c in j['columns']] == [(x, x) for x in '$CLOUDS'.split()]"
check "every column graded the 16 samples, with no sandbox error" \
    json_check "all(sum(c['summary']['counts'].values()) == 16 and c['summary']['sandbox_errors'] == [] for c in j['columns'])"
# Each of volcengine's answers waits 150 ms, and a sample takes several
# (create, exec, output, kill): its median latency is at least three of
# them whatever the load (a lower bound; the load only adds to it).
check "the latency profile shows: volcengine's median latency 0.45 s or more" \
    json_check "[c['summary']['latency_ns']['p50'] for c in j['columns'] if c['label'] == 'volcengine'][0] >= 4.5e8"
check "the Markdown report sets the clouds side by side" \
    grep -q "^| | $(echo "$CLOUDS" | sed 's/ / | /g') |$" "$tmp/rep.md"
check "...and says they agree" grep -q "All 16 samples got the same verdict on every provider." "$tmp/rep.md"
check "the HTML report: its four charts, a column of each cloud" \
    "$PY" - "$tmp/rep.html" "$CLOUDS" <<'PYEOF'
import re, sys, xml.etree.ElementTree as ET
h = open(sys.argv[1]).read()
svgs = re.findall(r"<svg.*?</svg>", h, re.S)
[ET.fromstring(s) for s in svgs]
sys.exit(0 if len(svgs) == 4 and all(c in h for c in sys.argv[2].split()) else 1)
PYEOF
# The side-by-side table, for the record.
sed -n '/^| |/,/^$/s/^/# /p' "$tmp/rep.md"
done_testing
