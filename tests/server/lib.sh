# tests/server/lib.sh - set-up of the polysandboxd tests (sourced)
#
# Starts a real polysandboxd from the build tree on a free loopback port
# (--listen 127.0.0.1:0: the server logs the port it got) with the test
# configuration, and drives it with curl.  Each test calls plan N, then
# the checks of tests/lib/tap.sh; the server is stopped at exit.

: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
PSD="$top_builddir/polysandboxd"
PS="$top_builddir/polysandbox"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-server-test.XXXXXX") || exit 99
srv_pid=
# A sanitizer's report in the server's log fails the test (under the
# ASan+UBSan build a report does not always stop the server).
srv_sanitized() {
    [ -f "$tmp/server.log" ] || return 0
    if grep -q -E 'runtime error:|AddressSanitizer|LeakSanitizer' "$tmp/server.log"; then
        grep -E -A12 'runtime error:|AddressSanitizer|LeakSanitizer' "$tmp/server.log" |
            head -40 | sed 's/^/# /'
        echo "Bail out! a sanitizer reported in the server's log"
        return 1
    fi
}
srv_cleanup() {
    if [ -n "$srv_pid" ] && kill -0 "$srv_pid" 2>/dev/null; then
        kill -TERM "$srv_pid" 2>/dev/null
        wait "$srv_pid" 2>/dev/null
    fi
    srv_sanitized
    san=$?
    rm -rf "$tmp"
    [ "$san" = 0 ] || exit 1
}
trap srv_cleanup EXIT
# The jobs a test's server keeps go to the test's directory (the default
# is under $XDG_STATE_HOME), unless it sets [server] state_dir.
XDG_STATE_HOME="$tmp/xdg-state"
export XDG_STATE_HOME
# The python3 of the system (tests use its standard library only).
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi
. "$top_srcdir/tests/lib/tap.sh"

command -v curl >/dev/null 2>&1 || { echo "1..0 # SKIP curl is not installed"; exit 0; }

# srv_art_config: a copy of the test configuration with a template "art"
# (extensions .art, sh main.sh) whose artifacts are outputs/, 1K a file
# at most; exports POLYSANDBOX_CONFIG_DIR for the servers started after.
srv_art_config() {
    cp -RL "$POLYSANDBOX_CONFIG_DIR" "$tmp/config" || exit 99
    chmod -R u+w "$tmp/config"
    printf '[template]\nextensions = .art\nsource = main.sh\nrun = sh main.sh\nartifacts = outputs\nartifacts_max_file = 1K\n' \
        >"$tmp/config/templates.d/art.ini" || exit 99
    POLYSANDBOX_CONFIG_DIR=$tmp/config
    export POLYSANDBOX_CONFIG_DIR
}

# srv_start [ARGS...]: start polysandboxd; sets srv_pid and base
# (http://127.0.0.1:PORT); the log goes to $tmp/server.log.  Returns
# non-zero when it did not come up within 20 seconds.
srv_start() {
    srv_sanitized || exit 1
    : >"$tmp/server.log"
    "$PSD" --listen 127.0.0.1:0 "$@" 2>"$tmp/server.log" &
    srv_pid=$!
    base=
    i=0
    while [ $i -lt 200 ]; do
        base=$(sed -n 's/.*listening on \(http:\/\/[^ ]*\).*/\1/p' "$tmp/server.log" | head -n 1)
        [ -n "$base" ] && return 0
        kill -0 "$srv_pid" 2>/dev/null || { wait "$srv_pid"; srv_rc=$?; srv_pid=; return 1; }
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# srv_stop [SIGNAL]: stop it (SIGTERM), wait; sets srv_rc.
srv_stop() {
    kill -"${1:-TERM}" "$srv_pid"
    wait "$srv_pid"
    srv_rc=$?
    srv_pid=
    srv_sanitized || exit 1
}
# True when the build is instrumented by AddressSanitizer (its quarantine
# keeps freed memory, so resident memory says nothing there).
asan_build() {
    case "${SBX_CFLAGS:-} ${SBX_LDFLAGS:-}" in *sanitize=address*) return 0 ;; esac
    return 1
}

# req METHOD PATH [CURL ARGS...]: one request; sets code (the HTTP status),
# leaves the body in $tmp/out and the headers in $tmp/headers.
req() {
    m=$1
    p=$2
    shift 2
    code=$(curl -sS -o "$tmp/out" -D "$tmp/headers" -w '%{http_code}' --max-time 60 \
        -X "$m" "$@" "$base$p" 2>"$tmp/err")
}
# post PATH JSON [CURL ARGS...]
post() {
    p=$1
    d=$2
    shift 2
    req POST "$p" -H 'Content-Type: application/json' --data-binary "$d" "$@"
}
# header NAME: the value of a reply header (first), without CR.
header() {
    sed -n "s/^$1: *//Ip" "$tmp/headers" | tr -d '\r' | head -n 1
}
# json_check_file FILE PYTHON-EXPR: json_check on FILE.
# t_of(MESSAGES, TEXT) in EXPR: the time of the WebSocket data message
# with which the output so far first holds TEXT (output comes in pieces).
json_check_file() {
    "$PY" -c 'import json, sys, base64
def t_of(msgs, want):
    acc = ""
    for m in msgs:
        acc += m["data"]["data"]
        if want in acc:
            return m["t"]
    return None
j = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}
# wait_status PYTHON-EXPR [CURL ARGS...]: poll GET /v1/status until EXPR
# (j = its JSON) holds, for up to 30 s (the machine may be busy); the
# tests that need work in flight wait for it instead of guessing a time.
wait_status() {
    ws_expr=$1
    shift
    ws_n=300
    while [ $ws_n -gt 0 ]; do
        curl -sS -o "$tmp/status" "$@" "$base/v1/status" 2>/dev/null &&
            json_check_file "$tmp/status" "$ws_expr" && return 0
        sleep 0.1
        ws_n=$((ws_n - 1))
    done
    return 1
}
# is CODE: the last status was CODE (shows the body when not).
is() { [ "$code" = "$1" ] || { echo "# status $code, body: $(head -c 400 "$tmp/out")"; false; }; }
# err_is CODE ERROR_CODE: the status and the error shape's code.
err_is() {
    is "$1" && json_check "set(j) == {'error'} and set(j['error']) == {'code', 'message', 'provider'} and j['error']['code'] == '$2'"
}

# ---- work that a client leaves (lifecycle.sh, sandboxfusion-data.sh) ----

# sleeping N: a `sleep N` runs (N a duration no other test uses).
sleeping() { pgrep -f "^sleep $1\$" >/dev/null 2>&1; }
# gone_within N CMD...: CMD fails within N seconds.
gone_within() {
    n=$(($1 * 10))
    shift
    while [ $n -gt 0 ]; do
        "$@" || return 0
        sleep 0.1
        n=$((n - 1))
    done
    return 1
}
# within N CMD...: CMD succeeds within N seconds (the machine may be busy).
within() {
    n=$(($1 * 10))
    shift
    while [ $n -gt 0 ]; do
        "$@" && return 0
        sleep 0.1
        n=$((n - 1))
    done
    return 1
}
# client CURL-ARGS...: a client in the background (lpid), to leave early.
client() {
    curl -sS -o /dev/null "$@" 2>/dev/null &
    lpid=$!
}
# leave: the client goes away (its connection closes).
leave() {
    kill "$lpid" 2>/dev/null
    wait "$lpid" 2>/dev/null
}
