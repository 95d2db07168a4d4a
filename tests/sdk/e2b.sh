#!/bin/sh
# tests/sdk/e2b.sh - E2B's own JavaScript SDK (npm e2b, pinned in
# tests/sdk/package-lock.json) drives the E2B fake through every operation
# the e2b provider uses: the fake's fidelity, proven with a client nobody
# here wrote (tests/sdk/e2b.mjs holds the checks).  Twice: envd 0.5.7
# (raw uploads) and 0.5.6 (multipart uploads only), as the provider speaks
# both.
. "$top_srcdir/tests/e2b/lib.sh"
. "$top_srcdir/tests/sdk/lib.sh"
sdk_install "$tmp/sdk"
status=0
echo 0 >"$tmp/count"
for envd in 0.5.7 0.5.6; do
    echo "# envd $envd"
    start_fake --verbose --envd-version "$envd"
    E2B_API_URL=$base E2B_SANDBOX_URL=$base E2B_API_KEY=$E2B_FAKE_KEY SDK_RUN="sdk-$$" \
        TAP_FIRST=$(($(cat "$tmp/count") + 1)) TAP_COUNT_FILE="$tmp/count" \
        timeout -k 5 300 node "$tmp/sdk/e2b.mjs" || status=1
    # The SDK's list filter and upload on the wire, for the record (the
    # fake decodes the filter as the service does: parse_metadata_filter).
    grep -o 'GET /v2/sandboxes?metadata=[^ ]*' "$tmp/fake.err" | head -1 | sed 's/^/# wire: /'
    if [ $status -ne 0 ]; then
        sed 's/^/# fake: /' "$tmp/fake.err" | grep -v '" 20[0-9] ' | tail -20
    fi
done
echo "1..$(cat "$tmp/count")"
exit $status
