# tests/server/ws-lib.sh - WebSocket sessions with the npm `ws` client
# (sourced after lib.sh, npm.sh's npm_clients and srv_start)
#
# ws PATH STEP...: one session; its transcript in $tmp/ws.json (the steps:
# tests/server/ws-client.mjs).  wj EXPR: EXPR holds of that record (j);
# if not, the record is shown.
wsbase=$(echo "$base" | sed 's/^http:/ws:/')
ws() {
    p=$1
    shift
    node "$top_srcdir/tests/server/ws-client.mjs" "$NODE_MODULES" "$wsbase$p" "$tmp/ws.json" "$@"
}
wj() {
    json_check_file "$tmp/ws.json" "$1" && return 0
    # (a last line without its newline would swallow the "not ok" after it)
    { head -c 4000 "$tmp/ws.json"; echo; } | fold -w 200 | sed 's/^/# ws: /'
    return 1
}
