#!/bin/sh
# tests/volcengine/faults.sh - the volcengine provider against the fake's
# refusals and faults: a wrong secret key, an unknown access key and a
# request time the gateway refuses (SBX_E_AUTH, never retried, no key in
# any output); 429 with Retry-After passed to the core (which waits and
# retries); 5xx on the exec retried on the same sandbox; output polls
# dropped and asked again; an exec whose answer is cut; a sandbox dying
# mid-exec; the time-to-live sent in minutes, and gc; STS tokens and the
# AIO server's key.  Each a clean, bounded error or the right answer.
. "$top_srcdir/tests/volcengine/lib.sh"
tmp=$VC_DIR
PS="$top_builddir/polysandbox"
CLI_TIMEOUT=120
PY=$VC_PYTHON
. "$top_srcdir/tests/lib/tap.sh"
plan 29
vc_start

# jerr CODE TEXT: run --json failed as a sandbox error with CODE, TEXT in it.
jerr() {
    [ "$rc" -eq 125 ] &&
        json_check "j['status'] == 'sandbox_error' and j['error_code'] == $1 and '''$2''' in j['error']"
}
fake_stat() { vc_q /_fake/stats "$1"; }
# answered N: how many answers had the HTTP status N so far.
answered() { vc_q /_fake/requests "len([r for r in j if r['status'] == $1])"; }

cli run --json -- echo hi
check "calm: a run answers" json_check "j['status'] == 'ok' and j['stdout'] == 'hi\\n'"
# A veFaaS sandbox is of its function's size: every limit but the wall
# clock and the output caps goes unenforced, refused unless allowed
# (lib.sh allows it), before CreateSandbox, and then said.
check "allowed: --json names the limits it ran without, not wall or the output caps" \
    json_check "j['unenforced_limits'] == ['cpu', 'memory', 'pids', 'nofile', 'fsize', 'disk'] and 'function' in j['unenforced_reason']"
c0=$(fake_stat "j['created']")
cli -o provider.volcengine.unenforced_limits=refuse run -- echo hi
check "unenforced_limits = refuse: refused, naming memory and why; no CreateSandbox" \
    eval 'rc_and_err 125 "memory (512 MiB)" && err_has "memory_mb of volcengine.ini" && [ "$(fake_stat "j[\"created\"]")" = "$c0" ]'

# A wrong secret key: the signature does not match; the key is in no output.
VOLCENGINE_TEST_SK="wrong-$VC_SK" cli run --json -- echo hi
check "a wrong secret key: SBX_E_AUTH, SignatureDoesNotMatch, naming the settings" \
    jerr 9 "SignatureDoesNotMatch"
check "...pointing at access_key_id and secret_access_key" jerr 9 "check access_key_id and secret_access_key"
check "...and neither key is in any output" \
    sh -c "! grep -q -F -e '$VC_SK' -e '$VC_AK' '$tmp/out' '$tmp/err'"
check "...and it was not retried (one create refused)" test "$(answered 403)" = 1

VOLCENGINE_TEST_AK="AKLTnobody" cli run --json -- echo hi
check "an unknown access key: SBX_E_AUTH, InvalidAccessKey" jerr 9 "InvalidAccessKey"

# The gateway's clock an hour ahead: the request's X-Date is too old.
vc_ctl POST /_fake/clock '{"offset": 3600}' >/dev/null
cli run --json -- echo hi
check "a request time an hour off: SBX_E_AUTH asking about the clock" \
    jerr 9 "is this host's clock right?"
check "...the gateway said InvalidTimestamp" jerr 9 "InvalidTimestamp"
vc_ctl POST /_fake/clock '{"offset": 0}' >/dev/null

# 429 with Retry-After on create, twice: the core waits and retries.
vc_faults '{"error_rate": 1.0, "status": 429, "retry_after": 1, "count": 2, "action": "CreateSandbox"}'
cli run --json -- echo hi
check "429 FlowLimitExceeded with Retry-After twice on create: retried, then ok" \
    json_check "j['status'] == 'ok' and j['stdout'] == 'hi\\n'"
check "...the fake injected both" test "$(fake_stat "j['injected']['errors']")" -ge 2

# 502 of the function gateway on the exec: the command never started, so
# it is retried in the same sandbox.
before=$(fake_stat "j['created']")
vc_faults '{"error_rate": 1.0, "status": 502, "count": 2, "path": "/v1/bash/exec"}'
cli run --json -- echo again
check "502 twice on the exec: retried on the same sandbox, then ok" \
    json_check "j['status'] == 'ok' and j['stdout'] == 'again\\n'"
check "...one sandbox made for it" test "$(fake_stat "j['created']")" = $((before + 1))

# Output polls cut mid-answer, three times: asked again from the offsets.
vc_faults '{"drop_rate": 1.0, "drop_mode": "mid", "count": 3, "path": "/v1/bash/output"}'
cli run --json -- sh -c 'echo early; sleep 2; echo late'
check "three output polls dropped: asked again, every byte once" \
    json_check "j['status'] == 'ok' and j['stdout'] == 'early\\nlate\\n'"
check "...the fake dropped them" test "$(fake_stat "j['injected']['drops']")" -ge 3

# With the core's retries off, the codes the provider gives.
vc_config "env:VOLCENGINE_TEST_AK" "env:VOLCENGINE_TEST_SK" &&
    printf '[retry]\nattempts = 1\n' >>"$VC_DIR/config/polysandbox.ini"
vc_faults '{"error_rate": 1.0, "status": 429, "retry_after": 3, "action": "CreateSandbox"}'
cli run --json -- echo hi
check "429 with Retry-After: SBX_E_RATE_LIMITED with the pause named" jerr 15 "retry after 3000 ms"

# The answer of an exec cut mid-way: the command may have run, so it is
# not run again; a transport error naming the exec.
vc_faults '{"drop_rate": 1.0, "drop_mode": "mid", "path": "/v1/bash/exec"}'
cli run --json -- echo once
check "an exec whose answer is cut: SBX_E_NETWORK naming the exec" jerr 14 "exec"
vc_faults '[]'

"$VC_PYTHON" - "$VC_URL" <<'PYEOF' &
import json, sys, time, urllib.request
url = sys.argv[1]
# Kill the sandbox of the first exec that is running (the sandbox dies).
for _ in range(400):
    s = json.load(urllib.request.urlopen(url + "/_fake/stats"))["sandboxes"]
    busy = [k for k, v in s.items() if v["running"]]
    if busy:
        time.sleep(0.5)
        urllib.request.urlopen(urllib.request.Request(url + "/_fake/kill", method="POST",
                               data=json.dumps({"id": busy[0]}).encode()))
        break
    time.sleep(0.05)
PYEOF
killer=$!
cli run --json -- sh -c 'sleep 5; echo late'
wait $killer
check "a sandbox dying mid-exec: a sandbox error saying so" jerr 8 "died while its command ran"
check "...well before the command's 5 s" sh -c "! grep -q late '$tmp/out'"
check "nothing is left in the fake" test "$(fake_stat "len(j['live'])")" = 0

# The time-to-live: sent in whole minutes; gc reaps the expired.
cli create --ttl 150s --label run=ttl
id=$(cat "$tmp/out")
check "create --ttl 150s: CreateSandbox's Timeout is 3 (minutes)" \
    test "$(fake_stat "j['sandboxes'].get('$id', {}).get('timeout')")" = 3
cli create --ttl 1s --label run=gc
gone=$(cat "$tmp/out")
sleep 2
cli gc --json
live=$(fake_stat "sorted(j['live'])")
check "gc reaps the sandbox whose time-to-live passed, and only it" \
    eval '[ $rc -eq 0 ] && [ "$live" = "[\"$id\"]" ] && out_has "$gone"'
cli destroy "$id"

# STS credentials and the AIO server's own key.
vc_start --session-token "sts-token-$$" --sandbox-api-key "aio-key-$$"
VOLCENGINE_TEST_TOKEN="sts-token-$$" VOLCENGINE_TEST_AIO="aio-key-$$"
export VOLCENGINE_TEST_TOKEN VOLCENGINE_TEST_AIO
vc_config "env:VOLCENGINE_TEST_AK" "env:VOLCENGINE_TEST_SK" \
    "session_token = env:VOLCENGINE_TEST_TOKEN" "sandbox_api_key = env:VOLCENGINE_TEST_AIO"
cli run --json -- echo sts
check "with an STS token and the AIO server's key: ok" \
    json_check "j['status'] == 'ok' and j['stdout'] == 'sts\\n'"
VOLCENGINE_TEST_TOKEN=expired cli run --json -- echo sts
check "a token the gateway refuses: SBX_E_AUTH, InvalidSecretToken" jerr 9 "InvalidSecretToken"
VOLCENGINE_TEST_AIO=wrong cli run --json -- echo sts
check "a wrong AIO key: SBX_E_AUTH naming sandbox_api_key, neither key shown" \
    eval 'jerr 9 "check sandbox_api_key" && ! grep -q -F -e "aio-key-$$" -e "sts-token-$$" "$tmp/out" "$tmp/err"'
check "...and that sandbox was destroyed all the same" test "$(fake_stat "len(j['live'])")" = 0

# The core reads the settings (host->settings_read): a bad one is named
# with where it came from, the key and what is accepted.
cli -o provider.volcengine.ttl=0 run -- true
check "ttl = 0: refused naming the command line, the key and the bounds" \
    rc_and_err 125 "command line: ttl = '0': must be from 1s to 720h"
cli -o provider.volcengine.api_url=https://open.example.com/x run -- true
check "api_url with a path: refused naming the key and why" \
    rc_and_err 125 "api_url = 'https://open.example.com/x': is not http(s)://HOST[:PORT]"
done_testing
