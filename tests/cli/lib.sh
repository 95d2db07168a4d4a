# tests/cli/lib.sh - TAP helpers for the polysandbox CLI tests (sourced)
#
# Expects top_srcdir and top_builddir in the environment (as exported by
# AM_TESTS_ENVIRONMENT).  Each test calls plan N, then the checks below.

: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
PS="$top_builddir/polysandbox"
tap_n=0
tap_failed=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-cli-test.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

plan() { echo "1..$1"; }
ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1"; }
not_ok() {
    tap_n=$((tap_n + 1))
    echo "not ok $tap_n - $1"
    tap_failed=1
    # show what polysandbox said, to make the failure readable
    if [ -s "$tmp/err" ]; then sed 's/^/# stderr: /' "$tmp/err" | head -20; fi
    if [ -s "$tmp/out" ]; then sed 's/^/# stdout: /' "$tmp/out" | head -20; fi
    echo "# status: $rc"
}

# cli ARGS...: run polysandbox with stdin from /dev/null; sets $rc and
# leaves stdout in $tmp/out, stderr in $tmp/err.
cli() { "$PS" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"; rc=$?; }
# cli_in FILE ARGS...: the same with stdin from FILE.
cli_in() { f=$1; shift; "$PS" "$@" <"$f" >"$tmp/out" 2>"$tmp/err"; rc=$?; }

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
    python3 -c 'import json, sys, base64
j = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$tmp/out" "$1"
}

done_testing() {
    [ "$tap_n" -gt 0 ] || { echo "Bail out! no test ran"; exit 1; }
    exit "$tap_failed"
}
