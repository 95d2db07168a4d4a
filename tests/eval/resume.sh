#!/bin/sh
# tests/eval/resume.sh - a run killed mid-way loses nothing, and --resume
# runs only what is missing: every sample ends with exactly one record
. "$top_srcdir/tests/eval/lib.sh"

plan 17

# A killed eval leaves the sandbox it was running behind, as a crash does
# (gc reaps it once its time-to-live passes): keep it in a state directory
# of this test's, and destroy what is left at the end.
POLYSANDBOX_STATE_DIR="$tmp/state"
export POLYSANDBOX_STATE_DIR

python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
with open(d + "/ds.jsonl", "w") as f:
    for t in range(4):
        f.write(json.dumps({"task_id": "slow/%d" % t, "language": "sh"}) + "\n")
with open(d + "/s.jsonl", "w") as f:
    for i in range(16):
        f.write(json.dumps({"task_id": "slow/%d" % (i % 4),
                            "completion": "sleep 0.2; exit %d" % (i % 3 == 0)}) + "\n")
PY

"$PS" -q eval --dataset "$tmp/ds.jsonl" --samples "$tmp/s.jsonl" --out "$tmp/r.jsonl" -j 1 \
    </dev/null >/dev/null 2>&1 &
pid=$!
# wait for some records, then kill it without warning
i=0
while [ "$({ wc -l <"$tmp/r.jsonl"; } 2>/dev/null || echo 0)" -lt 4 ] && [ $i -lt 300 ]; do
    sleep 0.05
    i=$((i + 1))
done
kill -KILL "$pid"
wait "$pid" 2>/dev/null
before=$(wc -l <"$tmp/r.jsonl")
check "the killed run left its finished records ($before)" \
    eval '[ "$before" -ge 4 ] && [ "$before" -lt 16 ]'
check "every record on disk is a whole JSON line" \
    python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' "$tmp/r.jsonl"
cp "$tmp/r.jsonl" "$tmp/before.jsonl"
# a torn last line, as if killed while writing
printf '{"task_id":"slow/1","sample":9,"verd' >>"$tmp/r.jsonl"

cli eval --dataset "$tmp/ds.jsonl" --samples "$tmp/s.jsonl" --out "$tmp/r.jsonl" --resume --json
check "--resume: exit 0" is_rc 0
check "--resume ran only the missing samples" \
    jcheck "$tmp/out" "j['resumed'] == $before and j['ran'] == 16 - $before and j['done'] == 16"
check "every sample appears exactly once" \
    python3 -c 'import json, sys
s = sorted(json.loads(l)["sample"] for l in open(sys.argv[1]))
sys.exit(0 if s == list(range(16)) else 1)' "$tmp/r.jsonl"
check "the records of the first run are kept as they were, the torn line is gone" \
    eval 'head -n "$before" "$tmp/r.jsonl" | cmp -s - "$tmp/before.jsonl" && ! grep -q "verd$" "$tmp/r.jsonl"'
check "verdicts counted over both runs: 6 failed, 10 passed" \
    jcheck "$tmp/out" 'j["counts"]["passed"] == 10 and j["counts"]["failed"] == 6'

cli eval --dataset "$tmp/ds.jsonl" --samples "$tmp/s.jsonl" --out "$tmp/r.jsonl" --resume --json
check "a second --resume has nothing left to run" \
    eval 'is_rc 0 && jcheck "$tmp/out" "j[\"ran\"] == 0 and j[\"resumed\"] == 16" && [ "$(wc -l <"$tmp/r.jsonl")" -eq 16 ]'

# results of another run are refused before anything runs, naming what
# differs (sbx_eval_journal_check)
cp "$tmp/r.jsonl" "$tmp/kept.jsonl"
cli eval --dataset "$tmp/ds.jsonl" --samples "$tmp/s.jsonl" --out "$tmp/r.jsonl" --resume \
    --timeout 5s
check "--resume with another --timeout: exit 65, naming it" \
    eval 'is_rc 65 && grep -q "graded with another timeout (\"timeout_ns\": 3000000000 in the results, 5000000000 now)" "$tmp/err"'
sed 's/sleep 0.2; exit 0/sleep 0.2; exit 2/' "$tmp/s.jsonl" >"$tmp/s2.jsonl"
cli eval --dataset "$tmp/ds.jsonl" --samples "$tmp/s2.jsonl" --out "$tmp/r.jsonl" --resume
check "--resume with other samples: exit 65, naming the samples" \
    eval 'is_rc 65 && grep -q "r.jsonl:1: these results were graded with other samples" "$tmp/err"'
cli eval --dataset "$tmp/ds.jsonl" --samples "$tmp/s.jsonl" --out "$tmp/r.jsonl" --resume \
    --memory 256M
check "--resume with another --memory: refused, naming the limits" \
    eval 'is_rc 65 && grep -q "other limits" "$tmp/err"'
check "the refused resumes left the results as they were" cmp -s "$tmp/r.jsonl" "$tmp/kept.jsonl"

# interrupt SIG OUT [PREFIX...]: starts an eval writing OUT, sends SIG once
# two samples are written, and waits; its exit status in $rc.  PREFIX (a
# command such as env or sh -c) runs polysandbox.
interrupt() {
    sig=$1 res=$2
    shift 2
    rm -f "$res"
    "$@" "$PS" eval --dataset "$tmp/ds.jsonl" --samples "$tmp/s.jsonl" --out "$res" -j 1 --json \
        </dev/null >"$tmp/int.out" 2>"$tmp/int.err" &
    pid=$!
    i=0
    while [ "$({ wc -l <"$res"; } 2>/dev/null || echo 0)" -lt 2 ] && [ $i -lt 300 ]; do
        sleep 0.05
        i=$((i + 1))
    done
    kill -"$sig" "$pid"
    wait "$pid"
    rc=$?
}

# SIGTERM: the running sample finishes and is written, the summary says
# what is left, and --resume finishes the rest
interrupt TERM "$tmp/r2.jsonl" env
check "SIGTERM: exit 143 with a summary of what was done" \
    eval '[ "$rc" -eq 143 ] && jcheck "$tmp/int.out" "2 <= j[\"done\"] < 16 and j[\"done\"] == $(wc -l <"$tmp/r2.jsonl")"'
check "SIGTERM: the message names it and says how to continue" \
    grep -q "interrupted by SIGTERM: .* samples not run; continue with --resume --out" "$tmp/int.err"
cli eval --dataset "$tmp/ds.jsonl" --samples "$tmp/s.jsonl" --out "$tmp/r2.jsonl" --resume --json
check "... and --resume completes it, each sample once" \
    eval 'is_rc 0 && python3 -c "import json, sys
s = sorted(json.loads(l)[\"sample\"] for l in open(sys.argv[1]))
sys.exit(0 if s == list(range(16)) else 1)" "$tmp/r2.jsonl"'

# SIGHUP (the terminal hung up) stops it the same way; under nohup
# (SIGHUP ignored when it starts) it runs to the end.  The first with
# SIGHUP's default restored: make may run under nohup itself.
interrupt HUP "$tmp/r3.jsonl" python3 -c 'import os, signal, sys
signal.signal(signal.SIGHUP, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])'
check "SIGHUP: exit 129 with what was done written" \
    eval '[ "$rc" -eq 129 ] && jcheck "$tmp/int.out" "2 <= j[\"done\"] < 16 and j[\"done\"] == $(wc -l <"$tmp/r3.jsonl")" &&
          grep -q "interrupted by SIGHUP" "$tmp/int.err"'
interrupt HUP "$tmp/r4.jsonl" nohup
check "SIGHUP under nohup: ignored, every sample run" \
    eval '[ "$rc" -eq 0 ] && [ "$(wc -l <"$tmp/r4.jsonl")" -eq 16 ]'

left=$("$PS" list --provider local --json 2>/dev/null |
       python3 -c 'import json, sys; print(" ".join(s["id"] for s in json.load(sys.stdin)))')
[ -z "$left" ] || "$PS" destroy --provider local $left >/dev/null 2>&1
done_testing
