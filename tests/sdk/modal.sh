#!/bin/sh
# tests/sdk/modal.sh - Modal's own JavaScript SDK (npm modal, pinned in
# tests/sdk/package-lock.json) drives the Modal fake through every
# operation the modal provider uses, over gRPC: the fake's fidelity,
# proven with a client nobody here wrote (tests/sdk/modal.mjs holds the
# checks).  The SDK's default backend is Sandbox V2 (SandboxCreateV2 and
# the *V2 calls); the provider speaks V1, which the SDK still ships and
# selects with MODAL_SANDBOX_V2=false: that is what is driven here.
. "$top_srcdir/tests/modal/lib.sh"
. "$top_srcdir/tests/sdk/lib.sh"
sdk_install "$tmp/sdk"
start_fake --verbose
status=0
MODAL_SERVER_URL=$base MODAL_TOKEN_ID=$MODAL_FAKE_ID MODAL_TOKEN_SECRET=$MODAL_FAKE_SECRET \
    MODAL_SANDBOX_V2=false MODAL_CONFIG_PATH="$tmp/no-modal.toml" SDK_RUN="sdk-$$" HOME="$tmp" \
    timeout -k 5 300 node "$tmp/sdk/modal.mjs" || status=1
if [ $status -ne 0 ]; then
    sed 's/^/# fake: /' "$tmp/fake.err" | tail -20
fi
exit $status
