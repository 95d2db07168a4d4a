#!/bin/sh
# tests/hostile/other-user.sh - another local user against a user's state (TAP)
#
# With no XDG_RUNTIME_DIR (cron, su, sudo -u, ssh without logind, CI) a
# user's state directory is /tmp/polysandbox-<uid>, a name anybody can
# make first.  A real second user (made here with useradd, removed at the
# end) tries what issue 15 describes against a real victim user:
# pre-making the state directory, swapping a sandbox's work directory
# for a link to the victim's home, squatting the run directory in
# /dev/shm, planting a lock that blocks get-or-create.  Each must be
# refused (with an error naming the path and its owner) or made harmless;
# the victim's home must never be written.  Needs root (to add the users);
# skipped otherwise.

: "${top_srcdir:?top_srcdir is not set (run through make check)}"
. "$top_srcdir/tests/hostile/lib.sh"

if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP needs root to add a victim and an attacker user"; exit 0; fi
for prog in useradd userdel setpriv flock python3; do
    command -v "$prog" >/dev/null 2>&1 || { echo "1..0 # SKIP $prog is missing"; exit 0; }
done
hostile_need other-user

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-other-user.XXXXXX") || exit 99
chmod 755 "$tmp"
# The victim runs unprivileged, where the host may give it no cgroup:
# the limits it cannot enforce are allowed here (the core refuses them
# otherwise; tests/limits/nonroot.sh checks that), this is about state.
allow_unenforced "$tmp/conf" allow
chmod -R a+rX "$tmp/conf"
victim=psbx-v$$
attacker=psbx-a$$
cleanup() {
    # The lock's holder (test 7) lets go once its mark is gone.
    rm -f "$tmp/hold"
    wait 2>/dev/null
    for u in "$vuid" "$auid"; do
        [ -n "$u" ] || continue
        rm -rf "/tmp/polysandbox-$u" /dev/shm/polysandbox-"$u"-*
    done
    userdel "$victim" 2>/dev/null
    userdel "$attacker" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
if ! useradd -r -M -U -s /usr/sbin/nologin "$victim" >"$tmp/useradd.err" 2>&1 ||
    ! useradd -r -M -U -s /usr/sbin/nologin "$attacker" >>"$tmp/useradd.err" 2>&1; then
    echo "1..0 # SKIP useradd failed: $(tr '\n' ' ' <"$tmp/useradd.err")"
    exit 0
fi
vuid=$(id -u "$victim") auid=$(id -u "$attacker")
rm -rf "/tmp/polysandbox-$vuid" "/tmp/polysandbox-$auid" /dev/shm/polysandbox-"$vuid"-*
vhome="$tmp/home"
mkdir -p "$vhome" && chown "$victim:" "$vhome" && chmod 700 "$vhome" || exit 99
state="/tmp/polysandbox-$vuid"

# as USER CMD...: CMD as USER, as cron or `su` would start it (no
# XDG_RUNTIME_DIR, no state directory chosen), in-process.
as() {
    u=$1
    shift
    setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups \
        env -u XDG_RUNTIME_DIR -u POLYSANDBOX_STATE_DIR HOME="$vhome" \
        POLYSANDBOX_LOCAL_DAEMON=off "$@"
}
# victim ARGS...: the victim's polysandbox; output in $tmp/out, $tmp/err.
victim() {
    (cd "$tmp" && as "$victim" "$PS" "$@") <"${STDIN:-/dev/null}" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
home_clean() { [ -z "$(ls -A "$vhome")" ]; }
# refused_naming WHAT: the error names the attacker's directory and owner.
refused_naming() {
    [ "$rc" != 0 ] && grep -q "$1" "$tmp/err" && grep -q "$attacker" "$tmp/err"
}

echo "1..7"

# 1. The state directory made first by the attacker, world-writable.
as "$attacker" sh -c "mkdir -m 777 $state $state/local && chmod 777 $state"
victim run -- sh -c 'echo hi'
if refused_naming "$state" && [ -z "$(find "$state" -user "$victim" 2>/dev/null)" ]; then
    ok "a state directory another user made first is refused, naming it and its owner"
else
    not_ok "a pre-made state directory" "exit $rc: $(cat "$tmp/out" "$tmp/err")" \
        "victim's files in it: $(find "$state" -user "$victim" 2>/dev/null | head -3)"
fi

# 2. Then the attacker swaps a sandbox's directory for one whose work is
# a link to the victim's home: what the victim's code writes in /work,
# and what the victim uploads, must not land there.
victim create
id=$(cat "$tmp/out")
if [ -n "$id" ] && [ -d "$state/local/$id" ]; then
    as "$attacker" sh -c "mv $state/local/$id $state/local/$id.old && mkdir -m 777 \
        $state/local/$id && ln -s $vhome $state/local/$id/work &&
        cp $state/local/$id.old/meta.json $state/local/$id/ 2>/dev/null ||
        printf '{\"version\":1,\"id\":\"$id\",\"persistent\":true,\"network\":\"none\",\"limits\":{\"wall_ns\":10000000000,\"cpu_ns\":10000000000,\"memory_bytes\":536870912,\"pids\":128,\"nofile\":256,\"fsize_bytes\":67108864,\"disk_bytes\":268435456,\"stdout_bytes\":1048576,\"stderr_bytes\":1048576}}' >$state/local/$id/meta.json"
fi
victim exec "${id:-lcl-0000000000000000}" -- sh -c 'echo pwned >>/work/.bashrc'
rc_exec=$rc
echo secret >"$tmp/upload" && chmod 644 "$tmp/upload"
victim upload "${id:-lcl-0000000000000000}" "$tmp/upload" notes.txt
if home_clean; then
    ok "a work directory swapped for a link to the home: nothing written there (exec $rc_exec, upload $rc)"
else
    not_ok "a swapped work directory" "in the home: $(ls -A "$vhome")" \
        "$(cat "$vhome/.bashrc" 2>/dev/null)"
fi
rm -rf "$state" "$vhome"/.??* "$vhome"/*

# 3. The same swap in the victim's own state directory (by whoever could
# write there): the work directory is opened without following a link,
# so exec and upload are refused.
victim create
id=$(cat "$tmp/out")
wdir="$state/local/$id/work"
if [ -n "$id" ] && [ -d "$wdir" ]; then
    rmdir "$wdir" && ln -s "$vhome" "$wdir"
fi
victim exec "${id:-lcl-0000000000000000}" -- sh -c 'echo pwned >>/work/.bashrc'
rc_exec=$rc
err_exec=$(cat "$tmp/err")
victim upload "${id:-lcl-0000000000000000}" "$tmp/upload" notes.txt
if [ -L "$wdir" ] && home_clean && [ "$rc_exec" != 0 ] && [ "$rc" != 0 ] &&
    grep -q "link" "$tmp/err"; then
    ok "a work directory that is a link: exec and upload refused, the home untouched"
else
    not_ok "a work directory that is a link" "exec $rc_exec: $err_exec" \
        "upload $rc: $(cat "$tmp/err")" "home: $(ls -A "$vhome")"
fi
rm -rf "$state" "$vhome"/.??* "$vhome"/*

# work_dir_of: the path /work is bound from, as mountinfo shows it inside
# (unprivileged, /work is a plain directory of the sandbox's).
# (unprivileged, /work is a plain directory of the sandbox's): its root in
# its file system, which for /dev/shm's tmpfs is relative to /dev/shm.
work_dir_of() {
    victim run -- sh -c 'grep " /work " /proc/self/mountinfo' || return 1
    python3 - "$tmp/out" <<'PY'
import re, sys
f = open(sys.argv[1]).read().split()
root = re.sub(r"/lcl-[0-9a-f]+/work$", "", f[3])
fstype = f[f.index("-") + 1]
print(("/dev/shm" + root) if fstype == "tmpfs" and root.startswith("/polysandbox-") else root)
PY
}

# 4. The run directory's name in /dev/shm squatted by the attacker: the
# name releases before this one computed (FNV-1a of the state directory),
# made first, world-writable.  The victim's one-shot sandboxes still live
# in a private /dev/shm directory of their own, never in that one.
pred=$(python3 -c '
import sys
h = 0xcbf29ce484222325
for b in sys.argv[1].encode():
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
print("/dev/shm/polysandbox-%s-%016x" % (sys.argv[2], h))' "$state/local" "$vuid")
as "$attacker" sh -c "mkdir -m 777 $pred"
used=$(work_dir_of)
case "$used" in
/dev/shm/polysandbox-"$vuid"-*) in_shm=yes ;;
*) in_shm=no ;;
esac
if [ "$in_shm" = yes ] && [ "$used" != "$pred" ] && [ -z "$(ls -A "$pred")" ]; then
    ok "a squatted run directory name is not used; sandboxes stay in a private one in /dev/shm"
else
    not_ok "a squatted run directory name" "used: ${used:-?} (squatted: $pred)" \
        "$(cat "$tmp/out" "$tmp/err")" "in the squatted one: $(ls -A "$pred")"
fi

# 5. The name in use, seen by the attacker (anyone can list /dev/shm
# while it exists) and made by them once it is gone: the next run never
# uses it (a new name is drawn).
seen=$(readlink "$state/local/run-dir" 2>/dev/null)
[ -n "$seen" ] && rm -rf "$seen" && as "$attacker" sh -c "mkdir -m 777 $seen"
used2=$(work_dir_of)
if [ -n "$seen" ] && [ "$used2" != "$seen" ] &&
    case "$used2" in /dev/shm/polysandbox-"$vuid"-*) true ;; *) false ;; esac &&
    [ -z "$(ls -A "$seen")" ]; then
    ok "a run directory squatted once seen: the next run draws a new name"
else
    not_ok "a run directory squatted once seen" "seen: ${seen:-none}, used: ${used2:-?}" \
        "$(cat "$tmp/err")"
fi
rm -rf "$state" "$pred" "$seen"

# lock_name STATE UID LABEL: the get-or-create lock file of the local
# provider for the owner UID and one --label (core/run/sandbox-find.c: BLAKE2b,
# 16 bytes, of the provider and the sorted labels).
lock_name() {
    python3 - "$@" <<'PY'
import hashlib, socket, sys
state, uid, label = sys.argv[1:4]
k, v = label.split("=", 1)
kv = sorted([(k, v), ("polysandbox.owner", "%s@%s" % (uid, socket.gethostname())),
             ("polysandbox.persistent", "1")])
h = hashlib.blake2b(digest_size=16)
h.update(b"local\0")
for a, b in kv:
    h.update(a.encode() + b"\0" + b.encode() + b"\0")
print("%s/locks/get-or-create-%s" % (state, h.hexdigest()))
PY
}

# 6. The name computed here is the one the core uses (checked as root in
# a scratch state directory), so the plant below is the real attack.
own="$tmp/own-state"
mine=$(lock_name "$own" 0 app=demo)
sid=$(POLYSANDBOX_STATE_DIR=$own POLYSANDBOX_LOCAL_DAEMON=off "$PS" create --get-or-create \
    --label app=demo </dev/null 2>"$tmp/own.err")
[ -n "$sid" ] && POLYSANDBOX_STATE_DIR=$own "$PS" destroy "$sid" >/dev/null 2>&1
if [ -f "$mine" ]; then
    ok "the lock name is computed as the core does (the plant below is aimed right)"
else
    not_ok "the lock name" "expected $mine" "$(ls "$own/locks" 2>&1)" "$(cat "$tmp/own.err")"
fi

# 7. A lock planted by the attacker (in a state directory they made
# first), world-writable and held: get-or-create never blocks on it.
plant=$(lock_name "$state" "$vuid" app=demo)
as "$attacker" sh -c "mkdir -m 777 $state $state/locks && chmod 777 $state &&
    touch $plant && chmod 666 $plant"
# The holder keeps the lock while $tmp/hold exists (at most 60 s), so
# the test ends as soon as its checks do.
touch "$tmp/hold"
as "$attacker" flock -x "$plant" sh -c \
    "i=0; while [ -e $tmp/hold ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done" &
sleep 0.3
start=$(date +%s)
(cd "$tmp" && timeout 20 setpriv --reuid="$vuid" --regid="$(id -g "$victim")" --clear-groups \
    env -u XDG_RUNTIME_DIR -u POLYSANDBOX_STATE_DIR HOME="$vhome" POLYSANDBOX_LOCAL_DAEMON=off \
    "$PS" create --get-or-create --label app=demo) </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
took=$(($(date +%s) - start))
if [ "$rc" != 124 ] && refused_naming "$state"; then
    ok "a lock planted and held by another user: get-or-create refuses in ${took}s, naming it"
else
    not_ok "a planted lock" "exit $rc after ${took}s (124: blocked until killed)" \
        "$(cat "$tmp/out" "$tmp/err")"
fi
