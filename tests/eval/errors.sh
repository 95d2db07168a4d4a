#!/bin/sh
# tests/eval/errors.sh - bad input: a clear message naming FILE:LINE and a
# distinct exit status (65 for a bad dataset, samples or results file,
# 2 for bad usage), never a crash or a silent wrong answer
. "$top_srcdir/tests/eval/lib.sh"

plan 18

he="$data/humaneval.jsonl"
cli eval --samples x.jsonl
check "no --dataset: usage error" eval 'rc_and_err 2 "missing --dataset FILE"'
cli eval --dataset "$he"
check "neither --samples nor --canonical: usage error" eval 'rc_and_err 2 "give --samples FILE"'
cli eval --dataset "$he" --canonical --samples "$data/humaneval-samples.jsonl"
check "--samples and --canonical together: usage error" eval 'rc_and_err 2 "exclude each other"'
for k in 0 x 1,,2 -1 1,1; do
    cli eval --dataset "$he" --canonical -k "$k"
    is_rc 2 && err_has "invalid value '$k' for -k" || break
done
check "bad -k values (0, x, 1,,2, -1, 1,1): usage errors naming the value" \
    eval 'rc_and_err 2 "for -k"'
cli eval --dataset "$he" --canonical --timeout 0
check "--timeout 0: usage error" eval 'rc_and_err 2 "invalid value '"'"'0'"'"' for --timeout"'
cli eval --dataset "$he" --canonical --resume
check "--resume without --out: usage error" eval 'rc_and_err 2 "--resume needs --out FILE"'
cli eval --dataset "$tmp/nonexistent.jsonl" --canonical
check "a missing dataset file: 65, naming it" eval 'rc_and_err 65 "nonexistent.jsonl: cannot open"'

printf '{"task_id": "A", "prompt": "", "test": "", "entry_point": "f"}\n{"task_id": "B", "prompt": "x",\n' >"$tmp/bad.jsonl"
cli eval --dataset "$tmp/bad.jsonl" --canonical
check "bad JSON: FILE:LINE:COLUMN" eval 'rc_and_err 65 "bad.jsonl:2:" && err_has "bad JSON"'
printf '{"task_id": "A", "prompt": "", "test": "", "entry_point": "f"}\n\n{"task_id": "B", "prompt": "", "entry_point": "f"}\n' >"$tmp/missing.jsonl"
cli eval --dataset "$tmp/missing.jsonl" --canonical
check "a missing field: FILE:LINE and the field" eval 'rc_and_err 65 "missing.jsonl:3: missing field \"test\" (humaneval format)"'
cli eval --dataset "$tmp/missing.jsonl" --format humaneval --samples /dev/null
check "--canonical on tasks without reference: FILE:LINE" eval 'rc_and_err 65 "missing.jsonl:3"'
printf '{"task_id": "A", "prompt": "", "test": "", "entry_point": "f"}\n{"task_id": "A", "prompt": "", "test": "", "entry_point": "f"}\n' >"$tmp/dup.jsonl"
cli eval --dataset "$tmp/dup.jsonl" --canonical
check "a duplicate task_id: FILE:LINE" eval 'rc_and_err 65 "dup.jsonl:2: duplicate task_id \"A\" (first on line 1)"'
printf '{"id": 1}\n' >"$tmp/what.jsonl"
cli eval --dataset "$tmp/what.jsonl" --canonical
check "an unknown format: says which fields it looked for" eval 'rc_and_err 65 "cannot tell the dataset"'
printf '{"task_id": "x", "language": "cobol"}\n' >"$tmp/cobol.jsonl"
cli eval --dataset "$tmp/cobol.jsonl" --canonical
check "an unknown language: FILE:LINE and the known ones" eval 'rc_and_err 65 "cobol.jsonl:1: unknown language '"'"'cobol'"'"' (templates: "'

printf '{"task_id": "Toy/0", "completion": "    return a + b\\n"}\n{"task_id": "Toy/9", "completion": ""}\n' >"$tmp/s.jsonl"
cli eval --dataset "$he" --samples "$tmp/s.jsonl"
check "an unknown task_id in the samples: FILE:LINE" eval 'rc_and_err 65 "s.jsonl:2: unknown task_id \"Toy/9\""'
printf '{"task_id": "Toy/0"}\n' >"$tmp/s2.jsonl"
cli eval --dataset "$he" --samples "$tmp/s2.jsonl"
check "a sample without completion: FILE:LINE" eval 'rc_and_err 65 "s2.jsonl:1: missing field \"completion\""'

# results of other samples are not resumed into these
printf '{"task_id":"Toy/3","sample":0,"verdict":"passed"}\n' >"$tmp/other.jsonl"
cli eval --dataset "$he" --canonical --out "$tmp/other.jsonl" --resume
check "--resume on results of other samples: FILE:LINE, nothing run" \
    eval 'rc_and_err 65 "other.jsonl:1: sample 0 is task \"Toy/3\" here but \"Toy/0\" in the samples" && [ "$(wc -l <"$tmp/other.jsonl")" -eq 1 ]'
printf '{"task_id":"Toy/0","sample":0,"verdict":"passed"}\nnot json\n{"task_id":"Toy/1","sample":1,"verdict":"passed"}\n' >"$tmp/junk.jsonl"
cli eval --dataset "$he" --canonical --out "$tmp/junk.jsonl" --resume
check "--resume on a damaged middle line: FILE:LINE" eval 'rc_and_err 65 "junk.jsonl:2:"'
[ -w /dev/full ] && cli eval --dataset "$he" --canonical --out /dev/full -j 2
if [ -w /dev/full ]; then
    check "a results file that cannot be written: the run stops, naming it" \
        rc_and_err 65 "/dev/full: cannot write a result: No space left on device"
else
    echo "ok 18 # SKIP no writable /dev/full"
fi

done_testing
