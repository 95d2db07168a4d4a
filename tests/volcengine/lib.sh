# tests/volcengine/lib.sh - start the Volcengine fake and a private
# configuration pointing the volcengine provider at it (sourced; POSIX sh)
#
# Expects top_srcdir and top_builddir (AM_TESTS_ENVIRONMENT).  After
# `vc_start [FAKE-OPTION]...`:
#   $VC_URL      the fake's base URL (http://127.0.0.1:PORT): both the
#                OpenAPI gateway (api_url) and the function gateway
#                (gateway_url)
#   $VC_DIR      a private directory: config/ (POLYSANDBOX_CONFIG_DIR) and state/
#   $VC_AK, $VC_SK  the access key the fake accepts, in $VOLCENGINE_TEST_AK
#                and $VOLCENGINE_TEST_SK
# The fake is killed (by its pid) when the shell exits.

: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"

VC_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ps-volcengine.XXXXXX") || exit 99
VC_PID=
VC_AK="AKLTtest$$"
VC_SK="test-secret-$$-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
VC_FUNCTION=fn-test
vc_stop() {
    if [ -n "$VC_PID" ]; then
        kill "$VC_PID" 2>/dev/null
        # The fake kills its sandboxes' processes on TERM; wait a moment.
        i=0
        while kill -0 "$VC_PID" 2>/dev/null && [ $i -lt 50 ]; do
            sleep 0.1
            i=$((i + 1))
        done
        kill -9 "$VC_PID" 2>/dev/null
        VC_PID=
    fi
}
vc_cleanup() {
    vc_stop
    rm -rf "$VC_DIR"
}
trap 'vc_cleanup' EXIT
trap 'exit 1' HUP INT TERM

# The fake wants Python 3 (standard library only).
VC_PYTHON=$(command -v python3 2>/dev/null)
if [ -z "$VC_PYTHON" ]; then
    echo "1..0 # SKIP python3 is not installed (the Volcengine fake needs it)"
    exit 0
fi

# vc_start [OPTION]...: start the fake, wait for its port (at most 20 s),
# write the configuration.
vc_start() {
    vc_stop
    rm -f "$VC_DIR/port"
    "$VC_PYTHON" "$top_srcdir/tests/fakes/volcengine.py" --port-file "$VC_DIR/port" \
        --access-key "$VC_AK" --secret-key "$VC_SK" --function-id "$VC_FUNCTION" "$@" \
        >"$VC_DIR/fake.log" 2>&1 &
    VC_PID=$!
    i=0
    while [ ! -s "$VC_DIR/port" ]; do
        if ! kill -0 "$VC_PID" 2>/dev/null || [ $i -ge 200 ]; then
            echo "Bail out! the Volcengine fake did not start"
            sed 's/^/# fake: /' "$VC_DIR/fake.log"
            exit 1
        fi
        sleep 0.1
        i=$((i + 1))
    done
    VC_URL="http://127.0.0.1:$(cat "$VC_DIR/port")"
    vc_config "env:VOLCENGINE_TEST_AK" "env:VOLCENGINE_TEST_SK"
}

# vc_config AKREF SKREF [EXTRA-SETTING-LINE]...: (re)write the configuration.
vc_config() {
    mkdir -p "$VC_DIR/config/providers.d" "$VC_DIR/state"
    ln -sfn "$top_srcdir/etc/templates.d" "$VC_DIR/config/templates.d"
    sed 's/^default_provider = .*/default_provider = volcengine/' \
        "$top_srcdir/tests/config/polysandbox.ini" >"$VC_DIR/config/polysandbox.ini"
    {
        echo "[provider]"
        echo "enabled = true"
        echo "optional = false"
        # A veFaaS sandbox is of its function's size: every limit but the
        # wall clock and the output caps goes unenforced (refused unless
        # allowed; VC_UNENFORCED=refuse to see it refused).
        echo "unenforced_limits = ${VC_UNENFORCED:-allow}"
        echo "[settings]"
        echo "access_key_id = $1"
        echo "secret_access_key = $2"
        echo "function_id = $VC_FUNCTION"
        echo "api_url = $VC_URL"
        echo "gateway_url = $VC_URL"
        echo "request_timeout = 20"
        shift 2
        for l in "$@"; do echo "$l"; done
    } >"$VC_DIR/config/providers.d/volcengine.ini"
}

VOLCENGINE_TEST_AK=$VC_AK
VOLCENGINE_TEST_SK=$VC_SK
export VOLCENGINE_TEST_AK VOLCENGINE_TEST_SK
POLYSANDBOX_CONFIG_DIR="$VC_DIR/config"
POLYSANDBOX_STATE_DIR="$VC_DIR/state"
POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/volcengine/.libs${POLYSANDBOX_PROVIDER_PATH:+:$POLYSANDBOX_PROVIDER_PATH}"
export POLYSANDBOX_CONFIG_DIR POLYSANDBOX_STATE_DIR POLYSANDBOX_PROVIDER_PATH
# The fake imports the daytona fake: leave no __pycache__ in the source tree.
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE

# vc_ctl METHOD PATH [JSON]: a control request to the fake; prints the answer.
vc_ctl() {
    "$VC_PYTHON" - "$VC_URL" "$1" "$2" "${3:-}" <<'PYEOF'
import sys, urllib.request
url, method, path, body = sys.argv[1:5]
req = urllib.request.Request(url + path, method=method, data=body.encode() if body else None)
print(urllib.request.urlopen(req, timeout=10).read().decode())
PYEOF
}
# vc_q PATH EXPR: GET the control PATH of the fake and print the Python
# expression EXPR of its JSON, j (one python3 for both).
vc_q() {
    "$VC_PYTHON" - "$VC_URL" "$1" "$2" <<'PYEOF'
import json, sys, urllib.request
j = json.load(urllib.request.urlopen(sys.argv[1] + sys.argv[2], timeout=10))
r = eval(sys.argv[3])
print(r if not isinstance(r, (dict, list)) else json.dumps(r))
PYEOF
}
# vc_faults JSON: set the fake's faults ({} or [] turns them off).
vc_faults() { vc_ctl POST /_fake/faults "$1" >/dev/null; }
# vc_jq EXPR: evaluate a Python expression with j = the JSON on stdin.
vc_jq() {
    "$VC_PYTHON" -c 'import json, sys
j = json.load(sys.stdin)
r = eval(sys.argv[1])
print(r if not isinstance(r, (dict, list)) else json.dumps(r))' "$1"
}
