# tests/server/jobs-lib.sh - set-up of the job tests (sourced after lib.sh)
#
# The configuration of the evaluation tests: the local provider and the
# fake ones of tests/provider/evalfake.c (evalnop claims exit 0 without
# running anything: a second provider whose answers differ).  Each test's
# server keeps its jobs in $tmp/state and its sandboxes' state in
# $tmp/lstate, so what a test leaves behind is its own to find.

POLYSANDBOX_CONFIG_DIR="$top_srcdir/tests/eval/config"
POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/local/.libs:$top_builddir/tests/eval/.libs"
POLYSANDBOX_STATE_DIR="$tmp/lstate"
export POLYSANDBOX_CONFIG_DIR POLYSANDBOX_PROVIDER_PATH POLYSANDBOX_STATE_DIR
state="$tmp/state"

# jq_out PYTHON-EXPR: print EXPR of the JSON in $tmp/out (j).
jq_out() {
    "$PY" -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$tmp/out" "$1"
}

# wait_job ID [SECONDS [CURL ARGS...]]: poll GET /v1/jobs/ID?limit=0 until
# the job has ended (default 60 s); the last answer stays in $tmp/out.
wait_job() {
    wj_id=$1
    wj_n=$((${2:-60} * 10))
    shift
    [ $# -gt 0 ] && shift
    wj_i=0
    while [ $wj_i -lt $wj_n ]; do
        req GET "/v1/jobs/$wj_id?limit=0" "$@"
        case $(jq_out 'j.get("state")' 2>/dev/null) in
        succeeded | failed | cancelled) return 0 ;;
        esac
        sleep 0.1
        wj_i=$((wj_i + 1))
    done
    return 1
}

# wait_done ID N: poll until the job has N items done (default 30 s).
wait_done() {
    wd_i=0
    while [ $wd_i -lt 300 ]; do
        req GET "/v1/jobs/$1?limit=0"
        [ "$(jq_out 'j["progress"]["done"]' 2>/dev/null)" -ge "$2" ] 2>/dev/null && return 0
        sleep 0.1
        wd_i=$((wd_i + 1))
    done
    return 1
}

# events ID [CURL ARGS...]: the job's event stream (until it ends) into
# $tmp/events as JSON: [{"id", "event", "data"}, ...].
events() {
    ev_id=$1
    shift
    curl -sS -N --max-time 60 "$@" "$base/v1/jobs/$ev_id/events" >"$tmp/events.txt" 2>"$tmp/err"
    "$PY" -c 'import json, sys
evs = []
for block in open(sys.argv[1]).read().split("\n\n"):
    e = {}
    for line in block.split("\n"):
        k, _, v = line.partition(": ")
        if k in ("id", "event"):
            e[k] = v
        elif k == "data":
            e["data"] = json.loads(v)
    if "event" in e:
        evs.append(e)
json.dump(evs, open(sys.argv[2], "w"))' "$tmp/events.txt" "$tmp/events"
}

# once FILE FIELD N: the records of the results FILE have FIELD 0 to N-1,
# each exactly once (no item ran twice, none is missing).
once() {
    "$PY" -c 'import json, sys
s = sorted(json.loads(l)[sys.argv[2]] for l in open(sys.argv[1]))
sys.exit(0 if s == list(range(int(sys.argv[3]))) else 1)' "$1" "$2" "$3"
}

# sandboxes_left: the ids of the sandboxes of the local provider left in
# this test's state directory.
sandboxes_left() {
    "$PS" list --provider local --json 2>/dev/null |
        "$PY" -c 'import json, sys; print(" ".join(s["id"] for s in json.load(sys.stdin)))'
}
