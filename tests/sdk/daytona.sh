#!/bin/sh
# tests/sdk/daytona.sh - Daytona's own TypeScript SDK (npm @daytonaio/sdk,
# pinned in tests/sdk/package-lock.json) drives the Daytona fake through
# every operation the daytona provider uses: the fake's fidelity, proven
# with a client nobody here wrote (tests/sdk/daytona.mjs holds the checks).
. "$top_srcdir/tests/daytona/lib.sh"
. "$top_srcdir/tests/sdk/lib.sh"
sdk_install "$DT_DIR/sdk"
dt_start
DAYTONA_API_URL="$DT_URL/api" DAYTONA_API_KEY=$DT_KEY SDK_RUN="sdk-$$" \
    timeout -k 5 300 node "$DT_DIR/sdk/daytona.mjs"
