#!/bin/sh
# tests/microvm/snapgc.sh - `polysandbox gc` removes microvm snapshots
# that no state directory owns (plugins/microvm/mv-snapgc.c): one whose
# recorded state directory is gone, and one that names none and was last
# written two days ago; it keeps one whose state directory is there, one
# whose state directory is gone but whose lock a process holds (a create
# opening it), one that names none but is recent, and a link with a
# snapshot directory's name; and, as root, the empty VMM cgroups a
# killed provider left (mv-cgroup.c), ten minutes old at least.  Snapshot
# directories made by hand in /dev/shm (as mv-snap.c makes them); no QEMU
# needed.
. "$top_srcdir/tests/cli/lib.sh"

[ -d /dev/shm ] && [ -w /dev/shm ] || { echo "1..0 # SKIP no writable /dev/shm"; exit 0; }
. "$top_srcdir/tests/microvm/fakevmm.sh"
uid=$(id -u)
made=
holder=
# VMM cgroups (mv-cgroup.c) made by hand too, where we may (root): one
# empty and two days old (a killed provider's), one fresh.
cgbase=
if [ "$uid" -eq 0 ]; then
    if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
        cgbase=/sys/fs/cgroup/polysandbox-microvm
    else
        cgbase=/sys/fs/cgroup/memory/polysandbox-microvm
    fi
    mkdir -p "$cgbase" 2>/dev/null && mkdir "$cgbase/vm.stale$$" "$cgbase/vm.fresh$$" &&
        touch -d '2 days ago' "$cgbase/vm.stale$$" || cgbase=
fi
trap '[ -n "$holder" ] && kill "$holder" 2>/dev/null; rm -rf $made "$tmp"
      [ -n "$cgbase" ] && rmdir "$cgbase/vm.stale$$" "$cgbase/vm.fresh$$" 2>/dev/null' EXIT
plan 11

# snapdir STATE: the snapshot directory mv-snap.c uses for state
# directory STATE (FNV-1a 64 of its path).
snapdir() {
    python3 - "$1" "$uid" <<'EOF'
import sys
h = 1469598103934665603
for b in sys.argv[1].encode():
    h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
print("/dev/shm/polysandbox-microvm-%s-%016x" % (sys.argv[2], h))
EOF
}
# fake STATE DIR: a snapshot in DIR whose record names STATE ("" for none).
fake() {
    mkdir -m 700 "$2" || exit 99
    made="$made $2"
    if [ -n "$1" ]; then
        printf '{"key": "k", "tsc_khz": 1, "disk_bytes": 1, "state_dir": "%s"}' "$1"
    else
        printf '{"key": "k", "tsc_khz": 1, "disk_bytes": 1}'
    fi > "$2/snap.json" || exit 99
    head -c 4096 /dev/zero > "$2/vm.snap" && : > "$2/lock" || exit 99
}
# imgsnap STATE DISK: where mv-snap.c keeps the snapshot of image disk
# DISK in STATE when /dev/shm is too small (STATE/snapshot-<hash>).
imgsnap() {
    python3 - "$1" "$2" <<'EOF'
import sys
h = 1469598103934665603
for b in (sys.argv[1] + "\nimage=" + sys.argv[2]).encode():
    h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
print("%s/snapshot-%016x" % (sys.argv[1], h))
EOF
}
rand() { printf '/dev/shm/polysandbox-microvm-%s-%s' "$uid" "$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"; }

gone=$(snapdir "$tmp/gone/microvm")
fake "$tmp/gone/microvm" "$gone"
mkdir -p "$tmp/live/microvm" || exit 99
live=$(snapdir "$tmp/live/microvm")
fake "$tmp/live/microvm" "$live"
busy=$(snapdir "$tmp/busy/microvm")
fake "$tmp/busy/microvm" "$busy"
old=$(rand)
fake "" "$old"
touch -d '2 days ago' "$old"/* || exit 99
new=$(rand)
fake "" "$new"
link=$(rand)
ln -s "$gone" "$link" || exit 99
made="$made $link"

# Image snapshots in the state directory: one whose disk is gone, one
# whose disk is there.
mstate=$tmp/state/microvm
mkdir -p "$mstate/images" && : > "$mstate/images/0123456789abcdef.erofs" || exit 99
imgfake() {
    mkdir -m 700 "$1" || exit 99
    printf '{"key": "k", "tsc_khz": 1, "disk_bytes": 1, "state_dir": "%s", "image": "%s"}' \
        "$mstate" "$2" > "$1/snap.json" && head -c 4096 /dev/zero > "$1/vm.snap" &&
        : > "$1/lock" || exit 99
}
imggone=$(imgsnap "$mstate" "$mstate/images/fedcba9876543210.erofs")
imgfake "$imggone" "$mstate/images/fedcba9876543210.erofs"
imglive=$(imgsnap "$mstate" "$mstate/images/0123456789abcdef.erofs")
imgfake "$imglive" "$mstate/images/0123456789abcdef.erofs"

# A process holding the lock, as a create opening the snapshot does.
python3 -c 'import fcntl, sys, time
f = open(sys.argv[1])
fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(60)' "$busy/lock" "$tmp/held" &
holder=$!
i=0
while [ ! -e "$tmp/held" ] && [ "$i" -lt 100 ]; do i=$((i + 1)); sleep 0.1; done

POLYSANDBOX_LOG=info cli gc --provider microvm
sed 's/^/# /' "$tmp/err"
check "gc exits 0" is_rc 0
check "a snapshot whose state directory is gone is removed" [ ! -e "$gone" ]
check "one that names no state directory, written two days ago, is removed" [ ! -e "$old" ]
check "one whose state directory is there stays" [ -e "$live/vm.snap" ]
check "one whose lock is held (in use) stays" [ -e "$busy/vm.snap" ]
check "one that names no state directory but is recent stays" [ -e "$new/vm.snap" ]
check "a link with a snapshot directory's name is left alone" [ -L "$link" ]
check "an image's snapshot in the state directory, its disk gone, is removed" [ ! -e "$imggone" ]
check "... one whose disk is there stays" [ -e "$imglive/vm.snap" ]
if [ -n "$cgbase" ]; then
    check "an empty VMM cgroup two days old is removed" [ ! -e "$cgbase/vm.stale$$" ]
    check "a fresh one stays (a VMM may be about to join it)" [ -d "$cgbase/vm.fresh$$" ]
else
    ok "an empty VMM cgroup two days old is removed # SKIP not root, or no cgroup to write"
    ok "a fresh one stays # SKIP not root, or no cgroup to write"
fi
done_testing
