#!/bin/sh
# tests/clouds/failover-volcengine.sh - tests/clouds/failover.sh the other
# way round: Volcengine goes down mid-evaluation and the run finishes on
# Cloudflare.
FAILOVER_FIRST=volcengine
FAILOVER_NEXT=cloudflare
. "$top_srcdir/tests/clouds/failover.sh"
