# tests/lib/tap.sh - the TAP helpers of the shell tests (sourced; POSIX sh)
#
# The sourcing lib.sh sets first:
#   PS           the polysandbox command to run
#   tmp          a private directory (stdout and stderr of `cli` land there)
# and may set:
#   CLI_TIMEOUT  a bound in seconds on each `cli` run (none when empty)
#   PY           the python3 to use for json_check (python3 when empty)
# Each test calls plan N, then the checks below, then done_testing.

tap_n=0
tap_failed=0

plan() { echo "1..$1"; }
ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1"; }
not_ok() {
    tap_n=$((tap_n + 1))
    echo "not ok $tap_n - $1"
    tap_failed=1
    # show what polysandbox said, to make the failure readable
    if [ -s "$tmp/err" ]; then sed 's/^/# stderr: /' "$tmp/err" | head -20; fi
    if [ -s "$tmp/out" ]; then sed 's/^/# stdout: /' "$tmp/out" | head -20; fi
    echo "# status: ${rc:-}"
}

# cli ARGS...: run polysandbox with stdin from /dev/null; sets $rc and
# leaves stdout in $tmp/out, stderr in $tmp/err.
cli() { cli_in /dev/null "$@"; }
# cli_in FILE ARGS...: the same with stdin from FILE.
cli_in() {
    tap_in=$1
    shift
    if [ -n "${CLI_TIMEOUT:-}" ]; then
        timeout -k 5 "$CLI_TIMEOUT" "$PS" "$@" <"$tap_in" >"$tmp/out" 2>"$tmp/err"
    else
        "$PS" "$@" <"$tap_in" >"$tmp/out" 2>"$tmp/err"
    fi
    rc=$?
}

out() { cat "$tmp/out"; }
err() { cat "$tmp/err"; }

# check DESC COMMAND...: ok when COMMAND succeeds.
check() {
    desc=$1
    shift
    if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
# is_rc N: the last status was N.
is_rc() { [ "$rc" -eq "$1" ]; }
# out_is TEXT / err_has TEXT / out_has TEXT
out_is() { [ "$(cat "$tmp/out")" = "$1" ]; }
out_has() { grep -q -F -- "$1" "$tmp/out"; }
err_has() { grep -q -F -- "$1" "$tmp/err"; }
# rc_and_out N TEXT: status N and stdout TEXT.
rc_and_out() { is_rc "$1" && out_is "$2"; }
# rc_and_err N TEXT: status N and stderr holding TEXT.
rc_and_err() { is_rc "$1" && err_has "$2"; }
# json_check PYTHON-EXPR: evaluate EXPR with j = the JSON on stdout.
json_check() {
    "${PY:-python3}" -c 'import json, sys, base64
j = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$tmp/out" "$1"
}

# eval_samples VAR DEFAULT: the sample count an eval-under-faults test takes
# from variable VAR (DEFAULT when unset): even, and 6 at least.  A bad one
# is said on stderr with status 1 (the caller exits 99).
eval_samples() {
    eval "es_n=\${$1:-$2}"
    case $es_n in ''|*[!0-9]*|*[13579]) echo "$1=$es_n: an even number, please" >&2; return 1;; esac
    [ "$es_n" -ge 6 ] || { echo "$1=$es_n: 6 at least" >&2; return 1; }
    echo "$es_n"
}

done_testing() {
    [ "$tap_n" -gt 0 ] || { echo "Bail out! no test ran"; exit 1; }
    exit "$tap_failed"
}
