#!/bin/sh
# tests/cli/usage.sh - help, version, usage errors (exit 2) and bad values
. "$top_srcdir/tests/cli/lib.sh"

commands="run create exec list destroy upload download providers templates doctor"
plan 48

cli --version
check "--version prints the version" rc_and_out 0 "polysandbox 0.1.0"
cli --help
check "--help exits 0 and lists the commands" \
    eval 'is_rc 0 && out_has "run" && out_has "doctor"'
cli -h
check "-h exits 0" is_rc 0
for c in $commands; do
    cli "$c" --help
    check "$c --help exits 0 with a usage line" \
        eval 'is_rc 0 && out_has "Usage: polysandbox $c"'
done
cli help exec
check "help exec is exec --help" eval 'is_rc 0 && out_has "Usage: polysandbox exec"'

cli
check "no command: exit 2" rc_and_err 2 "missing command"
cli frobnicate
check "unknown command: exit 2 naming it" rc_and_err 2 "frobnicate"
cli --bogus-global run
check "unknown global option: exit 2 naming it" rc_and_err 2 "bogus-global"
cli run --bogus-option -- true
check "unknown run option: exit 2 naming it and the help" \
    eval 'rc_and_err 2 "bogus-option" && err_has "--help"'
cli exec --memory 1G ID -- true
check "a create-only option is unknown to exec" rc_and_err 2 "memory"
cli -o novalue run -- true
check "-o without SECTION.KEY=VALUE: exit 2" rc_and_err 2 "novalue"

# Bad durations and sizes name the option, whatever the provider.
bad() { # OPTION VALUE [COMMAND]
    opt=$1 val=$2
    cli ${3:-run} "$opt" "$val" -- true
    check "${3:-run} $opt '$val' rejected naming the option" \
        eval 'rc_and_err 2 "$opt" && err_has "'"'"'$val'"'"'"'
}
bad --timeout 0
bad --timeout -5s
bad --timeout 10x
bad --timeout 99999999999999999999s
bad --timeout 300000000000h
bad -t ""
bad --cpu 1.5ns
bad --memory 0
bad --memory 12Q
bad --memory 99999999999T
bad --pids abc
bad --disk -1M
bad --output-limit 0K
bad --ttl 0 create

cli run -c 'print(1)' --no-stdin
check "run -c without --lang: exit 2 asking for --lang" rc_and_err 2 "--lang"
cli run
check "run with nothing to run: exit 2" rc_and_err 2 "nothing to run"
cli run --lang python -c 'print(1)' --shell 'true'
check "run with two programs: exit 2" rc_and_err 2 "only one"
cli exec
check "exec without an id: exit 2" rc_and_err 2 "missing sandbox ID"
cli destroy
check "destroy without an id: exit 2" rc_and_err 2 "missing sandbox ID"
cli upload ID onlyone
check "upload with too few arguments: exit 2" rc_and_err 2 "missing argument"

# Errors of polysandbox itself or of its configuration: exit 125.
cli run --provider nosuch-provider -- true
check "unknown provider after the command: exit 125 naming it" \
    rc_and_err 125 "nosuch-provider"
cli --provider nosuch-provider run -- true
check "unknown global provider: exit 125 naming it" \
    rc_and_err 125 "nosuch-provider"
cli run --fallback 'local,,x' -- true
check "an empty name in --fallback: exit 2 naming the value" rc_and_err 2 "'local,,x' for --fallback"
cli create --provider local --fallback local,nosuch-fallback
check "an unknown provider in --fallback: exit 125 naming it, nothing made" \
    rc_and_err 125 "unknown provider 'nosuch-fallback'"
cli eval --canonical --dataset /nonexistent --fallback ','
check "eval --fallback with no name: exit 2" rc_and_err 2 "--fallback"
mkdir "$tmp/badconf"
printf '[core\nthis is not ini\n' >"$tmp/badconf/polysandbox.ini"
cli --config-dir "$tmp/badconf" providers
check "a broken polysandbox.ini: exit 125 naming the file" \
    rc_and_err 125 "polysandbox.ini"
cli -o limits.memory=banana providers
check "a bad -o value: exit 125 naming it" rc_and_err 125 "banana"
echo 'x' >"$tmp/prog.zzz"
cli run "$tmp/prog.zzz"
check "FILE of no known language: exit 2 naming it and --lang" \
    eval 'rc_and_err 2 "prog.zzz" && err_has "--lang"'

done_testing
