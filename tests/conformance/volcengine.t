#!/bin/sh
# tests/conformance/volcengine.t - the conformance kit against the
# volcengine provider, pointed at the local fake of veFaaS and the AIO
# sandbox (tests/fakes/volcengine.py).
. "$top_srcdir/tests/volcengine/lib.sh"
vc_start
"$top_builddir/polysandbox-conformance" --test-timeout 120 volcengine
