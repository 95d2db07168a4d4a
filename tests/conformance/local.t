#!/bin/sh
# tests/conformance/local.t - the conformance kit against the local provider.
# The kit prints TAP itself; the test environment (AM_TESTS_ENVIRONMENT)
# points it at the build tree's providers and the test configuration.
: "${top_builddir:=.}"
exec "$top_builddir/polysandbox-conformance" local
