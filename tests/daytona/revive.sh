#!/bin/sh
# tests/daytona/revive.sh - a handle kept across an auto-stop of its
# sandbox starts it again (test-revive.c), against the Daytona fake.
. "$top_srcdir/tests/daytona/lib.sh"
dt_start
cat >"$DT_DIR/stop" <<EOS
#!/bin/sh
exec "$DT_PYTHON" - "$DT_URL" "$DT_KEY" "\$1" <<'EOP'
import sys, time, urllib.request
url, key, sid = sys.argv[1:4]
req = urllib.request.Request(url + "/api/sandbox/" + sid + "/stop", method="POST",
                             headers={"Authorization": "Bearer " + key})
urllib.request.urlopen(req, timeout=10).read()
time.sleep(0.3)
EOP
EOS
chmod +x "$DT_DIR/stop"
timeout 120 "$top_builddir/tests/daytona/test-revive" "$DT_DIR/stop"
