#!/bin/sh
# tests/modal/cli.sh - the modal provider through the polysandbox command,
# against the Modal fake: run, create/exec/destroy, tags as labels (list
# paged by before_timestamp, get-or-create), the create-time environment
# (an ephemeral secret), files, network, time-to-live and gc.
. "$top_srcdir/tests/modal/lib.sh"
plan 30
start_fake --page-size 2

cli providers
check "providers: modal is ready" sh -c "grep -E '^modal +ready' '$tmp/out' >/dev/null"

cli run -e GREETING=hi -- sh -c 'echo "$GREETING ${MODAL_FAKE_SECRET-unset}"; exit 3'
check "run -e: exit 3, environment set, ours not leaked" rc_and_out 3 "hi unset"

# Modal applies the memory limit, not the others: refused unless allowed
# (lib.sh allows them), before anything is made, and then said.
fake_state "1" && creates=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["calls"].get("SandboxCreate", 0))' "$tmp/fake_answer")
cli -o provider.modal.unenforced_limits=refuse run -- true
check "unenforced_limits = refuse: refused, naming pids and why, not memory; no SandboxCreate" \
    eval 'rc_and_err 125 "pids (128)" && err_has "Modal has no limit" && ! err_has "memory (" &&
          fake_state "s[\"calls\"].get(\"SandboxCreate\", 0) == $creates"'
cli run --json -- true
check "allowed: --json names the limits it ran without (not memory, wall, stdout) and why" \
    json_check 'j["status"] == "ok" and j["unenforced_limits"] == ["cpu", "pids", "nofile", "fsize", "disk"] and "Modal" in j["unenforced_reason"]'

# ---- a persistent sandbox ----
L='k+y%&x'
V='v+a%l&u=e b'
cli create --label team=blue --label "$L=$V" --ttl 120s --memory 300M -e KEPT=yes
id=$(cat "$tmp/out")
check "create: prints an id" sh -c "[ -n '$id' ] && [ $rc -eq 0 ]"
check "create: labels (whole), the owner label and the TTL reach Modal as tags and timeout" \
    fake_state "len(s['sandboxes']) == 1 and s['sandboxes'][0]['tags']['team'] == 'blue' and s['sandboxes'][0]['tags']['$L'] == '$V' and 'polysandbox.owner' in s['sandboxes'][0]['tags'] and 100 < s['sandboxes'][0]['secondsLeft'] <= 120"
check "create: memory as resources, the environment as a secret, network blocked" \
    fake_state "s['sandboxes'][0]['memory_mb'] == 300 and s['sandboxes'][0]['env'] == {'KEPT': 'yes'} and s['sandboxes'][0]['blocked'] is True"

cli exec "$id" -- sh -c 'echo state > kept.txt; mkdir -p sub'
check "exec 1: writes a file" is_rc 0
cli exec "$id" -- sh -c 'cat kept.txt; echo "$KEPT"'
check "exec 2: the file and the create-time environment" rc_and_out 0 "$(printf 'state\nyes')"

head -c 300000 /dev/urandom >"$tmp/blob"
cli upload "$id" "$tmp/blob" dir/blob.bin
check "upload of 300 KB into a new directory" is_rc 0
cli download "$id" dir/blob.bin "$tmp/back"
check "download gives back every byte" sh -c "[ $rc -eq 0 ] && cmp -s '$tmp/blob' '$tmp/back'"
cli download "$id" no-such-file "$tmp/none"
check "download of a missing file fails, naming it" \
    sh -c "[ $rc -ne 0 ] && grep -q \"no file 'no-such-file'\" '$tmp/err'"
cli exec "$id" -- ln -s /etc/passwd link
cli download "$id" link "$tmp/link"
check "download through a link the sandbox made is refused" \
    sh -c "[ $rc -ne 0 ] && grep -q 'symbolic link' '$tmp/err' && [ ! -s '$tmp/link' ]"
cli exec "$id" -- ln -s /tmp linkdir
cli upload "$id" "$tmp/blob" linkdir/x
check "upload through a directory link is refused (exit 3)" rc_and_err 3 "symbolic link"

cli list --json --label "$L=$V"
check "list --label (separators in it) finds exactly it, labels whole" \
    json_check "[x['id'] for x in j] == ['$id'] and j[0]['labels']['$L'] == '$V'"
cli create --get-or-create --label "$L=$V" --ttl 120s
check "get-or-create finds it instead of creating one" \
    sh -c "[ $rc -eq 0 ] && [ \"\$(cat '$tmp/out')\" = '$id' ]"

cli destroy "$id"
check "destroy" is_rc 0
check "destroy: the sandbox is gone from Modal" fake_state 's["sandboxes"] == []'
cli exec "$id" -- true
check "exec after destroy: no such sandbox (exit 2)" rc_and_err 2 "has finished"
cli destroy "$id"
check "destroy again: no such sandbox, said so" sh -c "[ $rc -ne 0 ] && grep -q 'has finished' '$tmp/err'"

# ---- list pages (the fake serves 2 a page) ----
ids=
for i in 1 2 3 4 5; do
    cli create --label batch=b5 --ttl 60s
    ids="$ids $(cat "$tmp/out")"
done
cli list --json --label batch=b5
check "list follows before_timestamp over 3 pages: all 5 listed" \
    json_check "sorted(x['id'] for x in j) == sorted('$ids'.split())"
for i in $ids; do cli destroy "$i"; done
check "destroyed the 5" fake_state 's["sandboxes"] == []'

# ---- the network ----
cli run --network host -- sh -c 'echo open'
check "network host: allowed by default" rc_and_out 0 open
MODAL_SETTINGS='allow_internet = false' write_config
cli run --network host -- true
check "network host with allow_internet = false: refused" rc_and_err 125 "allow_internet = false"
write_config

# ---- time-to-live: Modal ends the sandbox itself ----
cli create --ttl 1s
id=$(cat "$tmp/out")
i=0
while ! fake_state 's["sandboxes"] == []' && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
cli exec "$id" -- true
check "a sandbox past its TTL is gone (exit 2)" rc_and_err 2 "has finished"

# ---- gc: past its polysandbox.expires, though Modal still runs it ----
try=0
while [ $try -lt 3 ]; do
    try=$((try + 1))
    cli create --ttl 2s --label gc=me
    id=$(cat "$tmp/out")
    fake_call POST /_fake/timeout "{\"id\": \"$id\", \"timeout\": 120}" && break
    echo "# try $try: the sandbox was gone before its timeout was moved"
done
sleep 3
cli gc --provider modal --json
check "gc reaps a sandbox past its time-to-live (found through list's tags)" \
    sh -c "[ $rc -eq 0 ] && grep -q '$id' '$tmp/out'"
check "...and it is terminated on Modal" fake_state 's["sandboxes"] == []'

cli doctor --provider modal
check "doctor: credentials set (not shown), control plane reachable" \
    sh -c "[ $rc -eq 0 ] && grep -q 'token_secret.*not shown' '$tmp/out' && grep -q 'credentials accepted' '$tmp/out' && ! grep -q '$MODAL_FAKE_SECRET' '$tmp/out' '$tmp/err'"

# The core reads the settings (host->settings_read): a bad one is named
# with where it came from, the key and what is accepted.
cli -o provider.modal.exec=quick run -- echo hi
check "exec = quick: refused naming the command line, the key and the choices" \
    eval 'rc_and_err 125 "command line: exec = '"'quick'"': use auto, router or legacy"'
cli -o provider.modal.connect_timeout=50ms run -- echo hi
check "connect_timeout below its minimum: refused naming the bounds" \
    eval 'rc_and_err 125 "connect_timeout = '"'50ms'"': must be from 100ms to 10m"'
done_testing
