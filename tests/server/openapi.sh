#!/bin/sh
# tests/server/openapi.sh - the OpenAPI document in the tree
# (core/server/openapi.json) against the server: the routes it serves,
# /openapi.json, and every answer of every route (tests/server/openapi.py).
# The server has a token (for the 401s), one worker and a queue of one
# (for the 429) and a 64 KiB body cap (for the 413).
. "$top_srcdir/tests/server/lib.sh"

token=openapi-test-token-0123456789
printf '%s\n' "$token" >"$tmp/tokens"
chmod 600 "$tmp/tokens"
set -- --token-file "$tmp/tokens" -o server.workers=1 -o server.queue=1 -o server.max_body=64K
if ! "$PSD" "$@" --routes >"$tmp/routes" 2>"$tmp/err" || ! srv_start "$@"; then
    echo "1..1"
    echo "not ok 1 - polysandboxd starts"
    sed 's/^/# /' "$tmp/err" "$tmp/server.log"
    exit 1
fi
"$PY" "$top_srcdir/tests/server/openapi.py" "$base" "$token" \
    "$top_srcdir/core/server/openapi.json" "$tmp/routes"
rc=$?
[ $rc = 0 ] || sed 's/^/# server: /' "$tmp/server.log" | tail -40
exit $rc
