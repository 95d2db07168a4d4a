#!/bin/sh
# tests/hostile/syscalls.sh - the local provider's seccomp filter (TAP)
#
# Runs tests/hostile/probe inside a sandbox (copied in with --file; it never
# runs bare on the host): `probe all` makes every filtered call harmlessly
# and prints "NAME ERRNO", checked here against the expected table;
# `probe kill NAME` makes one call the filter must kill for (status
# "seccomp").  Then checks that ordinary work still runs under the filter:
# python3 (threads, subprocess, socketpair, multiprocessing), sh pipelines,
# node (if installed) and compiling and running C with the c template.
#
# Needs: the local provider built, python3 on the host (to read JSON).
# With HOSTILE_PROVIDER=docker (tests/hostile/syscalls-docker.sh) the
# same probes and workloads run in the docker provider's containers: the
# same answers are expected (its profile and its commands' filter are
# made of the same lists and checks); node is skipped (not in the test
# image) and cc runs in $DOCKER_CC_IMAGE (a test image with gcc).

. "${top_srcdir:?top_srcdir is not set (run through make check)}/tests/hostile/lib.sh"
PROBE="$top_builddir/tests/hostile/probe"
hostile_need syscalls "$PROBE"
in_process
if [ "$(uname -m)" != x86_64 ]; then
    echo "1..0 # SKIP the expected answers are for x86_64"
    exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-syscalls.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

# What each probe must answer.  EPERM: refused by the filter (some of
# these the kernel would refuse anyway without capabilities, but most
# would say EBADF/EFAULT/EINVAL if let through); ENOSYS: not in the
# allowlist; EAFNOSUPPORT: a socket family outside the allowed ones;
# EINVAL/EBADF/EFAULT/OK: allowed, failing on its own bad arguments.
expected() {
    cat <<'EOF'
ptrace EPERM
process_vm_readv EPERM
process_vm_writev EPERM
kcmp EPERM
pidfd_getfd EPERM
bpf EPERM
keyctl EPERM
add_key EPERM
request_key EPERM
perf_event_open EPERM
userfaultfd EPERM
fanotify_init EPERM
io_uring_setup ENOSYS
io_uring_enter ENOSYS
io_uring_register ENOSYS
mount EPERM
umount2 EPERM
pivot_root EPERM
chroot EPERM
move_mount EPERM
open_tree EPERM
fsopen EPERM
fsconfig EPERM
fsmount EPERM
fspick EPERM
mount_setattr EPERM
unshare EPERM
setns EPERM
clone_newuser EPERM
clone_newns EPERM
clone_newpid EPERM
clone_newnet EPERM
clone_newipc EPERM
clone_newuts EPERM
clone_newcgroup EPERM
clone_newuser_hi EPERM
clone_plain EINVAL
clone3 ENOSYS
clock_settime EPERM
settimeofday EPERM
adjtimex EPERM
clock_adjtime EPERM
ioctl_tiocsti EPERM
ioctl_tiocsti_hi EPERM
ioctl_tioclinux EPERM
ioctl_fionread EBADF
socket_vsock EPERM
socket_vsock_hi EPERM
socket_alg EPERM
socket_packet EAFNOSUPPORT
socket_netlink_audit EPERM
socket_netlink_route EINVAL
socket_unix EINVAL
socket_inet EINVAL
socket_inet6 EINVAL
personality_query OK
personality_no_randomize EPERM
personality_read_implies_exec EPERM
seccomp_listener EPERM
seccomp_filter EFAULT
acct EPERM
swapon EPERM
swapoff EPERM
reboot EPERM
syslog EPERM
quotactl EPERM
lookup_dcookie EPERM
name_to_handle_at EPERM
open_by_handle_at EPERM
iopl EPERM
ioperm EPERM
nfsservctl EPERM
vhangup EPERM
sethostname EPERM
modify_ldt ENOSYS
mbind ENOSYS
getpid OK
EOF
}

kills="kexec_load kexec_file_load init_module finit_module delete_module create_module x32 i386"

# The workloads: name % polysandbox run arguments (eval'd) % expected stdout
py_code='
import threading, subprocess, socket, multiprocessing
got = []
ts = [threading.Thread(target=got.append, args=(i,)) for i in range(4)]
for t in ts: t.start()
for t in ts: t.join()
a, b = socket.socketpair()
a.sendall(b"ping")
sub = subprocess.run(["sh", "-c", "echo sub"], capture_output=True, check=True)
with multiprocessing.Pool(2) as p: sq = sum(p.map(abs, [-1, -2, -3]))
print(len(got), b.recv(4).decode(), sub.stdout.decode().strip(), sq)'
node_code='
const { execFileSync } = require("child_process");
const fs = require("fs");
fs.writeFileSync("/tmp/n.txt", "node");
fs.readFile("/tmp/n.txt", "utf8", (e, s) => {
  if (e) throw e;
  console.log(s, execFileSync("sh", ["-c", "echo child"]).toString().trim());
});'
c_code='#include <pthread.h>
#include <stdio.h>
static void *run(void *a) { return a; }
int main(void) {
    pthread_t t;
    void *r = NULL;
    if (pthread_create(&t, NULL, run, "c ok") || pthread_join(t, &r)) return 1;
    puts((const char *)r);
    return 0;
}'
workloads() {
    cat <<'EOF'
python3: threads, subprocess, socketpair, multiprocessing%-- python3 -c "$py_code"%4 ping sub 6
sh: a pipeline%--shell 'seq 1 100 | sort -rn | head -n 1 | tr 0 o'%1oo
bash: process substitution and a subshell%-- bash -c 'cat <(echo sub) ; (echo shell)'%sub shell
node: fs callback and a child process%-- node -e "$node_code"%node child
cc: the c template compiles and runs (with threads)%--lang c -c "$c_code"%c ok
EOF
}

n_expected=$(expected | wc -l)
n_kills=$(echo $kills | wc -w)
n_work=$(workloads | wc -l)
echo "1..$((2 + n_expected + n_kills + n_work))"

# shellcheck disable=SC2086 # SANENV is a word list by design
"$PS" run --json -t 30s $SANENV --file "$PROBE:probe" -- ./probe all \
    </dev/null >"$tmp/all.json" 2>"$tmp/err"
jget "$tmp/all.json" stdout >"$tmp/all.out"
status=$(jget "$tmp/all.json" status)
if [ "$status" = ok ]; then ok "probe all: status ok"
else not_ok "probe all: status ok" "got '$status'" "stderr: $(head -c 600 "$tmp/err" | tr '\n' ' ')"; fi
# Every line the probe printed must be in the table (nothing unexpected).
expected > "$tmp/expected"
cut -d' ' -f1 "$tmp/expected" > "$tmp/names"
extra=$(grep . "$tmp/all.out" | cut -d' ' -f1 | grep -vxF -f "$tmp/names" | tr '\n' ' ')
lines=$(grep -c . "$tmp/all.out")
if [ -z "$extra" ] && [ "$lines" -eq "$n_expected" ]; then ok "probe all: one line per table row"
else not_ok "probe all: one line per table row" "$lines lines for $n_expected rows" "not in the table: $extra"; fi

while read -r name want; do
    got=$(grep "^$name " "$tmp/all.out" | cut -d' ' -f2)
    if [ "$got" = "$want" ]; then ok "$name: $want"
    else not_ok "$name: $want" "got '${got:-nothing}'"; fi
done < "$tmp/expected"

for k in $kills; do
    # shellcheck disable=SC2086
    "$PS" run --json -t 30s $SANENV --file "$PROBE:probe" -- ./probe kill "$k" \
        </dev/null >"$tmp/kill.json" 2>"$tmp/err"
    status=$(jget "$tmp/kill.json" status)
    if [ "$status" = seccomp ]; then ok "$k: killed by the filter (status seccomp)"
    else not_ok "$k: killed by the filter (status seccomp)" "got status '$status'" \
        "stdout: $(jget "$tmp/kill.json" stdout | tr '\n' ' ')" \
        "stderr: $(head -c 600 "$tmp/err" | tr '\n' ' ')"; fi
done

workloads > "$tmp/workloads"
while IFS='%' read -r name args want; do
    case $HOSTILE_PROVIDER:$name in
    docker:node:*) skip "$name" "the docker test image has no node"; continue ;;
    docker:cc:*)
        if [ -z "${DOCKER_CC_IMAGE:-}" ]; then skip "$name" "the test image with gcc could not be built"; continue; fi
        args="--image $DOCKER_CC_IMAGE $args" ;;
    *:node:*)
        if ! command -v node >/dev/null 2>&1; then skip "$name" "node is not installed"; continue; fi ;;
    esac
    eval "set -- $args"
    "$PS" run --json -t 60s --memory 1G --pids 64 "$@" </dev/null >"$tmp/w.json" 2>"$tmp/err"
    status=$(jget "$tmp/w.json" status)
    got=$(jget "$tmp/w.json" stdout | tr '\n' ' ' | sed 's/ *$//')
    if [ "$status" = ok ] && [ "$got" = "$want" ]; then ok "$name"
    else not_ok "$name" "status '$status', stdout '$got' (want '$want')" \
        "stderr: $(jget "$tmp/w.json" stderr | head -c 600 | tr '\n' ' ')" \
        "polysandbox: $(head -c 300 "$tmp/err" | tr '\n' ' ')"; fi
done < "$tmp/workloads"
