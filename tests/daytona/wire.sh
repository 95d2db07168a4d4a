#!/bin/sh
# tests/daytona/wire.sh - the Daytona fake's own wire behaviour (wire.py),
# so that the provider's tests rest on a fake that is itself checked; a
# second fake plays an older toolbox daemon.
. "$top_srcdir/tests/daytona/lib.sh"
LEGACY_PID=
trap 'if [ -n "$LEGACY_PID" ]; then kill "$LEGACY_PID" 2>/dev/null; wait "$LEGACY_PID" 2>/dev/null; fi; dt_cleanup' EXIT
"$DT_PYTHON" "$top_srcdir/tests/fakes/daytona.py" --port-file "$DT_DIR/legacy-port" \
    --api-key "$DT_KEY" --legacy-daemon >"$DT_DIR/legacy.log" 2>&1 &
LEGACY_PID=$!
dt_start
i=0
while [ ! -s "$DT_DIR/legacy-port" ]; do
    if ! kill -0 "$LEGACY_PID" 2>/dev/null || [ $i -ge 200 ]; then
        echo "Bail out! the second Daytona fake (--legacy-daemon) did not start"
        exit 1
    fi
    sleep 0.1
    i=$((i + 1))
done
"$DT_PYTHON" "$top_srcdir/tests/daytona/wire.py" "$DT_URL" "$DT_KEY" \
    "http://127.0.0.1:$(cat "$DT_DIR/legacy-port")"
