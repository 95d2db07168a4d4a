#!/bin/sh
# tests/server/artifacts.sh - POST /v1/run returns a template's artifacts
# (TAP)
#
# A test template (artifacts = outputs, artifacts_max_file = 1K) runs a
# shell program that writes a PNG, a text file, a file in a subdirectory
# and a file over the cap; the reply carries the first three (path, size,
# MIME type, base64; "plots/a.txt" for the one below) and names the
# fourth as left out.  The Python package gives the same as
# Result.artifacts and Result.artifacts_left_out, through the server
# (Client) and in the process (Local); Artifact.save makes the
# subdirectory, and refuses a path that is not relative plain names or
# that goes through a link.
. "$top_srcdir/tests/server/lib.sh"

plan 6

srv_art_config

check "polysandboxd starts with an artifacts template" srv_start

prog='mkdir -p outputs/plots && printf "\\211PNG\\r\\n\\032\\nIHDRdata" >outputs/plot.png && echo hi >outputs/note.txt && head -c 2000 /dev/zero >outputs/big.bin && echo sub >outputs/plots/a.txt'
body=$("$PY" -c 'import json, sys; print(json.dumps({"language": "art", "code": sys.argv[1]}))' "$prog")
post /v1/run "$body"
check "POST /v1/run: the PNG, the text files (one in a subdirectory), sizes, MIME types, bytes" \
    eval 'is 200 && json_check "sorted((a[\"path\"], a[\"size\"], a[\"mime\"], base64.b64decode(a[\"base64\"])) for a in j[\"artifacts\"]) == [(\"note.txt\", 3, \"text/plain\", b\"hi\\n\"), (\"plot.png\", 16, \"image/png\", b\"\\x89PNG\\r\\n\\x1a\\nIHDRdata\"), (\"plots/a.txt\", 4, \"text/plain\", b\"sub\\n\")]"'
check "POST /v1/run: the file over the cap left out, the cap named" \
    json_check '[(o["path"], o["reason"]) for o in j["artifacts_left_out"]] == [("big.bin", "larger than artifacts_max_file (1024 bytes)")]'

# In a subshell: the sanitizer runtimes preloaded for python3 (in an ASan
# build) are not for the server's other clients.
(
. "$top_srcdir/tests/python/sanitizer-env.sh"
[ -z "$py_skip" ] || { echo "skip $py_skip"; exit 0; }
POLYSANDBOX_LIBRARY="$top_builddir/core/.libs/libpolysandbox.so" \
"$PY" - "$base" "$prog" <<'PYEOF'
import os, sys
sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "python"))
import polysandbox as psb
for name, runner in (("client", psb.Client(sys.argv[1])), ("local", psb.Local())):
    r = runner.run_code("art", sys.argv[2])
    print(name, sorted((a.path, a.size, a.mime, a.data) for a in r.artifacts) ==
          [("note.txt", 3, "text/plain", b"hi\n"), ("plot.png", 16, "image/png", b"\x89PNG\r\n\x1a\nIHDRdata"),
           ("plots/a.txt", 4, "text/plain", b"sub\n")],
          [(o.path, o.size) for o in r.artifacts_left_out] == [("big.bin", 2000)],
          r.status, r.stderr, r.artifacts_left_out, flush=True)
# save: the subdirectory made; hostile paths refused; a link in the
# directory never followed, nothing written where it points.
import tempfile
d = tempfile.mkdtemp()
sub = [a for a in r.artifacts if a.path == "plots/a.txt"][0]
ok = sub.save(d) == os.path.join(d, "plots", "a.txt") and open(os.path.join(d, "plots", "a.txt"), "rb").read() == b"sub\n"
for bad in ("../x", "/tmp/x", "a/../../x", "a//b", "a/", "", ".", "a\nb"):
    try:
        psb.Artifact(bad, 1, "text/plain", b"x").save(d)
        ok = False
    except ValueError:
        pass
os.mkdir(os.path.join(d, "out"))
os.symlink(os.path.join(d, "out"), os.path.join(d, "link"))
try:
    psb.Artifact("link/x", 1, "text/plain", b"x").save(d)
    ok = False
except OSError:
    pass
print("save", ok and os.listdir(os.path.join(d, "out")) == [], flush=True)
PYEOF
) >"$tmp/py.out" 2>&1
sed 's/^/# /' "$tmp/py.out"
if grep -q '^skip ' "$tmp/py.out"; then
    why=$(sed -n 's/^skip //p' "$tmp/py.out")
    ok "Python: Result.artifacts through polysandboxd # SKIP $why"
    ok "Python: the same in the process # SKIP $why"
    ok "Python: Artifact.save # SKIP $why"
else
    check "Python: Result.artifacts and artifacts_left_out through polysandboxd" \
        grep -q '^client True True ' "$tmp/py.out"
    check "Python: the same in the process (Local, the library through ctypes)" \
        grep -q '^local True True ' "$tmp/py.out"
    check "Python: Artifact.save makes subdirectories, refuses ../, /, a link" \
        grep -q '^save True$' "$tmp/py.out"
fi

done_testing
