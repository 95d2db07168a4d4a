#!/bin/sh
# tests/sdk/volcengine.sh - Volcengine's own Node SDK (npm
# @volcengine/openapi, pinned in tests/sdk/package-lock.json) drives the
# Volcengine fake: every veFaaS action the volcengine provider uses, then
# requests its Signer signed, as sent (accepted) and tampered with
# (refused): the fake checks signatures as the gateway does, proven with
# a signer nobody here wrote (tests/sdk/volcengine.mjs holds the checks).
. "$top_srcdir/tests/volcengine/lib.sh"
. "$top_srcdir/tests/sdk/lib.sh"
sdk_install "$VC_DIR/sdk"
vc_start --session-token "sts-$$"
VOLC_HOST=${VC_URL#http://} VOLC_AK=$VC_AK VOLC_SK=$VC_SK VOLC_TOKEN="sts-$$" \
    VOLC_FUNCTION=$VC_FUNCTION SDK_RUN="sdk-$$" \
    timeout -k 5 300 node "$VC_DIR/sdk/volcengine.mjs"
