#!/bin/sh
# tests/e2b/direct.sh - the e2b module through its ops table
# (tests/e2b/test-e2b-direct.c) against the fake, pages of 2.
. "$top_srcdir/tests/e2b/lib.sh"
start_fake --max-page 2 ${E2B_FAKE_ARGS:-}
timeout -k 5 120 "$top_builddir/tests/e2b/test-e2b-direct" \
    "$top_builddir/plugins/e2b/.libs/e2b.so" "$base" "$E2B_FAKE_KEY"
