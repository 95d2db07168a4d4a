#!/bin/sh
# tests/conformance/e2b.t - the conformance kit against the e2b provider,
# talking to the E2B fake (tests/fakes/e2b.py) on 127.0.0.1.  The kit
# prints TAP itself.  The fake enforces "no internet access" with a
# network namespace; where the host allows none, network_none is left out.
. "$top_srcdir/tests/e2b/lib.sh"
start_fake
set --
if [ "$netns" != yes ]; then
    echo "# the fake cannot make network namespaces here: network_none left out"
    set -- --only "$("$top_builddir/polysandbox-conformance" --list |
        awk '/^[a-z]/ && $1 != "network_none" { print $1 }' | paste -sd, -)"
fi
timeout -k 5 900 "$top_builddir/polysandbox-conformance" -t 300 "$@" e2b
