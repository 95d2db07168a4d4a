#!/bin/sh
# tests/cli/run.sh - polysandbox run with the local provider: output,
# exit statuses, stdin, environment, working directory, FILE
. "$top_srcdir/tests/cli/lib.sh"

plan 38

cli run --lang python -c 'print(6*7)'
check "run --lang python -c prints 42" rc_and_out 0 42
cli run --lang python -c 'import sys; print(sys.argv[1:])' a 'b c'
check "run -c passes ARGS to the program" rc_and_out 0 "['a', 'b c']"
cli run --shell 'echo out; echo err >&2'
check "--shell: stdout and stderr stay apart" \
    eval 'is_rc 0 && out_is out && [ "$(err)" = err ]'
cli run -- echo argv mode
check "-- CMD ARGS runs an argv" rc_and_out 0 "argv mode"

# The program's exit status is ours.
for code in 0 1 3 42 255; do
    cli run -- sh -c "exit $code"
    check "exit status $code passes through" is_rc "$code"
done

# Killed by signal N: 128+N.
cli run -- sh -c 'kill -TERM $$'
check "killed by SIGTERM: exit 143" rc_and_err 143 "signal 15"
cli run -- sh -c 'kill -HUP $$'
check "killed by SIGHUP: exit 129" is_rc 129

cli run -t 1s -- sleep 60
check "wall timeout: exit 124 with a note" rc_and_err 124 "timeout after 1s"
cli -q run -t 1s -- sleep 60
check "-q: exit 124 without the note" eval 'is_rc 124 && ! err_has timeout'

cli run -- /no/such/command
check "command not found: exit 127" is_rc 127
printf 'echo hi\n' >"$tmp/noexec.sh"
chmod 644 "$tmp/noexec.sh"
cli run --file "$tmp/noexec.sh:noexec.sh" -- ./noexec.sh
check "command not executable: exit 126" is_rc 126
printf '#!/bin/sh\necho uploaded "$@"\n' >"$tmp/up.sh"
chmod 755 "$tmp/up.sh"
cli run --file "$tmp/up.sh" -- ./up.sh x
check "--file uploads an executable before the run" rc_and_out 0 "uploaded x"

# stdin is passed through byte for byte (all 256 byte values, twice).
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 2)' \
    >"$tmp/bin.in"
cli_in "$tmp/bin.in" run -i -- cat
check "-i: binary stdin comes back unchanged" \
    eval 'is_rc 0 && cmp -s "$tmp/bin.in" "$tmp/out"'
cli_in "$tmp/bin.in" run --stdin -- cat
check "--stdin is -i" eval 'is_rc 0 && cmp -s "$tmp/bin.in" "$tmp/out"'
cli_in "$tmp/bin.in" run -- cat
check "without -i the program reads an empty stdin (as docker run)" \
    eval 'is_rc 0 && [ ! -s "$tmp/out" ]'
cli_in "$tmp/bin.in" run --no-stdin -- cat
check "--no-stdin (the default) is still accepted" \
    eval 'is_rc 0 && [ ! -s "$tmp/out" ]'
# A pipe nobody closes: run does not wait for it (sleep 20 | run ...).
{ sleep 60 & echo $! >"$tmp/sleeper"; } |
    timeout 30 "$PS" run -- echo hi >"$tmp/out" 2>"$tmp/err"
rc=$?
kill "$(cat "$tmp/sleeper")" 2>/dev/null
check "run under an open pipe does not wait for its end" rc_and_out 0 hi
# A while-read loop: each run leaves the rest of the input to the loop.
printf 'a\nb\nc\n' | while read -r w; do
    "$PS" run -- echo "$w" || echo "rc=$?"
done >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a while-read loop of runs sees every line" rc_and_out 0 "$(printf 'a\nb\nc')"
# FILE '-': the code itself from stdin.
printf 'print(6 * 7)\n' >"$tmp/code.py"
cli_in "$tmp/code.py" run --lang python -
check "FILE '-' reads the code from stdin" rc_and_out 0 42
cli_in "$tmp/code.py" run -i --lang python -
check "-i with FILE '-': exit 2, both want stdin" rc_and_err 2 "standard input"

cli run -e GREETING=hello -e 'EMPTY=' --shell 'echo "$GREETING[$EMPTY]"'
check "-e KEY=VALUE sets the environment" rc_and_out 0 "hello[]"
PS_CLI_TEST_VAR='from outside'
export PS_CLI_TEST_VAR
cli run -e PS_CLI_TEST_VAR --shell 'echo "$PS_CLI_TEST_VAR"'
check "-e KEY takes our value" rc_and_out 0 "from outside"
cli run --shell 'echo "${PS_CLI_TEST_VAR-unset}"'
check "our environment does not leak in without -e" rc_and_out 0 unset

cli run --cwd /tmp -- pwd
check "--cwd sets the working directory" rc_and_out 0 /tmp

# FILE [ARGS]: the language comes from the extension.
cli run "$top_srcdir/examples/hello.py"
check "run examples/hello.py greets" \
    eval 'is_rc 0 && out_has "Hello from PolySandbox"'
printf 'import sys\nprint("args", sys.argv[1:])\n' >"$tmp/prog.py"
cli run "$tmp/prog.py" one two
check "run FILE.py ARGS passes the arguments" rc_and_out 0 "args ['one', 'two']"
printf 'print("as python")\n' >"$tmp/prog.txt"
cli run --lang python "$tmp/prog.txt"
check "--lang overrides the extension" rc_and_out 0 "as python"

cli run --lang python -c 'import sys; sys.exit(7)'
check "code exit status passes through" is_rc 7

cli run --output-limit 1K -t 20s -- head -c 100000 /dev/zero
check "--output-limit: at most 1 KiB and a note" \
    eval '[ "$(wc -c <"$tmp/out")" -le 1024 ] && err_has "output truncated at 1 KiB"'

# The rest of the exit-status table (see EXIT STATUS in polysandbox(1)).
cli run --memory 64M -t 30s --lang python -c 'x = bytearray(512 << 20)'
check "memory limit: exit 137 with a note" rc_and_err 137 "memory limit of 64 MiB"
cli run --cpu 1s -t 30s --lang python -c 'while True: pass'
check "CPU-time limit: exit 124 with a note" rc_and_err 124 "CPU time limit of 1s"
cli run --lang c -c 'int main(void) { return undeclared_name; }'
check "compile error: exit 1 with a note" rc_and_err 1 "compile error"
check "compile error: the compiler's message is shown" err_has undeclared_name
cli run --lang c -c "$(printf '#warning streamed-compile-warning\nint main(void) { return 0; }\n')"
check "a compile that succeeds with a warning: exit 0, the warning streamed to stderr" \
    eval 'is_rc 0 && err_has streamed-compile-warning'

done_testing
