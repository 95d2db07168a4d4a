# tests/cloudflare/lib.sh - start the Cloudflare bridge fake and a private configuration
# pointing the cloudflare provider at it (sourced; POSIX sh)
#
# Expects top_srcdir and top_builddir (AM_TESTS_ENVIRONMENT).  After
# `cf_start [FAKE-OPTION]...`:
#   $CF_URL      the fake's base URL (http://127.0.0.1:PORT)
#   $CF_DIR      a private directory: config/ (POLYSANDBOX_CONFIG_DIR) and state/
#   $CF_KEY      the API key the fake accepts, in $CLOUDFLARE_TEST_KEY
# The fake is killed (by its pid) when the shell exits.

: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"

CF_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ps-cloudflare.XXXXXX") || exit 99
CF_PID=
CF_KEY="test-key-$$"
cf_cleanup() {
    if [ -n "$CF_PID" ]; then
        kill "$CF_PID" 2>/dev/null
        # The fake kills its sandboxes' processes on TERM; wait a moment.
        i=0
        while kill -0 "$CF_PID" 2>/dev/null && [ $i -lt 50 ]; do
            sleep 0.1
            i=$((i + 1))
        done
        kill -9 "$CF_PID" 2>/dev/null
    fi
    rm -rf "$CF_DIR"
}
trap 'cf_cleanup' EXIT
trap 'exit 1' HUP INT TERM

# The fake wants Python 3 (standard library only).
CF_PYTHON=$(command -v python3 2>/dev/null)
if [ -z "$CF_PYTHON" ]; then
    echo "1..0 # SKIP python3 is not installed (the Cloudflare bridge fake needs it)"
    exit 0
fi

# cf_start [OPTION]...: start the fake, wait for its port (at most 20 s),
# write the configuration.
cf_start() {
    "$CF_PYTHON" "$top_srcdir/tests/fakes/cloudflare.py" --port-file "$CF_DIR/port" \
        --api-key "$CF_KEY" "$@" >"$CF_DIR/fake.log" 2>&1 &
    CF_PID=$!
    i=0
    while [ ! -s "$CF_DIR/port" ]; do
        if ! kill -0 "$CF_PID" 2>/dev/null || [ $i -ge 200 ]; then
            echo "Bail out! the Cloudflare bridge fake did not start"
            sed 's/^/# fake: /' "$CF_DIR/fake.log"
            exit 1
        fi
        sleep 0.1
        i=$((i + 1))
    done
    CF_URL="http://127.0.0.1:$(cat "$CF_DIR/port")"
    cf_config "env:CLOUDFLARE_TEST_KEY"
}

# cf_config KEYREF [EXTRA-SETTING-LINE]...: (re)write the configuration.
cf_config() {
    mkdir -p "$CF_DIR/config/providers.d" "$CF_DIR/state"
    ln -sfn "$top_srcdir/etc/templates.d" "$CF_DIR/config/templates.d"
    sed 's/^default_provider = .*/default_provider = cloudflare/' \
        "$top_srcdir/tests/config/polysandbox.ini" >"$CF_DIR/config/polysandbox.ini"
    {
        echo "[provider]"
        echo "enabled = true"
        echo "optional = false"
        # A bridge container is of the Worker's size: every limit but the
        # wall clock and the output caps goes unenforced (refused unless
        # allowed; CF_UNENFORCED=refuse to see it refused).
        echo "unenforced_limits = ${CF_UNENFORCED:-allow}"
        echo "[settings]"
        echo "api_key = $1"
        echo "api_url = $CF_URL"
        echo "request_timeout = 20"
        shift
        for l in "$@"; do echo "$l"; done
    } >"$CF_DIR/config/providers.d/cloudflare.ini"
}

CLOUDFLARE_TEST_KEY=$CF_KEY
export CLOUDFLARE_TEST_KEY
POLYSANDBOX_CONFIG_DIR="$CF_DIR/config"
POLYSANDBOX_STATE_DIR="$CF_DIR/state"
POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/cloudflare/.libs${POLYSANDBOX_PROVIDER_PATH:+:$POLYSANDBOX_PROVIDER_PATH}"
export POLYSANDBOX_CONFIG_DIR POLYSANDBOX_STATE_DIR POLYSANDBOX_PROVIDER_PATH

# cf_ctl METHOD PATH [JSON]: a control request to the fake; prints the answer.
cf_ctl() {
    "$CF_PYTHON" - "$CF_URL" "$1" "$2" "${3:-}" <<'EOF'
import sys, urllib.request
url, method, path, body = sys.argv[1:5]
req = urllib.request.Request(url + path, method=method, data=body.encode() if body else None)
print(urllib.request.urlopen(req, timeout=10).read().decode())
EOF
}
# cf_faults JSON: set the fake's faults ({} turns them off).
cf_faults() { cf_ctl POST /_fake/faults "$1" >/dev/null; }
# cf_jq EXPR: evaluate a Python expression with j = the JSON on stdin.
cf_jq() {
    "$CF_PYTHON" -c 'import json, sys
j = json.load(sys.stdin)
r = eval(sys.argv[1])
print(r if not isinstance(r, (dict, list)) else json.dumps(r))' "$1"
}
