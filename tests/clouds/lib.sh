# tests/clouds/lib.sh - several cloud fakes at once, and one configuration
# with a provider pointed at each (sourced; POSIX sh)
#
# Expects top_srcdir and top_builddir (AM_TESTS_ENVIRONMENT).
#   clouds_start NAME [FAKE-OPTION]...   start the fake of cloud NAME on a
#       free port of 127.0.0.1 (again: restart it) and write
#       providers.d/NAME.ini pointing at it; $URL_<NAME> is its address
#   clouds_stop NAME                     stop it (the cloud goes down)
#   clouds_ready NAME                    whether its provider module is
#       built (the test skips a cloud whose module is not)
#   clouds_ini TEXT                      append TEXT to polysandbox.ini
#   clouds_failover_ini                  the [retry]/[breaker] of the
#       failover tests: a down cloud found out quickly
# Every fake is stopped, and the directory removed, when the shell exits.
#
# The clouds known here: e2b, daytona, cloudflare, volcengine, modal.  A
# new cloud joins by adding its case to clouds_start (how to start its
# fake, its [settings] lines) and its name to the lists of the tests that
# take every cloud (CLOUDS in tests/clouds/compare.sh).

: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-clouds.XXXXXX") || exit 99
PS="$top_builddir/polysandbox"
if [ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=${PYTHON:-python3}; fi
command -v "$PY" >/dev/null 2>&1 || { echo "1..0 # SKIP python3 is not installed (the fakes need it)"; exit 0; }
CLOUDS_PIDS=
# The fakes import the daytona fake: leave no __pycache__ in the source tree.
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE

clouds_stop() {
    f="$tmp/$1/pid"
    [ -s "$f" ] || return 0
    p=$(cat "$f")
    kill "$p" 2>/dev/null
    i=0
    while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    kill -9 "$p" 2>/dev/null
    rm -f "$f"
}
clouds_cleanup() {
    for d in "$tmp"/*/; do
        [ -f "$d/pid" ] && clouds_stop "$(basename "$d")"
    done
    rm -rf "$tmp"
}
trap 'clouds_cleanup' EXIT
trap 'exit 1' HUP INT TERM

mkdir -p "$tmp/config/providers.d" "$tmp/state" || exit 99
ln -s "$top_srcdir/etc/templates.d" "$tmp/config/templates.d" || exit 99
# No default provider: each test names the ones it uses.
grep -v '^default_provider' "$top_srcdir/tests/config/polysandbox.ini" >"$tmp/config/polysandbox.ini"
# Only the clouds: the built-in local provider is off.
printf '[provider]\nenabled = false\n' >"$tmp/config/providers.d/local.ini"
POLYSANDBOX_CONFIG_DIR="$tmp/config"
POLYSANDBOX_STATE_DIR="$tmp/state"
POLYSANDBOX_PROVIDER_PATH=
for n in e2b daytona cloudflare volcengine modal; do
    POLYSANDBOX_PROVIDER_PATH="$POLYSANDBOX_PROVIDER_PATH${POLYSANDBOX_PROVIDER_PATH:+:}$top_builddir/plugins/$n/.libs"
done
export POLYSANDBOX_CONFIG_DIR POLYSANDBOX_STATE_DIR POLYSANDBOX_PROVIDER_PATH
# The credentials every fake is started with, as the providers read them.
CLOUDS_KEY="clouds-key-$$"
CLOUDS_AK="AKLTclouds$$"
CLOUDS_SK="clouds-secret-$$"
CLOUDS_MODAL_ID="ak-$CLOUDS_KEY"
CLOUDS_MODAL_SECRET="as-$CLOUDS_SK"
export CLOUDS_KEY CLOUDS_AK CLOUDS_SK CLOUDS_MODAL_ID CLOUDS_MODAL_SECRET

# The module, and for modal what its gRPC fake needs (python3-grpcio, protoc).
clouds_ready() {
    [ -f "$top_builddir/plugins/$1/.libs/$1.so" ] || return 1
    [ "$1" != modal ] || { "$PY" -c 'import grpc, google.protobuf' 2>/dev/null &&
                               command -v protoc >/dev/null 2>&1; }
}

clouds_ini() { printf '%s\n' "$1" >>"$tmp/config/polysandbox.ini"; }

# A down cloud is found out quickly: short waits, and two failed creates
# in a row open its breaker, so the samples still to run go past it.
clouds_failover_ini() {
    clouds_ini '[retry]
attempts = 3
base = 5ms
cap = 50ms
[breaker]
failures = 2
open_time = 600s'
}

clouds_start() {
    name=$1
    shift
    clouds_stop "$name"
    d="$tmp/$name"
    mkdir -p "$d/state"
    rm -f "$d/port"
    case $name in
    e2b) set -- "$top_srcdir/tests/fakes/e2b.py" --state-dir "$d/state" --api-key "$CLOUDS_KEY" "$@" ;;
    daytona) set -- "$top_srcdir/tests/fakes/daytona.py" --api-key "$CLOUDS_KEY" "$@" ;;
    cloudflare) set -- "$top_srcdir/tests/fakes/cloudflare.py" --api-key "$CLOUDS_KEY" "$@" ;;
    volcengine) set -- "$top_srcdir/tests/fakes/volcengine.py" --access-key "$CLOUDS_AK" \
                    --secret-key "$CLOUDS_SK" --function-id fn-clouds "$@" ;;
    modal) set -- "$top_srcdir/tests/fakes/modal.py" --state-dir "$d/state" --token-id "$CLOUDS_MODAL_ID" \
               --token-secret "$CLOUDS_MODAL_SECRET" "$@" ;;
    *) echo "Bail out! no fake is known for cloud '$name'"; exit 99 ;;
    esac
    "$PY" "$@" --port-file "$d/port" >"$d/fake.log" 2>&1 &
    echo $! >"$d/pid"
    i=0
    while [ ! -s "$d/port" ]; do
        if ! kill -0 "$(cat "$d/pid")" 2>/dev/null || [ $i -ge 300 ]; then
            echo "Bail out! the $name fake did not start"
            sed 's/^/# fake: /' "$d/fake.log"
            exit 99
        fi
        sleep 0.1
        i=$((i + 1))
    done
    # modal's port file: "GRPC-PORT CONTROL-PORT"; the others' one port
    # serves both.
    read -r port control <"$d/port"
    url="http://127.0.0.1:$port"
    eval "CONTROL_$name=http://127.0.0.1:\${control:-\$port}"
    eval "URL_$name=\$url"
    # A cloud sizes its sandboxes by template or plan: the per-run limits
    # it cannot apply are refused unless allowed, and these tests compare
    # verdicts, not limits (tests/limits and each cloud's own tests check
    # the refusal).
    {
        printf '[provider]\nenabled = true\noptional = false\nunenforced_limits = allow\n[settings]\n'
        case $name in
        e2b) printf 'api_key = env:CLOUDS_KEY\napi_url = %s\nenvd_url = %s\nrequest_timeout = 20s\n' "$url" "$url" ;;
        daytona) printf 'api_key = env:CLOUDS_KEY\napi_url = %s/api\nrequest_timeout = 20\nstart_timeout = 20\n' "$url" ;;
        cloudflare) printf 'api_key = env:CLOUDS_KEY\napi_url = %s\nrequest_timeout = 20\n' "$url" ;;
        modal) printf 'token_id = env:CLOUDS_MODAL_ID\ntoken_secret = env:CLOUDS_MODAL_SECRET\nserver_url = %s\nrequest_timeout = 20s\n' "$url" ;;
        volcengine) printf 'access_key_id = env:CLOUDS_AK\nsecret_access_key = env:CLOUDS_SK\nfunction_id = fn-clouds\napi_url = %s\ngateway_url = %s\nrequest_timeout = 20\n' "$url" "$url" ;;
        esac
    } >"$tmp/config/providers.d/$name.ini"
}

# clouds_q NAME PATH EXPR: GET the control PATH of NAME's fake and print
# the Python expression EXPR of its JSON, j.
clouds_q() {
    eval "u=\$CONTROL_$1"
    "$PY" - "$u" "$2" "$3" <<'PYEOF'
import json, sys, urllib.request
j = json.load(urllib.request.urlopen(sys.argv[1] + sys.argv[2], timeout=10))
r = eval(sys.argv[3])
print(r if not isinstance(r, (dict, list)) else json.dumps(r))
PYEOF
}

# clouds_verdicts WHAT [NAME:MIN[:MAX]]...: the records of an eval
# ($tmp/r.jsonl) against its samples ($tmp/samples.jsonl, made by
# ef_data of tests/lib/eval-faults.sh: the reference solution
# passes, the wrong one fails).  WHAT: once (every sample has exactly one
# record), verdicts (each the expected one), providers (the samples ran
# on exactly the NAMEs, between MIN and MAX samples on each).
clouds_verdicts() {
    "$PY" - "$tmp/r.jsonl" "$tmp/samples.jsonl" "$tmp/data.jsonl" "$@" <<'PYEOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
samples = [json.loads(l) for l in open(sys.argv[2])]
ref = {json.loads(l)["task_id"]: json.loads(l)["canonical_solution"] for l in open(sys.argv[3])}
by = {}
for r in recs:
    by.setdefault(r["sample"], []).append(r)
what = sys.argv[4]
if what == "once":
    ok = sorted(by) == list(range(len(samples))) and all(len(v) == 1 for v in by.values())
elif what == "verdicts":
    bad = [i for i, s in enumerate(samples)
           if (by[i][0]["verdict"] == "passed") != (s["completion"] == ref[s["task_id"]])]
    print("# samples with another verdict: %s" % bad[:10])
    ok = not bad
else:
    n = {}
    for v in by.values():
        n[v[0]["provider"]] = n.get(v[0]["provider"], 0) + 1
    print("# samples per provider: %s" % n)
    want = [a.split(":") for a in sys.argv[5:]]
    ok = set(n) == {w[0] for w in want} and all(
        int(w[1]) <= n[w[0]] <= (int(w[2]) if len(w) > 2 else len(samples)) for w in want)
sys.exit(0 if ok else 1)
PYEOF
}

CLI_TIMEOUT=600
. "$top_srcdir/tests/lib/tap.sh"
