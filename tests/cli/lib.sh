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

# cfg_copy: a writable copy of the test configuration in $tmp/cfg (links
# followed), for a test that adds templates or providers of its own.
cfg_copy() { cp -RL "$POLYSANDBOX_CONFIG_DIR" "$tmp/cfg" && chmod -R u+w "$tmp/cfg"; }
