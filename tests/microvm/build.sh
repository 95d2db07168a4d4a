#!/bin/sh
# tests/microvm/build.sh - `polysandbox -p microvm image build IMAGE`
# makes the image's disk and its snapshot ahead of the first run and
# prints where it keeps them; a VM of another image gets a snapshot of
# its own, never the first one's; the disk is reproducible (built again, the
# same bytes: erofs and ext4), recorded (its BLAKE2b, which b2sum
# agrees with) and checked (a damaged disk is found, named and built
# again, its snapshot still serving); image_fs = ext4 (mke2fs -d) runs the image's program; auto
# takes ext4 where mkfs.erofs is not on PATH; gc removes the disks of an
# image removed from the store (plugins/microvm/mv-imagegc.c), and
# their snapshots.  Three TCG boots (each saved, then restored) and one
# more restore; the other creates stop at a VMM that exits at once
# (qemu = /bin/false), after the disk is made.
#
# The image is tests/image/push.py's rootfs (as in oci.sh), pushed to a
# registry on loopback and pulled.  Skips (TAP "1..0 # SKIP") with a
# named reason without QEMU, the cloud kernel, mkfs.erofs, mke2fs or the
# registry.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/image/lib.sh"

command -v mke2fs >/dev/null 2>&1 ||
    image_unready "microvm build" "no mke2fs (apt-get install e2fsprogs)"
what="microvm build"
. "$top_srcdir/tests/microvm/imageguest.sh"
# TCG from the start: no KVM probe (a cold boot) before the first snapshot.
echo "accel = tcg" >> "$POLYSANDBOX_CONFIG_DIR/providers.d/microvm.ini" || exit 99

plan 20

image_test_root
check "the test image pulled" is_rc 0
IMG=$R/polysandbox-test/root:v1
images=$tmp/state/microvm/images

t0=$(date +%s)
cli -p microvm image build "$IMG"
echo "# image build (the disk built, one boot): $(($(date +%s) - t0)) s"
disk=$(find "$images" -name '*.erofs' 2>/dev/null)
check "image build: exit 0, the provider's progress, built" \
    eval 'is_rc 0 && err_has "building the erofs disk of image" && out_has "built for microvm"' ||
    cat "$tmp/err" >&2
check "... prints the cached disk and the root it is made of" \
    eval '[ -n "$disk" ] && out_has "$disk of $tmp/state/images/"'
check "... its record holds its BLAKE2b (b2sum -l 256 agrees)" \
    [ "$(cut -d' ' -f3 "$disk.sum" | head -n 1)" = "$(b2sum -l 256 "$disk" | cut -d' ' -f1)" ]
cp "$disk" "$tmp/disk.1" || exit 99

shm_snaps() { grep -l "\"image\": *\"$1\"" /dev/shm/polysandbox-microvm-"$(id -u)"-*/snap.json \
                 "$tmp"/state/microvm/snapshot-*/snap.json 2>/dev/null; }
check "... and the image's snapshot (its disk attached), a VM restored from it" \
    eval 'err_has "built the snapshot" && err_has "a VM restored from" &&
          [ "$(shm_snaps "$disk" | wc -l)" -eq 1 ]'
snapA=$(shm_snaps "$disk")

# A create that stops at its VMM (after the disk is made, no snapshot
# tried): no boot.
novm() { cli -o provider.microvm.qemu=/bin/false -o provider.microvm.vmm_jail=off \
             -o provider.microvm.snapshot=off "$@" \
             run -t 60s --provider microvm --image "$IMG" -- /bin/imgcat /marker; }

rm -f "$disk" "$disk.sum"
novm
check "built again (the disk removed): the same bytes" cmp -s "$disk" "$tmp/disk.1"

# Damaged: one byte changed in place (its times change with it).
printf 'X' | dd of="$disk" bs=1 seek=2000 conv=notrunc 2>/dev/null || exit 99
novm
check "a damaged disk is found, named and built again" \
    eval 'err_has "the image disk $disk is damaged" && err_has "BLAKE2b" &&
          cmp -s "$disk" "$tmp/disk.1"' || cat "$tmp/err" >&2
touch "$disk"
novm
check "a disk only touched is hashed again and kept" \
    eval '! err_has "damaged" && cmp -s "$disk" "$tmp/disk.1"'

# The disk was built again (the same bytes): its snapshot still serves.
POLYSANDBOX_LOG=info cli run -t 60s --provider microvm --image "$IMG" -- /bin/imgcat /marker
check "a VM of the image restored from the image's snapshot (no boot), its files" \
    eval 'is_rc 0 && out_has "$marker" && err_has "a VM restored from ${snapA%/snap.json}" &&
          ! err_has "built the snapshot"' || cat "$tmp/err" >&2

# Another image: its own snapshot, never the first one's.
marker2="other-$$-$(date +%s%N)"
IMGCAT=$IMGCAT MARKER=$marker2 python3 "$top_srcdir/tests/image/push.py" "$R" \
    rootfs polysandbox-test/root v2 >/dev/null 2>"$tmp/push.log" || cat "$tmp/push.log" >&2
cli image pull -q "$R/polysandbox-test/root:v2" || exit 99
POLYSANDBOX_LOG=info cli run -t 60s --provider microvm --image "$R/polysandbox-test/root:v2" \
    -- /bin/imgcat /marker
disk2=$(find "$images" -name '*.erofs' ! -path "$disk")
check "another image: its files, from a snapshot of its own (not the first image's)" \
    eval 'is_rc 0 && out_has "$marker2" && ! out_has "$marker" && err_has "built the snapshot" &&
          ! err_has "${snapA%/snap.json}" && [ "$(shm_snaps "$disk2" | wc -l)" -eq 1 ]' ||
    cat "$tmp/err" >&2

# ext4, as where mkfs.erofs is missing.
t0=$(date +%s)
cli -o provider.microvm.image_fs=ext4 run -t 60s --provider microvm --image "$IMG" -- \
    /bin/imgcat /marker /etc/os-release
echo "# run with image_fs = ext4 (one boot): $(($(date +%s) - t0)) s"
ext4=$(find "$images" -name '*.ext4' 2>/dev/null)
check "image_fs = ext4: the image's program runs from an ext4 disk" \
    eval 'is_rc 0 && out_has "$marker" && out_has "ID=polysandbox-test" && [ -n "$ext4" ]' ||
    cat "$tmp/err" >&2
check "... an ext4 file system (mke2fs -d), no journal" \
    eval 'dumpe2fs -h "$ext4" 2>/dev/null | grep -q "^Filesystem features:.*extent" &&
          ! dumpe2fs -h "$ext4" 2>/dev/null | grep -q "^Filesystem features:.*has_journal"'
cp "$ext4" "$tmp/ext4.1" && rm -f "$ext4" "$ext4.sum" || exit 99
novm -o provider.microvm.image_fs=ext4
check "ext4 built again: the same bytes" cmp -s "$ext4" "$tmp/ext4.1"

# auto where mkfs.erofs is not on PATH: ext4 (doctor says so; no VM).
mkdir "$tmp/bin" && for t in mke2fs qemu-system-x86_64 timeout; do
    ln -s "$(command -v "$t")" "$tmp/bin/$t" || exit 99
done
PATH=$tmp/bin cli doctor --provider microvm
check "auto without mkfs.erofs on PATH: doctor says ext4" \
    sh -c "grep -q 'images.*ext4 (.*no mkfs.erofs' '$tmp/out' '$tmp/err'"
PATH=$tmp/bin cli -o provider.microvm.image_fs=erofs doctor --provider microvm
check "image_fs = erofs without mkfs.erofs: doctor names the package" \
    sh -c "grep -q 'images.*no mkfs.erofs.*erofs-utils' '$tmp/out' '$tmp/err'"

# gc: a disk stays while its image is in the store, goes with it.
cli gc --provider microvm
check "gc keeps the disks and snapshots of images still in the store" \
    eval 'is_rc 0 && [ -f "$disk" ] && [ -f "$ext4" ] && [ -f "$snapA" ]'
cli image rm "$IMG" && POLYSANDBOX_LOG=info cli gc --provider microvm
check "gc removes the disks (records) and snapshots of an image removed from the store" \
    eval 'is_rc 0 && err_has "removed the image disk $disk" && ! [ -e "$disk.sum" ] &&
          ! [ -e "$ext4" ] && ! [ -e "$snapA" ] && err_has "its image'"'"'s disk is gone" &&
          [ -f "$disk2" ]' || cat "$tmp/err" >&2
cli image rm "$R/polysandbox-test/root:v2" && cli gc --provider microvm
check "... and the other image's with it" eval '! [ -e "$disk2" ] && [ -z "$(shm_snaps "$disk2")" ]'

cli -p microvm image build
check "image build without an image or template: usage (2)" is_rc 2
cli -p microvm image build "$R/polysandbox-test/never:v9"
check "image build of an image never pulled: 2, naming it" \
    eval 'is_rc 2 && err_has "never:v9"'
done_testing
