# tests/microvm/guest.sh - sourced by the microvm tests after
# tests/cli/lib.sh: skips (TAP "1..0 # SKIP") with a named reason without
# QEMU or the Debian cloud kernel, builds the guest image once into
# $MICROVM_CACHE (default /var/cache/polysandbox-test/microvm-guest, or
# the build tree where that cannot be written; rebuilt only when its
# inputs change) and exports POLYSANDBOX_CONFIG_DIR, the suite's
# configuration with the microvm provider on that image.
command -v qemu-system-x86_64 >/dev/null 2>&1 ||
    { echo "1..0 # SKIP no qemu-system-x86_64 (apt-get install qemu-system-x86)"; exit 0; }
ls /boot/vmlinuz-*-cloud-amd64 >/dev/null 2>&1 ||
    { echo "1..0 # SKIP no Debian cloud kernel (apt-get install linux-image-cloud-amd64)"; exit 0; }
cache=${MICROVM_CACHE:-/var/cache/polysandbox-test/microvm-guest}
mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ] || cache=$top_builddir/tests/microvm-guest
mkdir -p "$cache" || exit 99
# One builder at a time (parallel builds of the suite share the cache).
rc=0
flock "$cache/.lock" "$top_builddir/plugins/microvm/polysandbox-microvm-image" \
    "$top_builddir/plugins/microvm/sbx-agent" "$cache" > "$tmp/image" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
    if [ "$rc" -eq 3 ]; then echo "1..0 # SKIP $(cat "$tmp/image")"; exit 0; fi
    cat "$tmp/image"; exit 99
fi
sed 's/^/# /' "$tmp/image"

# The suite's configuration, with the microvm provider on this image.
cp -rL "$top_srcdir/tests/config" "$tmp/config" && chmod -R u+w "$tmp/config" || exit 99
# TCG on a loaded host runs python3 many times slower than a container:
# a wall limit of 60 s, not 10 s, so that only the timeout check times out.
sed -i 's/^wall = 10s$/wall = 60s/' "$tmp/config/polysandbox.ini" || exit 99
cat > "$tmp/config/providers.d/microvm.ini" <<EOF2
[provider]
enabled = true
optional = true
priority = 5
[settings]
kernel = $cache/vmlinuz
initrd = $cache/initrd.cpio
kvm_probe_timeout = ${MICROVM_KVM_PROBE:-10}
EOF2
POLYSANDBOX_CONFIG_DIR=$tmp/config
export POLYSANDBOX_CONFIG_DIR

# jailed_own_state: the test's own state directory ($tmp/state, so its
# own snapshot), the suite's KVM probe result for this guest's kernel
# else TCG (a probe's boot makes no snapshot; the suite's cache holds one
# kernel's result, whichever test probed last: the Firecracker fake's,
# say), vmm_jail = on (the default, said so that a changed default
# shows); doctor run; $snap the snapshot's file it names ("" for none),
# $kernel the guest's kernel.
jailed_own_state() {
    POLYSANDBOX_STATE_DIR=$tmp/state POLYSANDBOX_LOG=info
    export POLYSANDBOX_STATE_DIR POLYSANDBOX_LOG
    mkdir -p "$tmp/state/microvm" || exit 99
    kernel=$(sed -n 's/^kernel = //p' "$tmp/config/providers.d/microvm.ini")
    # The cached verdict only when it is of this very file (path, size,
    # mtime: a rebuilt guest is another kernel file to the probe).
    if [ -n "$kernel" ] &&
        grep -q "^$kernel:$(stat -c %s:%Y "$kernel" 2>/dev/null):" \
            "$top_builddir/tests/state/microvm/accel" 2>/dev/null; then
        cp "$top_builddir/tests/state/microvm/accel" "$tmp/state/microvm/" || exit 99
    else
        echo "accel = tcg" >> "$tmp/config/providers.d/microvm.ini" || exit 99
    fi
    echo "vmm_jail = on" >> "$tmp/config/providers.d/microvm.ini" || exit 99
    cli doctor --provider microvm
    snap=$(sed -n 's|.*snapshot: auto: \(/.*/vm\.snap\) (.*|\1|p' "$tmp/out" "$tmp/err" | head -n 1)
}
