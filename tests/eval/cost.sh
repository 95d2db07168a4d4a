#!/bin/sh
# tests/eval/cost.sh - runtime metrics per sample and per provider (CPU,
# peak memory, latency p90), and the cost from a provider's price table:
# priced from -o and from a configuration directory, absent without a
# price, a bad price refused naming its file, line and key
. "$top_srcdir/tests/eval/lib.sh"

plan 14

# two references and a sample that fills 48 MiB (bytes written, so the
# pages count) before it passes
cat >"$tmp/samples.jsonl" <<'EOF'
{"task_id": 11, "completion": "def remove_Occ(s, ch):\n    s = s.replace(ch, '', 1)\n    i = s.rfind(ch)\n    return s if i < 0 else s[:i] + s[i + 1:]"}
{"task_id": 12, "completion": "def total(d):\n    return sum(d.values())"}
{"task_id": 13, "completion": "_BIG = b'x' * (48 << 20)\ndef square(x):\n    return x * x"}
EOF
ds="$data/mbpp.jsonl"

# cost_ok SUMMARY RESULTS PER_SECOND PER_SANDBOX CURRENCY: the summary's
# cost of local is per_sandbox x attempts + per_second x the records'
# seconds, within rounding, and its per-sample figures follow from it.
cost_ok() {
    python3 - "$@" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
recs = [json.loads(l) for l in open(sys.argv[2])]
pps, ppb, cur = float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
want = ppb * sum(r["attempts"] for r in recs) + \
    pps * sum(r["attempts_time_ns"] for r in recs) / 1e9
passed = sum(r["passed"] for r in recs)
for c in (s["providers"]["local"]["cost"], s["usage"]["cost"]):
    ok = (abs(c["total"] - want) <= 1e-6 * max(1.0, want) and c["currency"] == cur and
          abs(c["per_sample"] - want / len(recs)) <= 1e-6 and
          abs(c["per_passing_sample"] - want / passed) <= 1e-6)
    if not ok:
        print("# cost %r, expected total %r" % (c, want))
        sys.exit(1)
PY
}

cli -o provider.local.price_per_second=0.25 -o provider.local.price_per_sandbox=0.002 \
    eval --dataset "$ds" --samples "$tmp/samples.jsonl" --out "$tmp/r.jsonl" --json
check "priced by -o: cost = price_per_sandbox x sandboxes + price_per_second x seconds" \
    eval 'is_rc 0 && cost_ok "$tmp/out" "$tmp/r.jsonl" 0.25 0.002 USD'
check "every record has its CPU time and peak memory; the big one's peak >= 48 MiB" \
    python3 -c 'import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert len(rs) == 3 and all(r["cpu_ns"] > 0 and r["peak_memory_bytes"] > 0 for r in rs), rs
big = [r for r in rs if r["task_id"] == "13"][0]
assert big["passed"] and big["peak_memory_bytes"] >= 48 << 20, big' "$tmp/r.jsonl"
check "per provider: latency p50 <= p90 <= max, CPU total and mean, the largest peak" \
    jcheck "$tmp/out" '(lambda u, rs: 0 < u["latency_ns"]["p50"] <= u["latency_ns"]["p90"] <= u["latency_ns"]["max"] == max(r["time_ns"] for r in rs) and u["cpu_ns"]["total"] == sum(r["cpu_ns"] for r in rs) and u["cpu_ns"]["mean"] == u["cpu_ns"]["total"] // 3 and u["peak_memory_bytes"] == max(r["peak_memory_bytes"] for r in rs) and u["samples"] == u["sandboxes"] == 3)(j["providers"]["local"], [json.loads(l) for l in open(sys.argv[1].replace("out", "r.jsonl"))])'

# a retried attempt's time is paid for too: evalflaky refuses every other
# create, here after 300 ms
cli -o provider.evalflaky.fail_delay_ms=300 -o provider.evalflaky.price_per_second=1 \
    eval --dataset "$ds" --canonical --provider evalflaky -j 1 --out "$tmp/f.jsonl" --json
check "a retried sample: attempts_time_ns counts the failed attempt, and the cost its seconds" \
    jcheck "$tmp/out" '(lambda rs: len(rs) > 0 and all(r["attempts"] == 2 and r["attempts_time_ns"] >= 3e8 > r["time_ns"] for r in rs) and abs(j["providers"]["evalflaky"]["cost"]["total"] - sum(r["attempts_time_ns"] for r in rs) / 1e9) < 1e-6)([json.loads(l) for l in open(sys.argv[1][:-3] + "f.jsonl")])'

cli eval --dataset "$ds" --samples "$tmp/samples.jsonl" --out "$tmp/n.jsonl" --json
check "no price: runtime figures, and no cost object at all" \
    jcheck "$tmp/out" '"cost" not in j["providers"]["local"] and "cost" not in j["usage"] and j["providers"]["local"]["cpu_ns"]["total"] > 0'

# a judged problem: the CPU of its tests added up, the largest peak
head -n 1 "$data/judged-samples.jsonl" >"$tmp/judged.jsonl"
cli eval --dataset "$data/judged.jsonl" --samples "$tmp/judged.jsonl" --allow-partial \
    --out "$tmp/j.jsonl" --json
check "a judged sample's record: CPU and peak memory of its tests" \
    eval 'is_rc 0 && python3 -c "import json, sys
r = json.loads(open(sys.argv[1]).readline())
sys.exit(0 if r[\"passed\"] and r[\"tests_total\"] == 3 and r[\"cpu_ns\"] > 0 and r[\"peak_memory_bytes\"] > 0 else 1)" "$tmp/j.jsonl"'

# the price table in the provider's own ini, in a configuration directory
mkdir "$tmp/conf" "$tmp/conf/providers.d"
cp "$top_srcdir/tests/eval/config/polysandbox.ini" "$tmp/conf/"
ln -s "$top_srcdir/etc/templates.d" "$tmp/conf/templates.d"
{ cat "$top_srcdir/tests/eval/config/providers.d/local.ini"
  printf 'price_per_second = 0.0001\nprice_per_sandbox = 0.5\ncurrency = EUR\n'; } \
    >"$tmp/conf/providers.d/local.ini"
POLYSANDBOX_CONFIG_DIR="$tmp/conf" \
    cli eval --dataset "$ds" --samples "$tmp/samples.jsonl" --out "$tmp/c.jsonl"
check "priced by providers.d/local.ini: the text summary shows usage and cost in EUR" \
    eval 'is_rc 0 && out_has "usage:      local: CPU " && out_has "peak memory" &&
          grep -q "^cost:       local: 1.5[0-9]* EUR, 0.5[0-9]* per sample" "$tmp/out" &&
          out_has "latency:    p50 "'
check "no price: no cost line in the text summary" eval '
    "$PS" eval --dataset "$ds" --samples "$tmp/samples.jsonl" --out "$tmp/n.jsonl" --resume \
        2>/dev/null | grep -q "^usage:" &&
    ! "$PS" eval --dataset "$ds" --samples "$tmp/samples.jsonl" --out "$tmp/n.jsonl" --resume \
        2>/dev/null | grep -q "^cost:"'

# compare: the cost per column in every format
POLYSANDBOX_CONFIG_DIR="$tmp/conf" \
    cli compare --dataset "$ds" --samples "$tmp/samples.jsonl" --providers local,local \
    --report "$tmp/cmp" --json
check "compare --json: each column's summary has local's cost and usage" \
    jcheck "$tmp/out" 'len(j["columns"]) == 2 and all(c["summary"]["providers"]["local"]["cost"]["currency"] == "EUR" and c["summary"]["usage"]["cpu_ns"]["total"] > 0 for c in j["columns"])'
POLYSANDBOX_CONFIG_DIR="$tmp/conf" cli compare --json --dataset "$ds" \
    --samples "$tmp/samples.jsonl" --from "$tmp/cmp.local.jsonl,$tmp/cmp.local#2.jsonl" \
    --report "$tmp/from"
python3 -c 'import json, sys
json.dump(json.load(open(sys.argv[1]))["columns"][0]["summary"], open(sys.argv[2], "w"))' \
    "$tmp/out" "$tmp/col0.json" 2>/dev/null
check "compare --from: a column's cost rebuilt from its records file" \
    eval 'is_rc 0 && cost_ok "$tmp/col0.json" "$tmp/cmp.local.jsonl" 0.0001 0.5 EUR'
check "Markdown: rows latency p90, CPU, peak memory, cost per passing sample" \
    eval 'grep -q "^| latency p90 |" "$tmp/cmp.md" && grep -q "^| CPU total |" "$tmp/cmp.md" &&
          grep -q "^| peak memory max |" "$tmp/cmp.md" &&
          grep -q "^| cost per passing sample | [0-9.e-]* EUR | [0-9.e-]* EUR |" "$tmp/cmp.md"'
check "HTML: the same rows in its table" \
    eval 'grep -q "<td class=\"l\">latency p90</td>" "$tmp/cmp.html" &&
          grep -q "<td class=\"l\">cost</td><td>[0-9.e-]* EUR</td>" "$tmp/cmp.html" &&
          grep -q "<td class=\"l\">peak memory max</td>" "$tmp/cmp.html"'

# bad prices: refused, naming where
sed -i 's/^price_per_sandbox = .*/price_per_sandbox = 1e3/' "$tmp/conf/providers.d/local.ini"
line=$(grep -n "^price_per_sandbox" "$tmp/conf/providers.d/local.ini" | cut -d: -f1)
POLYSANDBOX_CONFIG_DIR="$tmp/conf" cli providers
check "a bad price in the ini: refused with its file, line and key" \
    eval 'is_rc 125 && err_has "$tmp/conf/providers.d/local.ini:$line" && err_has "price_per_sandbox" && err_has "1e3"'
cli -o provider.local.price_per_second=-0.1 providers
check "a bad price from -o: refused naming the key" \
    eval 'is_rc 125 && err_has "provider.local.price_per_second" && err_has "negative"'

done_testing
