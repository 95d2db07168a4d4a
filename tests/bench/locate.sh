#!/bin/sh
# tests/bench/locate.sh - `polysandbox exec ID` without --provider: the
# recorded hint against the listing of every provider (run by `make bench`).
#
# Two providers enabled: local (the default) and e2b against its fake on
# 127.0.0.1, answering every request after LATENCY ms like a cloud API.
# One local sandbox; then, in alternating blocks so all three see the same
# machine, `exec ID -- true` three ways:
#
#   hint:     as users run it: the state directory's record of where ID
#             was created, verified by opening it there (no listing);
#   listing:  the same with the record moved aside, which is the path
#             every exec took before: each provider's sandboxes listed;
#   explicit: `exec -p local ID`, the floor.
#
# Prints the median and mean wall time of each and the ratios listing /
# hint and hint / explicit.  Asserts nothing about speed; exits 1 only
# when an exec fails.  Knobs: BENCH_LOCATE_RUNS (per way, 30),
# BENCH_LOCATE_BLOCK (10), BENCH_LOCATE_LATENCY_MS (20).
set -u
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
runs=${BENCH_LOCATE_RUNS:-30}
block=${BENCH_LOCATE_BLOCK:-10}
lat=${BENCH_LOCATE_LATENCY_MS:-20}
PS="$top_builddir/polysandbox"
if [ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=${PYTHON:-python3}; fi

say_skip() { echo "locate bench: skipped ($1)"; exit 0; }
[ -x "$PS" ] || { echo "locate bench: build first ($PS missing)"; exit 1; }
[ -e "$top_builddir/plugins/e2b/.libs/e2b.so" ] || say_skip "the e2b provider is not built"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-bench-locate.XXXXXX") || exit 1
fake_pid=
id=
cleanup() {
    [ -n "$id" ] && "$PS" destroy -p local "$id" >/dev/null 2>&1
    if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null; wait "$fake_pid" 2>/dev/null; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

export POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/local/.libs:$top_builddir/plugins/e2b/.libs"
export POLYSANDBOX_CONFIG_DIR="$tmp/config"
export POLYSANDBOX_STATE_DIR="$tmp/state"
export POLYSANDBOX_LOCALD="$top_builddir/plugins/local/polysandbox-locald"
export E2B_FAKE_KEY=e2b_bench_key_0123456789abcdef

mkdir -p "$tmp/fake" "$tmp/config/providers.d"
"$PY" "$top_srcdir/tests/fakes/e2b.py" --state-dir "$tmp/fake" --port-file "$tmp/port" \
    --api-key "$E2B_FAKE_KEY" --faults "{\"latency_ms\": $lat}" \
    >"$tmp/fake.out" 2>"$tmp/fake.err" &
fake_pid=$!
i=0
until grep -q READY "$tmp/fake.out" 2>/dev/null; do
    i=$((i + 1))
    if [ "$i" -gt 400 ] || ! kill -0 "$fake_pid" 2>/dev/null; then
        echo "locate bench: the E2B fake did not start"; sed 's/^/# /' "$tmp/fake.err"; exit 1
    fi
    sleep 0.05
done
base="http://127.0.0.1:$(cat "$tmp/port")"
cp "$top_srcdir/tests/config/polysandbox.ini" "$tmp/config/polysandbox.ini"
cp -RL "$top_srcdir/tests/config/templates.d" "$tmp/config/templates.d"
cat >"$tmp/config/providers.d/e2b.ini" <<EOF
[provider]
enabled = true
unenforced_limits = allow
[settings]
api_key = env:E2B_FAKE_KEY
api_url = $base
envd_url = $base
request_timeout = 20s
EOF

id=$("$PS" create 2>"$tmp/err") || { echo "locate bench: create failed"; cat "$tmp/err"; exit 1; }
hints="$tmp/state/sandbox-ids/local"
[ -e "$hints/$id" ] || { echo "locate bench: create left no hint at $hints/$id"; exit 1; }
"$PS" list -p e2b >/dev/null 2>"$tmp/err" ||
    { echo "locate bench: e2b cannot list"; cat "$tmp/err"; exit 1; }

# one WAY: BLOCK execs, one elapsed time (ns) a line into $tmp/WAY
one_block() {
    way=$1
    shift
    n=0
    while [ "$n" -lt "$block" ]; do
        t0=$(date +%s%N)
        "$PS" exec "$@" -- true >/dev/null 2>"$tmp/err" ||
            { echo "locate bench: exec ($way) failed"; cat "$tmp/err"; exit 1; }
        t1=$(date +%s%N)
        echo $((t1 - t0)) >>"$tmp/$way"
        n=$((n + 1))
    done
}

echo "locate: exec ID without --provider; local + e2b (fake, ${lat} ms a request), $runs execs a way"
done_runs=0
while [ "$done_runs" -lt "$runs" ]; do
    one_block hint "$id"
    mv "$hints" "$hints.aside"
    one_block listing "$id"
    mv "$hints.aside" "$hints"
    one_block explicit -p local "$id"
    done_runs=$((done_runs + block))
done
[ -e "$hints/$id" ] || { echo "locate bench: the hint went missing"; exit 1; }

"$PY" - "$tmp" <<'EOF'
import statistics, sys
d = sys.argv[1]
fig = {}
for way in ("hint", "listing", "explicit"):
    v = [int(x) / 1e6 for x in open(f"{d}/{way}")]
    fig[way] = (statistics.median(v), statistics.mean(v))
    print(f"  {way:9s} median {fig[way][0]:8.1f} ms   mean {fig[way][1]:8.1f} ms   ({len(v)} execs)")
print(f"  listing / hint   {fig['listing'][0] / fig['hint'][0]:.2f}x (medians): what the hint saves")
print(f"  hint / explicit  {fig['hint'][0] / fig['explicit'][0]:.2f}x (medians): what finding the provider still costs")
EOF
