#!/usr/bin/python3 -S
"""tests/bench/eval-zygote.py - what a Python "zygote" would save per sample.

A measurement for doc/eval-speed.md, not a sandbox: it runs every
program of a HumanEval-format dataset (prompt + canonical solution + test
+ check(entry_point)) serially in one of these ways and prints the CPU
time per sample (this process and its children, user + system):

  spawn       a new `python3 -S` per sample (what polysandbox eval pays
              for Python today, without the sandbox around it)
  fork        a warm interpreter forks per sample and exec()s the program
              in the child (no isolation: the reference harness's way)
  isol-nonet  fork, then in the child: a fresh cgroup (memory and pids
              limits), fresh user, mount, pid, ipc and uts namespaces, a
              second fork to be pid 1 there, a fresh tmpfs on /tmp and a
              seccomp filter; then exec() of the program
  isol        the same with a fresh network namespace too

--typing prefixes every program with `from typing import List` as most
real HumanEval prompts do; the warm interpreter of the fork modes has
imported typing beforehand, as a zygote would.  The isol modes need root
and cgroup v1 (memory, pids) or v2.

Usage: eval-zygote.py [--typing] MODE[,MODE...] DATASET.jsonl
"""
import ctypes
import json
import os
import resource
import struct
import subprocess
import sys

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x20000, 0x4000000, 0x8000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_REC, MS_PRIVATE = 0x4000, 0x40000
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
libc = ctypes.CDLL(None, use_errno=True)


def seccomp_prog():
    """A filter of 25 instructions: kill on 20 system calls, allow the rest."""
    def ins(code, jt, jf, k):
        return struct.pack("HBBI", code, jt, jf, k)
    deny = [101, 165, 166, 155, 169, 246, 248, 249, 250, 310, 311, 304, 175, 176, 313,
            321, 323, 425, 426, 427]
    f = [ins(0x20, 0, 0, 4), ins(0x15, 1, 0, 0xC000003E), ins(0x06, 0, 0, 0),
         ins(0x20, 0, 0, 0)]
    for i, nr in enumerate(deny):
        f.append(ins(0x15, len(deny) - i, 0, nr))
    f += [ins(0x06, 0, 0, 0x7FFF0000), ins(0x06, 0, 0, 0x80000000)]
    buf = ctypes.create_string_buffer(b"".join(f))

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    return buf, Fprog(len(f), ctypes.addressof(buf))


class Cgroups:
    """A fresh cgroup per sample with memory and pids limits, v1 or v2."""

    def __init__(self):
        v2 = os.path.exists("/sys/fs/cgroup/cgroup.controllers")
        roots = ["/sys/fs/cgroup"] if v2 else ["/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids"]
        self.v2 = v2
        self.parents = [r + "/polysandbox-zygote-bench-%d" % os.getpid() for r in roots]
        for p in self.parents:
            os.mkdir(p)
        if v2:
            with open(self.parents[0] + "/cgroup.subtree_control", "w") as f:
                f.write("+memory +pids")

    def make(self, i):
        dirs = ["%s/s%d" % (p, i) for p in self.parents]
        for d in dirs:
            os.mkdir(d)
        limits = ([("memory.max", "536870912"), ("pids.max", "128")] if self.v2 else
                  [("memory.limit_in_bytes", "536870912"), ("pids.max", "128")])
        for k, (name, value) in enumerate(limits):
            with open("%s/%s" % (dirs[min(k, len(dirs) - 1)], name), "w") as f:
                f.write(value)
        return dirs

    def close(self):
        for p in self.parents:
            os.rmdir(p)


def isolate(net, fprog):
    """In the child: fresh namespaces, pid 1 of its own, /tmp, seccomp."""
    flags = (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
             (CLONE_NEWNET if net else 0))
    if libc.unshare(flags) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    for path, text in (("/proc/self/setgroups", "deny"), ("/proc/self/uid_map", "0 0 1"),
                       ("/proc/self/gid_map", "0 0 1")):
        with open(path, "w") as f:
            f.write(text)
    pid = os.fork()
    if pid:
        _, st = os.waitpid(pid, 0)
        os._exit(os.waitstatus_to_exitcode(st))
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0 or \
            libc.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, b"size=64m") != 0:
        raise OSError(ctypes.get_errno(), "mount")
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
            libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp")


def run_one(mode, i, prog, cg, fprog):
    if mode == "spawn":
        return subprocess.run([sys.executable, "-S", "-c", prog],
                              stdout=subprocess.DEVNULL).returncode
    dirs = cg.make(i) if mode.startswith("isol") else []
    pid = os.fork()
    if pid == 0:
        try:
            for d in dirs:
                with open(d + "/cgroup.procs", "w") as f:
                    f.write("0")
            if mode.startswith("isol"):
                isolate(mode == "isol", fprog)
            exec(compile(prog, "program.py", "exec"), {})
            os._exit(0)
        except BaseException as e:
            sys.stderr.write("%r\n" % e)
            os._exit(1)
    _, st = os.waitpid(pid, 0)
    for d in dirs:
        os.rmdir(d)
    return os.waitstatus_to_exitcode(st)


def main():
    args = sys.argv[1:]
    typing = "--typing" in args
    args = [a for a in args if a != "--typing"]
    if len(args) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    modes, path = args[0].split(","), args[1]
    tasks = [json.loads(line) for line in open(path) if line.strip()]
    head = "from typing import List\n" if typing else ""
    progs = [head + t["prompt"] + t["canonical_solution"] + "\n" + t["test"] +
             "\ncheck(%s)\n" % t["entry_point"] for t in tasks]
    if typing:
        import typing as _preloaded  # noqa: F401  (what a zygote would hold)
    _buf, fprog = seccomp_prog()
    for mode in modes:
        cg = Cgroups() if mode.startswith("isol") else None
        r0 = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
        bad = sum(run_one(mode, i, p, cg, fprog) != 0 for i, p in enumerate(progs))
        r1 = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
        if cg:
            cg.close()
        cpu = sum(b.ru_utime - a.ru_utime + b.ru_stime - a.ru_stime for a, b in zip(r0, r1))
        print("%-10s %s%3d samples, %d failed: %6.2f ms CPU per sample" %
              (mode, "typing " if typing else "", len(progs), bad, cpu / len(progs) * 1e3))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
