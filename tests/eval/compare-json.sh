#!/bin/sh
# tests/eval/compare-json.sh - polysandbox compare --json, and settings
# per column (--set-for COLUMN:SECTION.KEY=VALUE) and per provider
# (-o provider.NAME.KEY=VALUE).  The fake evalnop claims every exec exited
# with its setting exit_code (0 unless set; tests/provider/evalfake.c),
# so two columns of it that differ only by that setting differ on every
# sample of the generic dataset (graded by exit status alone; a failing
# compile step of its C task is a compile_error).
. "$top_srcdir/tests/eval/lib.sh"

plan 13

cd "$tmp" || exit 99
gen="--dataset $data/generic.jsonl --samples $data/generic-samples.jsonl"
cli compare $gen --providers evalnop,evalnop --set-for 'evalnop#2:provider.evalnop.exit_code=1' \
    -k 1,2 --json --report "$tmp/rep"
check "--json: verdicts differ, exit 1, one JSON object on stdout" \
    eval 'is_rc 1 && jcheck "$tmp/out" "isinstance(j, dict) and j[\"agree\"] is False"'
check "--json: the run's fields" \
    jcheck "$tmp/out" 'j["dataset"].endswith("generic.jsonl") and j["samples_file"].endswith("generic-samples.jsonl") and j["canonical"] is False and j["samples"] == 9 and j["report"] == {"markdown": "'"$tmp"'/rep.md", "html": "'"$tmp"'/rep.html"}'
check "--json: a column per --providers entry, with its label, provider and settings" \
    jcheck "$tmp/out" '[(c["label"], c["provider"], c["settings"]) for c in j["columns"]] == [("evalnop", "evalnop", []), ("evalnop#2", "evalnop", ["provider.evalnop.exit_code=1"])]'
check "--json: per column counts of every verdict, pass rate, pass@k, latency, throughput, errors" \
    jcheck "$tmp/out" 'all(len(c["summary"]["counts"]) == 12 and sum(c["summary"]["counts"].values()) == 9 and sorted(c["summary"]["pass_at_k"]) == ["1", "2"] and c["summary"]["latency_ns"]["p50"] <= c["summary"]["latency_ns"]["p95"] <= c["summary"]["latency_ns"]["p99"] and c["summary"]["throughput_per_s"] > 0 and c["summary"]["sandbox_errors"] == [] for c in j["columns"]) and [c["summary"]["counts"]["passed"] for c in j["columns"]] == [9, 0] and [c["pass_rate"] for c in j["columns"]] == [1.0, 0.0]'
check "--json: every sample whose verdict differs, with its task and each column's verdict" \
    jcheck "$tmp/out" '[d["sample"] for d in j["differences"]] == list(range(9)) and all(d["verdicts"] == {"evalnop": "passed", "evalnop#2": "compile_error" if d["task_id"] == "c/square" else "failed"} and d["task_id"] for d in j["differences"])'
check "--json: the Markdown and HTML files are written too, naming the column's settings" \
    eval 'grep -q "^Settings of evalnop#2: \`provider.evalnop.exit_code=1\`\\.$" "$tmp/rep.md" &&
          grep -q "## Verdicts that differ (9 of 9 samples)" "$tmp/rep.md" &&
          grep -q "<code>provider.evalnop.exit_code=1</code>" "$tmp/rep.html"'

cli -o provider.evalnop.exit_code=1 compare $gen --providers evalnop,evalnop \
    --set-for evalnop:provider.evalnop.exit_code=0 --json --report "$tmp/rep2"
check "a column's --set-for wins over the global -o; the other column keeps -o" \
    eval 'is_rc 1 && jcheck "$tmp/out" "[c[\"summary\"][\"counts\"][\"passed\"] for c in j[\"columns\"]] == [9, 0]"'

cli compare --dataset "$data/mbpp.jsonl" --canonical --providers local,local --json --report "$tmp/same"
check "--json, local,local: agree, no differences, exit 0" \
    eval 'is_rc 0 && jcheck "$tmp/out" "j[\"agree\"] is True and j[\"differences\"] == [] and [c[\"label\"] for c in j[\"columns\"]] == [\"local\", \"local#2\"] and all(c[\"summary\"][\"counts\"][\"passed\"] == 3 for c in j[\"columns\"])"'

cli -o provider.evalnop.exit_code=2 eval $gen --provider evalnop --json --out "$tmp/r.jsonl"
check "-o provider.NAME.KEY=VALUE sets a provider's setting for eval too" \
    eval 'is_rc 0 && jcheck "$tmp/out" "j[\"counts\"][\"passed\"] == 0 and j[\"counts\"][\"failed\"] + j[\"counts\"][\"compile_error\"] == 9"'
cli compare $gen --providers evalnop,local --set-for 'nosuch:limits.memory=1G'
check "--set-for an unknown column: usage error naming it" \
    eval 'rc_and_err 2 "'"'"'nosuch'"'"' is not one of the columns of --providers"'
cli compare $gen --providers evalnop,local --set-for 'local:memory=1G'
check "--set-for without SECTION.KEY=VALUE: usage error" \
    rc_and_err 2 "expected COLUMN:SECTION.KEY=VALUE"
cli -o provider.nosuch.key=1 providers
check "-o provider.NAME.KEY for a provider not configured: refused, naming it" \
    rc_and_err 125 "provider.nosuch.key: no provider 'nosuch' is configured"
cli compare $gen --providers evalnop,local --set-for 'local:provider.local.bogus=1' --report "$tmp/no"
check "a key the provider does not take: refused before anything runs, from the command line" \
    eval 'rc_and_err 125 "command line: unknown key '"'"'bogus'"'"' for provider '"'"'local'"'"'" && [ ! -e "$tmp/no.md" ]'

done_testing
