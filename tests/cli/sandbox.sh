#!/bin/sh
# tests/cli/sandbox.sh - create, exec, upload, download, list, destroy
. "$top_srcdir/tests/cli/lib.sh"

plan 17

cli create --provider local --label suite=cli-test
id=$(out)
check "create prints a sandbox id" eval 'is_rc 0 && [ -n "$id" ] && [ "$(wc -l <"$tmp/out")" -eq 1 ]'
[ -n "$id" ] || id=no-sandbox-was-created
# a failing run must not leave the sandbox behind
trap '"$PS" destroy --provider local "$id" >/dev/null 2>&1; rm -rf "$tmp"' EXIT

cli exec "$id" -- sh -c 'echo kept >state.txt'
check "exec writes a file" is_rc 0
cli exec "$id" -- cat state.txt
check "the file is still there for the next exec" rc_and_out 0 kept
cli exec "$id" --lang python -c 'print(open("state.txt").read().strip() * 2)'
check "exec -c --lang python in the same sandbox" rc_and_out 0 keptkept
cli exec --json "$id" -- sh -c 'exit 5'
check "exec keeps run's exit status and JSON" \
    eval 'is_rc 5 && json_check "j[\"status\"] == \"nonzero_exit\""'
printf 'piped in\n' >"$tmp/in"
cli_in "$tmp/in" exec -i "$id" -- cat
check "exec passes stdin" rc_and_out 0 "piped in"

python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)))' >"$tmp/up.bin"
cli upload "$id" "$tmp/up.bin" up.bin
check "upload exits 0" is_rc 0
cli exec "$id" -- wc -c up.bin
check "the uploaded file has every byte" eval 'is_rc 0 && out_has 256'
cli download "$id" up.bin "$tmp/down.bin"
check "download gives back the same bytes" \
    eval 'is_rc 0 && cmp -s "$tmp/up.bin" "$tmp/down.bin"'
cli download "$id" state.txt
check "download to standard output" rc_and_out 0 kept
cli download "$id" no-such-file.txt "$tmp/x"
check "download of a missing file fails naming it" \
    eval '! is_rc 0 && err_has no-such-file.txt'

cli list --provider local
check "list shows the sandbox and its label" \
    eval 'is_rc 0 && out_has "$id" && out_has suite=cli-test'
cli list --provider local --json
check "list --json has the sandbox with its labels" \
    json_check "any(s['id'] == '$id' and s['labels'].get('suite') == 'cli-test' for s in j)"

cli destroy --provider local "$id"
check "destroy exits 0" is_rc 0
cli destroy --provider local "$id"
check "destroying it again fails with 2 naming the id" rc_and_err 2 "$id"
cli exec "$id" -- true
check "exec in a destroyed sandbox: exit 2 naming the id" \
    rc_and_err 2 "$id"
cli list --provider local
check "list no longer shows it" eval 'is_rc 0 && ! out_has "$id"'

done_testing
