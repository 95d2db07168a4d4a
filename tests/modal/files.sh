#!/bin/sh
# tests/modal/files.sh - an exec's files ride in the command's own exec
# (small ones without NUL bytes, as arguments of a shell prelude): one
# TaskExecStart where there were one per file and one for the command,
# every byte kept, a link the sandbox planted still refused with nothing
# run, the prelude's report never shown, a missing command said in the
# runtime's words; a file too large for arguments still goes first on its
# own exec, and every file does with files_in_exec = false.
. "$top_srcdir/tests/modal/lib.sh"

plan 10
start_fake

starts() {
    fake_call GET /_fake/state &&
        "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["calls"].get("TaskExecStart", 0))' \
            "$tmp/fake_answer"
}

cli create
id=$(cat "$tmp/out")
printf 'one\n\n  two %%s $HOME \\n\n\n' >"$tmp/a.txt"
cli exec "$id" -- true
n0=$(starts)
cli exec --file "$tmp/a.txt:new/dir/a.txt" --file "$tmp/a.txt:b.sh" "$id" -- cat new/dir/a.txt b.sh
cat "$tmp/a.txt" "$tmp/a.txt" >"$tmp/want"
n1=$(starts)
check "two files and the command: every byte, trailing newlines kept" \
    sh -c "[ $rc -eq 0 ] && cmp -s '$tmp/out' '$tmp/want'"
check "...in one exec ($n0 -> $n1 starts)" test "$((n1 - n0))" -eq 1

cli exec "$id" -- ln -s /tmp planted
cli exec --file "$tmp/a.txt:planted/x" "$id" -- echo ran
check "a file through a planted link: refused (exit 125, as before), the command not run" \
    sh -c "[ $rc -eq 125 ] && grep -q 'symbolic link' '$tmp/err' && ! grep -q ran '$tmp/out'"
check "...the prelude's report is not shown" sh -c "! grep -Eq '^[0-9a-f]{32} ' '$tmp/err'"

cli exec --file "$tmp/a.txt:c.txt" "$id" -- sh -c 'printf "3 0 not a report" >&2; exit 4'
check "the command's own stderr passes whole" rc_and_err 4 "3 0 not a report"

cli exec "$id" -- no-such-command
plain=$rc
cli exec --file "$tmp/a.txt:d.txt" "$id" -- no-such-command
check "a missing command: the same exit status with files ($rc) as without ($plain)" \
    sh -c "[ $rc -eq $plain ] && [ $rc -ne 0 ]"

head -c 100000 /dev/urandom >"$tmp/big"
n0=$(starts)
cli exec --file "$tmp/big:big.bin" --file "$tmp/a.txt:e.txt" "$id" -- sh -c 'wc -c <big.bin; cat e.txt'
n1=$(starts)
check "a binary file too large for arguments: written first, then the rest" \
    sh -c "[ $rc -eq 0 ] && [ \"\$(head -n1 '$tmp/out' | tr -d ' ')\" = 100000 ]"
check "...in separate execs ($n0 -> $n1 starts)" test "$((n1 - n0))" -ge 2
n0=$(starts)
cli -o provider.modal.files_in_exec=false exec --file "$tmp/a.txt:f.txt" "$id" -- cat f.txt
n1=$(starts)
check "files_in_exec = false: the file still arrives whole" \
    sh -c "[ $rc -eq 0 ] && cmp -s '$tmp/out' '$tmp/a.txt'"
check "...on its own exec, before the command ($n0 -> $n1 starts)" test "$((n1 - n0))" -eq 2
cli destroy "$id"
done_testing
