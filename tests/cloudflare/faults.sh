#!/bin/sh
# tests/cloudflare/faults.sh - the cloudflare provider against the bridge
# fake's faults: a wrong key (401: SBX_E_AUTH, never retried, the key in
# no output), 429 with Retry-After passed to the core (which waits and
# retries), 5xx retried, a full warm pool (503 capacity_exceeded), a
# stream dropped mid-exec, a container that dies mid-exec; each a clean,
# bounded error or the right answer, never a hang.
. "$top_srcdir/tests/cloudflare/lib.sh"
tmp=$CF_DIR
PS="$top_builddir/polysandbox"
CLI_TIMEOUT=120
PY=$CF_PYTHON
. "$top_srcdir/tests/lib/tap.sh"
plan 19
cf_start

# jerr CODE TEXT: run --json failed as a sandbox error with CODE, TEXT in it.
jerr() {
    [ "$rc" -eq 125 ] &&
        json_check "j['status'] == 'sandbox_error' and j['error_code'] == $1 and '''$2''' in j['error']"
}
fake_stat() { cf_ctl GET /_fake/stats | cf_jq "$1"; }

cli run --json -- echo hi
check "calm: a run answers" json_check "j['status'] == 'ok' and j['stdout'] == 'hi\\n'"
# A bridge container is of the Worker's size: every limit but the wall
# clock and the output caps goes unenforced, refused unless allowed
# (lib.sh allows it), before any sandbox is asked for, and then said.
check "allowed: --json names the limits it ran without (network too), not wall or the output caps" \
    json_check "j['unenforced_limits'] == ['cpu', 'memory', 'pids', 'nofile', 'fsize', 'disk', 'network'] and 'instance type' in j['unenforced_reason']"
# (--network host: network = none, refused first, is network.sh's.)
n0=$(cf_ctl GET /_fake/requests | cf_jq 'len(j)')
cli -o provider.cloudflare.unenforced_limits=refuse run --network host -- echo hi
n1=$(cf_ctl GET /_fake/requests | cf_jq 'len(j)')
check "unenforced_limits = refuse: refused, naming memory and why; nothing asked of the bridge" \
    eval 'rc_and_err 125 "memory (512 MiB)" && err_has "instance type" && err_has "unenforced_limits = allow" && [ "$n0" = "$n1" ]'

# A wrong key: refused, named, and the key itself is in no output.
CLOUDFLARE_TEST_KEY="wrong-$CF_KEY-secret" cli run --json -- echo hi
check "a wrong key: SBX_E_AUTH naming api_key" jerr 9 "check api_key"
check "...and the key is in no output" \
    sh -c "! grep -q -F 'wrong-$CF_KEY-secret' '$tmp/out' '$tmp/err'"
n=$(cf_ctl GET /_fake/requests | cf_jq 'len([r for r in j if r["status"] == 401])')
check "...and it was not retried (one create asked)" test "$n" = 1

# 429 with Retry-After on create, twice: the core waits and retries.
cf_faults '{"error_rate": 1.0, "status": 429, "retry_after": 1, "count": 2, "path": "/v1/sandbox", "method": "POST"}'
cli run --json -- echo hi
check "429 with Retry-After twice on create: retried, then ok" \
    json_check "j['status'] == 'ok' and j['stdout'] == 'hi\\n'"
n=$(fake_stat "j['injected']")
check "...the fake injected both" test "$n" -ge 2

# 502 pool errors on the exec: never reached the container, so retried.
cf_faults '{"error_rate": 1.0, "status": 502, "count": 2, "path": "/v1/sandbox/", "method": "POST"}'
cli run --json -- echo again
check "502 twice on exec: retried on the same sandbox, then ok" \
    json_check "j['status'] == 'ok' and j['stdout'] == 'again\\n'"

# With the core's retries off, the codes the provider gives.
cf_config "env:CLOUDFLARE_TEST_KEY" && printf '[retry]\nattempts = 1\n' >>"$CF_DIR/config/polysandbox.ini"
cf_faults '{"error_rate": 1.0, "status": 503, "retry_after": 3, "path": "/v1/sandbox", "method": "POST"}'
cli run --json -- echo hi
check "503 with Retry-After: SBX_E_SERVER with the pause named" jerr 20 "retry after 3000 ms"

cf_faults '{}'
"$CF_PYTHON" - "$CF_URL" <<'PYEOF' &
import json, sys, time, urllib.request
url = sys.argv[1]
# Kill the container of the first exec that is running (the sandbox dies).
for _ in range(200):
    live = json.load(urllib.request.urlopen(url + "/_fake/stats"))["live"]
    if live:
        time.sleep(0.5)
        urllib.request.urlopen(urllib.request.Request(url + "/_fake/kill", method="POST",
                               data=json.dumps({"id": live[0]}).encode()))
        break
    time.sleep(0.05)
PYEOF
killer=$!
cli run --json -- sh -c 'sleep 5; echo late'
wait $killer
check "a container dying mid-exec: a sandbox error naming the failure" jerr 8 "exec failed"
check "...well before the command's 5 s" sh -c "! grep -q late '$tmp/out'"

cf_faults '{"drop_rate": 1.0, "drop_mode": "mid", "path": "/v1/sandbox/", "method": "POST"}'
cli run --json -- sh -c 'sleep 1; echo late'
check "an exec stream dropped: SBX_E_NETWORK naming the exec" jerr 14 "/exec"
cf_faults '{}'
n=$(fake_stat "len(j['live'])")
check "nothing is left bound in the fake" test "$n" = 0

# Settings are read by the core (host->settings_read): a bad value is
# named with the file and line it came from, or the command line.
cli -o provider.cloudflare.request_timeout=2h run -- echo hi
check "request_timeout out of bounds on the command line: refused naming it and the bounds" \
    eval 'rc_and_err 125 "command line: request_timeout = '"'2h'"': must be from 1s to 1h"'
cf_config "env:CLOUDFLARE_TEST_KEY" "api_prefix = v1"
cli run -- echo hi
check "a bad api_prefix in the file: refused naming the file, the line and the key" \
    err_has "providers.d/cloudflare.ini:9: api_prefix = 'v1': must start with '/'"
cf_config "env:CLOUDFLARE_TEST_KEY"
cli -o provider.cloudflare.request_timeout=20s run -- echo hi
check "request_timeout takes a duration with a unit" rc_and_out 0 hi

# A 429 on writing the program's file, inside the exec: its Retry-After
# reaches the exec's outcome (ABI 1.12), so the core waits what the
# bridge asked (2 s) and not its own backoff (base 1 ms here).
printf '[retry]\nbase = 1ms\n' >>"$CF_DIR/config/polysandbox.ini"
cf_faults '{"error_rate": 1.0, "status": 429, "retry_after": 2, "count": 1, "path": "/v1/sandbox/", "method": "PUT"}'
cli run --json --lang python -c 'print(6*7)'
check "429 with Retry-After on a file written in the exec: retried, then ok" \
    json_check "j['status'] == 'ok' and j['stdout'] == '42\\n'"
cf_ctl GET /_fake/requests >"$tmp/reqs.json"
gap=$(cf_jq '[b["at"] - a["at"] for a, b in zip(j, j[1:]) if a["method"] == "PUT" and a.get("status") == 429][0]' <"$tmp/reqs.json")
check "...after the 2 s the bridge asked, not the core's 1 ms backoff (waited $gap s)" \
    "$CF_PYTHON" -c "import sys; sys.exit(not float('$gap') >= 1.9)"
done_testing
