#!/bin/sh
# tests/e2b/fake.sh - the E2B fake's own wire protocol (tests/e2b/fake-protocol.py)
. "$top_srcdir/tests/e2b/lib.sh"
start_fake --max-page 2
timeout -k 5 180 "$PY" "$top_srcdir/tests/e2b/fake-protocol.py" "$port" "$E2B_FAKE_KEY"
