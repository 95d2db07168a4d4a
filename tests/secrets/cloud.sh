# tests/secrets/cloud.sh - the pieces of the cloud providers' sealed
# credential tests (tests/secrets/cloudflare.sh, volcengine.sh): seal
# values with the host key, run a provider with them at debug level, and
# look for them everywhere they must not be (sourced after the provider's
# lib.sh and tests/lib/tap.sh; POSIX sh).
#
# Set SECRETS (the values, one per line) and FAKE_LOG before the checks,
# and DOCTOR_SAYS when the provider's doctor does not say "not shown".

# seal VALUE: VALUE sealed to the configuration's host key, on stdout.
seal() {
    printf '%s\n' "$1" >"$tmp/in"
    "$PS" secret seal <"$tmp/in" 2>"$tmp/err"
    rm -f "$tmp/in"
}

# no_secret FILE...: none of the secret values is in any of the files.
no_secret() {
    printf '%s\n' "$SECRETS" >"$tmp/needles"
    ! grep -q -F -f "$tmp/needles" "$@"
}

# no_secret_in_process PID: nor in that process's command line or
# environment (read while it runs).
no_secret_in_process() {
    tr '\0' '\n' <"/proc/$1/cmdline" >"$tmp/proc" 2>/dev/null &&
        tr '\0' '\n' <"/proc/$1/environ" >>"$tmp/proc" 2>/dev/null &&
        no_secret "$tmp/proc"
}

# sealed_run_checks PROVIDER: the checks every cloud provider passes with
# sealed credentials (6 of them): a run works at debug level with no
# secret in its output, its log, the sandbox's environment or the fake's
# log; none in the running process; doctor shows none; secret check
# opens them all and prints none.
sealed_run_checks() {
    provider=$1
    POLYSANDBOX_LOG=debug cli run --json -- sh -c 'env; echo ran'
    check "a run with the sealed credentials works" \
        sh -c "[ $rc -eq 0 ] && grep -q ran '$tmp/out'"
    check "...and at debug level no secret is in any output, nor the sandbox's environment" \
        no_secret "$tmp/out" "$tmp/err"
    check "...nor in the fake's own log" no_secret "$FAKE_LOG"
    "$PS" run -- sleep 3 >/dev/null 2>&1 &
    pid=$!
    sleep 1
    check "...nor in the command line or environment of a running polysandbox" \
        no_secret_in_process "$pid"
    wait "$pid"
    POLYSANDBOX_LOG=debug cli doctor --provider "$provider"
    check "doctor: ${DOCTOR_SAYS:-not shown}, no secret shown" \
        eval '[ $rc -eq 0 ] && out_has "${DOCTOR_SAYS:-not shown}" && no_secret "$tmp/out" "$tmp/err"'
    cli secret check
    check "secret check opens every sealed value and prints none" \
        eval '[ $rc -eq 0 ] && out_has "$provider." && no_secret "$tmp/out" "$tmp/err"'
}
