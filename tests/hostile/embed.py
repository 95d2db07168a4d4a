"""tests/hostile/embed.py - an embedding process keeps its own state
(run by embed.sh; TAP on stdout)

With daemon = off the local provider's init shares the caller's memory
(plugins/local/launch/vfork.c, README "Embedding processes"): what a
sandbox does to its own OOM score, dumpable flag, signal handlers and
memory must not land on this process, and an exec out of memory must
not kill it.  POLYSANDBOX_LOCAL_LAUNCH=fork runs the same on the
copy-on-write init.
"""
import ctypes
import signal
import threading

import polysandbox as psb

n = 0


def ok(cond, what):
    global n
    n += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n, what), flush=True)


def own(path):
    with open(path) as f:
        return f.read().strip()


chld = []
signal.signal(signal.SIGCHLD, lambda s, f: chld.append(s))
usr1 = []
signal.signal(signal.SIGUSR1, lambda s, f: usr1.append(s))
libc = ctypes.CDLL(None, use_errno=True)
PR_GET_DUMPABLE = 3
print("1..8", flush=True)

r = psb.run(["sh", "-c", "cat /proc/self/oom_score_adj; kill -USR1 1; kill -CHLD 1; true"],
            provider="local")
ok(r.status == "ok" and r.stdout.split() == ["1000"],
   "the payload's OOM score is 1000 (%s %r)" % (r.status, r.stdout))
ok(own("/proc/self/oom_score_adj") == "0", "ours is still 0")
ok(libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1, "we are still dumpable")
ok(not chld and not usr1, "no handler of ours ran (SIGCHLD %d, SIGUSR1 %d)"
   % (len(chld), len(usr1)))

r = psb.run(["sh", "-c", "cat /proc/1/maps /proc/1/mem 2>/dev/null | head -c 64 | wc -c"],
            provider="local")
ok(r.stdout.strip() == "0", "the init's memory (ours) is not readable (%r)" % r.stdout)

# Out of memory: the payload dies, not us.
r = psb.run(["python3", "-c", "b = []\nwhile True: b.append(bytearray(1 << 20))"],
            provider="local", limits={"memory": 64 << 20})
ok(r.status == "memory_limit", "a memory bomb ends in memory_limit (%s)" % r.status)

# Concurrent execs of one process: each init forwards to its own payload.
res = {}


def one(i):
    res[i] = psb.run(["sh", "-c", "echo %d" % i], provider="local")


ts = [threading.Thread(target=one, args=(i,)) for i in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
ok(all(res[i].stdout.strip() == str(i) for i in range(4)), "four concurrent runs")
ok(own("/proc/self/oom_score_adj") == "0" and not chld and not usr1,
   "and still nothing of theirs on us")
