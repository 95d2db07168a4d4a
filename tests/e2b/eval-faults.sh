#!/bin/sh
# tests/e2b/eval-faults.sh - an evaluation of 200 samples on the e2b
# provider, once on a healthy fake and once with 30% of its answers 5xx and
# 10% of its streams cut mid-way: every sample is accounted for exactly
# once, with the same verdict, and pass@1 is the same (issue 6's
# criterion for selection and resilience, end to end: the fake's wire
# faults, the provider's error mapping, the core's retries and the eval's
# own retry of sandbox errors).
. "$top_srcdir/tests/e2b/lib.sh"

plan 9

# Short waits: the core's backoff is not what is under test here, and
# some 3,000 injected faults are each waited out (at 5-100 ms, half the
# stormy run was spent asleep).
E2B_EXTRA_INI='[retry]
attempts = 10
base = 1ms
cap = 20ms'
start_fake --seed 3

. "$top_srcdir/tests/lib/eval-faults.sh"
ef_data 200

ef_eval e2b calm
ef_check_calm fake

faults '{"error_rate": 0.3, "status": 503, "drop_stream_rate": 0.1, "seed": 5}' || exit 99
ef_eval e2b stormy
ef_check_stormy "the same 200 samples under 30% 5xx and 10% dropped streams"
fake_state 's["injected"]["errors"] >= 30 and s["injected"]["drops"] >= 5'
check "the fake did inject them ($(cat "$tmp/fake_answer" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["injected"])'))" \
    fake_state 's["injected"]["errors"] >= 30 and s["injected"]["drops"] >= 5'
ef_check_same stormy e2b
# No sandbox may be left: a destroy that fails through all its retries
# (each retry is a GET and a DELETE, which must both get through: under
# 30% faults 9 retries all fail about once in 430, and the stormy run has
# some 150 failed DELETEs) is kept by the core and destroyed before the
# command exits (issue 15; it used to be left to its time-to-live).
if fake_state 'not s["sandboxes"]'; then
    ok "no sandbox is left on the fake"
else
    not_ok "no sandbox is left on the fake"
    "$PY" -c 'import json, sys
for sb in json.load(open(sys.argv[1]))["sandboxes"]:
    print("# left: %s" % json.dumps(sb)[:400])' "$tmp/fake_answer"
fi

# The same, made certain: the first 10 GETs and DELETEs of the sandbox
# fail, so its destroy runs out of its 10 attempts; the run says so, and
# the sandbox is still destroyed before the command exits.
no_faults
faults '{"error_rate": 1.0, "status": 503, "paths": "^/sandboxes/[A-Za-z0-9]+$", "count": 10}' ||
    exit 99
cli run --provider e2b -- /bin/echo hi
outlasted() {
    is_rc 125 && err_has "(10 attempts)" || return 1
    # All 10 faults were spent on it, and nothing is left.
    fake_call GET /_fake/faults && "$PY" -c 'import json, sys
sys.exit(0 if json.load(open(sys.argv[1])).get("count") == 0 else 1)' "$tmp/fake_answer" &&
        fake_state 'not s["sandboxes"]'
}
check "a destroy that outlasts its retries: the run says so (exit 125) and leaves nothing" \
    outlasted
done_testing
