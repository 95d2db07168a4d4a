#!/bin/sh
# tests/cli/artifacts.sh - a template's artifacts come back with the
# result (TAP)
#
# A test template (a copy of tests/config plus templates.d/art.ini,
# artifacts = outputs, artifacts_max_file = 1K) runs a shell program on
# the local provider that writes a PNG (its magic bytes by printf, then
# data), a text file, a file over the cap, a symbolic link to /etc/passwd
# and a subdirectory.  run --json carries the first two with their sizes,
# MIME types and bytes, and names the others as left out with why;
# run --artifacts DIR saves the two, refuses to overwrite them, and says
# what was left out.  A provider without the files capability (nostream,
# tests/cli/nostream.c) refuses such a template.
. "$top_srcdir/tests/cli/lib.sh"

if [ ! -e "$top_builddir/plugins/local/.libs/local.so" ]; then
    echo "1..0 # SKIP the local provider is not built"
    exit 0
fi

plan 9

cp -RL "$POLYSANDBOX_CONFIG_DIR" "$tmp/cfg" || exit 99
chmod -R u+w "$tmp/cfg"
cat >"$tmp/cfg/templates.d/art.ini" <<'INI' || exit 99
[template]
extensions = .art
source = main.sh
run = sh main.sh
artifacts = outputs
artifacts_max_file = 1K
INI
POLYSANDBOX_CONFIG_DIR=$tmp/cfg
export POLYSANDBOX_CONFIG_DIR

cat >"$tmp/prog.art" <<'SH'
mkdir -p outputs/sub
printf '\211PNG\r\n\032\nIHDRdata' >outputs/plot.png
printf 'hello artifacts\n' >outputs/note.txt
head -c 2000 /dev/zero >outputs/big.bin
ln -s /etc/passwd outputs/passwd
echo inner >outputs/sub/inner.txt
echo done
SH

cli run --json "$tmp/prog.art"
check "run --json: ok, the program's output" \
    json_check 'j["status"] == "ok" and j["stdout"] == "done\n"'
check "run --json: the PNG and the text file, with their sizes and MIME types" \
    json_check '([(a["path"], a["size"], a["mime"]) for a in j["artifacts"]] ==
                [("note.txt", 16, "text/plain"), ("plot.png", 16, "image/png")])'
check "run --json: their bytes, as base64" \
    json_check '([base64.b64decode(a["base64"]) for a in j["artifacts"]] ==
                [b"hello artifacts\n", b"\x89PNG\r\n\x1a\nIHDRdata"])'
check "run --json: the file over the cap is left out, the cap named" \
    json_check '([(o["size"], o["reason"]) for o in j["artifacts_left_out"] if o["path"] == "big.bin"] ==
                [(2000, "larger than artifacts_max_file (1024 bytes)")])'
check "run --json: the link to /etc/passwd is left out, not followed" \
    json_check '([o["reason"] for o in j["artifacts_left_out"] if o["path"] == "passwd"] ==
                ["a symbolic link: links are not followed"] and
                all("root:" not in base64.b64decode(a["base64"]).decode("latin-1") for a in j["artifacts"]))'
check "run --json: the subdirectory is left out, said so" \
    json_check '([o["reason"] for o in j["artifacts_left_out"] if o["path"] == "sub"] ==
                ["a directory: only the files at the top of artifacts are collected"])'

cli run --artifacts "$tmp/saved" "$tmp/prog.art"
check "run --artifacts DIR: the two files saved with their bytes, nothing else" \
    eval 'is_rc 0 && [ "$(ls "$tmp/saved" | tr "\n" " ")" = "note.txt plot.png " ] &&
          [ "$(cat "$tmp/saved/note.txt")" = "hello artifacts" ] &&
          [ "$(wc -c <"$tmp/saved/plot.png")" -eq 16 ] && err_has "big.bin'"'"' left out"'
cli run --artifacts "$tmp/saved" "$tmp/prog.art"
check "run --artifacts DIR again: nothing overwritten, said so, exit 125" \
    eval 'is_rc 125 && err_has "it exists already (not overwritten)"'

# A provider that cannot read files back refuses the template.
POLYSANDBOX_PROVIDER_PATH="$top_builddir/tests/cli/.libs:$POLYSANDBOX_PROVIDER_PATH"
export POLYSANDBOX_PROVIDER_PATH
printf '[provider]\nenabled = true\n' >"$tmp/cfg/providers.d/nostream.ini"
cli run --provider nostream "$tmp/prog.art"
check "a provider without the files capability refuses an artifacts template" \
    eval 'is_rc 125 && err_has "declares artifacts but provider nostream cannot read files back"'

done_testing
