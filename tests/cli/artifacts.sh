#!/bin/sh
# tests/cli/artifacts.sh - a template's artifacts come back with the
# result (TAP)
#
# A test template (a copy of tests/config plus templates.d/art.ini,
# artifacts = outputs, artifacts_max_file = 1K) runs a shell program on
# the local provider that writes a PNG (its magic bytes by printf, then
# data), a text file, a file over the cap, a symbolic link to /etc/passwd
# and subdirectories: a file in one, another 8 names down, a directory a
# level deeper, a link to /etc, and hostile names (a tab, a byte that is
# not UTF-8).  run --json carries the files with their paths, sizes, MIME
# types and bytes, and names the others as left out with why;
# run --artifacts DIR saves them, making the subdirectories, refuses to
# overwrite them or to write through a link that DIR holds, and says
# what was left out.  1200 files in two subdirectories show the cap of
# 1000 entries is the whole tree's.  A provider without the files
# capability (nostream, tests/provider/nostream.c) refuses such a template.
# A second template (mime.ini, artifacts = mime) checks the MIME table.
. "$top_srcdir/tests/cli/lib.sh"

if [ ! -e "$top_builddir/plugins/local/.libs/local.so" ]; then
    echo "1..0 # SKIP the local provider is not built"
    exit 0
fi

plan 18

cfg_copy || exit 99
cat >"$tmp/cfg/templates.d/art.ini" <<'INI' || exit 99
[template]
extensions = .art
source = main.sh
run = sh main.sh
artifacts = outputs
artifacts_max_file = 1K
INI
sed -e 's/^extensions = .art/extensions = .mime/' -e 's/^artifacts = outputs/artifacts = mime/' \
    "$tmp/cfg/templates.d/art.ini" >"$tmp/cfg/templates.d/mime.ini" || exit 99
sed -e 's/^extensions = .art/extensions = .total/' -e 's/^artifacts_max_file = 1K/artifacts_max_total = 20/' \
    "$tmp/cfg/templates.d/art.ini" >"$tmp/cfg/templates.d/total.ini" || exit 99
sed -e 's/^extensions = .art/extensions = .many/' -e 's/^artifacts = outputs/artifacts = many/' \
    "$tmp/cfg/templates.d/art.ini" >"$tmp/cfg/templates.d/many.ini" || exit 99
POLYSANDBOX_CONFIG_DIR=$tmp/cfg
export POLYSANDBOX_CONFIG_DIR

cat >"$tmp/prog.art" <<'SH'
mkdir -p outputs/sub
printf '\211PNG\r\n\032\nIHDRdata' >outputs/plot.png
printf 'hello artifacts\n' >outputs/note.txt
mkdir mime
printf '\377\330\377\340JFIF' >mime/a.jpg
printf 'GIF89a\001\000' >mime/b.gif
printf '%%PDF-1.4\n' >mime/c.pdf
printf ' {"x": [1, 2]}\n' >mime/d.json
printf '{"not json"\n' >mime/e.txt
printf 'a\000b' >mime/f.bin
head -c 2000 /dev/zero >outputs/big.bin
ln -s /etc/passwd outputs/passwd
echo inner >outputs/sub/inner.txt
mkdir -p outputs/sub/a/b/c/d/e/f/g/h
echo seven >outputs/sub/a/b/c/d/e/f/seven.txt
echo deep >outputs/sub/a/b/c/d/e/f/g/h/deep.txt
ln -s /etc outputs/sub/etc
echo tab >"outputs/sub/$(printf 'a\tb')"
echo latin1 >"outputs/sub/$(printf 'caf\351')"
echo done
SH

cli run --json "$tmp/prog.art"
check "run --json: ok, the program's output" \
    json_check 'j["status"] == "ok" and j["stdout"] == "done\n"'
check "run --json: the PNG, the text file and the files of subdirectories, sizes, MIME types" \
    json_check '(sorted((a["path"], a["size"], a["mime"]) for a in j["artifacts"]) ==
                [("note.txt", 16, "text/plain"), ("plot.png", 16, "image/png"),
                 ("sub/a/b/c/d/e/f/seven.txt", 6, "text/plain"),
                 ("sub/inner.txt", 6, "text/plain")])'
check "run --json: their bytes, as base64" \
    json_check '(sorted(base64.b64decode(a["base64"]) for a in j["artifacts"]) ==
                [b"hello artifacts\n", b"inner\n", b"seven\n", b"\x89PNG\r\n\x1a\nIHDRdata"])'
check "run --json: the file over the cap is left out, the cap named" \
    json_check '([(o["size"], o["reason"]) for o in j["artifacts_left_out"] if o["path"] == "big.bin"] ==
                [(2000, "larger than artifacts_max_file (1024 bytes)")])'
check "run --json: the link to /etc/passwd is left out, not followed" \
    json_check '([o["reason"] for o in j["artifacts_left_out"] if o["path"] == "passwd"] ==
                ["a symbolic link: links are not followed"] and
                all("root:" not in base64.b64decode(a["base64"]).decode("latin-1") for a in j["artifacts"]))'
check "run --json: a directory more than 8 levels down is left out, said so" \
    json_check '([o["reason"] for o in j["artifacts_left_out"] if o["path"].startswith("sub/a/")] ==
                ["a directory deeper than 8 levels: its files are not collected"] and
                [o["path"] for o in j["artifacts_left_out"] if o["path"].startswith("sub/a/")] ==
                ["sub/a/b/c/d/e/f/g"])'
check "run --json: a link to a directory is left out, never walked into" \
    json_check '([o["reason"] for o in j["artifacts_left_out"] if o["path"] == "sub/etc"] ==
                ["a symbolic link: links are not followed"] and
                not [a for a in j["artifacts"] if "etc" in a["path"]])'
check "run --json: names with a control character or not UTF-8 are left out, said so" \
    json_check '(sorted((o["path"], o["reason"]) for o in j["artifacts_left_out"]
                        if o["reason"].startswith("its name")) ==
                [("sub/(a name that is not UTF-8)", "its name is not valid UTF-8"),
                 ("sub/a?b", "its name holds a control character")])'

cli templates --json
check "templates --json: the artifacts directory, null for a template without one" \
    json_check '([(t["name"], t["artifacts"]) for t in j if t["name"] in ("art", "mime", "sh")] ==
                 [("art", "outputs"), ("mime", "mime"), ("sh", None)])'

cp "$tmp/prog.art" "$tmp/prog.mime" || exit 99
cli run --json "$tmp/prog.mime"
check "MIME types from the first bytes: JPEG, GIF, PDF, JSON, text, else octet-stream" \
    json_check '(dict((a["path"], a["mime"]) for a in j["artifacts"]) ==
                {"a.jpg": "image/jpeg", "b.gif": "image/gif", "c.pdf": "application/pdf",
                 "d.json": "application/json", "e.txt": "text/plain",
                 "f.bin": "application/octet-stream"} and j["artifacts_left_out"] == [])'

cp "$tmp/prog.art" "$tmp/prog.total" || exit 99
cli run --json "$tmp/prog.total"
check "artifacts_max_total: the first file kept, the next that would pass it left out, named" \
    json_check '([a["path"] for a in j["artifacts"]] == ["note.txt"] and
                 [o["reason"] for o in j["artifacts_left_out"] if o["path"] == "plot.png"] ==
                 ["over artifacts_max_total (20 bytes for all files)"])'
check "artifacts_max_total: one cap for the whole tree, a subdirectory's file left out too" \
    json_check '([o["reason"] for o in j["artifacts_left_out"] if o["path"] == "sub/inner.txt"] ==
                 ["over artifacts_max_total (20 bytes for all files)"])'

# 1200 empty files in two subdirectories: 1000 entries of the tree are
# looked at (the two directories and 998 files), not 1000 a directory.
cat >"$tmp/prog.many" <<'SH'
mkdir -p many/a many/b
i=0; while [ $i -lt 600 ]; do : >many/a/$i; : >many/b/$i; i=$((i+1)); done
SH
cli run --json "$tmp/prog.many"
check "1000 entries of the whole tree looked at, the rest left out as ..., said so" \
    json_check '(len(j["artifacts"]) == 998 and
                 {a["path"].split("/")[0] for a in j["artifacts"]} == {"a", "b"} and
                 j["artifacts_left_out"] ==
                 [{"path": "...", "size": 0,
                   "reason": "more than 1000 entries: the rest were not looked at"}])'

cli run --artifacts "$tmp/saved" "$tmp/prog.art"
check "run --artifacts DIR: the files saved with their bytes, subdirectories made, nothing else" \
    eval 'is_rc 0 && [ "$(cd "$tmp/saved" && find . -type f | LC_ALL=C sort | tr "\n" " ")" = \
          "./note.txt ./plot.png ./sub/a/b/c/d/e/f/seven.txt ./sub/inner.txt " ] &&
          [ "$(cat "$tmp/saved/sub/a/b/c/d/e/f/seven.txt")" = seven ] &&
          [ "$(cat "$tmp/saved/note.txt")" = "hello artifacts" ] &&
          [ "$(wc -c <"$tmp/saved/plot.png")" -eq 16 ] && err_has "big.bin'"'"' left out"'
cli run --artifacts "$tmp/saved" "$tmp/prog.art"
check "run --artifacts DIR again: nothing overwritten, said so, exit 125" \
    eval 'is_rc 125 && err_has "it exists already (not overwritten)"'

# DIR holds a link where a subdirectory would go: never written through.
mkdir "$tmp/saved2" "$tmp/elsewhere" || exit 99
ln -s "$tmp/elsewhere" "$tmp/saved2/sub" || exit 99
cli run --artifacts "$tmp/saved2" "$tmp/prog.art"
check "run --artifacts DIR: a link in DIR is not followed, said so, exit 125" \
    eval 'is_rc 125 && [ -z "$(ls -A "$tmp/elsewhere")" ] && [ -f "$tmp/saved2/note.txt" ] &&
          err_has "sub/inner.txt'"'"' not saved" && err_has "a link is not followed"'

# A provider that cannot read files back refuses the template.
POLYSANDBOX_PROVIDER_PATH="$top_builddir/tests/cli/.libs:$POLYSANDBOX_PROVIDER_PATH"
export POLYSANDBOX_PROVIDER_PATH
printf '[provider]\nenabled = true\n' >"$tmp/cfg/providers.d/nostream.ini"
cli run --provider nostream "$tmp/prog.art"
check "a provider without the files capability refuses an artifacts template" \
    eval 'is_rc 125 && err_has "declares artifacts but provider nostream cannot read files back"'

# A directory outside the work directory is refused where it is written.
mkdir "$tmp/bad" "$tmp/bad/templates.d" || exit 99
printf '[template]\nextensions = .x\nrun = sh main.sh\nartifacts = ../etc\n' \
    >"$tmp/bad/templates.d/x.ini"
cli --config-dir "$tmp/bad" templates
check "artifacts = ../etc is a configuration error naming the file" \
    eval '[ "$rc" -ne 0 ] && err_has "x.ini" && err_has "bad artifacts '"'"'../etc'"'"'"'

done_testing
