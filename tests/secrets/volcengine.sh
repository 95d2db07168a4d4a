#!/bin/sh
# tests/secrets/volcengine.sh - the volcengine provider's credentials,
# sealed: the access key id, the secret key, an STS token and the AIO
# server's key in no log line at debug level, no error message, no
# --json, no sandbox's environment, no process listing, not in the fake's
# log; a refused one named by its settings, never shown.
. "$top_srcdir/tests/volcengine/lib.sh"
tmp=$VC_DIR
PS="$top_builddir/polysandbox"
CLI_TIMEOUT=120
PY=$VC_PYTHON
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/secrets/cloud.sh"
plan 10
TOKEN="sts-Token-$$-not-for-eyes"
AIO="aio-Key-$$-not-for-eyes"
vc_start --verbose --session-token "$TOKEN" --sandbox-api-key "$AIO"
FAKE_LOG="$VC_DIR/fake.log"
SECRETS="$VC_AK
$VC_SK
$TOKEN
$AIO"

cli secret init
s_ak=$(seal "$VC_AK") s_sk=$(seal "$VC_SK") s_tok=$(seal "$TOKEN") s_aio=$(seal "$AIO")
check "all four sealed" sh -c "case '$s_ak $s_sk $s_tok $s_aio' in sealed:v1:*\ sealed:v1:*\ sealed:v1:*\ sealed:v1:*) true;; *) false;; esac"
vc_config "$s_ak" "$s_sk" "session_token = $s_tok" "sandbox_api_key = $s_aio"
# The environment references are gone: only the sealed values can work.
unset VOLCENGINE_TEST_AK VOLCENGINE_TEST_SK
sealed_run_checks volcengine

# A secret key the gateway does not know: refused, named, never shown.
vc_config "$(seal "$VC_SK-but-wrong")" "$s_sk" "session_token = $s_tok" \
    "sandbox_api_key = $s_aio"
POLYSANDBOX_LOG=debug cli run --json -- echo hi
check "an access key id the gateway does not know: SBX_E_AUTH naming the settings" \
    json_check "j['error_code'] == 9 and 'check access_key_id and secret_access_key' in j['error']"
check "...holding no secret" no_secret "$tmp/out" "$tmp/err"
vc_config "$s_ak" "$s_sk" "session_token = $s_tok" "sandbox_api_key = $(seal "$AIO-x")"
POLYSANDBOX_LOG=debug cli run --json -- echo hi
check "a wrong AIO key: SBX_E_AUTH naming sandbox_api_key, holding no secret" \
    eval 'json_check "j[\"error_code\"] == 9 and \"sandbox_api_key\" in j[\"error\"]" && no_secret "$tmp/out" "$tmp/err"'
done_testing
