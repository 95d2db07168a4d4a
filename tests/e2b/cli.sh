#!/bin/sh
# tests/e2b/cli.sh - the e2b provider through the polysandbox command,
# against the E2B fake: run, create/exec/destroy, files, labels and list
# (paged), stdin, environment, time limits, time-to-live, credentials.
. "$top_srcdir/tests/e2b/lib.sh"
plan 51
start_fake --max-page 2 --templates base,code-interpreter-v1

cli providers
check "providers: e2b is ready" sh -c "grep -E '^e2b +ready' '$tmp/out' >/dev/null"

cli -q run -- sh -c 'echo hello; echo oops >&2; exit 3'  # -q: no note of the unenforced limits
check "run: stdout, exit status 3" rc_and_out 3 hello
check "run: stderr apart" sh -c "[ \"\$(cat '$tmp/err')\" = oops ]"
# E2B sizes sandboxes by template: the memory and other limits are not
# enforced, which is refused unless allowed (lib.sh allows it).
cli -o provider.e2b.unenforced_limits=refuse run -- true
check "unenforced_limits = refuse: refused, naming memory and the template" \
    eval 'rc_and_err 125 "memory (512 MiB)" && err_has "template"'
cli run --json -- true
check "allowed: the result names the limits it ran without" \
    json_check '"memory" in j["unenforced_limits"] and "wall" not in j["unenforced_limits"] and "template" in j["unenforced_reason"]'

cli run --json -- sh -c 'printf "a\\000b"; kill -TERM $$'
check "run --json: signal TERM, binary stdout kept" \
    json_check 'j["status"] == "signal" and j["signal"] == 15 and j["stdout"] == "a\0b" and j["provider"] == "e2b"'

printf 'line1\nline2\n' >"$tmp/in"
cli_in "$tmp/in" run -i -- sh -c 'cat; echo done'
check "run: stdin delivered to EOF" rc_and_out 0 "$(printf 'line1\nline2\ndone')"

cli run -- cat
check "run: without stdin, cat sees EOF at once" rc_and_out 0 ""

cli run -e GREETING=hi -- sh -c 'echo "$GREETING ${E2B_FAKE_KEY-unset}"'
check "run -e: environment set, ours not leaked" rc_and_out 0 "hi unset"

cli run -- /no/such/command
check "run of a missing command: 127" is_rc 127
cli run -- no-such-command-in-path
check "run of a command not in PATH: 127" is_rc 127

cli run --json -t 1s -- sh -c 'sleep 30 & sleep 30'
check "run -t 1s: status timeout, exit 124" \
    sh -c "[ $rc -eq 124 ] && grep -q '\"status\":\"timeout\"' '$tmp/out'"
check "after a timeout no process of the run is left" fake_state 's["sandboxes"] == []'

cli run --json --output-limit 1K -- sh -c 'yes | head -c 100000'
check "run --output-limit 1K: status output_limit, 1 KiB kept" \
    json_check 'j["status"] == "output_limit" and len(j["stdout"]) == 1024 and j["stdout_truncated"]'

# ---- a persistent sandbox ----
cli create --label team=blue --ttl 120s -e KEPT=yes
id=$(cat "$tmp/out")
check "create: prints an id" sh -c "[ -n '$id' ] && [ $rc -eq 0 ]"
check "create: labels, owner label and TTL sent as metadata and timeout" fake_state \
    "len(s['sandboxes']) == 1 and s['sandboxes'][0]['metadata']['team'] == 'blue' and 'polysandbox.owner' in s['sandboxes'][0]['metadata'] and 100 < s['sandboxes'][0]['secondsLeft'] <= 120 and s['sandboxes'][0]['envVars'] == {'KEPT': 'yes'}"
check "create: network none by default (no internet access)" fake_state \
    "s['sandboxes'][0]['allowInternetAccess'] is False"

cli exec "$id" -- sh -c 'echo state > kept.txt; mkdir -p sub'
check "exec 1: writes a file" is_rc 0
cli exec "$id" -- sh -c 'cat kept.txt; echo "$KEPT"'
check "exec 2 (a new process): the file and the create-time environment" rc_and_out 0 "$(printf 'state\nyes')"

head -c 300000 /dev/urandom >"$tmp/blob"
cli upload "$id" "$tmp/blob" dir/blob.bin
check "upload of 300 KB into a new directory" is_rc 0
cli exec "$id" -- sh -c 'wc -c < dir/blob.bin'
check "exec sees the uploaded size" rc_and_out 0 300000
cli download "$id" dir/blob.bin "$tmp/back"
check "download gives back every byte" sh -c "[ $rc -eq 0 ] && cmp -s '$tmp/blob' '$tmp/back'"
cli download "$id" no-such-file "$tmp/none"
check "download of a missing file fails, naming it" \
    sh -c "[ $rc -ne 0 ] && grep -q 'no such file' '$tmp/err'"
cli exec "$id" -- ln -s /etc/passwd link
cli download "$id" link "$tmp/link"
check "download through a link the sandbox made is refused" \
    sh -c "[ $rc -ne 0 ] && grep -q 'symbolic link' '$tmp/err' && [ ! -s '$tmp/link' ]"
cli upload "$id" "$tmp/blob" ../escape
check "upload to ../escape is refused (exit 3)" rc_and_err 3 ".."

printf '#!/bin/sh\necho script ran\n' >"$tmp/script"
chmod 755 "$tmp/script"
cli upload "$id" "$tmp/script" bin/run.sh
cli exec "$id" -- ./bin/run.sh
check "an uploaded 0755 script runs" rc_and_out 0 "script ran"

cli list --json
check "list: the sandbox with its labels" \
    json_check "any(x['id'] == '$id' and x['labels'].get('team') == 'blue' for x in j)"

fake_call POST "/sandboxes/$id/pause"
check "paused (E2B's pause)" fake_state "s['sandboxes'][0]['state'] == 'paused'"
cli exec "$id" -- cat kept.txt
check "a paused sandbox is resumed (connect) when opened" rc_and_out 0 state

cli destroy "$id"
check "destroy" is_rc 0
check "destroy: the sandbox is gone from E2B" fake_state 's["sandboxes"] == []'
cli exec "$id" -- true
check "exec after destroy: no such sandbox (exit 2)" rc_and_err 2 "no E2B sandbox"

# ---- list pages (the fake serves 2 per page) ----
ids=
for i in 1 2 3 4 5; do
    cli create --label batch=b5 --ttl 60s
    ids="$ids $(cat "$tmp/out")"
done
cli list --json
check "list follows X-Next-Token over 3 pages: all 5 listed" \
    json_check "sorted(x['id'] for x in j if x['labels'].get('batch') == 'b5') == sorted('$ids'.split())"
for i in $ids; do cli destroy "$i"; done
check "destroyed the 5" fake_state 's["sandboxes"] == []'

# ---- time-to-live: E2B kills the sandbox itself ----
cli create --ttl 1s
id=$(cat "$tmp/out")
i=0
while ! fake_state 's["sandboxes"] == []' && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
cli exec "$id" -- true
check "a sandbox past its TTL is gone (exit 2)" rc_and_err 2 "no E2B sandbox"

# ---- gc: a sandbox past its polysandbox.expires that E2B still runs ----
# E2B's own timeout is the TTL: extended before it strikes, so only our
# label says the sandbox is past its time (under load the extension may
# come too late: then a new one, up to 3 times).
try=0
while [ $try -lt 3 ]; do
    try=$((try + 1))
    cli create --ttl 2s --label gc=me
    id=$(cat "$tmp/out")
    fake_call POST "/sandboxes/$id/timeout" '{"timeout": 120}' && break
    echo "# try $try: the sandbox was gone before its timeout was extended"
done
sleep 3
cli gc --provider e2b --json
check "gc reaps a sandbox past its time-to-live (found through list's labels)" \
    sh -c "[ $rc -eq 0 ] && grep -q '$id' '$tmp/out'"
check "gc: it is gone from E2B" fake_state 's["sandboxes"] == []'

# ---- templates: an image that is a template id, the language mapping ----
cli create --image base --ttl 60s
id1=$(cat "$tmp/out")
E2B_SETTINGS="templates = python:code-interpreter-v1, node:nodejs" write_config
cli create --template python --ttl 60s
id2=$(cat "$tmp/out")
write_config
check "templateID: the image when it is a template id, else the language's" fake_state \
    "sorted((x['sandboxID'], x['templateID']) for x in s['sandboxes']) == sorted([('$id1', 'base'), ('$id2', 'code-interpreter-v1')])"
cli destroy "$id1"
cli destroy "$id2"
# (the python template's plain image, python:3.11-slim, was a default:
# ignored above for the language's template; asked for, it is refused)
cli create --image python:3.12-slim --ttl 60s
check "an image asked for that is no template id: refused (2), naming e2b and it" \
    sh -c "[ $rc -eq 2 ] && grep -q 'e2b cannot run image .python:3.12-slim.' '$tmp/err'"
check "... and no sandbox was made for it" fake_state 's["sandboxes"] == []'

# ---- network ----
cli create --network host --ttl 60s
id=$(cat "$tmp/out")
check "network host: made with internet access" fake_state \
    "[x['allowInternetAccess'] for x in s['sandboxes']] == [True]"
cli destroy "$id"
E2B_SETTINGS="allow_internet = false" write_config
cli run --network host -- true
check "network host refused when allow_internet = false" rc_and_err 125 "allow_internet = false"
write_config

# ---- envd by host name: https://49983-<id>.<domain>, as on other domains ----
ENVD_URL="http://49983-{id}.localhost:$port" write_config
cli run -- sh -c 'echo by host'
check "envd reached by the sandbox's host name (no routing headers)" rc_and_out 0 "by host"
write_config

# ---- credentials ----
cli doctor --provider e2b
check "doctor: key set, control plane reachable, template ids only for images" \
    sh -c "[ $rc -eq 0 ] && grep -q 'OK .*control plane.*key accepted' '$tmp/out' && grep -q 'e2b: images: E2B template ids only' '$tmp/out'"
E2B_FAKE_KEY=wrong-key-5ecret cli doctor --provider e2b
check "doctor with a wrong key: the refusal named, the key not shown" \
    sh -c "[ $rc -eq 1 ] && grep -q 'MISSING .*API key was refused' '$tmp/out' && ! grep -q 5ecret '$tmp/out' '$tmp/err'"
E2B_FAKE_KEY=wrong-key-5ecret cli run -- true
check "a wrong API key: an auth error" rc_and_err 125 "refused the API key"
check "the key never appears in the message" sh -c "! grep -q 5ecret '$tmp/err' '$tmp/out'"
cli secret init
printf '%s' "$E2B_FAKE_KEY" >"$tmp/key"
cli_in "$tmp/key" secret seal
sealed=$(cat "$tmp/out")
API_KEY_REF=$sealed write_config
cli run -- echo sealed
check "api_key = sealed:v1:... (polysandbox secret seal) works" rc_and_out 0 sealed
write_config
(unset E2B_FAKE_KEY; cli run -- true; echo "$rc" >"$tmp/rc")
check "no API key in the environment: a configuration error naming it" \
    sh -c "[ \"\$(cat '$tmp/rc')\" = 125 ] && grep -q E2B_FAKE_KEY '$tmp/err'"

# The core reads the settings (host->settings_read): a bad one is named
# with where it came from, the key and what is accepted.
cli -o provider.e2b.keepalive=500ms run -- true
check "keepalive below its minimum: refused naming the command line, the key and the bounds" \
    rc_and_err 125 "command line: keepalive = '500ms': must be from 1s to 1h"
cli -o provider.e2b.templates=python run -- true
check "templates without LANGUAGE:ID pairs: refused naming the key" \
    rc_and_err 125 "templates = 'python': use LANGUAGE:TEMPLATE_ID pairs"
done_testing
