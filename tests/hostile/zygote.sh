#!/bin/sh
# tests/hostile/zygote.sh - python runs forked from a zygote (TAP)
#
# The python template declares a zygote, so the local provider forks its
# Python runs from a warm interpreter (plugins/local/launch/zygote.c).
# Every run must still be a sandbox of its own with the same limits and
# verdicts as a run started afresh: each program below runs both ways
# (the second with a copy of the configuration whose python template has
# no zygote) and the status, exit code, signal and output must agree.
# Then: samples of one eval (one zygote reused) see nothing of each
# other, and a zygote killed mid-run is replaced, the run in flight
# failing as a retryable sandbox error and passing when run again.
#
# Needs root (the zygote is used with the shared skeleton, i.e. as root)
# and python3; skips otherwise.

. "${top_srcdir:?top_srcdir is not set (run through make check)}/tests/hostile/lib.sh"
hostile_need zygote
if [ "$(id -u)" != 0 ]; then
    echo "1..0 # SKIP the zygote is used as root only"
    exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ps-zygote.XXXXXX") || exit 99
eval_pid=
cleanup() {
    [ -n "$eval_pid" ] && kill "$eval_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

# The same configuration without the zygote.
plain="$tmp/plain-config"
config_without_zygote "$plain" || exit 99

# prog NAME CODE: write a program.
prog() { printf '%s\n' "$2" >"$tmp/$1.py"; }

prog probe 'import sys
print("zygote" if "typing" in sys.modules else "fresh")'
prog exit3 'import sys
print("out"); sys.stderr.write("err\n"); sys.exit(3)'
prog exitmsg 'import sys
sys.exit("a message")'
prog raise 'raise ValueError("boom")'
prog syntax 'def f(:'
prog membomb 'b = bytearray(400 * 2**20)
for i in range(0, len(b), 4096): b[i] = 1
print("survived")'
prog spin 'while True: pass'
prog flood 'import sys
while True: sys.stdout.write("x" * 65536)'
prog killself 'import os, signal
os.kill(os.getpid(), signal.SIGKILL)'
prog kexec 'import ctypes
ctypes.CDLL(None).syscall(246, 0, 0, 0, 0)
print("not killed")'
prog privs 'import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
r = libc.unshare(0x10000000)
print("unshare", r, ctypes.get_errno())
r = libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)
print("mount", r, ctypes.get_errno())
st = open("/proc/self/status").read()
for k in ("Seccomp:", "NoNewPrivs:", "CapEff:", "CapBnd:", "Uid:", "Gid:", "Groups:"):
    print(k, st.split(k)[1].split("\n")[0].split())
print("host", socket.gethostname(), "cwd", os.getcwd(), "pid", os.getpid())
print("procs", sorted(p for p in os.listdir("/proc") if p.isdigit()))
print("fds", sorted(os.listdir("/proc/self/fd")))
print("env", sorted(os.environ.items()))
print("net", sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else None)
print("tmp", os.listdir("/tmp"), "work", sorted(os.listdir("/work")))
import sys
print("argv", sys.argv, "path0", sys.path[0], "file", __file__, __name__)'
# The mount table as the sandbox sees it: mount point, type, options and
# propagation of each mount, sorted (ids and order aside).
prog mounts 'rows = []
for line in open("/proc/self/mountinfo"):
    pre, post = line.split(" - ")
    f = pre.split()
    rows.append(" ".join([f[4], post.split()[0], f[5], post.split()[2]] + f[6:]))
print("\n".join(sorted(rows)))'
prog stdin 'import sys
print(sys.stdin.read().upper())'
# A process left behind, holding stdout: the init (which reports the
# status only once its sandbox is empty) must kill it, and the run end.
prog orphan 'import os, sys
if os.fork() == 0:
    os.execv("/bin/sleep", ["sleep", "3617"])
print("parent done"); sys.stdout.flush()'

# run CONFIG NAME OPTIONS...: the JSON result of the program NAME.
run() {
    cfg=$1; name=$2; shift 2
    POLYSANDBOX_CONFIG_DIR=$cfg "$PS" run --json "$@" "$tmp/$name.py" </dev/null \
        >"$tmp/$name.$(basename "$cfg").json" 2>/dev/null
}
# same NAME DESCRIPTION OPTIONS...: run NAME both ways; ok when status,
# exit code, signal, stdout and stderr agree.
same() {
    name=$1; desc=$2; shift 2
    run "$POLYSANDBOX_CONFIG_DIR" "$name" "$@"
    run "$plain" "$name" "$@"
    z="$tmp/$name.$(basename "$POLYSANDBOX_CONFIG_DIR").json"
    p="$tmp/$name.plain-config.json"
    if python3 - "$z" "$p" <<'PY'
import json, sys
z, p = (json.load(open(f)) for f in sys.argv[1:3])
keys = ("status", "exit_code", "signal", "stdout", "stderr", "stdout_truncated")
dz = {k: z.get(k) for k in keys}
dp = {k: p.get(k) for k in keys}
if dz != dp:
    print("# zygote: %r" % dz)
    print("# fresh:  %r" % dp)
    sys.exit(1)
print("# %s" % dz["status"])
PY
    then ok "$desc: the same through the zygote"
    else not_ok "$desc: differs through the zygote"
    fi
}
status_of() { jget "$tmp/$1.$(basename "$POLYSANDBOX_CONFIG_DIR").json" status; }

echo "1..24"

# 1: the zygote is used (its interpreter imported typing beforehand).
run "$POLYSANDBOX_CONFIG_DIR" probe
run "$plain" probe
zo=$(jget "$tmp/probe.$(basename "$POLYSANDBOX_CONFIG_DIR").json" stdout)
po=$(jget "$tmp/probe.plain-config.json" stdout)
if [ "$zo" = zygote ] && [ "$po" = fresh ]; then
    ok "the python template's runs go through the zygote, the plain config's do not"
else
    not_ok "zygote in use" "with zygote: $zo" "without: $po"
fi

same exit3 "exit 3 with output on both streams"
same exitmsg "sys.exit with a message"
same raise "an uncaught exception (traceback of the program only)"
same syntax "a syntax error"
same membomb "400 MiB under --memory 64M" --memory 64M -t 20s
[ "$(status_of membomb)" = memory_limit ] && ok "memory bomb: memory_limit" ||
    not_ok "memory bomb: $(status_of membomb)"
same spin "a busy loop under -t 1s" -t 1s
[ "$(status_of spin)" = timeout ] && ok "busy loop: timeout" || not_ok "busy loop: $(status_of spin)"
same flood "an output flood under --output-limit 64K" --output-limit 64K -t 20s
[ "$(status_of flood)" = output_limit ] && ok "output flood: output_limit" ||
    not_ok "output flood: $(status_of flood)"
same killself "SIGKILL to itself"
same kexec "kexec_load (a call the filter kills)"
[ "$(status_of kexec)" = seccomp ] && ok "kexec_load: seccomp" || not_ok "kexec_load: $(status_of kexec)"
same privs "namespaces, mounts, capabilities, ids, processes, descriptors, environment, files"

# stdin is delivered the same way.
printf 'hello\n' | POLYSANDBOX_CONFIG_DIR=$POLYSANDBOX_CONFIG_DIR "$PS" run -i "$tmp/stdin.py" \
    >"$tmp/stdin.out" 2>&1
grep -q '^HELLO$' "$tmp/stdin.out" && ok "stdin reaches a program forked from the zygote" ||
    not_ok "stdin" "$(cat "$tmp/stdin.out")"

# Samples of one eval run one after another through one zygote: the
# first leaves files in /work and /tmp and a process behind, the second
# must see none of them (nor anything of the zygote's own).
cat >"$tmp/iso.jsonl" <<'EOF'
{"task_id": "Z/0", "prompt": "def leave():\n", "canonical_solution": "    import os, subprocess, sys, json\n    open('/work/left-behind', 'w').write('secret')\n    open('/tmp/left-behind', 'w').write('secret')\n    subprocess.Popen(['sleep', '30'], start_new_session=True)\n    sys.modules['json'].LEFT_BEHIND = True\n    return 'typing' in sys.modules\n", "test": "def check(c):\n    assert c()\n", "entry_point": "leave"}
{"task_id": "Z/1", "prompt": "def look():\n", "canonical_solution": "    import os, sys, json\n    assert not os.path.exists('/work/left-behind'), 'work'\n    assert not os.path.exists('/tmp/left-behind'), 'tmp'\n    assert not hasattr(json, 'LEFT_BEHIND'), 'memory'\n    for p in os.listdir('/proc'):\n        if p.isdigit():\n            assert 'sleep' not in open('/proc/%s/cmdline' % p).read(), 'process'\n    return 'typing' in sys.modules\n", "test": "def check(c):\n    assert c()\n", "entry_point": "look"}
{"task_id": "Z/2", "prompt": "def look():\n", "canonical_solution": "    import os, sys, json\n    assert not os.path.exists('/work/left-behind'), 'work'\n    assert not os.path.exists('/tmp/left-behind'), 'tmp'\n    assert not hasattr(json, 'LEFT_BEHIND'), 'memory'\n    return sorted(os.listdir('/tmp')) == []\n", "test": "def check(c):\n    assert c()\n", "entry_point": "look"}
EOF
"$PS" -q eval --dataset "$tmp/iso.jsonl" --canonical -j 1 -k 1 --out "$tmp/iso.out" \
    >/dev/null 2>"$tmp/iso.err"
if all_passed "$tmp/iso.out" 3
then ok "samples through one zygote see no file, process or memory of another"
else not_ok "isolation between samples" "$(cat "$tmp/iso.err")"
fi

# A zygote killed while a sample runs: that sample fails as a retryable
# sandbox error and runs again through a new zygote; all pass.
cat >"$tmp/kill.jsonl" <<'EOF'
{"task_id": "K/0", "prompt": "def f():\n", "canonical_solution": "    return 1\n", "test": "def check(c):\n    assert c() == 1\n", "entry_point": "f"}
{"task_id": "K/1", "prompt": "def f():\n", "canonical_solution": "    import time\n    time.sleep(8)\n    return 1\n", "test": "def check(c):\n    assert c() == 1\n", "entry_point": "f"}
{"task_id": "K/2", "prompt": "def f():\n", "canonical_solution": "    return 1\n", "test": "def check(c):\n    assert c() == 1\n", "entry_point": "f"}
EOF
"$PS" -q eval --dataset "$tmp/kill.jsonl" --canonical -j 1 -k 1 --timeout 30s \
    --out "$tmp/kill.out" >/dev/null 2>"$tmp/kill.err" &
eval_pid=$!
# zygotes of our eval: children of it whose command line names the zygote
zygotes() {
    for c in $(ps -o pid= --ppid "$eval_pid" 2>/dev/null); do
        tr '\0' ' ' <"/proc/$c/cmdline" 2>/dev/null | grep -q polysandbox-zygote && echo "$c"
    done
}
# K/1 sleeps 8 s: wait until it runs (its sandbox's python, a grandchild
# of the zygote, is asleep), then kill the zygote.
# Its maps are written once its imports are done (seconds under load):
# looked for while the eval runs, 30 s at most.
zpid=
i=0
while [ $i -lt 300 ] && kill -0 "$eval_pid" 2>/dev/null; do
    zpid=$(zygotes | head -n 1)
    [ -n "$zpid" ] && [ -f "$tmp/kill.out" ] && [ "$(grep -c . "$tmp/kill.out")" -ge 1 ] && break
    sleep 0.1
    i=$((i + 1))
done
sleep 1
[ -n "$zpid" ] && kill -9 "$zpid"
# K/1 runs again through a new zygote.
znew=
i=0
while [ -n "$zpid" ] && [ $i -lt 100 ] && kill -0 "$eval_pid" 2>/dev/null; do
    znew=$(zygotes | grep -vx "$zpid" | head -n 1)
    [ -n "$znew" ] && break
    sleep 0.1
    i=$((i + 1))
done
wait "$eval_pid"
rc=$?
eval_pid=
if [ -n "$zpid" ] && [ -n "$znew" ] && [ "$rc" = 0 ] && python3 - "$tmp/kill.out" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
ok = len(rs) == 3 and all(r["verdict"] == "passed" for r in rs)
for r in rs:
    print("# %s %s attempts=%s" % (r["task_id"], r["verdict"], r.get("attempts")))
sys.exit(0 if ok else 1)
PY
then ok "a zygote killed mid-run is replaced; the run in flight runs again and passes"
else not_ok "killed zygote (pid ${zpid:-none}, then ${znew:-none}, eval exit $rc)" "$(cat "$tmp/kill.err")"
fi

same orphan "a process left behind holding stdout, under -t 20s" -t 20s
if [ "$(status_of orphan)" = ok ] && ! pgrep -f '^sleep 3617$' >/dev/null 2>&1; then
    ok "the process left behind is gone when the run ends"
else
    not_ok "process left behind: status $(status_of orphan)" "$(pgrep -af '^sleep 3617$')"
fi

# Without its helper library (local.so copied alone elsewhere) there is no
# zygote: a warning, and runs start afresh with the same result.
mkdir -p "$tmp/prov"
cp "$top_builddir/plugins/local/.libs/local.so" "$tmp/prov/" 2>/dev/null
POLYSANDBOX_PROVIDER_PATH="$tmp/prov" "$PS" run "$tmp/probe.py" </dev/null \
    >"$tmp/nohelper.out" 2>"$tmp/nohelper.err"
rc=$?
if [ "$rc" = 0 ] && [ "$(cat "$tmp/nohelper.out")" = fresh ] &&
    grep -q 'local-zygote.so is not beside local.so' "$tmp/nohelper.err"; then
    ok "no helper library: a warning naming it, and the run starts afresh"
else
    not_ok "no helper library (exit $rc)" "$(cat "$tmp/nohelper.out" "$tmp/nohelper.err")"
fi

# The mount table is the same through the zygote, whose inits start from
# the root it built once (plugins/local/zygote/helper.c).
same mounts "the mount table (points, types, options, no propagation)"

# Samples through one zygote share its read-only root: nothing can be
# written there, and what one leaves in its fresh /dev/shm, /tmp or
# network namespace is gone for the next; the next sees nothing of the
# zygote's /proc (on /tmp in the zygote) and no propagation between mounts.
cat >"$tmp/root.jsonl" <<'EOF'
{"task_id": "R/0", "prompt": "def leave():\n", "canonical_solution": "    import os, socket\n    for p in ('/left-behind', '/usr/left-behind', '/etc/left-behind', '/dev/left-behind', '/proc/left-behind'):\n        try:\n            open(p, 'w').write('x')\n        except OSError:\n            pass\n        else:\n            return 'wrote ' + p\n    open('/dev/shm/left-behind', 'w').write('secret')\n    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n    s.bind('\\0polysandbox-left-behind')\n    s.listen(1)\n    return True\n", "test": "def check(c):\n    assert c() is True, c()\n", "entry_point": "leave"}
{"task_id": "R/1", "prompt": "def look():\n", "canonical_solution": "    import os, socket\n    for p in ('/left-behind', '/usr/left-behind', '/etc/left-behind', '/dev/left-behind', '/dev/shm/left-behind'):\n        assert not os.path.exists(p), p\n    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n    try:\n        s.connect('\\0polysandbox-left-behind')\n        return 'abstract socket'\n    except OSError:\n        pass\n    assert os.listdir('/tmp') == [], os.listdir('/tmp')\n    mi = open('/proc/self/mountinfo').read()\n    assert 'shared:' not in mi and 'master:' not in mi, 'propagation'\n    assert len([p for p in os.listdir('/proc') if p.isdigit()]) < 5, 'host processes'\n    return True\n", "test": "def check(c):\n    assert c() is True, c()\n", "entry_point": "look"}
EOF
"$PS" -q eval --dataset "$tmp/root.jsonl" --canonical -j 1 -k 1 --out "$tmp/root.out" \
    >/dev/null 2>"$tmp/root.err"
if all_passed "$tmp/root.out" 2
then ok "the shared root is read-only; /dev/shm, /tmp, sockets are fresh for the next sample"
else not_ok "shared root between samples" "$(cat "$tmp/root.err")"
fi

# What the zygote itself sees once started: a user namespace that maps
# the sandbox user only, and the sandbox's root (no /root, /home or state
# directory of the host's), not the host's.
cat >"$tmp/view.jsonl" <<'EOF'
{"task_id": "V/0", "prompt": "def f():\n", "canonical_solution": "    import time\n    time.sleep(4)\n    return 1\n", "test": "def check(c):\n    assert c() == 1\n", "entry_point": "f"}
EOF
"$PS" -q eval --dataset "$tmp/view.jsonl" --canonical -j 1 -k 1 --timeout 30s \
    --out "$tmp/view.out" >/dev/null 2>"$tmp/view.err" &
eval_pid=$!
# The zygote is looked at once it has left the host's user namespace,
# its maps are written (the sandbox user in them) and its root is the
# sandbox's (a loaded machine may take seconds): while the eval runs,
# 30 s at most.
myns=$(readlink /proc/$$/ns/user)
zpid=
i=0
while [ $i -lt 300 ] && kill -0 "$eval_pid" 2>/dev/null; do
    zpid=$(zygotes | head -n 1)
    [ -n "$zpid" ] && [ -f "/proc/$zpid/root/usr/bin/env" ] &&
        [ "$(readlink "/proc/$zpid/ns/user" 2>/dev/null || echo "$myns")" != "$myns" ] &&
        grep -qw 1000 "/proc/$zpid/uid_map" 2>/dev/null &&
        [ "$(grep -c . "/proc/$zpid/mountinfo" 2>/dev/null || echo 999)" -lt 100 ] && break
    sleep 0.1
    i=$((i + 1))
done
umap=$(tr -s ' \n' '  ' <"/proc/$zpid/uid_map" 2>/dev/null)
zroot=$(ls -A "/proc/$zpid/root/" 2>/dev/null | tr '\n' ' ')
zmounts=$(grep -c . "/proc/$zpid/mountinfo" 2>/dev/null)
zstate=$(grep -c "$POLYSANDBOX_STATE_DIR" "/proc/$zpid/mountinfo" 2>/dev/null)
wait "$eval_pid"
rc=$?
eval_pid=
echo "# zygote ${zpid:-none}: uid_map '$umap', root: $zroot($zmounts mounts)"
# The sandbox user only, to a host id of the range (plugins/local/local-ids.c).
set -- $umap
if [ -n "$zpid" ] && [ "$rc" = 0 ] && [ $# = 3 ] && [ "$1" = 1000 ] && [ "$3" = 1 ] &&
    [ "$2" -ge 1879048192 ] && [ "$2" -lt $((1879048192 + 4096)) ] &&
    case " $zroot" in *" usr "*) true ;; *) false ;; esac &&
    ! case " $zroot" in *" root "* | *" home "*) true ;; *) false ;; esac &&
    [ "${zmounts:-999}" -lt 100 ] && [ "${zstate:-1}" = 0 ]; then
    ok "the zygote runs in the sandbox's root and a user namespace of its own"
else
    not_ok "the zygote's view (eval exit $rc)" "$(cat "$tmp/view.err")"
fi
