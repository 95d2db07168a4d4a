#!/bin/sh
# tests/microvm/eval.sh - polysandbox eval and compare on microVMs (issue
# 21's "eval and compare run on it"): HumanEval-style samples graded in
# VMs get the verdicts they get on the local provider (a right answer,
# a wrong one, an exception, and the early exits and printed pass words
# the pass marker exists for), and compare local,microvm agrees on
# MBPP's reference solutions; a template's artifacts come back from a VM.
# Each sample is a VM restored from the snapshot the microvm tests share
# (TCG here: seconds each).
. "$top_srcdir/tests/cli/lib.sh"

. "$top_srcdir/tests/microvm/guest.sh"
plan 6
data=$top_srcdir/tests/eval/data
CLI_TIMEOUT=600

grep '"Toy/0"' "$data/humaneval-samples.jsonl" |
    grep -E '"case": "(correct|wrong answer|exception|sys.exit\(0\) before the asserts run|os._exit\(0\) before the asserts|prints passed)"' \
        >"$tmp/s.jsonl" || exit 99
[ "$(grep -c . "$tmp/s.jsonl")" -eq 6 ] || { echo "Bail out! the samples file changed"; exit 99; }

t0=$(date +%s)
cli eval --provider microvm --dataset "$data/humaneval.jsonl" --samples "$tmp/s.jsonl" \
    --allow-partial --timeout 30s -j 2 -k 1 --out "$tmp/r.jsonl"
echo "# six samples in VMs: $(($(date +%s) - t0)) s"
check "eval on microvm: exit 0, six samples graded, no sandbox error" \
    eval 'is_rc 0 && out_has "graded 6, sandbox errors 0"'
check "every sample got the verdict the samples file expects (one pass, five failures)" \
    python3 -c 'import json, sys
want = [json.loads(l) for l in open(sys.argv[1])]
got = sorted((json.loads(l) for l in open(sys.argv[2])), key=lambda r: r["sample"])
ok = len(got) == 6 and all(g["verdict"] == w["expect"] for w, g in zip(want, got))
for w, g in zip(want, got):
    print("# %-45s %-8s %s" % (w["case"], g["verdict"], g.get("reason")))
sys.exit(0 if ok else 1)' "$tmp/s.jsonl" "$tmp/r.jsonl"
check "...each graded in a VM (provider microvm)" \
    python3 -c 'import json, sys
sys.exit(0 if all(json.loads(l)["provider"] == "microvm" for l in open(sys.argv[1])) else 1)' "$tmp/r.jsonl"

cd "$tmp" || exit 99
cli compare --dataset "$data/mbpp.jsonl" --canonical --providers local,microvm \
    --timeout 30s --report "$tmp/cmp"
check "compare local,microvm: the same verdicts, exit 0" \
    eval 'is_rc 0 && out_has "All 3 samples got the same verdict on every provider." && out_has "| | local | microvm |"'
check "...the report files are written" test -s "$tmp/cmp.md" -a -s "$tmp/cmp.html"

# A template's artifacts (the core lists and downloads them through the
# provider's files calls) come back from the VM, names and sizes.
cat >"$POLYSANDBOX_CONFIG_DIR/templates.d/art.ini" <<'INI' || exit 99
[template]
extensions = .art
source = main.sh
run = sh main.sh
artifacts = outputs
INI
printf 'mkdir -p outputs\nprintf "\\211PNG\\r\\n" >outputs/plot.png\necho hi >outputs/note.txt\necho done\n' \
    >"$tmp/p.art"
cli run --provider microvm --json "$tmp/p.art"
check "a template's artifacts come back from the VM (names and sizes)" \
    json_check "j['status'] == 'ok' and j['stdout'] == 'done\\n' and sorted((a['path'], a['size']) for a in j['artifacts']) == [('note.txt', 3), ('plot.png', 6)]"
done_testing
