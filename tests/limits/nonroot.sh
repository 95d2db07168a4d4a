#!/bin/sh
# tests/limits/nonroot.sh - the local provider as a real unprivileged user
# (TAP; needs root to create the user, polysandbox-lim, and switch to it)
#
# Such a user has no cgroup of its own on cgroup v1, nor on v2 unless a
# subtree is delegated to it, so the memory limit cannot be held: a run
# is refused, naming the limit and why, unless unenforced_limits allows
# it; then the result names the limits it ran without, and the floors
# hold (RLIMIT_DATA per process; RLIMIT_NPROC, which since Linux 5.14 is
# counted per user namespace, bounds the sandbox's processes).  Then the
# same user in a delegated cgroup v2 subtree (cgroup2 mounted in a mount
# namespace of the test's own on a v1 host): the provider finds the
# subtree and puts each exec in a cgroup there.
: "${top_builddir:?top_builddir is not set (run through make check)}"
: "${top_srcdir:?top_srcdir is not set (run through make check)}"
PS="$top_builddir/polysandbox"
U=polysandbox-lim

if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP needs root to create the test user $U"; exit 0; fi
for c in setpriv useradd python3 unshare; do
    command -v $c >/dev/null 2>&1 || { echo "1..0 # SKIP needs $c"; exit 0; }
done
if [ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" -eq 0 ]; then
    echo "1..0 # SKIP user namespaces are disabled"; exit 0
fi
# Tests run in parallel: the user is made once, under a lock.
(
    flock -w 60 9 || exit 1
    id -u "$U" >/dev/null 2>&1 ||
        useradd --system --user-group --no-create-home --home-dir /nonexistent \
            --shell /usr/sbin/nologin "$U"
) 9>"${TMPDIR:-/tmp}/polysandbox-lim-user.lock"
if ! id -u "$U" >/dev/null 2>&1; then echo "1..0 # SKIP cannot create the user $U"; exit 0; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-nonroot.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp" && mkdir "$tmp/state" "$tmp/u" && chown "$U:" "$tmp/state" "$tmp/u" || exit 99
if ! setpriv --reuid="$U" --regid="$U" --clear-groups test -x "$PS"; then
    echo "1..0 # SKIP $U cannot reach $PS (a parent directory is not searchable)"
    exit 0
fi
kmaj=$(uname -r | cut -d. -f1); kmin=$(uname -r | cut -d. -f2)
per_ns=no; [ "$kmaj" -gt 5 ] || { [ "$kmaj" -eq 5 ] && [ "$kmin" -ge 14 ]; } && per_ns=yes
cgfs=$(stat -f -c %T /sys/fs/cgroup)
echo "# cgroup: $cgfs at /sys/fs/cgroup (cgroup2fs: v2; tmpfs: v1 or hybrid), kernel $(uname -r)"
echo "1..15"

t=0
ok() { t=$((t + 1)); echo "ok $t - $1"; }
not_ok() { t=$((t + 1)); echo "not ok $t - $1"; shift; for l in "$@"; do echo "# $l"; done; }
check() { d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d" "$(head -c 800 "$tmp/err")" "$(head -c 800 "$tmp/out")"; fi; }
# as_user ARGS...: polysandbox as the test user, in-process (no daemon:
# root only), stdout in $tmp/out, stderr in $tmp/err, status in $rc.
as_user() {
    setpriv --reuid="$U" --regid="$U" --clear-groups env -i PATH=/usr/bin:/bin \
        POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/local/.libs" \
        POLYSANDBOX_CONFIG_DIR="$top_srcdir/tests/config" \
        POLYSANDBOX_STATE_DIR="$tmp/state" POLYSANDBOX_LOCAL_DAEMON=off \
        "$PS" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
jget() {
    python3 -c 'import json, sys; v = json.load(open(sys.argv[1])).get(sys.argv[2]); print(json.dumps(v) if not isinstance(v, str) else v)' "$tmp/out" "$1" 2>/dev/null
}
big='x = bytearray(300 << 20); print("allocated", len(x))'

# ---- refused ----
as_user run --json --memory 64M -- python3 -c "$big"
check "--memory 64M as $U: refused (125), nothing allocated" \
    eval '[ $rc -eq 125 ] && [ "$(jget status)" = sandbox_error ] && ! grep -q allocated "$tmp/out"'
check "the error names the limit, its value and why" \
    eval 'jget error | grep -q "cannot enforce the memory (64 MiB)" && jget error | grep -q "no memory cgroup"'
check "and how an administrator allows it" \
    eval 'jget error | grep -q "unenforced_limits = allow"'

# ---- allowed, and said ----
as_user -o provider.local.unenforced_limits=allow run --json --memory 64M -- python3 -c "$big"
check "unenforced_limits = allow: it runs, and RLIMIT_DATA still stops 300 MB in one process" \
    eval '[ "$(jget status)" = nonzero_exit ] && ! grep -q allocated "$tmp/out" && jget stderr | grep -q MemoryError'
check "the result names memory as not enforced, and why" \
    eval 'jget unenforced_limits | grep -q "\"memory\"" && jget unenforced_reason | grep -q RLIMIT_DATA'
check "and the disk limit (not root: a plain work directory)" \
    eval 'jget unenforced_limits | grep -q "\"disk\""'
as_user -o provider.local.unenforced_limits=allow run --memory 64M -- true
check "without --json: a note on stderr" \
    eval '[ $rc -eq 0 ] && grep -q "note: the sandbox ran without the .*memory" "$tmp/err"'

# ---- pids: RLIMIT_NPROC per user namespace ----
forks='import os, time
n = 0
for i in range(300):
    try:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        n += 1
    except OSError:
        break
print("started", n)'
as_user -o provider.local.unenforced_limits=memory,cpu,disk run --json --pids 128 -t 20s -- python3 -c "$forks"
started=$(jget stdout | awk '/started/ {print $2}')
if [ $per_ns = yes ]; then
    check "pids is enforced (not allowed unenforced, yet the run went)" \
        eval '[ "$(jget status)" != sandbox_error ] && ! jget unenforced_limits | grep -q pids'
    check "300 processes under --pids 128: at most 128 started (${started:-none})" \
        eval '[ -n "$started" ] && [ "$started" -le 128 ]'
else
    check "pids (kernel before 5.14): refused, RLIMIT_NPROC would be per uid" \
        eval '[ "$(jget status)" = sandbox_error ] && jget error | grep -q "pids (128)"'
    ok "# SKIP no per-user-namespace RLIMIT_NPROC before Linux 5.14"
fi
# The limit is the sandbox's: other processes of the uid do not count.
setsid setpriv --reuid="$U" --regid="$U" --clear-groups \
    sh -c 'for i in $(seq 40); do sleep 60 & done; wait' </dev/null >/dev/null 2>&1 &
holder=$!   # a session and process group of its own: its sleeps go with it
sleep 1
as_user -o provider.local.unenforced_limits=memory,cpu,disk run --json --pids 16 -- sh -c 'sleep 1 & sleep 1 & wait; echo two'
kill -- "-$holder" 2>/dev/null
check "the user's 40 other processes do not count against --pids 16" \
    eval '[ "$(jget status)" = ok ] && [ "$(jget stdout)" = two ]'

as_user doctor --provider local
check "doctor: the limits line says what is not enforced" \
    grep -q "limits: memory not enforced" "$tmp/out"

# ---- a delegated cgroup v2 subtree ----
if ! grep -qw cgroup2 /proc/filesystems; then
    for d in "uses it" "cgroup per exec" "cpu enforced" "refused without the memory controller"; do
        ok "delegated cgroup v2: $d # SKIP no cgroup2 in this kernel"
    done
    exit 0
fi
cat >"$tmp/deleg.sh" <<EOF
if [ "$cgfs" != cgroup2fs ]; then
    mount --make-rprivate / && mount -t cgroup2 none /sys/fs/cgroup || exit 77
fi
D=/sys/fs/cgroup/ps-nonroot-\$\$
mkdir -p "\$D/leaf" && chown -R "$U:" "\$D" || exit 77
sh -c 'echo \$\$ >"\$1/leaf/cgroup.procs" && exec "\$2"' sh "\$D" "$tmp/inner.sh"
r=\$?
find "\$D" -depth -type d -exec rmdir {} + 2>/dev/null
exit \$r
EOF
cat >"$tmp/inner.sh" <<EOF
#!/bin/sh
$(command -v setpriv) --reuid="$U" --regid="$U" --clear-groups env -i PATH=/usr/bin:/bin \
    POLYSANDBOX_PROVIDER_PATH="$top_builddir/plugins/local/.libs" \
    POLYSANDBOX_CONFIG_DIR="$top_srcdir/tests/config" POLYSANDBOX_STATE_DIR="$tmp/state" \
    POLYSANDBOX_LOCAL_DAEMON=off sh -c '
    "$PS" doctor --provider local >"$tmp/u/d.doctor" 2>&1
    "$PS" -o provider.local.unenforced_limits=allow run --json -- sh -c "cat /proc/self/cgroup; i=0; while [ \\\$i -lt 200000 ]; do i=\\\$((i+1)); done" >"$tmp/u/d.json" 2>"$tmp/u/d.err"
    "$PS" run --json -- true >"$tmp/u/d2.json" 2>&1
    cat /sys/fs/cgroup/cgroup.controllers >"$tmp/u/d.ctrl" 2>/dev/null
    true'
EOF
chmod 755 "$tmp/inner.sh"
unshare -m sh "$tmp/deleg.sh"; r=$?
if [ $r -eq 77 ]; then
    for d in "uses it" "cgroup per exec" "cpu enforced" "refused without the memory controller"; do
        ok "delegated cgroup v2: $d # SKIP cannot mount cgroup2 or delegate a subtree here"
    done
    exit 0
fi
jd() { python3 -c 'import json, sys; v = json.load(open(sys.argv[1])).get(sys.argv[2]); print(json.dumps(v) if not isinstance(v, str) else v)' "$1" "$2" 2>/dev/null; }
if grep -q "cgroup v2 at /sys/fs/cgroup/ps-nonroot-[0-9]*/polysandbox" "$tmp/u/d.doctor"; then ok "delegated cgroup v2: doctor finds the subtree and uses it"
else not_ok "delegated cgroup v2: doctor finds the subtree and uses it" "$(grep -i cgroup "$tmp/u/d.doctor" | head -c 600)"; fi
if [ "$(jd "$tmp/u/d.json" status)" = ok ] && jd "$tmp/u/d.json" stdout | grep -qx '0::/'; then ok "delegated cgroup v2: each exec in a cgroup of its own (its own cgroup namespace)"
else not_ok "delegated cgroup v2: each exec in a cgroup of its own" "$(head -c 600 "$tmp/u/d.json") $(head -c 300 "$tmp/u/d.err")"; fi
cpu=$(jd "$tmp/u/d.json" cpu_ns)
if [ "${cpu:-null}" != null ] && [ "$cpu" -gt 0 ] 2>/dev/null && ! jd "$tmp/u/d.json" unenforced_limits | grep -q cpu; then ok "delegated cgroup v2: cpu enforced, from cpu.stat ($cpu ns)"
else not_ok "delegated cgroup v2: cpu enforced, from cpu.stat" "cpu_ns $cpu, unenforced $(jd "$tmp/u/d.json" unenforced_limits)"; fi
if grep -qw memory "$tmp/u/d.ctrl"; then
    if [ "$(jd "$tmp/u/d2.json" status)" = sandbox_error ] && jd "$tmp/u/d2.json" error | grep -q "disk" && ! jd "$tmp/u/d2.json" error | grep -q "memory ("; then ok "delegated cgroup v2 with the memory controller: memory enforced, only disk refused"
    else not_ok "delegated cgroup v2 with the memory controller: memory enforced" "$(head -c 600 "$tmp/u/d2.json")"; fi
else
    if [ "$(jd "$tmp/u/d2.json" status)" = sandbox_error ] && jd "$tmp/u/d2.json" error | grep -q "has no memory controller"; then ok "delegated cgroup v2 without the memory controller (bound to v1 here): refused, saying so"
    else not_ok "delegated cgroup v2 without the memory controller: refused, saying so" "$(head -c 600 "$tmp/u/d2.json")"; fi
fi
