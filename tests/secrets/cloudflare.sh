#!/bin/sh
# tests/secrets/cloudflare.sh - the cloudflare provider's bridge key,
# sealed: in no log line at debug level, no error message, no --json, no
# sandbox's environment, no process listing, not in the fake's log; a
# refused key named by its setting, never shown.
. "$top_srcdir/tests/cloudflare/lib.sh"
tmp=$CF_DIR
PS="$top_builddir/polysandbox"
CLI_TIMEOUT=120
PY=$CF_PYTHON
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/secrets/cloud.sh"
plan 9
cf_start
FAKE_LOG="$CF_DIR/fake.log"
SECRETS=$CF_KEY
DOCTOR_SAYS="no host checks"    # the provider has no doctor: nothing to show

cli secret init
s_key=$(seal "$CF_KEY")
check "the key sealed" sh -c "case '$s_key' in sealed:v1:*) true;; *) false;; esac"
cf_config "$s_key"
# The environment reference is gone: only the sealed value can work.
unset CLOUDFLARE_TEST_KEY
sealed_run_checks cloudflare

cf_config "$(seal "$CF_KEY-but-wrong")"
POLYSANDBOX_LOG=debug cli run --json -- echo hi
check "a key the bridge refuses: SBX_E_AUTH naming api_key" \
    json_check "j['error_code'] == 9 and 'check api_key' in j['error']"
check "...holding no secret" no_secret "$tmp/out" "$tmp/err"
done_testing
