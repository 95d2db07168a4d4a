#!/bin/sh
# tests/eval/compare.sh - polysandbox compare: the same samples on two
# providers, the Markdown and HTML reports, and every sample whose verdict
# differs listed.  The differing column is evalnop, a fake that claims
# exit 0 without running anything (tests/provider/evalfake.c);
# local,local checks agreement, and
# local,docker runs when the docker provider and its test image are there.
. "$top_srcdir/tests/eval/lib.sh"

plan 10

cd "$tmp" || exit 99
cli compare --dataset "$data/generic.jsonl" --samples "$data/generic-samples.jsonl" \
    --providers local,evalnop --timeout 2s --report "$tmp/rep"
check "verdicts differ: exit 1" is_rc 1
check "every differing sample is listed, and only those (1, 2, 4, 5, 7, 8)" \
    python3 -c 'import re, sys
rows = re.findall(r"^\| (\d+) \| (\S+) \| (\w+)(?:: [^|]*)? \| (\w+)(?:: [^|]*)? \|$", open(sys.argv[1]).read(), re.M)
got = sorted(int(r[0]) for r in rows)
ok = got == [1, 2, 4, 5, 7, 8] and all(r[3] == "passed" and r[2] != "passed" for r in rows)
sys.exit(0 if ok else 1)' "$tmp/out"
check "the side-by-side counts: local passed 3, evalnop passed 9" \
    eval 'out_has "| passed | 3 | 9 |" && out_has "## Verdicts that differ (6 of 9 samples)"'
check "the Markdown file is what was printed" cmp -s "$tmp/out" "$tmp/rep.md"
check "the HTML page is self-contained: no script, no link, nothing fetched" \
    eval '[ -s "$tmp/rep.html" ] && ! grep -qiE "<script|<link|<img|@import|url\\(" "$tmp/rep.html" &&
          [ "$(grep -o "https\\?://[^\"]*" "$tmp/rep.html" | sort -u)" = "http://www.w3.org/2000/svg" ]'
check "the HTML page has four well-formed SVG charts and the differing samples" \
    python3 -c 'import re, sys, xml.etree.ElementTree as ET
h = open(sys.argv[1]).read()
svgs = re.findall(r"<svg.*?</svg>", h, re.S)
[ET.fromstring(s) for s in svgs]
titles = ["Pass rate", "Latency", "Throughput", "Errors and failures"]
sys.exit(0 if len(svgs) == 4 and all(t in h for t in titles) and "Verdicts that differ (6)" in h else 1)' "$tmp/rep.html"

cli compare --dataset "$data/mbpp.jsonl" --canonical --providers local,local --report "$tmp/same"
check "local,local: the same verdicts, exit 0, columns local and local#2" \
    eval 'is_rc 0 && out_has "All 3 samples got the same verdict on every provider." && out_has "| | local | local#2 |"'
cli compare --dataset "$data/mbpp.jsonl" --canonical --providers local
check "one provider is not a comparison: usage error" eval 'rc_and_err 2 "name at least two providers"'
cli compare --dataset "$data/mbpp.jsonl" --canonical --providers local,nosuch
check "an unknown provider: refused before anything runs" \
    eval 'is_rc 125 && err_has "unknown provider '"'"'nosuch'"'"'" && [ ! -e "$tmp/compare.md" ]'

# A real second provider when there is one: the docker provider with the
# image tests/docker builds (its test configuration maps python to it).
docker_ok=false
if [ -f "$top_builddir/plugins/docker/.libs/docker.so" ]; then
    if POLYSANDBOX_CONFIG_DIR="$top_srcdir/tests/config" \
        POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/local/.libs:$top_builddir/plugins/docker/.libs" \
        "$PS" providers 2>/dev/null | grep -q "^docker  *ready" &&
        docker image inspect polysandbox-test/python:bookworm >/dev/null 2>&1; then
        docker_ok=true
    fi
fi
if $docker_ok; then
    POLYSANDBOX_CONFIG_DIR="$top_srcdir/tests/config" \
    POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/local/.libs:$top_builddir/plugins/docker/.libs" \
        cli compare --dataset "$data/humaneval.jsonl" --samples "$data/humaneval-samples.jsonl" \
        --providers local,docker --timeout 3s --memory 128M --report "$tmp/ld"
    check "local,docker: every tricky HumanEval sample gets the same verdict on both" \
        eval 'is_rc 0 && out_has "All 21 samples got the same verdict on every provider." && out_has "| | local | docker |"'
else
    echo "ok 10 # SKIP the docker provider or its test image (tests/docker) is not there"
fi

done_testing
