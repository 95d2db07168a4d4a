#!/bin/sh
# tests/daytona/wire.sh - the Daytona fake's own wire behaviour (wire.py),
# so that the provider's tests rest on a fake that is itself checked.
. "$top_srcdir/tests/daytona/lib.sh"
dt_start
"$DT_PYTHON" "$top_srcdir/tests/daytona/wire.py" "$DT_URL" "$DT_KEY"
