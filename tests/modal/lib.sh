# tests/modal/lib.sh - the Modal fake and a private configuration (sourced)
#
# Expects top_srcdir and top_builddir (AM_TESTS_ENVIRONMENT).  start_fake
# runs tests/fakes/modal.py (a gRPC server on python3-grpcio) on free ports
# of 127.0.0.1 and writes a configuration directory whose default provider
# is modal, pointed at it; the fake is killed when the script exits,
# whatever happens.  Without python3-grpcio or protoc the test is skipped,
# naming what is missing.

: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
PS="$top_builddir/polysandbox"
# Debian's python3, which sees python3-grpcio (a pyenv shim would not).
if [ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=${PYTHON:-python3}; fi
FAKE="$top_srcdir/tests/fakes/modal.py"
if ! "$PY" -c 'import grpc, google.protobuf' 2>/dev/null; then
    echo "1..0 # SKIP python3-grpcio (and python3-protobuf) are not installed: the Modal fake needs them"
    exit 0
fi
if ! command -v protoc >/dev/null 2>&1; then
    echo "1..0 # SKIP protoc (protobuf-compiler) is not installed: the Modal fake needs it"
    exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-modal-test.XXXXXX") || exit 99
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

export POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/modal/.libs"
export POLYSANDBOX_CONFIG_DIR="$tmp/config"
export POLYSANDBOX_STATE_DIR="$tmp/state"
export MODAL_FAKE_ID=ak-polysandbox0test
export MODAL_FAKE_SECRET=as-Secret0123456789abcdefTOPsecret

# start_fake [FAKE OPTIONS...]: start the fake, write the configuration.
# Extra [settings] lines for modal.ini may be given in $MODAL_SETTINGS,
# extra sections (e.g. "[retry]") after them in $MODAL_EXTRA_INI.
start_fake() {
    stop_fake
    rm -f "$tmp/port"
    mkdir -p "$tmp/fake"
    "$PY" "$FAKE" --state-dir "$tmp/fake" --port-file "$tmp/port" \
        --token-id "$MODAL_FAKE_ID" --token-secret "$MODAL_FAKE_SECRET" "$@" \
        >"$tmp/fake.out" 2>"$tmp/fake.err" &
    fake_pid=$!
    i=0
    while [ ! -s "$tmp/port" ]; do
        i=$((i + 1))
        if [ "$i" -gt 400 ] || ! kill -0 "$fake_pid" 2>/dev/null; then
            echo "Bail out! the Modal fake did not start"
            sed 's/^/# fake: /' "$tmp/fake.err"
            exit 99
        fi
        sleep 0.05
    done
    read -r port control <"$tmp/port"
    base="http://127.0.0.1:$port"
    while ! grep -q READY "$tmp/fake.out"; do sleep 0.05; done
    netns=$(sed -n 's/.*netns=\([a-z]*\).*/\1/p' "$tmp/fake.out")
    write_config
}

write_config() {
    mkdir -p "$tmp/config/providers.d"
    sed 's/^default_provider = .*/default_provider = modal/' \
        "$top_srcdir/tests/config/polysandbox.ini" >"$tmp/config/polysandbox.ini"
    rm -rf "$tmp/config/templates.d"
    cp -RL "$top_srcdir/tests/config/templates.d" "$tmp/config/templates.d"
    chmod -R u+w "$tmp/config/templates.d"
    cat >"$tmp/config/providers.d/modal.ini" <<EOF2
[provider]
enabled = true
# Modal applies the memory limit, not the others (CPU time, processes,
# open files, file size, disk): refused unless allowed
# (MODAL_UNENFORCED=refuse to see it refused).
unenforced_limits = ${MODAL_UNENFORCED:-allow}
[settings]
token_id = ${TOKEN_ID_REF:-env:MODAL_FAKE_ID}
token_secret = ${TOKEN_SECRET_REF:-env:MODAL_FAKE_SECRET}
server_url = $base
request_timeout = 20s
${MODAL_SETTINGS:-}
${MODAL_EXTRA_INI:-}
EOF2
}

# fake_call METHOD PATH [JSON]: talk to the fake's control port; the answer
# is left in $tmp/fake_answer.
fake_call() {
    "$PY" - "$control" "$1" "$2" "${3:-}" >"$tmp/fake_answer" <<'EOF2'
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
c.request(sys.argv[2], sys.argv[3], sys.argv[4].encode() or None,
          {"Content-Type": "application/json"})
r = c.getresponse()
sys.stdout.write(r.read().decode())
sys.exit(0 if 200 <= r.status < 300 else 1)
EOF2
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
