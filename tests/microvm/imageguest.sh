# tests/microvm/imageguest.sh - sourced (after tests/cli/lib.sh and
# tests/image/lib.sh) by the microvm tests that run a pulled image
# (oci.sh, build.sh), with $what naming the test: skips (TAP "1..0 #
# SKIP", a failure under CI=true) with a named reason without images in
# this build, mkfs.erofs, b2sum, the registry, an x86_64 host, or what
# guest.sh needs (QEMU, the cloud kernel); then the guest image, the
# configuration and the test's state directory (image_test_setup).
unready() { image_unready "$what" "$@"; }
image_require "$what"
command -v mkfs.erofs >/dev/null 2>&1 || unready "no mkfs.erofs (apt-get install erofs-utils)"
command -v b2sum >/dev/null 2>&1 || unready "no b2sum (coreutils)"
command -v docker-registry >/dev/null 2>&1 ||
    unready "no docker-registry (apt-get install docker-registry)"
[ "$(uname -m)" = x86_64 ] || { echo "1..0 # SKIP $what: the test images are amd64"; exit 0; }
. "$top_srcdir/tests/microvm/guest.sh"
image_test_setup
CLI_TIMEOUT=300
