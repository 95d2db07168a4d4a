#!/bin/sh
# tests/server/auth.sh - bearer tokens: from a 0600 token file (other
# modes refused), from [server] tokens (a sealed value and an env:
# reference); missing, wrong and right tokens; /healthz and /readyz
# without one; a non-loopback address refused without a token; the
# per-token concurrency quota (429); tokens never in the log.
. "$top_srcdir/tests/server/lib.sh"

plan 20

tok1=file-token-aaaaaaaaaaaaaaaa
tok2=file-token-bbbbbbbbbbbbbbbb
printf '# tokens of the test\n%s\n\n  %s  \n' "$tok1" "$tok2" >"$tmp/tokens"

chmod 644 "$tmp/tokens"
"$PSD" --listen 127.0.0.1:0 --token-file "$tmp/tokens" 2>"$tmp/err" &
pid=$!
wait $pid
rc=$?
check "a token file others may read is refused (exit 2, naming the mode)" \
    eval '[ $rc = 2 ] && grep -q "mode 0644" "$tmp/err"'
chmod 600 "$tmp/tokens"

check "polysandboxd starts with the token file" srv_start --token-file "$tmp/tokens"
req GET /v1/status
check "no token: 401 with WWW-Authenticate" \
    eval 'err_is 401 unauthorized && header WWW-Authenticate | grep -q Bearer'
req GET /v1/status -H "Authorization: Bearer ${tok1}x"
check "a wrong token: 401" err_is 401 unauthorized
req GET /v1/status -H "Authorization: Basic $tok1"
check "another scheme: 401 naming Bearer" \
    eval 'err_is 401 unauthorized && json_check "\"Bearer\" in j[\"error\"][\"message\"]"'
req GET /v1/status -H "Authorization: Bearer $tok1"
check "the first token of the file: 200" is 200
req GET /v1/status -H "Authorization: bearer $tok2"
check "the second (indented, scheme in lower case): 200" is 200
req GET /v1/status -H "X-API-Key: $tok1"
check "the token in X-API-Key: 200" is 200
req GET /v1/status -H "X-Auth-Token: ${tok1}x"
check "a wrong token in X-Auth-Token: 401 naming the header" \
    eval 'err_is 401 unauthorized && json_check "\"X-Auth-Token\" in j[\"error\"][\"message\"]"'
post /v1/run '{"argv":["true"]}' -H "Authorization: Bearer $tok2"
check "a run with a token: 200" eval 'is 200 && json_check "j[\"status\"] == \"ok\""'
post /v1/run '{"argv":["true"]}'
check "a run without: 401, nothing run" err_is 401 unauthorized
req GET /healthz
check "/healthz needs no token" is 200
req GET /readyz
check "/readyz needs no token" is 200
check "no token is in the log" eval '! grep -q -e "$tok1" -e "$tok2" "$tmp/server.log"'
srv_stop

# ---- [server] tokens: sealed and env: ------------------------------------------------
cp -r "$POLYSANDBOX_CONFIG_DIR" "$tmp/config"
"$PS" --config-dir "$tmp/config" secret init >/dev/null 2>&1
sealed=$(printf 'sealed-token-cccccccccccccc' | "$PS" --config-dir "$tmp/config" secret seal 2>"$tmp/err")
printf '\n[server]\ntokens = %s, env:PSD_TEST_TOKEN\ntoken_concurrency = 1\n' "$sealed" \
    >>"$tmp/config/polysandbox.ini"
PSD_TEST_TOKEN=env-token-dddddddddddddddd
export PSD_TEST_TOKEN
check "polysandboxd starts with [server] tokens" srv_start --config-dir "$tmp/config"
req GET /v1/status -H 'Authorization: Bearer sealed-token-cccccccccccccc'
check "the sealed token opens: 200" is 200
req GET /v1/status -H "Authorization: Bearer $PSD_TEST_TOKEN"
check "the env: token: 200" is 200

# token_concurrency = 1: a second request of the same token while one runs.
curl -sS -o /dev/null "$base/v1/run" -H "Authorization: Bearer $PSD_TEST_TOKEN" \
    -d '{"argv":["sleep","4"]}' &
cpid=$!
wait_status 'j["workers"]["busy"] == 1' -H 'Authorization: Bearer sealed-token-cccccccccccccc'
post /v1/run '{"argv":["true"]}' -H "Authorization: Bearer $PSD_TEST_TOKEN"
check "over the token's quota: 429 quota with Retry-After" \
    eval 'err_is 429 quota && [ -n "$(header Retry-After)" ]'
post /v1/run '{"argv":["true"]}' -H 'Authorization: Bearer sealed-token-cccccccccccccc'
check "another token is not held by it: 200" is 200
wait $cpid
srv_stop
unset PSD_TEST_TOKEN

# ---- no token on an address that is not loopback ---------------------------------------
"$PSD" --listen 0.0.0.0:0 2>"$tmp/err" &
pid=$!
wait $pid
rc=$?
check "0.0.0.0 without a token is refused (exit 2)" \
    eval '[ $rc = 2 ] && grep -q "refusing to listen on 0.0.0.0" "$tmp/err"'
done_testing
