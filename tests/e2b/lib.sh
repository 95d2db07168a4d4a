# tests/e2b/lib.sh - the E2B fake and a private configuration (sourced)
#
# Expects top_srcdir and top_builddir (AM_TESTS_ENVIRONMENT).  start_fake
# runs tests/fakes/e2b.py on a free port of 127.0.0.1 and writes a
# configuration directory whose default provider is e2b, pointed at it;
# the fake is killed when the script exits, whatever happens.

: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
PS="$top_builddir/polysandbox"
# The pyenv shim of some machines costs a second a call: prefer the system one.
if [ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=${PYTHON:-python3}; fi
FAKE="$top_srcdir/tests/fakes/e2b.py"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-e2b-test.XXXXXX") || exit 99
fake_pid=

stop_fake() {
    if [ -n "$fake_pid" ]; then
        kill "$fake_pid" 2>/dev/null
        wait "$fake_pid" 2>/dev/null
        fake_pid=
    fi
}
trap 'stop_fake; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP

export POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/e2b/.libs"
export POLYSANDBOX_CONFIG_DIR="$tmp/config"
export POLYSANDBOX_STATE_DIR="$tmp/state"
export E2B_FAKE_KEY=e2b_test_key_0123456789abcdef

# start_fake [FAKE OPTIONS...]: start the fake, write the configuration.
# Extra [settings] lines for e2b.ini may be given in $E2B_SETTINGS, extra
# sections (e.g. "[retry]") after them in $E2B_EXTRA_INI.
start_fake() {
    stop_fake
    rm -f "$tmp/port"
    mkdir -p "$tmp/fake"
    "$PY" "$FAKE" --state-dir "$tmp/fake" --port-file "$tmp/port" \
        --api-key "$E2B_FAKE_KEY" "$@" >"$tmp/fake.out" 2>"$tmp/fake.err" &
    fake_pid=$!
    i=0
    while [ ! -s "$tmp/port" ]; do
        i=$((i + 1))
        if [ "$i" -gt 200 ] || ! kill -0 "$fake_pid" 2>/dev/null; then
            echo "Bail out! the E2B fake did not start"
            sed 's/^/# fake: /' "$tmp/fake.err"
            exit 99
        fi
        sleep 0.05
    done
    port=$(cat "$tmp/port")
    base="http://127.0.0.1:$port"
    while ! grep -q READY "$tmp/fake.out"; do sleep 0.05; done
    netns=$(sed -n 's/.*netns=\([a-z]*\).*/\1/p' "$tmp/fake.out")
    write_config
}

write_config() {
    mkdir -p "$tmp/config/providers.d"
    sed 's/^default_provider = .*/default_provider = e2b/' \
        "$top_srcdir/tests/config/polysandbox.ini" >"$tmp/config/polysandbox.ini"
    rm -rf "$tmp/config/templates.d"
    cp -RL "$top_srcdir/tests/config/templates.d" "$tmp/config/templates.d"
    chmod -R u+w "$tmp/config/templates.d"
    cat >"$tmp/config/providers.d/e2b.ini" <<EOF
[provider]
enabled = true
# E2B sizes sandboxes by template: every limit but the wall clock and
# the output caps goes unenforced, which the core refuses unless allowed.
unenforced_limits = ${E2B_UNENFORCED:-allow}
[settings]
api_key = ${API_KEY_REF:-env:E2B_FAKE_KEY}
api_url = $base
envd_url = ${ENVD_URL:-$base}
request_timeout = 20s
${E2B_SETTINGS:-}
${E2B_EXTRA_INI:-}
EOF
}

# fake_call METHOD PATH [JSON]: talk to the fake (its /_fake endpoints, or
# the control plane with the key); the answer is left in $tmp/fake_answer.
fake_call() {
    "$PY" - "$port" "$1" "$2" "${3:-}" >"$tmp/fake_answer" <<'EOF'
import http.client, os, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
c.request(sys.argv[2], sys.argv[3], sys.argv[4].encode() or None,
          {"Content-Type": "application/json", "X-API-KEY": os.environ["E2B_FAKE_KEY"]})
r = c.getresponse()
sys.stdout.write(r.read().decode())
sys.exit(0 if 200 <= r.status < 300 else 1)
EOF
}
faults() { fake_call POST /_fake/faults "$1"; }
no_faults() { fake_call POST /_fake/reset; }
# fake_state PYTHON-EXPR: evaluate EXPR with s = GET /_fake/state.
fake_state() {
    fake_call GET /_fake/state || return 1
    "$PY" -c 'import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$tmp/fake_answer" "$1"
}

# TAP; each polysandbox run bounded in time.
CLI_TIMEOUT=120
. "$top_srcdir/tests/lib/tap.sh"
