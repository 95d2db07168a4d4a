#!/bin/sh
# tests/conformance/local.t - the conformance kit against the local provider.
# The kit prints TAP itself; the test environment (AM_TESTS_ENVIRONMENT)
# points it at the build tree's providers and the test configuration.
# In-process (daemon = off) unless the environment chose: local-locald.t
# runs the kit through the daemon.
: "${top_builddir:=.}"
POLYSANDBOX_LOCAL_DAEMON=${POLYSANDBOX_LOCAL_DAEMON:-off}
export POLYSANDBOX_LOCAL_DAEMON
exec "$top_builddir/polysandbox-conformance" local
