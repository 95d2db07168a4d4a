#!/bin/sh
# tests/cli/habits.sh - what users of other sandbox CLIs type: a quoted
# shell line, a bare command, -p, run -l K=V --reuse and --keep, ids that
# find their provider, snippets that leave the user's files alone, a file
# run under its own name, and providers telling how to enable one.
. "$top_srcdir/tests/cli/lib.sh"

plan 22

cli run "python3 -c 'print(6*7)'"
check "a quoted line that is not a file runs as a shell line" rc_and_out 0 42
cli run echo bare words
check "a bare command runs as a command with its arguments" rc_and_out 0 "bare words"
cli run no-such-command-xyz
check "command not found: 127 naming the command" rc_and_err 127 "'no-such-command-xyz'"
cli run missing-file.py
check "a missing FILE with a template's extension is a missing file" \
    eval 'is_rc 2 && err_has missing-file.py && err_has "No such file"'
cli run --help
check "run --help says which rule applies" \
    eval 'is_rc 0 && out_has "shell line" && out_has "run ls -l" && out_has "--keep" && out_has "--reuse"'
cli -p local run -p local -- echo p
check "-p is short for --provider (global and per command)" rc_and_out 0 p
cli run --reuse -- true
check "--reuse without a label: usage error" rc_and_err 2 "--reuse needs"

label="cli20=$$"
trap '"$PS" list -p local -l "$label" --json 2>/dev/null |
      python3 -c "import json,sys; [print(s[\"id\"]) for s in json.load(sys.stdin)]" 2>/dev/null |
      while read -r i; do "$PS" destroy -p local "$i" >/dev/null 2>&1; done
      [ -n "${kept:-}" ] && "$PS" destroy -p local "$kept" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
cli run -l "$label" --reuse -- sh -c 'echo mine >main.py; echo x >>n; wc -l <n'
check "run -l K=V --reuse creates the sandbox and says its id" \
    eval 'is_rc 0 && out_is 1 && err_has "keeping sandbox "'
id=$(sed -n 's/.*keeping sandbox \([^ ]*\) on provider.*/\1/p' "$tmp/err")
cli run -p local -l "$label" --reuse -- sh -c 'echo x >>n; wc -l <n'
check "a second --reuse runs in the same sandbox" \
    eval 'is_rc 0 && out_is 2 && err_has "reusing sandbox $id"'
cli run -l "$label" --reuse --lang python -c 'print(open("main.py").read().strip())'
check "a snippet does not overwrite the user's main.py" rc_and_out 0 mine
cli exec "$id" -- cat main.py
check "exec ID without --provider finds it; main.py is still the user's" rc_and_out 0 mine
printf 'up\n' >"$tmp/up.txt"
cli upload "$id" "$tmp/up.txt" up.txt
check "upload ID without --provider" is_rc 0
cli download "$id" up.txt
check "download ID without --provider" rc_and_out 0 up
cli destroy "$id"
check "destroy ID without --provider" is_rc 0
cli exec "$id" -- true
check "an id no provider has: exit 2 naming it" \
    eval 'is_rc 2 && err_has "$id" && err_has "not found on any enabled provider"'

cli run --keep -- sh -c 'echo kept'
kept=$(sed -n 's/.*keeping sandbox \([^ ]*\) on provider.*/\1/p' "$tmp/err")
check "--keep runs, then prints the id of the sandbox it keeps" \
    eval 'is_rc 0 && out_is kept && [ -n "$kept" ]'
cli exec "$kept" -- true
check "the kept sandbox is there for exec" is_rc 0
cli destroy "$kept"
check "and is destroyed by id" is_rc 0

mkdir "$tmp/d"
printf 'import sys\nprint(sys.argv[0])\nraise ValueError("boom")\n' >"$tmp/d/my_tool.py"
cli run "$tmp/d/my_tool.py"
check "a file runs under its own name: argv[0] and the traceback cite it" \
    eval 'is_rc 1 && out_is my_tool.py && err_has "my_tool.py\", line 3"'
cli run --lang python -c 'import sys; print(sys.argv[0])'
check "a snippet runs under a private name" rc_and_out 0 .polysandbox-code.py
printf '#include <stdio.h>\nint main(int c, char **v) { (void)c; puts(v[0]); return 0; }\n' >"$tmp/d/tool.c"
cli run "$tmp/d/tool.c"
check "a compiled file keeps its name too (its binary is its stem)" rc_and_out 0 ./tool

mkdir -p "$tmp/cfg/providers.d"
cp -R "$POLYSANDBOX_CONFIG_DIR/." "$tmp/cfg/"
printf '[provider]\nenabled = false\n' >"$tmp/cfg/providers.d/local.ini"
cli --config-dir "$tmp/cfg" providers
check "providers tells which file enables a disabled one and its credential" \
    eval 'is_rc 0 && out_has "enable: set '\''enabled = true'\'' under [provider] in $tmp/cfg/providers.d/local.ini" && out_has "credentials: none"'

done_testing
