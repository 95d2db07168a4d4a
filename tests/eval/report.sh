#!/bin/sh
# tests/eval/report.sh - what compare's report says about its run: the
# metadata (version, UTC date, host, inputs with sha256 and size, limits,
# jobs, providers), pass@k with bootstrap intervals, each side's reason
# for a differing verdict, the HTML per-task table and log-scale latency
# chart (checked by parsing the page), the records each column keeps,
# and compare --from rebuilding the same report from them.  The columns
# are local and evalnop, a fake that claims exit 0 without running
# anything (tests/provider/evalfake.c).
. "$top_srcdir/tests/eval/lib.sh"

plan 19

cd "$tmp" || exit 99
gen="--dataset $data/generic.jsonl --samples $data/generic-samples.jsonl"
before=$(date -u +%s)
cli compare $gen --providers local,evalnop --timeout 2s -j 2 --json --report "$tmp/rep"
cp "$tmp/out" "$tmp/run.json"
check "a run: exit 1 (verdicts differ), the report as JSON" \
    eval 'is_rc 1 && jcheck "$tmp/run.json" "j[\"agree\"] is False"'
version=$("$PS" --version | sed 's/^polysandbox //')
check "meta: version, UTC ISO 8601 date of this run, host name and kernel" \
    python3 -c 'import json, sys, os, datetime
m = json.load(open(sys.argv[1]))["meta"]
d = datetime.datetime.strptime(m["date"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
u = os.uname()
ok = (m["version"] == sys.argv[2] and int(sys.argv[3]) - 1 <= d.timestamp() <= int(sys.argv[3]) + 600
      and m["host"]["name"] == u.nodename and u.release in m["host"]["kernel"] and u.sysname in m["host"]["kernel"])
sys.exit(0 if ok else 1)' "$tmp/run.json" "$version" "$before"
check "meta: the dataset and samples files with their size and sha256" \
    python3 -c 'import json, sys, hashlib, os
m = json.load(open(sys.argv[1]))["meta"]
def same(e, p):
    b = open(p, "rb").read()
    return e["path"] == p and e["size"] == len(b) == os.path.getsize(p) and e["sha256"] == hashlib.sha256(b).hexdigest()
sys.exit(0 if same(m["dataset"], sys.argv[2]) and same(m["samples"], sys.argv[3]) and m["canonical"] is False else 1)' \
    "$tmp/run.json" "$data/generic.jsonl" "$data/generic-samples.jsonl"
check "meta: limits as applied (timeout given, defaults stated), jobs, providers" \
    jcheck "$tmp/run.json" 'j["meta"]["limits"]["timeout_s"] == 2 and j["meta"]["limits"]["retries"] == 2 and j["meta"]["limits"]["memory_bytes"] is None and j["meta"]["limits"]["time_factor"] == 3 and j["meta"]["jobs"] == 2 and j["meta"]["providers"] == ["local", "evalnop"] and j["meta"]["rebuilt"] is False'
check "pass@k: a 95% interval around each computable value, null where pass@k is" \
    jcheck "$tmp/run.json" 'all(all((c["summary"]["pass_at_k"][k] is None) == (c["summary"]["pass_at_k_ci"][k] is None) for k in ("1", "10", "100")) and c["summary"]["pass_at_k_ci"]["1"][0] <= c["summary"]["pass_at_k"]["1"] <= c["summary"]["pass_at_k_ci"]["1"][1] for c in j["columns"]) and j["columns"][1]["summary"]["pass_at_k_ci"]["1"] == [1.0, 1.0] and j["columns"][0]["summary"]["pass_at_k_ci"]["1"][0] < j["columns"][0]["summary"]["pass_at_k_ci"]["1"][1]'
check "differences: each side's reason (and output) next to its verdict" \
    jcheck "$tmp/run.json" 'len(j["differences"]) == 6 and all(d["reasons"]["local"] and d["verdicts"]["evalnop"] == "passed" and d["reasons"]["evalnop"] is None and set(d["outputs"]) == {"local", "evalnop"} for d in j["differences"]) and any("limit" in d["reasons"]["local"] for d in j["differences"] if d["verdicts"]["local"] == "timeout")'
check "each column's records are kept in PREFIX.LABEL.jsonl, completions included" \
    python3 -c 'import json, sys
samples = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
for col in ("local", "evalnop"):
    rs = [json.loads(l) for l in open(sys.argv[1] + "/rep." + col + ".jsonl")]
    if sorted(r["sample"] for r in rs) != list(range(len(samples))): sys.exit(1)
    if any(r["completion"] != samples[r["sample"]]["completion"] or r["provider"] != col for r in rs): sys.exit(1)
j = json.load(open(sys.argv[1] + "/run.json"))
sys.exit(0 if [c["results"] for c in j["columns"]] == [sys.argv[1] + "/rep.local.jsonl", sys.argv[1] + "/rep.evalnop.jsonl"] else 1)' \
    "$tmp" "$data/generic-samples.jsonl"
check "Markdown: metadata lines, intervals, and \"verdict: reason\" in the differing rows" \
    python3 -c 'import re, sys
md = open(sys.argv[1]).read()
ok = (re.search(r"^polysandbox \S+, \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, host ", md, re.M) and
      re.search(r"^Dataset: \S+generic.jsonl \(\d+ bytes, sha256 [0-9a-f]{64}\)\.$", md, re.M) and
      re.search(r"^Limits: timeout 2 s, ", md, re.M) and
      re.search(r"^\| pass@1 \| [01]\.\d{4} \[[01]\.\d{4}, [01]\.\d{4}\] \| 1\.0000 \[1\.0000, 1\.0000\] \|$", md, re.M) and
      re.search(r"^\| 2 \| sh/add \| timeout: [^|]+ \| passed \|$", md, re.M))
sys.exit(0 if ok else 1)' "$tmp/rep.md"

# The HTML page, parsed: element ids and classes, table cells, SVG shapes.
cat >"$tmp/page.py" <<'PY'
import html.parser, json, math, re, sys, xml.etree.ElementTree as ET
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.tables, self.stack, self.cell = {}, [], [], None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.stack.append((tag, a))
        if tag == "table":
            self.tables.append({"attrs": a, "rows": []})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th"):
            self.cell = ""
    def handle_endtag(self, tag):
        while self.stack:
            t, a = self.stack.pop()
            if t == tag:
                break
        if tag in ("td", "th") and self.tables and self.cell is not None:
            self.tables[-1]["rows"][-1].append(self.cell.strip())
            self.cell = None
    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        for t, a in self.stack:
            if "id" in a:
                self.ids[a["id"]] = self.ids.get(a["id"], "") + data
    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        self.handle_endtag(tag)
h = open(sys.argv[2]).read()   # argv[1] is this file, exec'd by each check
p = Page()
p.feed(h)
PY
check "HTML: the metadata list (version, date, host, digests, jobs, providers, limits)" \
    python3 -c 'import sys, re, os, hashlib
exec(open(sys.argv[1]).read())
i = p.ids
b = open(sys.argv[3], "rb").read()
ok = (i["meta-version"] == sys.argv[4] and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", i["meta-date"]) and
      i["meta-host"].startswith(os.uname().nodename + " (") and hashlib.sha256(b).hexdigest() in i["meta-dataset"] and
      "(%d bytes" % len(b) in i["meta-dataset"] and re.search(r"sha256 [0-9a-f]{64}", i["meta-samples"]) and
      i["meta-jobs"] == "2" and i["meta-providers"] == "local, evalnop" and i["meta-limits"].startswith("timeout 2 s"))
sys.exit(0 if ok else 1)' "$tmp/page.py" "$tmp/rep.html" "$data/generic.jsonl" "$version"
check "HTML: a per-task table per column: n, c, pass@1, verdict counts, why not passed" \
    python3 -c 'import sys, json
exec(open(sys.argv[1]).read())
j = json.load(open(sys.argv[3]))
tabs = [t for t in p.tables if "data-column" in t["attrs"]]
if [t["attrs"]["data-column"] for t in tabs] != ["local", "evalnop"]: sys.exit(1)
for t, c in zip(tabs, j["columns"]):
    head, rows = t["rows"][0], t["rows"][1:]
    if head[:4] != ["task", "n", "c", "pass@1"] or head[-1] != "why not passed": sys.exit(1)
    verdicts = head[4:-1]
    want = {x["task_id"]: x for x in c["summary"]["tasks"]}
    if [r[0] for r in rows] != list(want) or "passed" not in verdicts: sys.exit(1)
    for r in rows:
        w = want[r[0]]
        if (int(r[1]), int(r[2])) != (w["n"], w["c"]) or abs(float(r[3]) - w["pass_at_k"]["1"]) > 1e-4: sys.exit(1)
        if sum(int(x) for x in r[4:-1]) != w["n"] or int(r[4 + verdicts.index("passed")]) != w["c"]: sys.exit(1)
        if (w["c"] < w["n"]) != ("sample " in r[-1]): sys.exit(1)
    counts = {v: sum(int(r[4 + verdicts.index(v)]) for r in rows) for v in verdicts}
    if any(counts[v] != c["summary"]["counts"][v] for v in verdicts): sys.exit(1)
local = [r for r in tabs[0]["rows"][1:] if r[0] == "sh/add"][0]
sys.exit(0 if "timeout: wall-clock limit" in local[-1] else 1)' "$tmp/page.py" "$tmp/rep.html" "$tmp/run.json"
check "HTML: differing verdicts with each side's reason" \
    python3 -c 'import sys
exec(open(sys.argv[1]).read())
t = [t for t in p.tables if t["rows"] and t["rows"][0][:2] == ["sample", "task"]][0]
rows = {r[0]: r for r in t["rows"][1:]}
ok = sorted(rows, key=int) == ["1", "2", "4", "5", "7", "8"] and rows["4"][2].startswith("compile_error") and "compile step failed" in rows["4"][2] and rows["4"][3] == "passed"
sys.exit(0 if ok else 1)' "$tmp/page.py" "$tmp/rep.html"
check "HTML: pass@k cells carry the interval" \
    python3 -c 'import sys, re
exec(open(sys.argv[1]).read())
t = p.tables[0]
r = [r for r in t["rows"] if r[0] == "pass@1"][0]
sys.exit(0 if re.fullmatch(r"[01]\.\d{4} \[[01]\.\d{4}, [01]\.\d{4}\]", r[1]) and r[2] == "1.0000 [1.0000, 1.0000]" else 1)' "$tmp/page.py" "$tmp/rep.html"
check "HTML: latency on a log scale: decade ticks, bars where log10 puts them, p50 readable next to a timeout" \
    python3 -c 'import sys, re, math, xml.etree.ElementTree as ET
h = open(sys.argv[1]).read()
svg = [s for s in re.findall(r"<svg.*?</svg>", h, re.S) if "data-scale=\"log\"" in s]
if len(svg) != 1: sys.exit(1)
ns = "{http://www.w3.org/2000/svg}"
root = ET.fromstring(svg[0])
ticks = [(int(t.get("x")), float(t.text.split()[0])) for t in root.iter(ns + "text") if t.get("class") == "tick"]
decades = [math.log10(v) for x, v in ticks]
if len(ticks) < 2 or any(abs(d - round(d)) > 1e-9 or abs(d2 - d - 1) > 1e-9 for d, d2 in zip(decades, decades[1:])): sys.exit(1)
(x0, v0), (x1, v1) = ticks[0], ticks[-1]
texts = [t.text for t in root.iter(ns + "text") if t.get("class") != "tick"]
bars = {}
rects = list(root.iter(ns + "rect"))
labels = texts[0::2]; values = texts[1::2]
for l, v, r in zip(labels, values, rects):
    ms = float(v.split()[0]); w = int(r.get("width"))
    # shown to 0.1 ms: from 1 ms on the rounding moves a bar by under a pixel
    if ms >= 1 and abs(x0 + (math.log10(ms) - math.log10(v0)) / (math.log10(v1) - math.log10(v0)) * (x1 - x0) - (x0 + w)) > 3: sys.exit(1)
    bars[l] = w
sys.exit(0 if bars["local max"] >= bars["local p50"] >= 0.25 * bars["local max"] else 1)' "$tmp/rep.html"

cli compare $gen --from "$tmp/rep.local.jsonl,$tmp/rep.evalnop.jsonl" --json --report "$tmp/re"
check "--from: nothing runs, the same report from the kept records (counts, pass@k, intervals, differences)" \
    python3 -c 'import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
keys = ("counts", "pass_at_k", "pass_at_k_ci", "tasks", "latency_ns")
ok = ([c["label"] for c in b["columns"]] == ["local", "evalnop"] and
      all(ca["summary"][k] == cb["summary"][k] for ca, cb in zip(a["columns"], b["columns"]) for k in keys) and
      all(c["summary"]["ran"] == 0 for c in b["columns"]) and a["differences"] == b["differences"] and
      b["meta"]["rebuilt"] is True and b["meta"]["limits"] is None and b["meta"]["jobs"] is None and
      b["meta"]["dataset"] == a["meta"]["dataset"] and b["meta"]["providers"] == ["local", "evalnop"])
sys.exit(0 if ok else 1)' "$tmp/run.json" "$tmp/out"
check "--from: exit 1 as the run's, and the HTML and Markdown are written, naming the files" \
    eval 'is_rc 1 && grep -q "Results of local: \`$tmp/rep.local.jsonl\`" "$tmp/re.md" &&
          grep -q "not recorded (rebuilt from results files)" "$tmp/re.html"'

printf '{"sample": 0, "task_id": "sh/add", "verdict": "passed"' >"$tmp/torn.jsonl"
cp "$tmp/rep.local.jsonl" "$tmp/other.jsonl"
cli compare --dataset "$data/mbpp.jsonl" --canonical --from "$tmp/other.jsonl,$tmp/rep.evalnop.jsonl"
r1=$rc; e1=$(err)
cli compare $gen --from "$tmp/rep.local.jsonl,$tmp/torn.jsonl"
check "--from: results of other samples, or a torn line: refused (65) naming FILE:LINE" \
    eval '[ $r1 -eq 65 ] && echo "$e1" | grep -q "other.jsonl:1: .*belong to other samples" &&
          is_rc 65 && err_has "torn.jsonl:1"'
cli compare $gen --from "$tmp/rep.local.jsonl" ; r1=$rc
cli compare $gen --from "$tmp/rep.local.jsonl,$tmp/torn.jsonl" --providers local,evalnop
check "--from: one file, or with --providers: usage errors" \
    eval '[ $r1 -eq 2 ] && rc_and_err 2 "--providers and --from exclude each other"'

cli eval --dataset "$data/mbpp.jsonl" --canonical --json -j 1
check "eval --json: the same metadata (canonical: no samples file) and intervals" \
    jcheck "$tmp/out" 'j["meta"]["version"] == "'"$version"'" and j["meta"]["samples"] is None and j["meta"]["canonical"] is True and j["meta"]["jobs"] == 1 and j["meta"]["providers"] == ["local"] and len(j["meta"]["dataset"]["sha256"]) == 64 and j["pass_at_k_ci"] == {"1": [1.0, 1.0], "10": None, "100": None}'

# A dataset read from a pipe: read once, no digest; opening it again for
# one would wait for a writer forever (the timeout only bounds that hang).
mkfifo "$tmp/fifo"
timeout 120 sh -c 'cat "$1" >"$2"' sh "$data/mbpp.jsonl" "$tmp/fifo" &   # bounded if never read
CLI_TIMEOUT=120 cli eval --dataset "$tmp/fifo" --canonical --json -j 1
wait
check "eval --dataset FIFO: scored, and the metadata has no size or digest for it" \
    eval 'is_rc 0 && jcheck "$tmp/out" "j[\"meta\"][\"dataset\"] == {\"path\": \"$tmp/fifo\", \"size\": None, \"sha256\": None} and j[\"counts\"][\"passed\"] == 3"'

done_testing
