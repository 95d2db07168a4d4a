#!/bin/sh
# tests/cli/files.sh - polysandbox files ID [PATH] on the local provider:
# one line an entry (type, size, UTC time, name escaped), --json as
# polysandboxd's listing, the provider found from the id, and distinct
# exit statuses for no sandbox (2), no directory (1) and a path leaving
# the work directory (3).
. "$top_srcdir/tests/cli/lib.sh"

plan 12

cli create -p local --persistent --ttl 10m
id=$(cat "$tmp/out")
trap '[ -n "$id" ] && "$PS" destroy -p local "$id" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
# a name with a backslash, a newline, UTF-8 (e acute) and a byte that is not
cli exec "$id" -- sh -c 'mkdir -p d/sub && printf hello >d/a.txt && printf 1234567 >d/.h &&
    touch -d @1700000000 d/a.txt && ln -s /etc/passwd d/ln &&
    printf x >"d/$(printf "n\\\\l\nx\303\251\377")"'
check "set-up in the sandbox" is_rc 0

cli files "$id" d
check "files ID PATH without --provider: one line an entry" \
    eval 'is_rc 0 && [ "$(wc -l <"$tmp/out")" -eq 5 ]'
check "a file: type, size, UTC time, name" \
    grep -qx 'file *5 2023-11-14T22:13:20Z a\.txt' "$tmp/out"
check "a directory, a hidden file and a link (not followed) are listed" \
    eval 'grep -q "^directory .* sub\$" "$tmp/out" && grep -q "^file *7 .* \\.h\$" "$tmp/out" &&
          grep -q "^symlink .* ln\$" "$tmp/out"'
check "a name's backslash, control and non-UTF-8 bytes are escaped, UTF-8 kept" \
    grep -qF 'n\\l\nxé\xff' "$tmp/out"

cli files --json "$id" d
check "--json: polysandboxd's listing object" \
    eval 'is_rc 0 && json_check "(j[\"sandbox_id\"] == \"$id\" and j[\"path\"] == \"d\" and
          j[\"truncated\"] is False and len(j[\"entries\"]) == 5 and
          {\"name\": \"a.txt\", \"type\": \"file\", \"size\": 5, \"mtime\": 1700000000}
          in j[\"entries\"] and
          [base64.b64decode(e[\"name_base64\"]) for e in j[\"entries\"] if \"name_base64\" in e]
          == [b\"n\\\\l\\nx\\xc3\\xa9\\xff\"])"'

cli files --json --limit 2 "$id" d
check "--limit 2: two entries, truncated" \
    eval 'is_rc 0 && json_check "len(j[\"entries\"]) == 2 and j[\"truncated\"] is True"'
cli files --limit 2 "$id" d
check "--limit in text: a note on stderr says there were more" \
    eval 'is_rc 0 && [ "$(wc -l <"$tmp/out")" -eq 2 ] && err_has "more than 2 entries"'

cli files "$id" d/a.txt
check "a path that is not a directory: exit 1 naming it" rc_and_err 1 "d/a.txt"
cli files "$id" ../..
check "a path leaving the work directory: exit 3 naming it" rc_and_err 3 "'../..'"
cli files lcl-0000000000000000
check "no such sandbox: exit 2 naming it" rc_and_err 2 "lcl-0000000000000000"
cli files --limit 0 "$id"
check "--limit 0: usage error" rc_and_err 2 "--limit"

done_testing
