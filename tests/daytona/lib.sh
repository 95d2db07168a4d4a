# tests/daytona/lib.sh - start the Daytona fake and a private configuration
# pointing the daytona provider at it (sourced; POSIX sh)
#
# Expects top_srcdir and top_builddir (AM_TESTS_ENVIRONMENT).  After
# `dt_start [FAKE-OPTION]...`:
#   $DT_URL      the fake's base URL (http://127.0.0.1:PORT)
#   $DT_DIR      a private directory: config/ (POLYSANDBOX_CONFIG_DIR) and state/
#   $DT_KEY      the API key the fake accepts, in $DAYTONA_TEST_KEY
# Extra sections of daytona.ini (e.g. "[retry]") may be given in
# $DT_EXTRA_INI.  The fake is killed (by its pid) when the shell exits.

: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"

DT_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ps-daytona.XXXXXX") || exit 99
DT_PID=
DT_KEY="test-key-$$"
dt_cleanup() {
    if [ -n "$DT_PID" ]; then
        kill "$DT_PID" 2>/dev/null
        # The fake kills its sandboxes' processes on TERM; wait a moment.
        i=0
        while kill -0 "$DT_PID" 2>/dev/null && [ $i -lt 50 ]; do
            sleep 0.1
            i=$((i + 1))
        done
        kill -9 "$DT_PID" 2>/dev/null
    fi
    rm -rf "$DT_DIR"
}
trap 'dt_cleanup' EXIT
trap 'exit 1' HUP INT TERM

# The fake wants Python 3 (standard library only).
DT_PYTHON=$(command -v python3 2>/dev/null)
if [ -z "$DT_PYTHON" ]; then
    echo "1..0 # SKIP python3 is not installed (the Daytona fake needs it)"
    exit 0
fi

# dt_start [OPTION]...: start the fake, wait for its port (at most 20 s),
# write the configuration.
dt_start() {
    "$DT_PYTHON" "$top_srcdir/tests/fakes/daytona.py" --port-file "$DT_DIR/port" \
        --api-key "$DT_KEY" "$@" >"$DT_DIR/fake.log" 2>&1 &
    DT_PID=$!
    i=0
    while [ ! -s "$DT_DIR/port" ]; do
        if ! kill -0 "$DT_PID" 2>/dev/null || [ $i -ge 200 ]; then
            echo "Bail out! the Daytona fake did not start"
            sed 's/^/# fake: /' "$DT_DIR/fake.log"
            exit 1
        fi
        sleep 0.1
        i=$((i + 1))
    done
    DT_URL="http://127.0.0.1:$(cat "$DT_DIR/port")"
    dt_config "env:DAYTONA_TEST_KEY"
}

# dt_config KEYREF [EXTRA-SETTING-LINE]...: (re)write the configuration.
dt_config() {
    mkdir -p "$DT_DIR/config/providers.d" "$DT_DIR/state"
    ln -sfn "$top_srcdir/etc/templates.d" "$DT_DIR/config/templates.d"
    sed 's/^default_provider = .*/default_provider = daytona/' \
        "$top_srcdir/tests/config/polysandbox.ini" >"$DT_DIR/config/polysandbox.ini"
    {
        echo "[provider]"
        echo "enabled = true"
        echo "optional = false"
        # Daytona sizes a sandbox for its life: every limit but the wall
        # clock and the output caps goes unenforced (refused unless allowed).
        echo "unenforced_limits = ${DT_UNENFORCED:-allow}"
        echo "[settings]"
        echo "api_key = $1"
        echo "api_url = $DT_URL/api"
        echo "request_timeout = 20"
        echo "start_timeout = 20"
        shift
        for l in "$@"; do echo "$l"; done
        # Extra sections (e.g. "[retry]"), after the settings.
        if [ -n "${DT_EXTRA_INI:-}" ]; then echo "$DT_EXTRA_INI"; fi
    } >"$DT_DIR/config/providers.d/daytona.ini"
}

DAYTONA_TEST_KEY=$DT_KEY
export DAYTONA_TEST_KEY
POLYSANDBOX_CONFIG_DIR="$DT_DIR/config"
POLYSANDBOX_STATE_DIR="$DT_DIR/state"
POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/daytona/.libs${POLYSANDBOX_PROVIDER_PATH:+:$POLYSANDBOX_PROVIDER_PATH}"
export POLYSANDBOX_CONFIG_DIR POLYSANDBOX_STATE_DIR POLYSANDBOX_PROVIDER_PATH

# dt_ctl METHOD PATH [JSON]: a control request to the fake; prints the answer.
dt_ctl() {
    "$DT_PYTHON" - "$DT_URL" "$1" "$2" "${3:-}" <<'EOF'
import sys, urllib.request
url, method, path, body = sys.argv[1:5]
req = urllib.request.Request(url + path, method=method, data=body.encode() if body else None)
print(urllib.request.urlopen(req, timeout=10).read().decode())
EOF
}
# dt_faults JSON: set the fake's faults ({} turns them off).
dt_faults() { dt_ctl POST /_fake/faults "$1" >/dev/null; }
# dt_jq EXPR: evaluate a Python expression with j = the JSON on stdin.
dt_jq() {
    "$DT_PYTHON" -c 'import json, sys
j = json.load(sys.stdin)
r = eval(sys.argv[1])
print(r if not isinstance(r, (dict, list)) else json.dumps(r))' "$1"
}
