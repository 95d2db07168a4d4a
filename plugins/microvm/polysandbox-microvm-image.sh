#!/bin/sh
# polysandbox-microvm-image - build the microvm provider's guest image
#
#   polysandbox-microvm-image [-k KERNEL_VERSION] AGENT OUTDIR
#
# Writes OUTDIR/vmlinuz (the host's Debian cloud kernel, default the
# newest /boot/vmlinuz-*-cloud-amd64) and OUTDIR/initrd.cpio: AGENT as
# /init, the virtio modules it loads (/etc/sbx-modules; vsock's apart in
# /etc/sbx-modules-vsock, loaded only under Firecracker; an image's disk,
# erofs and overlay in /etc/sbx-modules-image; virtio_net's in
# /etc/sbx-modules-net), python3 with its standard
# library and shared libraries, and busybox as /bin/sh and the usual
# commands (one link per applet), copied from this host.  The
# archive is reproducible (sorted, owned by root, every time 0).  OUTDIR/
# stamp records what it was built from; when nothing changed, nothing is
# rebuilt.  Exit 0 built or up to date, 1 failed, 2 usage, 3 no kernel
# or no busybox.
set -eu
LC_ALL=C; export LC_ALL

kver=
if [ "${1:-}" = -k ]; then kver=$2; shift 2; fi
[ $# -eq 2 ] || { echo "usage: polysandbox-microvm-image [-k KERNEL_VERSION] AGENT OUTDIR" >&2; exit 2; }
agent=$1 out=$2
[ -x "$agent" ] || { echo "polysandbox-microvm-image: agent $agent: not an executable" >&2; exit 2; }
if [ -z "$kver" ]; then
    kver=$(ls /boot 2>/dev/null | sed -n 's/^vmlinuz-\(.*-cloud-amd64\)$/\1/p' | sort -V | tail -n 1)
fi
kernel=/boot/vmlinuz-$kver
if [ -z "$kver" ] || [ ! -r "$kernel" ] || [ ! -d "/lib/modules/$kver" ]; then
    echo "polysandbox-microvm-image: no kernel: install linux-image-cloud-amd64" \
         "(looked for /boot/vmlinuz-*-cloud-amd64 and its modules)" >&2
    exit 3
fi
py=$(readlink -f /usr/bin/python3)
pyver=$(basename "$py")
pylib=/usr/lib/$pyver
[ -x "$py" ] && [ -d "$pylib" ] || { echo "polysandbox-microvm-image: no /usr/bin/python3" >&2; exit 1; }
# The guest's shell and commands: what shell lines (the conformance kit's,
# a user's `sh -c`) expect on any Linux.
bb=$(command -v busybox 2>/dev/null) && bb=$(readlink -f "$bb") ||
    { echo "polysandbox-microvm-image: no busybox: install busybox (the guest's /bin/sh)" >&2; exit 3; }

# What the image is made of; the same key, the same image.
key=$( { echo "v2 $kver"; cksum < "$kernel"; cksum < "$agent"; cksum < "$(readlink -f "$0")"; cksum < "$py"; cksum < "$bb";
         dpkg-query -W -f='${Version}\n' "lib$pyver-stdlib" 2>/dev/null || true; } | cksum)
if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$key" ] &&
   [ -f "$out/vmlinuz" ] && [ -f "$out/initrd.cpio" ]; then
    echo "polysandbox-microvm-image: $out is up to date"
    exit 0
fi

mkdir -p "$out"
agent=$(readlink -f "$agent")
out=$(cd "$out" && pwd)
stage=$(mktemp -d "$out/.stage.XXXXXX")
chmod 0755 "$stage"
# Everything this script makes gets time 0; what it copies keeps its own
# (the packages'), which the standard library's .pyc files are checked against.
ref=$(mktemp "$out/.ref.XXXXXX")
trap 'rm -rf "$stage" "$ref"' EXIT INT TERM
cd "$stage"
mkdir -p dev proc sys tmp work etc usr/bin
ln -s usr/bin bin
ln -s usr/lib lib
ln -s usr/lib64 lib64
cp "$agent" init
echo "root:x:0:0::/:/bin/sh" > etc/passwd
echo "sandbox:x:1000:1000::/work:/bin/sh" >> etc/passwd
printf 'root:x:0:\nsandbox:x:1000:\n' > etc/group

# The modules, in load order (dependencies first), and the list the agent reads.
: > etc/sbx-modules
for m in virtio_mmio virtio_console; do
    modprobe -S "$kver" --show-depends "$m" | sed -n 's/^insmod \([^ ]*\).*/\1/p'
done | awk '!seen[$0]++' | while read -r ko; do
    mkdir -p "usr${ko%/*}"
    cp -p "$ko" "usr$ko"
    echo "$ko" >> etc/sbx-modules
done
# extra_mods LIST MODULE...: what MODULE... need beyond etc/sbx-modules,
# copied and listed in LIST in load order, for the agent to load on demand.
extra_mods() {
    list=$1; shift
    : > "$list"
    for m in "$@"; do
        modprobe -S "$kver" --show-depends "$m" | sed -n 's/^insmod \([^ ]*\).*/\1/p'
    done | awk '!seen[$0]++' | while read -r ko; do
        grep -qx "$ko" etc/sbx-modules && continue
        mkdir -p "usr${ko%/*}"
        cp -p "$ko" "usr$ko"
        echo "$ko" >> "$list"
    done
}
# vsock's, loaded only where the channel is vsock (sbx.vsock=PORT: Firecracker).
extra_mods etc/sbx-modules-vsock vmw_vsock_virtio_transport
# An image's, loaded only when the guest is given one (sbx.image=erofs or
# ext4): its read-only disk, its file system (ext4 where mkfs.erofs is
# missing; built into Debian's cloud kernel, so nothing to copy there)
# and the overlay that makes it writable in memory.
extra_mods etc/sbx-modules-image virtio_blk erofs ext4 overlay
# The network's, loaded only when the template allows egress (sbx.net=user:
# QEMU's user-mode network on a virtio-net device).
extra_mods etc/sbx-modules-net virtio_net

# python3, the libraries it links, and its standard library (less what no
# sandboxed run needs: tests, GUI, installers).
cp -p "$py" "usr/bin/$pyver"
ln -s "$pyver" usr/bin/python3
copy_libs() {
    ldd "$1" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' |
    while read -r lib; do
        real=$(readlink -f "$lib")
        dest=usr${lib#/usr}
        [ -e "$dest" ] && continue
        mkdir -p "${dest%/*}"
        cp -p "$real" "$dest"
    done
}
copy_libs "$py"
(cd / && tar cf - --exclude='*.opt-?.pyc' --exclude="${pylib#/}/test" \
    --exclude="${pylib#/}/idlelib" --exclude="${pylib#/}/tkinter" \
    --exclude="${pylib#/}/turtledemo" --exclude="${pylib#/}/ensurepip" \
    --exclude="${pylib#/}/lib2to3" --exclude="${pylib#/}/config-*" "${pylib#/}") | tar xf -
for so in "usr/lib/$pyver"/lib-dynload/*.so; do copy_libs "/$so"; done
# busybox and a link per applet (python3's names kept).
cp -p "$bb" usr/bin/busybox
copy_libs "$bb"
for a in $("$bb" --list); do
    [ -e "usr/bin/$a" ] || [ -L "usr/bin/$a" ] || ln -s busybox "usr/bin/$a"
done

find . -newer "$ref" -exec touch -h -d @0 {} +
find . | sort | cpio --quiet -o -H newc -R 0:0 --reproducible > "$out/initrd.cpio.tmp"
cp "$kernel" "$out/vmlinuz.tmp"
mv "$out/initrd.cpio.tmp" "$out/initrd.cpio"
mv "$out/vmlinuz.tmp" "$out/vmlinuz"
echo "$key" > "$out/stamp"
echo "polysandbox-microvm-image: built $out (kernel $kver, $pyver," \
     "busybox, $(($(wc -c < "$out/initrd.cpio") / 1048576)) MiB initrd)"
