# tests/image/lib.sh - what the image tests share (sourced after
# tests/cli/lib.sh)
#
# image_unready TEST REASON...: what TEST needs is missing: a skip, or
# under CI=true a failure (registry_unready, tests/docker/registry.sh:
# contrib/quickstart.sh installs everything, so a missing part in CI is
# a broken set-up, not a reason to skip).
# image_require TEST: the same unless this polysandbox was built with
# images (libcurl and libarchive): `image list` says "built without"
# otherwise.  Another failure of the probe is left to the test's checks.
. "$top_srcdir/tests/docker/registry.sh"

image_unready() { registry_unready "$@"; }

image_require() {
    POLYSANDBOX_STATE_DIR="$tmp/probe-state" "$PS" image list >/dev/null \
        2>"$tmp/probe.err" && return 0
    grep -q "built without" "$tmp/probe.err" &&
        image_unready "$1" "built without libcurl or libarchive (see config.log)"
    return 0
}
