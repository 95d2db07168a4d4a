#!/bin/sh
# tests/cli/exec-stdin-stream.sh - exec -i and run -i stream our stdin (TAP)
#
# On the local provider (stdin_stream) the command gets each line as we
# write it: the test writes one line, waits for the command's answer to
# it, and only then writes the next or closes stdin, so an answer proves
# its line was delivered before end of file.  End of file closes the
# command's stdin and the command's status is ours.  SIGINT cancels a
# command waiting for input.  On nostream (tests/provider/nostream.c: stdin
# only whole) -i reads our stdin to its end first, as before, also when a
# run falls back to it from flop (which claims stdin_stream).
#
# The waits are bounded only by timeout(1) on each polysandbox (60 s),
# which turns a hang into a failed check: no fixed sleep races the run.
. "$top_srcdir/tests/cli/lib.sh"

if [ ! -e "$top_builddir/plugins/local/.libs/local.so" ]; then
    echo "1..0 # SKIP the local provider is not built"
    exit 0
fi

plan 17

cli create --provider local --label suite=cli-stdin-stream
id=$(out)
check "create a local sandbox" eval 'is_rc 0 && [ -n "$id" ]'
[ -n "$id" ] || id=no-sandbox-was-created
trap '"$PS" destroy --provider local "$id" >/dev/null 2>&1; rm -rf "$tmp"' EXIT

# a command that died early must fail checks, not kill us with SIGPIPE
trap '' PIPE

# A command that answers each line it reads, then exits 3 at end of file.
answer='while read -r l; do echo "got $l"; done; echo eof; exit 3'

# start ARGS...: polysandbox ARGS in the background, its stdin the fifo
# $tmp/in (our fd 3 writes it), its stdout the fifo $tmp/o (our fd 4
# reads it).  $pid: the timeout(1) around it.
start() {
    rm -f "$tmp/in" "$tmp/o"
    mkfifo "$tmp/in" "$tmp/o" || exit 99
    # $tmp/pid: polysandbox's own pid (sh execs it), for kill
    timeout -k 5 60 sh -c 'echo $$ >"$0" && exec "$@"' "$tmp/pid" "$PS" "$@" \
        <"$tmp/in" >"$tmp/o" 2>"$tmp/err" &
    pid=$!
    exec 3>"$tmp/in" 4<"$tmp/o"
}
# hear: the command's next line of output into $got.
hear() {
    got=
    IFS= read -r got <&4 || got="(end of output)"
}
# put LINE: write LINE; say LINE: write it, then hear the answer.
put() { printf '%s\n' "$1" >&3; }
say() { put "$1"; hear; }
# finish [open]: close our end of stdin (with "open": only once the
# output ended), read what is left, reap; sets $rc, $rest.
finish() {
    [ "${1-}" = open ] || exec 3>&-
    rest=$(cat <&4)
    exec 3>&- 4<&-
    wait "$pid"
    rc=$?
}

# ---- exec -i on local: line by line ----
start exec -i "$id" -- sh -c "$answer"
say one
check "exec -i: the first line is answered while stdin is still open" \
    eval '[ "$got" = "got one" ]'
say two
check "exec -i: and the second, after the first answer" eval '[ "$got" = "got two" ]'
finish
check "exec -i: our end of file closes the command's stdin" eval '[ "$rest" = eof ]'
check "exec -i: the command's status (3) is ours" is_rc 3

# an interactive interpreter keeps its state between the lines
start exec -i "$id" -- python3 -u -i -q
put 'x = 6'
say 'print(x * 7)'
check "exec -i python3 -i: answers a line that uses the line before" \
    eval '[ "$got" = 42 ]'
finish
check "exec -i python3 -i: end of file ends it with status 0" is_rc 0

# ---- run -i shares the path ----
start run --provider local -i -- sh -c "$answer"
say alpha
check "run -i: a line is answered before end of file" eval '[ "$got" = "got alpha" ]'
finish
check "run -i: end of file, then the command's status" \
    eval 'is_rc 3 && [ "$rest" = eof ]'

# ---- SIGINT cancels a command waiting for input ----
start exec -i "$id" -- sh -c 'echo ready; read -r l; echo "late $l"'
hear
check "SIGINT: the command runs and waits for input" eval '[ "$got" = ready ]'
# to polysandbox itself: timeout(1) forwards a SIGINT only now and then
kill -INT "$(cat "$tmp/pid")"
# Our stdin stays open until polysandbox has ended: an end of file racing
# the signal would let the command's read return and go on.
finish open
check "SIGINT: polysandbox ends with 130, the command did not go on" \
    eval 'is_rc 130 && [ -z "$rest" ]'
check "SIGINT: it cancelled the exec and said so (it did not just die)" \
    err_has "exec: interrupted by signal 2"
cli exec "$id" -- sh -c 'echo still here'
check "the sandbox is still usable after an interrupted exec" \
    rc_and_out 0 "still here"

# ---- a provider without stdin_stream: read whole, then run ----
POLYSANDBOX_PROVIDER_PATH="$top_builddir/tests/cli/.libs:$POLYSANDBOX_PROVIDER_PATH"
mkdir -p "$tmp/conf/providers.d" "$tmp/conf/templates.d" || exit 99
printf '[core]\ndefault_provider = nostream\n' >"$tmp/conf/polysandbox.ini"
printf '[provider]\nenabled = true\n' >"$tmp/conf/providers.d/nostream.ini"
printf '[provider]\nenabled = true\n' >"$tmp/conf/providers.d/flop.ini"
printf 'a\nb\n' >"$tmp/ab"
export POLYSANDBOX_PROVIDER_PATH
cli_in "$tmp/ab" --config-dir "$tmp/conf" run -i -- cat
check "run -i on nostream: stdin read whole and delivered" \
    eval 'is_rc 0 && [ "$(out)" = "$(printf "got:a\nb")" ]'
cli_in "$tmp/ab" --config-dir "$tmp/conf" exec -i nostream-1 -- cat
check "exec -i on nostream: the same" \
    eval 'is_rc 0 && [ "$(out)" = "$(printf "got:a\nb")" ]'
cli --config-dir "$tmp/conf" exec nostream-1 -- cat
check "exec without -i on nostream: empty stdin" rc_and_out 0 "got:"
# flop can stream, so run -i streams; its create fails and the run falls
# back to nostream, which refuses the stream before reading any of it
cli_in "$tmp/ab" --config-dir "$tmp/conf" run --provider flop --fallback nostream -i -- cat
check "run -i falling back to a provider that cannot stream: read whole, run again" \
    eval 'is_rc 0 && [ "$(out)" = "$(printf "got:a\nb")" ]'

done_testing
