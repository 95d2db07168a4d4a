#!/bin/sh
# tests/microvm/imagecap.sh - a hostile image cannot make the host write
# and read terabytes: an image whose files add up to more than the cap
# (a 2 TiB sparse file, a few blocks on disk) is refused before any disk
# is built, the error naming the file and the cap; the same image
# without it builds its disk.  tests/image/push.py's rootfs, pulled from
# a registry on loopback; the VMM is a script that exits (no QEMU).
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/image/lib.sh"

what="microvm image cap"
image_require "$what"
command -v docker-registry >/dev/null 2>&1 ||
    image_unready "$what" "no docker-registry (apt-get install docker-registry)"
command -v mkfs.erofs >/dev/null 2>&1 || command -v mke2fs >/dev/null 2>&1 ||
    image_unready "$what" "no mkfs.erofs or mke2fs"
. "$top_srcdir/tests/microvm/fakevmm.sh"
image_test_setup
plan 3

image_test_root
check "the test image pulled" is_rc 0
IMG=$R/polysandbox-test/root:v1
images=$tmp/state/microvm/images
disks() { find "$images" -name '*.erofs' -o -name '*.ext4' 2>/dev/null | wc -l; }

cli run --provider microvm --image "$IMG" -- true
check "the image builds its disk (the VM then stops: a fake VMM)" \
    sh -c '[ "$1" -eq 1 ]' sh "$(disks)"

root=$(find "$tmp/state" -path "$images" -prune -o -type f -name imgcat -print | head -n 1)
root=${root%/bin/imgcat}
[ -d "$root" ] && truncate -s 2T "$root/huge" || exit 99
cli run --provider microvm --image "$IMG" -- true
sed 's/^/# /' "$tmp/err"
check "a 2 TiB sparse file: refused, naming it and the cap, no disk built" sh -c \
    '[ "$1" -ne 0 ] && grep -q "$2/huge" "$3" && grep -q "MV_IMAGE_MAX_BYTES (64 GiB" "$3" &&
     [ "$4" -eq 1 ] && [ -z "$(find "$5" -name "*.tmp")" ]' \
    sh "$rc" "$root" "$tmp/err" "$(disks)" "$images"
done_testing
