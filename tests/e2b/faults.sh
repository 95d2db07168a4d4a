#!/bin/sh
# tests/e2b/faults.sh - the e2b provider under the fake's injected faults:
# each failure is a clean, bounded error with the right code (5xx
# SBX_E_SERVER 20, 429 SBX_E_RATE_LIMITED 15 with Retry-After, transport
# SBX_E_NETWORK 14, 401 SBX_E_AUTH 9), never a hang or a wrong result;
# latency, slow bodies and keepalives change nothing; old envd versions
# get multipart uploads.
. "$top_srcdir/tests/e2b/lib.sh"
plan 27
# The provider's own answers first: the core's retries off.
E2B_SETTINGS="keepalive = 1" E2B_EXTRA_INI="[retry]
attempts = 1" start_fake

# jerr CODE TEXT: run --json failed as a sandbox error with CODE, TEXT in it.
jerr() {
    [ "$rc" -eq 125 ] &&
        json_check "j['status'] == 'sandbox_error' and j['error_code'] == $1 and '''$2''' in j['error']"
}

faults '{"error_rate": 1.0, "status": 503, "paths": "^/v2/sandboxes$"}'
cli run --json -- echo hi
check "503 on create: SBX_E_SERVER, the status named" jerr 20 "HTTP 503"
faults '{"error_rate": 1.0, "status": 429, "retry_after": 7, "paths": "^/v2/sandboxes$"}'
cli run --json -- echo hi
check "429 on create: SBX_E_RATE_LIMITED with the Retry-After" jerr 15 "retry after 7 s"
check "no sandbox was made by the refused creates" fake_state 's["sandboxes"] == []'

faults '{"error_rate": 1.0, "status": 503, "paths": "^/process"}'
cli run --json -- echo hi
check "503 on envd's Start: SBX_E_SERVER" jerr 20 "HTTP 503"
check "the sandbox of the failed run is destroyed" fake_state 's["sandboxes"] == []'
faults '{"error_rate": 1.0, "status": 429, "retry_after": 4, "paths": "^/process"}'
cli run --json -- echo hi
check "429 on envd's Start: SBX_E_RATE_LIMITED with the Retry-After" jerr 15 "retry after 4 s"
faults '{"error_rate": 1.0, "status": 502, "paths": "^/process"}'
cli run --json -- echo hi
check "502 from the edge: SBX_E_SERVER, said to be a dead sandbox" jerr 20 "not running"

faults '{"drop_stream_rate": 1.0, "paths": "Start"}'
cli run --json -- sh -c 'sleep 1; echo late'
check "a stream dropped mid-exec: SBX_E_NETWORK" jerr 14 "stream broke"
check "...and nothing of it is left" fake_state 's["sandboxes"] == []'

no_faults
cli create --ttl 120s
id=$(cat "$tmp/out")
cli exec "$id" -- sh -c 'head -c 200000 /dev/zero > z.bin'
faults '{"drop_stream_rate": 1.0, "paths": "^/files"}'
cli download "$id" z.bin "$tmp/z"
check "a download cut mid-body: a network error, no file written" \
    sh -c "[ $rc -ne 0 ] && grep -q 'POST\\|GET' '$tmp/err' && [ ! -s '$tmp/z' ]"
faults '{"slow_body_ms": 20, "paths": "^/files"}'
cli download "$id" z.bin "$tmp/z"
check "a slow download body: every byte" sh -c "[ $rc -eq 0 ] && [ \$(wc -c < '$tmp/z') -eq 200000 ]"
faults '{"error_rate": 1.0, "status": 500, "paths": "^/files"}'
cli upload "$id" "$tmp/z" up.bin
check "500 on upload: refused with the status" rc_and_err 125 "HTTP 500"
no_faults
cli destroy "$id"

faults '{"slow_body_ms": 30}'
cli run -- sh -c 'for i in 1 2 3 4 5; do echo $i; done'
check "slow stream bodies: the output, whole" rc_and_out 0 "$(printf '1\n2\n3\n4\n5')"
faults '{"latency_ms": 200}'
cli run -- echo slow
check "200 ms latency on every call: still right" rc_and_out 0 slow
no_faults
cli run -- sh -c 'sleep 2.5; echo after'
check "keepalive messages (every 1 s) are skipped" rc_and_out 0 after

# A seeded 30 % error rate on envd: each run either works or fails cleanly.
faults '{"error_rate": 0.3, "status": 503, "seed": 7, "paths": "^/process"}'
good=0 bad=0 wrong=0
for i in 1 2 3 4 5 6 7 8; do
    cli run --json -- echo "n$i"
    if [ "$rc" -eq 0 ] && json_check "j['stdout'] == 'n$i\\n'"; then
        good=$((good + 1))
    elif jerr 20 "HTTP 503"; then
        bad=$((bad + 1))
    else
        wrong=$((wrong + 1))
    fi
done
no_faults
check "30 % 503s: every run right or a clean SBX_E_SERVER ($good ok, $bad failed)" \
    sh -c "[ $wrong -eq 0 ] && [ $good -gt 0 ] && [ $bad -gt 0 ]"
i=0
while ! fake_state 's["sandboxes"] == []' && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
check "...and no sandbox leaked by the failed ones" fake_state 's["sandboxes"] == []'

# With the core's retries (the defaults) the faults are absorbed: the
# provider's codes and hints (Retry-After, "never started") drive them.
E2B_SETTINGS="keepalive = 1" write_config
faults '{"error_rate": 0.3, "status": 503, "seed": 11}'
good=0
for i in 1 2 3 4 5 6; do
    cli run -- echo "n$i"
    if rc_and_out 0 "n$i"; then good=$((good + 1)); fi
done
no_faults
check "30 % 503s on every call, with the core's retries: all 6 runs right" [ "$good" -eq 6 ]
faults '{"error_rate": 1.0, "status": 429, "retry_after": 1, "count": 1, "paths": "^/v2/sandboxes$"}'
cli run -- echo after-429
check "a 429 with Retry-After on create: retried, right" rc_and_out 0 after-429
cli create --ttl 60s
id=$(cat "$tmp/out")
faults '{"error_rate": 1.0, "status": 503, "count": 1, "paths": "Start"}'
cli exec "$id" -- echo again
check "503 on Start in a persistent sandbox: never started, so retried in it" \
    rc_and_out 0 again
faults '{"drop_stream_rate": 1.0, "count": 1, "paths": "Start"}'
cli exec "$id" -- echo once
check "a stream dropped mid-exec in a persistent sandbox: not run twice (an error)" \
    rc_and_err 125 "stream broke"
no_faults
cli destroy "$id"
E2B_SETTINGS="keepalive = 1" E2B_EXTRA_INI="[retry]
attempts = 1" write_config

# A sandbox reopened by id gets envd's access token from GET /sandboxes/{id}.
cli create --ttl 60s
id=$(cat "$tmp/out")
cli exec "$id" -- true
check "exec in a sandbox reopened by id" is_rc 0
cli destroy "$id"

E2B_FAKE_KEY=nope cli run --json -- true
check "401: SBX_E_AUTH" jerr 9 "refused the API key"

# old envd: uploads as multipart/form-data
start_fake --envd-version 0.4.0
cli create --ttl 60s
id=$(cat "$tmp/out")
head -c 70000 /dev/urandom >"$tmp/blob"
cli upload "$id" "$tmp/blob" m/blob
check "envd 0.4.0: upload (multipart)" is_rc 0
cli download "$id" m/blob "$tmp/back"
check "envd 0.4.0: download of it, every byte" sh -c "[ $rc -eq 0 ] && cmp -s '$tmp/blob' '$tmp/back'"
cli destroy "$id"

# the service gone: connection refused
stop_fake
cli run --json -- true
check "the control plane down: SBX_E_NETWORK, quickly" jerr 14 "POST /v2/sandboxes"
cli list
check "list with the control plane down: an error" sh -c "[ $rc -ne 0 ] && grep -q 'GET /v2/sandboxes' '$tmp/err'"

done_testing
