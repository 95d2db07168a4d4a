#!/bin/sh
# tests/conformance/modal.t - the conformance kit against the modal
# provider, talking gRPC to the Modal fake (tests/fakes/modal.py) on
# 127.0.0.1.  The kit prints TAP itself.  The fake enforces a blocked
# network with a network namespace; where the host allows none,
# network_none is left out.
. "$top_srcdir/tests/modal/lib.sh"
start_fake
set --
if [ "$netns" != yes ]; then
    echo "# the fake cannot make network namespaces here: network_none left out"
    set -- --only "$("$top_builddir/polysandbox-conformance" --list |
        awk '/^[a-z]/ && $1 != "network_none" { print $1 }' | paste -sd, -)"
fi
timeout -k 5 900 "$top_builddir/polysandbox-conformance" -t 300 "$@" modal
