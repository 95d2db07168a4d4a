#!/bin/sh
# tests/conformance/daytona.t - the conformance kit against the daytona
# provider, pointed at the local Daytona fake (tests/fakes/daytona.py).
. "$top_srcdir/tests/daytona/lib.sh"
dt_start
"$top_builddir/polysandbox-conformance" --test-timeout 120 daytona
