#!/bin/sh
# tests/server/files.sh - GET /v1/sandboxes/{id}/files?path=DIR, the
# listing of a sandbox's directory (sbx_sandbox_list_files) on the local
# provider: names, types, sizes and times as stat(1) in the sandbox sees
# them; hostile names (a newline, HTML, bytes that are not UTF-8) kept
# exact; a link listed, not followed; the cap (limit=, truncated); a
# '..', absolute or empty-part path refused (400 "path"), an unknown
# directory and an unknown sandbox 404, a bad limit 400; no token 401.
. "$top_srcdir/tests/server/lib.sh"

plan 15

token=files-test-token-0123456789abcdef
printf '%s\n' "$token" >"$tmp/tokens"
chmod 600 "$tmp/tokens"
check "polysandboxd starts with a token" srv_start --token-file "$tmp/tokens"
auth="Authorization: Bearer $token"

post /v1/sandboxes '{}' -H "$auth"
box=$(sed -n 's/.*"id":"\([^"]*\)".*/\1/p' "$tmp/out")
# A directory with a file of 5 bytes, a subdirectory, a link out of the
# sandbox, and names with a newline, HTML and an invalid UTF-8 byte.
post "/v1/sandboxes/$box/exec" '{"shell":"mkdir -p d/sub && printf hello >d/a.txt && ln -s /etc d/link && printf x >\"d/two\nlines\" && printf y >\"d/<img src=x onerror=alert(1)>\" && printf z >\"$(printf '"'"'d/bad\\377'"'"')\" && touch -d @1700000000 d/a.txt && echo ok"}' -H "$auth"
check "a sandbox with a directory d is made" eval 'is 200 && json_check "j[\"stdout\"] == \"ok\\n\""'

req GET "/v1/sandboxes/$box/files?path=d" -H "$auth"
check "the listing of d answers 200 with 6 entries, not truncated" \
    eval 'is 200 && json_check "len(j[\"entries\"]) == 6 and j[\"truncated\"] is False and j[\"path\"] == \"d\""'
check "a.txt: a file of 5 bytes, mtime 1700000000" \
    json_check '[(e["type"], e["size"], e["mtime"]) for e in j["entries"] if e["name"] == "a.txt"] == [("file", 5, 1700000000)]'
check "sub is a directory, link a symlink (not followed)" \
    json_check '{e["name"]: e["type"] for e in j["entries"]}["sub"] == "directory" and {e["name"]: e["type"] for e in j["entries"]}["link"] == "symlink"'
check "a name with a newline and one with HTML are kept exact" \
    json_check '"two\nlines" in [e["name"] for e in j["entries"]] and "<img src=x onerror=alert(1)>" in [e["name"] for e in j["entries"]]'
check "a name that is not UTF-8: U+FFFD shown, its bytes in name_base64" \
    json_check '[base64.b64decode(e["name_base64"]) for e in j["entries"] if e["name"] == "bad\ufffd"] == [b"bad\xff"]'

req GET "/v1/sandboxes/$box/files" -H "$auth"
check "no path: the work directory, holding d" \
    eval 'is 200 && json_check "j[\"path\"] == \".\" and [e[\"type\"] for e in j[\"entries\"] if e[\"name\"] == \"d\"] == [\"directory\"]"'

req GET "/v1/sandboxes/$box/files?path=d&limit=2" -H "$auth"
check "limit=2: two entries (sorted), truncated" \
    eval 'is 200 && json_check "len(j[\"entries\"]) == 2 and j[\"truncated\"] is True"'

req GET "/v1/sandboxes/$box/files?path=d/../.." -H "$auth"
check "a '..' part: 400 path" err_is 400 path
req GET "/v1/sandboxes/$box/files?path=/etc" -H "$auth"
check "an absolute path: 400 path" err_is 400 path
req GET "/v1/sandboxes/$box/files?path=d&limit=0" -H "$auth"
check "limit=0: 400 invalid" err_is 400 invalid

req GET "/v1/sandboxes/$box/files?path=nonesuch" -H "$auth"
check "a directory that is not there: 404 naming it" \
    eval 'err_is 404 not_found && json_check "\"nonesuch\" in j[\"error\"][\"message\"]"'
req GET "/v1/sandboxes/no-such-sandbox-$$/files?path=d" -H "$auth"
check "an unknown sandbox: 404" err_is 404 not_found

req GET "/v1/sandboxes/$box/files?path=d"
check "no token: 401" err_is 401 unauthorized
req DELETE "/v1/sandboxes/$box" -H "$auth"
