#!/bin/sh
# tests/eval/input.sh - nothing a user gave is lost, and input is bounded
#
# --out never names the dataset or the samples (the same file, through a
# symbolic or a hard link too), never empties an existing results file
# without --resume or --force, and replaces it (rename) rather than
# truncating it in place; compare's report and download write whole files
# the same way.  A dataset or samples file past a cap of [eval] (a gzip
# bomb, an over-long line, too many records) is refused while it is read,
# naming the file and the cap, without taking the memory first; the caps
# are raised with --max-input, --max-line, --max-records or [eval].
. "$top_srcdir/tests/eval/lib.sh"

plan 22

he="$data/humaneval.jsonl"
cp "$he" "$tmp/ds.jsonl"
# Three quick samples (a pass, a wrong answer, an exception): these
# checks are about the files, not the verdicts, so nothing waits for a
# time limit.
head -n 3 "$data/humaneval-samples.jsonl" >"$tmp/s.jsonl"
cp "$tmp/s.jsonl" "$tmp/s.orig"
cp "$tmp/ds.jsonl" "$tmp/ds.orig"

# ---- --out and the inputs ----
cli eval --dataset "$tmp/ds.jsonl" --allow-partial --samples "$tmp/s.jsonl" --out "$tmp/s.jsonl"
check "--out naming the samples: exit 2, the samples untouched" \
    eval 'rc_and_err 2 "is the samples file" && cmp -s "$tmp/s.jsonl" "$tmp/s.orig"'
ln -s "$tmp/ds.jsonl" "$tmp/ds-link"
cli eval --dataset "$tmp/ds.jsonl" --allow-partial --samples "$tmp/s.jsonl" --out "$tmp/ds-link"
check "--out a symbolic link to the dataset: exit 2, the dataset untouched" \
    eval 'rc_and_err 2 "is the dataset" && cmp -s "$tmp/ds.jsonl" "$tmp/ds.orig"'
ln "$tmp/s.jsonl" "$tmp/s-hard"
cli eval --dataset "$tmp/ds.jsonl" --allow-partial --samples "$tmp/s.jsonl" --out "$tmp/s-hard" --force
check "--out a hard link to the samples, even with --force: exit 2, untouched" \
    eval 'rc_and_err 2 "is the samples file" && cmp -s "$tmp/s.jsonl" "$tmp/s.orig"'
cli eval --dataset "$tmp/ds.jsonl" --allow-partial --samples "$tmp/s.jsonl" --out "$tmp/s-hard" --resume
check "... and with --resume" \
    eval 'rc_and_err 2 "is the samples file" && cmp -s "$tmp/s.jsonl" "$tmp/s.orig"'

# ---- an existing results file ----
cli eval --dataset "$tmp/ds.jsonl" --allow-partial --samples "$tmp/s.jsonl" --out "$tmp/r.jsonl" -j 4
cp "$tmp/r.jsonl" "$tmp/r.first"
check "a first run writes its results" eval 'is_rc 0 && [ "$(wc -l <"$tmp/r.jsonl")" -eq 3 ]'
cli eval --dataset "$tmp/ds.jsonl" --allow-partial --samples "$tmp/s.jsonl" --out "$tmp/r.jsonl" -j 4
check "a second run on them: exit 2 naming --resume and --force, nothing lost" \
    eval 'rc_and_err 2 "exists" && err_has "--force" && cmp -s "$tmp/r.jsonl" "$tmp/r.first"'
cli eval --dataset "$tmp/ds.jsonl" --allow-partial --samples "$tmp/s.jsonl" -j 4
cli eval --dataset "$tmp/ds.jsonl" --allow-partial --samples "$tmp/s.jsonl" -j 4
check "the default results file (SAMPLES_results.jsonl) too" \
    eval 'rc_and_err 2 "s.jsonl_results.jsonl exists"'
cli eval --dataset "$tmp/ds.jsonl" --allow-partial --samples "$tmp/s.jsonl" --out "$tmp/r.jsonl" --resume --force
check "--resume and --force together: exit 2" rc_and_err 2 "exclude each other"
ln "$tmp/r.jsonl" "$tmp/r.kept"
cli eval --dataset "$tmp/ds.jsonl" --allow-partial --samples "$tmp/s.jsonl" --out "$tmp/r.jsonl" -j 4 --force
check "--force replaces it: a new file, its other link keeps the old records" \
    eval 'is_rc 0 && cmp -s "$tmp/r.kept" "$tmp/r.first" && [ "$(stat -c %i "$tmp/r.jsonl")" != "$(stat -c %i "$tmp/r.kept")" ] && [ "$(wc -l <"$tmp/r.jsonl")" -eq 3 ]'
check "no temporary file is left beside it" \
    eval '[ -z "$(ls -A "$tmp" | grep "^\.r\.jsonl\.")" ]'
: >"$tmp/empty.jsonl"
cli eval --dataset "$tmp/ds.jsonl" --allow-partial --samples "$tmp/s.jsonl" --out "$tmp/empty.jsonl" -j 4
check "an empty results file holds nothing to lose: used" is_rc 0

# ---- compare's report ----
cp "$tmp/s.jsonl" "$tmp/rep.md"
cli compare --providers local,local --dataset "$tmp/ds.jsonl" --samples "$tmp/rep.md" \
    --report "$tmp/rep"
check "compare --report whose .md is the samples: exit 2 before running" \
    eval 'rc_and_err 2 "is the samples file" && cmp -s "$tmp/rep.md" "$tmp/s.orig"'

# ---- download writes whole files ----
cli create
id=$(out)
cli exec "$id" -- sh -c 'echo new >f'
echo old >"$tmp/dl"
ln "$tmp/dl" "$tmp/dl.link"
cli download "$id" f "$tmp/dl"
check "download replaces the file (rename): its other link keeps the old content" \
    eval 'is_rc 0 && [ "$(cat "$tmp/dl")" = new ] && [ "$(cat "$tmp/dl.link")" = old ]'
"$PS" destroy "$id" >/dev/null 2>&1

# ---- bounded input ----
# peak_rss_mb CMD...: run CMD, leaving its status in $tmp/rc and output in
# $tmp/out, $tmp/err; print its peak resident memory in MiB.
peak_rss_mb() {
    python3 - "$tmp" "$@" <<'PY'
import resource, subprocess, sys
d = sys.argv[1]
with open(d + "/out", "wb") as o, open(d + "/err", "wb") as e:
    rc = subprocess.call(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=o, stderr=e)
open(d + "/rc", "w").write(str(rc))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
PY
}
# gz_of FILE BYTE [WIDTH]: FILE, gzip of 1 GiB of BYTE (with a newline
# ending every WIDTH bytes, if given) in about 1 MB: one member of 1 MiB
# compressed once and written 1024 times (gzip(1) and zlib read the
# members as one stream), so nothing compresses 1 GiB here.
gz_of() {
    python3 - "$1" "$2" "${3:-0}" <<'PY'
import gzip, sys
byte, width = sys.argv[2].encode(), int(sys.argv[3])
chunk = (byte * (width - 1) + b"\n") * ((1 << 20) // width) if width else byte * (1 << 20)
with open(sys.argv[1], "wb") as f:
    f.write(gzip.compress(chunk, 9) * 1024)
PY
}
# A gzip bomb: 1 GiB of blank lines (1023 spaces each) in about 1 MB.
gz_of "$tmp/bomb.jsonl.gz" ' ' 1024
mb=$(peak_rss_mb "$PS" eval --dataset "$tmp/bomb.jsonl.gz" --canonical); rc=$(cat "$tmp/rc")
check "a gzip bomb ($(($(stat -c %s "$tmp/bomb.jsonl.gz") / 1024)) KiB): refused at the cap, naming it" \
    eval 'rc_and_err 65 "bomb.jsonl.gz: decompresses to more than the cap of 256 MiB (eval.max_input"'
check "... without taking the memory first (peak ${mb} MiB, cap 64)" [ "${mb:-999}" -lt 64 ]
# One line of 1 GiB of zeros (no newline), compressed.
gz_of "$tmp/zeros.jsonl.gz" 0
mb=$(peak_rss_mb "$PS" eval --dataset "$tmp/zeros.jsonl.gz" --canonical); rc=$(cat "$tmp/rc")
check "a compressed line of 1 GiB: refused at the line cap (peak ${mb} MiB)" \
    eval 'rc_and_err 65 "zeros.jsonl.gz:1: a line longer than the cap of 1 MiB (eval.max_line" && [ "${mb:-999}" -lt 64 ]'
# An over-long line of a plain samples file, then the cap raised.
python3 - "$tmp/long.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"task_id": "Toy/0", "completion": "    return a + b\n"}) + "\n")
    f.write(json.dumps({"task_id": "Toy/0", "completion": "    return a + b\n" + "#" * (2 << 20) + "\n"}) + "\n")
PY
cli eval --dataset "$tmp/ds.jsonl" --allow-partial --samples "$tmp/long.jsonl" --out "$tmp/long.out"
check "an over-long line of the samples: FILE:LINE, the cap and how to raise it" \
    eval 'rc_and_err 65 "long.jsonl:2: a line longer than the cap of 1 MiB" && err_has "--max-line"'
cli eval --dataset "$tmp/ds.jsonl" --allow-partial --samples "$tmp/long.jsonl" --out "$tmp/long.out" --max-line 4M
check "--max-line 4M: read and run" eval 'is_rc 0 && [ "$(wc -l <"$tmp/long.out")" -eq 2 ]'
cli -o eval.max_line=4M eval --dataset "$tmp/ds.jsonl" --allow-partial --samples "$tmp/long.jsonl" --out "$tmp/long.out" --force
check "or -o eval.max_line=4M" is_rc 0
cli eval --dataset "$tmp/ds.jsonl" --allow-partial --samples "$tmp/s.jsonl" --out "$tmp/few.out" --max-records 2
check "more records than --max-records: FILE:LINE and the cap" \
    eval 'rc_and_err 65 "s.jsonl:3: more records than the cap of 2 (eval.max_records"'
cli -o eval.max_input=1K eval --dataset "$tmp/ds.jsonl" --canonical
check "a plain file larger than max_input: refused before it is read" \
    eval 'rc_and_err 65 "ds.jsonl: is larger than the cap of 1 KiB (eval.max_input"'
cli eval --dataset "$tmp/ds.jsonl" --canonical --max-line 0
check "a bad cap: exit 2 naming it" rc_and_err 2 "invalid value '0' for --max-line"

done_testing
