#!/bin/sh
# tests/microvm/jail.sh - QEMU in its jail (vmm_jail = on, the default),
# seen from the host: one persistent VM restored from a snapshot this
# test builds (one boot, one restore) runs as another uid (root) in
# namespaces of its own, with no_new_privs and QEMU's seccomp filter, in
# a minimal root (listed), in a cgroup whose memory and CPU limits are
# set; the snapshot's files are out of its reach (it holds only sealed
# memfd copies, no fd of the files, which are ours and 0600); it runs
# print(6*7); destroy leaves no cgroup.  Then `polysandbox run` of a
# restored, jailed VM prints 42.  Skips as run.sh does
# (tests/microvm/guest.sh).
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/microvm/guest.sh"

id=
jailed_own_state
[ -n "$snap" ] || snap=$tmp/none/vm.snap
trap '[ -n "$id" ] && "$PS" destroy --provider microvm "$id" >/dev/null 2>&1
      rm -rf "$tmp" "${snap%/vm.snap}"' EXIT
plan 12
CLI_TIMEOUT=600
# PID has ended: no such process, or a zombie its reaper (not us) has
# yet to collect.
gone() { ! [ -e "/proc/$1" ] || [ "$(cut -d')' -f2 "/proc/$1/stat" | awk '{print $1}')" = Z ]; }
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }

t0=$(date +%s)
cli create --provider microvm
id=$(cat "$tmp/out")
echo "# create (the snapshot built, the VM restored): $(($(date +%s) - t0)) s"
grep -o 'microvm: [a-z]* .* in [0-9]* ms' "$tmp/err" | sed 's/^/#   /'
dir=$POLYSANDBOX_STATE_DIR/microvm/sandboxes/$id
pid=$(field "$dir/vm.json" pid 2>/dev/null)
echo "# its VMM: pid ${pid:-none}"
check "a persistent VM restored from a snapshot, its QEMU jailed" \
    sh -c '[ -n "$1" ] && [ -d "/proc/$1" ] && grep -q "restored a VM" "$2"' sh "$pid" "$tmp/err"
[ -n "$pid" ] || pid=0
sed -n 's/^\(Uid\|Gid\|Groups\|NSpid\|NoNewPrivs\|Seccomp\|CapEff\):/# status \1:/p' \
    "/proc/$pid/status" 2>/dev/null
if [ "$(id -u)" -eq 0 ]; then
    check "as root, QEMU runs as nobody's uid and gid (vmm_uid, vmm_gid), no groups" \
        sh -c 'grep -Eq "^Uid:\s+65534\s+65534\s+65534\s+65534$" "$1" &&
               grep -Eq "^Gid:\s+65534\s+65534\s+65534\s+65534$" "$1" &&
               grep -Eq "^Groups:\s*$" "$1" && grep -Eq "^CapEff:\s+0+$" "$1"' \
        sh "/proc/$pid/status"
else
    check "as a user, QEMU is in a user namespace of its own, no capability" \
        sh -c '[ "$(readlink "/proc/$1/ns/user")" != "$(readlink /proc/self/ns/user)" ] &&
               grep -Eq "^CapEff:\s+0+$" "/proc/$1/status"' sh "$pid"
fi
check "its own mount, pid, ipc, uts and net namespaces (it is pid 1 in its own)" \
    sh -c 'for n in mnt pid ipc uts net; do
               [ "$(readlink "/proc/$1/ns/$n")" != "$(readlink "/proc/self/ns/$n")" ] || exit 1
           done; grep -Eq "^NSpid:\s+$1\s+1$" "/proc/$1/status"' sh "$pid"
check "no_new_privs and QEMU's seccomp filter (-sandbox on)" \
    sh -c 'grep -Eq "^NoNewPrivs:\s+1$" "$1" && grep -Eq "^Seccomp:\s+2$" "$1"' \
    sh "/proc/$pid/status"

root=/proc/$pid/root
(cd "$root" 2>/dev/null && find . -mindepth 1 \( -path ./proc -prune -o -print \) | sort) \
    > "$tmp/root"
echo "# its root, $(wc -l < "$tmp/root") entries (/proc its own, pids only; QEMU's"
echo "# firmware and modules folders and libraries counted, not listed):"
grep -v '\.so[.0-9]*$' "$tmp/root" | grep -v '/share/qemu/\|/qemu/[^/]*$' | sed 's/^/#   /'
echo "#   and $(grep -c '\.so[.0-9]*$' "$tmp/root") libraries, $(grep -c '/share/qemu/' "$tmp/root") firmware files"
check "its root holds the kernel, initrd, QEMU's program, /dev/null, urandom (and kvm) only" \
    sh -c 'cd "$1" && [ -f ".$2" ] && [ -f ".${2%/*}/initrd.cpio" ] &&
           [ -x "./usr/bin/qemu-system-x86_64" ] &&
           [ "$(ls dev | tr "\n" " ")" = "null urandom " -o "$(ls dev | tr "\n" " ")" = "kvm null urandom " ] &&
           ! [ -e ./etc ] && ! [ -e ./bin/sh ] && ! [ -e ./usr/bin/python3 ] && ! [ -e ./root ] &&
           ! [ -e "./${3#/}" ] && ! [ -e "./$4/vm.json" ]' sh "$root" "$kernel" "$snap" "$dir"
check "its root is read only, the kernel too" \
    sh -c '! touch "$1/x" 2>/dev/null && ! sh -c ": >> \"\$1\"" sh "$1$2" 2>/dev/null' \
    sh "$root" "$kernel"

cg=$(grep -E '^[0-9]+:(memory)?:' "/proc/$pid/cgroup" | head -n 1 | cut -d: -f3)
if grep -q '^0::' "/proc/$pid/cgroup" && ! grep -q ':memory:' "/proc/$pid/cgroup"; then
    mem=/sys/fs/cgroup$cg/memory.max cpu=/sys/fs/cgroup$cg/cpu.max
else
    mem=/sys/fs/cgroup/memory$cg/memory.limit_in_bytes
    cpu=/sys/fs/cgroup/cpu$(grep -E '^[0-9]+:[^:]*\bcpu\b[^:]*:' "/proc/$pid/cgroup" | cut -d: -f3)/cpu.cfs_quota_us
fi
echo "# its cgroup $cg: $(cat "$mem" 2>/dev/null) bytes, cpu $(cat "$cpu" 2>/dev/null)"
check "its cgroup limits its memory (the guest's 512 MiB + 256) and CPU (one)" \
    sh -c 'case "$3" in */polysandbox-microvm/*) ;; *) exit 1 ;; esac &&
           [ "$(cat "$1")" -eq $(((512 + 256) << 20)) ] &&
           case "$(cat "$2")" in 100000|"100000 100000") true ;; *) false ;; esac' \
    sh "$mem" "$cpu" "$cg"

# The snapshot: QEMU holds sealed memfd copies, never the files.
ls -l "/proc/$pid/fd" 2>/dev/null | sed -n 's/.* \([0-9]* -> .*\)/# fd \1/p'
check "QEMU holds no fd of the snapshot's files, which are ours, 0600" \
    sh -c 'd=${2%/vm.snap}; ! ls -l "/proc/$1/fd" | grep -q "$d" &&
           [ "$(stat -c "%u %a" "$2" "$d/vm.ram" | sort -u)" = "$(id -u) 600" ]' sh "$pid" "$snap"
check "its RAM is a sealed memfd: write, grow, shrink and seal sealed; a write fails" \
    python3 - "$pid" <<'EOF'
import errno, fcntl, os, sys
pid = sys.argv[1]
found = 0
for fd in os.listdir(f"/proc/{pid}/fd"):
    path = f"/proc/{pid}/fd/{fd}"
    if "memfd:polysandbox-vm-ram" not in os.readlink(path):
        continue
    f = os.open(path, os.O_RDONLY)
    seals = fcntl.fcntl(f, 1034)  # F_GET_SEALS
    os.close(f)
    print(f"# fd {fd}: seals {seals:#x}")
    if seals & 0xf != 0xf:
        sys.exit(1)
    f = os.open(path, os.O_RDWR)  # root may open it so: no write passes
    try:
        os.pwrite(f, b"x", 0)
        sys.exit(1)
    except OSError as e:
        if e.errno != errno.EPERM:
            sys.exit(1)
    os.close(f)
    found += 1
sys.exit(0 if found else 1)
EOF

cli exec "$id" -- python3 -c 'print(6*7)'
check "the jailed VM runs print(6*7)" rc_and_out 0 42

cgdir=${mem%/*}
cli destroy --provider microvm "$id"
check "destroy stops it and removes its cgroup" \
    eval '[ "$rc" -eq 0 ] && gone "$pid" && ! [ -d "$cgdir" ]'
id=

cli run --provider microvm --lang python -c 'print(6*7)'
check "polysandbox run: a restored, jailed VM prints 42" \
    sh -c '[ "$1" -eq 0 ] && [ "$(cat "$2")" = 42 ] && grep -q "restored a VM" "$3"' sh \
    "$rc" "$tmp/out" "$tmp/err"
done_testing
