#!/bin/sh
# tests/secrets/modal.sh - the modal provider's credentials, sealed: the
# token id and secret (and the auth and router tokens Modal hands out for
# them) in no log line at debug level, no error message, no --json, no
# sandbox's environment, nothing the fake was sent but the metadata that
# carries them; a wrong one refused without showing it.
. "$top_srcdir/tests/modal/lib.sh"
plan 9
start_fake --verbose

printf '%s\n' "$MODAL_FAKE_ID" >"$tmp/in"
cli_in "$tmp/in" --config-dir "$tmp/config" secret init
cli_in "$tmp/in" --config-dir "$tmp/config" secret seal
sealed_id=$(cat "$tmp/out")
printf '%s\n' "$MODAL_FAKE_SECRET" >"$tmp/in"
cli_in "$tmp/in" --config-dir "$tmp/config" secret seal
sealed_secret=$(cat "$tmp/out")
check "both halves of the token sealed" \
    sh -c "case '$sealed_id$sealed_secret' in sealed:v1:*sealed:v1:*) true;; *) false;; esac"
TOKEN_ID_REF=$sealed_id TOKEN_SECRET_REF=$sealed_secret write_config
# The environment references are gone: only the sealed values can work.
token_id=$MODAL_FAKE_ID
token_secret=$MODAL_FAKE_SECRET
unset MODAL_FAKE_ID MODAL_FAKE_SECRET
# no_secret FILE...: neither half of the token, nor a JWT (the auth and
# router tokens: their header's base64 starts so), is in the files.
no_secret() {
    ! grep -q -F -e "$token_id" -e "$token_secret" -e 'eyJhbGciOi' "$@"
}

POLYSANDBOX_LOG=debug cli run --json -- sh -c 'env; echo ran'
check "a run with the sealed token works" sh -c "[ $rc -eq 0 ] && grep -q ran '$tmp/out'"
check "...and at debug level neither the secret nor a JWT is in any output, nor the sandbox's environment" \
    no_secret "$tmp/out" "$tmp/err"
check "...nor in the fake's own log" no_secret "$tmp/fake.err"

POLYSANDBOX_LOG=debug cli doctor --provider modal
check "doctor: set (not shown), reachable" sh -c "[ $rc -eq 0 ] && grep -q 'not shown' '$tmp/out'"
check "...and it shows no secret" no_secret "$tmp/out" "$tmp/err"

# A token the fake refuses: the error names the settings, not the value.
start_fake --token-secret as-another-secret-altogether
TOKEN_ID_REF=$sealed_id TOKEN_SECRET_REF=$sealed_secret write_config
POLYSANDBOX_LOG=debug cli run --json -- echo hi
check "a refused token: an authentication error naming the settings" \
    sh -c "[ $rc -eq 125 ] && grep -q 'check token_id and token_secret' '$tmp/out'"
check "...holding no secret" no_secret "$tmp/out" "$tmp/err"
cli --config-dir "$tmp/config" secret check
check "secret check opens both sealed values and prints neither" \
    sh -c "[ $rc -eq 0 ] && grep -q 'modal.token_secret' '$tmp/out'" && no_secret "$tmp/out" "$tmp/err"
done_testing
