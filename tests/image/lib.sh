# tests/image/lib.sh - what the image tests share (sourced after
# tests/cli/lib.sh)
#
# image_unready TEST REASON...: what TEST needs is missing: a skip, or
# under CI=true a failure (registry_unready, tests/docker/registry.sh:
# contrib/quickstart.sh installs everything, so a missing part in CI is
# a broken set-up, not a reason to skip).
# image_test_setup, image_test_root: the rootfs test image's run tests
# (see below).
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

# image_test_setup: IMGCAT the static test program (built, or bail out),
# the registries stopped and $tmp removed at exit, a state directory of
# the test's own.
image_test_setup() {
    IMGCAT="$top_builddir/tests/image/imgcat"
    [ -x "$IMGCAT" ] || { echo "Bail out! $IMGCAT is not built"; exit 1; }
    trap 'registry_stop_all; rm -rf "$tmp"' EXIT
    POLYSANDBOX_STATE_DIR="$tmp/state"
    export POLYSANDBOX_STATE_DIR
}

# image_test_root: starts an open registry on loopback (under $tmp/reg),
# pushes tests/image/push.py's rootfs image ($IMGCAT, an os-release and a
# fresh marker) as $R/polysandbox-test/root:v1 (its digest in
# $tmp/digests) and pulls it: sets R and marker, the pull's status in rc.
image_test_root() {
    registry_start open "$tmp/reg"
    [ -n "${REGISTRY_open_PORT:-}" ] || { echo "Bail out! no registry"; exit 1; }
    R=127.0.0.1:$REGISTRY_open_PORT
    marker="marker-$$-$(date +%s%N)"
    IMGCAT=$IMGCAT MARKER=$marker python3 "$top_srcdir/tests/image/push.py" "$R" \
        rootfs polysandbox-test/root v1 >"$tmp/digests" 2>"$tmp/push.log" ||
        cat "$tmp/push.log" >&2
    cli image pull -q "$R/polysandbox-test/root:v1"
}
