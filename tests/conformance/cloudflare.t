#!/bin/sh
# tests/conformance/cloudflare.t - the conformance kit against the
# cloudflare provider, pointed at the local fake of the bridge Worker
# (tests/fakes/cloudflare.py).
. "$top_srcdir/tests/cloudflare/lib.sh"
cf_start
"$top_builddir/polysandbox-conformance" --test-timeout 120 cloudflare
