#!/bin/sh
# tests/microvm/oci.sh - the microvm provider runs a pulled image: `run
# --provider microvm --image NAME` boots a VM whose commands see the
# image's root (its marker and os-release, not the guest's python3), on
# the guest's own kernel, with a writable overlay over the read-only
# disk; the disk (erofs) is built once and reused by the next VM; vmm =
# firecracker refuses images before anything starts.  Two TCG boots.
#
# The image (tests/image/push.py rootfs: the static tests/image/imgcat,
# an /etc/os-release, a marker) is pushed to Debian's docker-registry on
# loopback and pulled, as tests/image/run.sh does.  Skips (TAP "1..0 #
# SKIP") with a named reason without QEMU, the cloud kernel, mkfs.erofs
# or the registry.
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/image/lib.sh"

what="microvm image"
. "$top_srcdir/tests/microvm/imageguest.sh"

plan 9

image_test_root
check "the test image (a static program, os-release, a marker) pulled" is_rc 0

t0=$(date +%s)
cli run -t 60s --provider microvm --image "$R/polysandbox-test/root:v1" -- /bin/imgcat \
    /marker /etc/os-release /usr/bin/python3 /proc/sys/kernel/osrelease /proc/self/mounts
echo "# run --image (the disk built, one boot): $(($(date +%s) - t0)) s"
check "run --provider microvm --image NAME: the image's marker and os-release, not the guest's python3" \
    eval 'is_rc 0 && out_has "$marker" && out_has "ID=polysandbox-test" &&
          out_has "absent /usr/bin/python3" && ! out_has "PATH="' || cat "$tmp/err" >&2
check "... on the guest's own kernel" out_has "cloud-amd64"
check "... its root a writable overlay (over the read-only disk)" \
    grep -q '^overlay / overlay rw' "$tmp/out"
find "$tmp/state" -name '*.erofs' > "$tmp/disks"
check "one erofs disk of the image, built under the state directory" \
    [ "$(wc -l < "$tmp/disks")" -eq 1 ]
ino=$(stat -c %i "$(cat "$tmp/disks")")

cli run -t 60s --provider microvm --image "$R/polysandbox-test/root:v1" -- /bin/imgcat /marker
check "a second VM of the image reuses its disk (the same file, no other)" \
    eval 'rc_and_out 0 "$marker" && [ "$(find "$tmp/state" -name "*.erofs" | wc -l)" -eq 1 ] &&
          [ "$(stat -c %i "$(cat "$tmp/disks")")" = "$ino" ]'

# A disk the guest cannot mount: the VM stops, and the error says why.
# (A damaged disk is rebuilt, build.sh: its record is forged to match.)
disk=$(cat "$tmp/disks")
root=$(sed -n 2p "$disk.sum")
chmod u+w "$disk" && head -c 65536 /dev/zero > "$disk" || exit 99
printf 'v1 blake2b %s %s\n%s\n' "$(b2sum -l 256 "$disk" | cut -d' ' -f1)" \
    "$(stat -c '%s %i %.9Y %.9Z' "$disk")" "$root" > "$disk.sum" || exit 99
cli run -t 60s --provider microvm --image "$R/polysandbox-test/root:v1" -- /bin/imgcat /marker
check "a disk the guest cannot mount: a sandbox error (125) quoting the agent's reason" \
    eval 'rc_and_err 125 "mounting the image /dev/vda" && ! out_has "$marker"'

# vmm = firecracker boots no image: refused before anything starts.
cp -r "$tmp/config" "$tmp/fc" || exit 99
printf 'vmm = firecracker\nfirecracker = /bin/true\n' >> "$tmp/fc/providers.d/microvm.ini"
cli --config-dir "$tmp/fc" run -t 60s --provider microvm --image "$R/polysandbox-test/root:v1" \
    -- /bin/imgcat /marker
check "vmm = firecracker refuses an image, saying vmm = qemu runs them" \
    eval '[ "$rc" -ne 0 ] && err_has "vmm = qemu runs images" && ! out_has "$marker"'

cli doctor --provider microvm
check "doctor says images boot as erofs disks, naming the one cached" \
    sh -c "grep -q 'images.*erofs.*$disk of ' '$tmp/out' '$tmp/err'"
done_testing
