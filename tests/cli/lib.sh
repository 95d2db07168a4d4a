# tests/cli/lib.sh - set-up of the polysandbox CLI tests (sourced)
#
# Expects top_srcdir and top_builddir in the environment (as exported by
# AM_TESTS_ENVIRONMENT).  Each test calls plan N, then the checks of
# tests/lib/tap.sh.

: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
PS="$top_builddir/polysandbox"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-cli-test.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
. "$top_srcdir/tests/lib/tap.sh"
