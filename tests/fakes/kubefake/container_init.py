"""kubefake/container_init.py - start one pod's container (run by runtime.py).

Runs as `unshare --mount --uts [--net] --propagation private python3 -S
container_init.py SPEC.json`: the shim.  It makes a new PID namespace,
forks the container's first process (PID 1 there), reports that process's
host PID on stdout, and waits for it, exiting as containerd reports an exit
(the code, or 128 + the signal).

The first process builds the container's root file system: a tmpfs with
the host's /usr, /bin, /lib... and /etc bound read-only (every image is
this host's file system), a small /dev, a /proc of the new PID namespace,
the pod's emptyDir volumes bound at their mount paths, /tmp; then the root
is made read-only when the security context asks it; then hostname,
loopback, chroot, working directory, groups, user, no_new_privs, exec.
A failure before exec is written to the spec's errfd (made close-on-exec)
as one line; a clean exec closes it empty.  Root is needed for the mounts, or a user namespace
that maps root (runtime.py adds --user --map-root-user when not root).
"""
import ctypes
import fcntl
import json
import os
import signal
import socket
import struct
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC = 32, 4096, 16384
CLONE_NEWPID = 0x20000000
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38

libc = ctypes.CDLL("libc.so.6", use_errno=True)
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWNET = 0x00020000, 0x04000000, 0x40000000
MS_PRIVATE = 1 << 18


ERRFD = -1


def fail(msg):
    try:
        os.write(ERRFD, (msg + "\n").encode())
    except OSError:
        pass
    os._exit(127)


def mount(src, target, fstype, flags, data=None):
    if libc.mount(src.encode() if src else None, target.encode(),
                  fstype.encode() if fstype else None, flags,
                  data.encode() if data else None) != 0:
        e = ctypes.get_errno()
        fail("mount %s on %s: %s" % (src or fstype, target, os.strerror(e)))


def bind(src, target, ro):
    mount(src, target, None, MS_BIND | MS_REC)
    if ro:
        mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID)


def lo_up():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    ifr = struct.pack("16sH14s", b"lo", 0, b"")
    flags = struct.unpack("16sH14s", fcntl.ioctl(s, 0x8913, ifr))[1]   # SIOCGIFFLAGS
    fcntl.ioctl(s, 0x8914, struct.pack("16sH14s", b"lo", flags | 1, b""))  # SIOCSIFFLAGS, IFF_UP
    s.close()


def build_root(spec):
    root = spec["root"]
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=%s,mode=755" % spec.get("root_size", "64m"))
    for top in ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "opt"):
        host = "/" + top
        where = os.path.join(root, top)
        if os.path.islink(host):
            os.symlink(os.readlink(host), where)
        elif os.path.isdir(host):
            os.mkdir(where)
            bind(host, where, True)
    dev = os.path.join(root, "dev")
    os.mkdir(dev)
    mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=64k")
    for node in ("null", "zero", "full", "random", "urandom", "tty"):
        p = os.path.join(dev, node)
        open(p, "w").close()
        mount("/dev/" + node, p, None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, os.path.join(dev, name))
    os.mkdir(os.path.join(dev, "shm"))
    mount("shm", os.path.join(dev, "shm"), "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m")
    proc = os.path.join(root, "proc")
    os.mkdir(proc)
    mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    have_tmp = False
    for m in spec.get("mounts", []):
        where = os.path.normpath(root + "/" + m["path"])
        os.makedirs(where, exist_ok=True)
        bind(m["host"], where, m.get("ro", False))
        have_tmp = have_tmp or os.path.normpath(m["path"]) == "/tmp"
    if not have_tmp:
        os.mkdir(os.path.join(root, "tmp"), 0o1777)
        os.chmod(os.path.join(root, "tmp"), 0o1777)
    wd = spec.get("workdir") or "/"
    if not os.path.isdir(root + wd):
        try:
            os.makedirs(root + wd)
        except OSError as e:
            fail("chdir to cwd (\"%s\") set in config.json failed: %s" % (wd, e.strerror))
    if spec.get("read_only_root"):
        mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def first_process(spec):
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # The container's output goes to its log (kubectl logs); no stdin.
    log = os.open(spec["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    null = os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    build_root(spec)
    if spec.get("hostname"):
        name = spec["hostname"].encode()
        libc.sethostname(name, len(name))
    if spec.get("own_network"):
        try:
            lo_up()
        except OSError as e:
            fail("bringing the loopback up: %s" % e)
    os.chroot(spec["root"])
    os.chdir(spec.get("workdir") or "/")
    uid, gid = spec.get("uid"), spec.get("gid")
    if uid is not None:
        groups = [g for g in spec.get("groups", []) if g is not None]
        os.setgroups(groups)
        os.setgid(gid if gid is not None else uid)
        os.setuid(uid)
    if spec.get("no_new_privs"):
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    argv = spec["command"]
    env = spec["env"]
    path = env.get("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    try:
        if "/" in argv[0]:
            os.execve(argv[0], argv, env)
        for d in path.split(":"):
            p = os.path.join(d or ".", argv[0])
            if os.path.isfile(p) and os.access(p, os.X_OK):
                os.execve(p, argv, env)
        fail('exec: "%s": executable file not found in $PATH' % argv[0])
    except PermissionError:
        fail('exec: "%s": permission denied' % argv[0])
    except OSError as e:
        fail('exec: "%s": %s' % (argv[0], e.strerror))


def shim(spec, own_network, pidfd):
    """The shim in a fork of the fake (root only): the namespaces, the
    first process, then wait for it.  Never returns."""
    global ERRFD
    ERRFD = spec["errfd"]
    try:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        flags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWPID | (CLONE_NEWNET if own_network else 0)
        if libc.unshare(flags) != 0:
            fail("unshare: %s" % os.strerror(ctypes.get_errno()))
        mount(None, "/", None, MS_REC | MS_PRIVATE)
        pid = os.fork()
        if pid == 0:
            fcntl.fcntl(ERRFD, fcntl.F_SETFD, fcntl.FD_CLOEXEC)
            try:
                first_process(spec)
            except Exception as e:   # anything unexpected is a start failure
                fail("container init: %s" % e)
            os._exit(127)
        os.close(ERRFD)
        os.write(pidfd, b"%d\n" % pid)
        os.close(pidfd)
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                break
            except InterruptedError:
                continue
        if os.WIFSIGNALED(status):
            os._exit(128 + os.WTERMSIG(status))
        os._exit(os.WEXITSTATUS(status))
    except BaseException:
        os._exit(127)


def main():
    global ERRFD
    spec = json.load(open(sys.argv[1]))
    ERRFD = spec["errfd"]
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if libc.unshare(CLONE_NEWPID) != 0:
        e = ctypes.get_errno()
        fail("unshare(CLONE_NEWPID): %s" % os.strerror(e))
    pid = os.fork()
    if pid == 0:
        fcntl.fcntl(ERRFD, fcntl.F_SETFD, fcntl.FD_CLOEXEC)
        try:
            first_process(spec)
        except Exception as e:   # anything unexpected is a start failure
            fail("container init: %s" % e)
        os._exit(127)
    os.close(ERRFD)
    sys.stdout.write("%d\n" % pid)
    sys.stdout.flush()
    signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGTERM))
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status))


if __name__ == "__main__":
    main()
