#!/bin/sh
# tests/modal/faults.sh - the modal provider against the Modal fake's
# faults: refused credentials (UNAUTHENTICATED: SBX_E_AUTH, not retried,
# the secret in no output), auth tokens and router tokens that expire in
# the middle of a run (renewed), RESOURCE_EXHAUSTED and UNAVAILABLE with
# an RPCRetryPolicy (the core waits as told and retries), stdout streams
# dropped mid-exec (resumed at their offset, nothing lost or doubled), a
# sandbox that dies mid-exec (a sandbox error, never a hang), and the
# control plane's exec where a task has no command router.
. "$top_srcdir/tests/modal/lib.sh"
plan 21
start_fake --token-ttl 2 --router-ttl 2

# jerr CODE TEXT: run --json failed as a sandbox error with CODE, TEXT in it.
jerr() {
    [ "$rc" -eq 125 ] &&
        json_check "j['status'] == 'sandbox_error' and j['error_code'] == $1 and '''$2''' in j['error']"
}
calls() {
    fake_call GET /_fake/state >/dev/null &&
        "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["calls"].get(sys.argv[2], 0))' \
            "$tmp/fake_answer" "$1"
}

cli run --json -- echo hi
check "calm: a run answers" json_check "j['status'] == 'ok' and j['stdout'] == 'hi\\n'"

# ---- credentials ----
before=$(calls AuthTokenGet)
MODAL_FAKE_SECRET="as-wrong-$MODAL_FAKE_SECRET" cli run --json -- echo hi
check "a wrong token secret: SBX_E_AUTH naming the settings" jerr 9 "check token_id and token_secret"
check "...and the secret is in no output" \
    sh -c "! grep -q -F -- '$MODAL_FAKE_SECRET' '$tmp/out' '$tmp/err'"
check "...and it was not retried (one AuthTokenGet)" test "$(($(calls AuthTokenGet) - before))" = 1
TOKEN_SECRET_REF=env:NO_SUCH_VARIABLE_HERE write_config
cli run --json -- echo hi
check "an unset token secret: a configuration error naming the reference" \
    sh -c "[ $rc -ne 0 ] && grep -q 'NO_SUCH_VARIABLE_HERE' '$tmp/out' '$tmp/err'"
write_config

# ---- tokens that expire while a run goes on (2 s each here) ----
a0=$(calls AuthTokenGet)
r0=$(calls TaskGetCommandRouterAccess)
cli run --json -- sh -c 'echo one; sleep 3; echo two'
check "a run outliving its auth token and its router token: ok, output whole" \
    json_check "j['status'] == 'ok' and j['stdout'] == 'one\\ntwo\\n'"
check "...the auth token was renewed ($(($(calls AuthTokenGet) - a0)) fetched)" \
    test "$(($(calls AuthTokenGet) - a0))" -ge 2
check "...and the router token too ($(($(calls TaskGetCommandRouterAccess) - r0)) asked)" \
    test "$(($(calls TaskGetCommandRouterAccess) - r0))" -ge 2

# ---- retry hints ----
# hinted FAULTS WORD WHAT: `run -- echo WORD` under FAULTS answers WORD,
# and took at least the 1.9 s the faults' retry policies ask in all.
hinted() {
    faults "$1"
    t0=$(date +%s%N)
    cli run --json -- echo "$2"
    ms=$((($(date +%s%N) - t0) / 1000000))
    check "$3: retried, then ok" json_check "j['status'] == 'ok' and j['stdout'] == '$2\\n'"
    check "...after waiting as told ($ms ms for 2 s)" test "$ms" -ge 1900
}
hinted '{"error_rate": 1.0, "code": "RESOURCE_EXHAUSTED", "retry_after": 1, "count": 2, "methods": "^SandboxCreate$"}' \
    hi "RESOURCE_EXHAUSTED with a 1 s retry policy twice on create"
faults '{"error_rate": 1.0, "code": "UNAVAILABLE", "count": 2, "methods": "^TaskExecStart$"}'
cli run --json -- echo again
check "UNAVAILABLE twice on TaskExecStart: never started, retried in the sandbox, ok" \
    json_check "j['status'] == 'ok' and j['stdout'] == 'again\\n'"
MODAL_EXTRA_INI='[retry]
attempts = 1' write_config
faults '{"error_rate": 1.0, "code": "RESOURCE_EXHAUSTED", "retry_after": 3, "methods": "^SandboxCreate$"}'
cli run --json -- echo hi
check "with retries off: SBX_E_RATE_LIMITED, the pause named" jerr 15 "retry after 3.0 s"
faults '{"error_rate": 1.0, "code": "UNAVAILABLE", "methods": "^SandboxCreate$"}'
cli run --json -- echo hi
check "with retries off: UNAVAILABLE is SBX_E_SERVER, named" jerr 20 "UNAVAILABLE"
no_faults
write_config

# ---- streams dropped mid-exec ----
faults '{"drop_stream_rate": 1.0, "count": 3, "methods": "^TaskExecStdioRead$"}'
cli run --json -- sh -c 'for i in 1 2 3 4 5 6; do echo line$i; sleep 0.1; done; echo err >&2'
check "stdout streams cut 3 times: resumed at their offset, nothing lost or doubled" \
    json_check "j['status'] == 'ok' and j['stdout'] == ''.join('line%d\\n' % i for i in range(1, 7)) and j['stderr'] == 'err\\n'"
check "...the fake did cut them" fake_state 's["injected"]["drops"] >= 3'
no_faults

# ---- a sandbox that dies mid-exec ----
faults '{"die_mid_exec_ms": 500, "count": 1}'
MODAL_EXTRA_INI='[retry]
attempts = 1' write_config
cli run --json -- sh -c 'echo started; sleep 20'
check "the sandbox dies mid-exec: a sandbox error, not the code's verdict, no hang" \
    sh -c "[ $rc -eq 125 ] && grep -q '\"status\":\"sandbox_error\"' '$tmp/out'"
check "...the fake killed it" fake_state 's["injected"]["deaths"] == 1 and s["sandboxes"] == []'
no_faults
write_config

# ---- no command router: the control plane's exec ----
start_fake --no-router
printf 'in1\nin2\n' >"$tmp/in"
cli_in "$tmp/in" run -i --json -e K=v -- sh -c 'cat; echo "$K"; printf "\000x" >&2; exit 4'
check "without a router: stdin, environment, binary stderr and the exit code" \
    json_check "j['status'] == 'nonzero_exit' and j['exit_code'] == 4 and j['stdout'] == 'in1\\nin2\\nv\\n' and j['stderr'] == '\\u0000x'"
check "...through ContainerExec, not the router" \
    sh -c "[ $(calls ContainerExec) -ge 1 ] && [ $(calls TaskExecStart) -eq 0 ]"
# ContainerExec refused with a 2 s retry policy, inside the exec: the
# pause reaches the exec's outcome (ABI 1.12), so the core waits what
# Modal asked and not its own backoff (base 1 ms here).
MODAL_EXTRA_INI='[retry]
base = 1ms' write_config
hinted '{"error_rate": 1.0, "code": "RESOURCE_EXHAUSTED", "retry_after": 2, "count": 1, "methods": "^ContainerExec$"}' \
    hinted "RESOURCE_EXHAUSTED with a 2 s retry policy on ContainerExec, in the sandbox"
done_testing
