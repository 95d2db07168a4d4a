"""kubefake/runtime.py - a pod's container as local processes in namespaces.

A container is a shim (container_init.py: a fork of the fake as root, else
python3 under util-linux's unshare in a user namespace) in new mount, UTS
and PID namespaces (and a network namespace of its own when a NetworkPolicy
isolates the pod's egress; otherwise it shares this host's network), whose
first process runs the container's command chrooted into a root built from
this host's file system.  An exec enters the first process's namespaces
and root with nsenter, as the container's user, with the container's
environment, as runc exec does.  Killing the first process ends the PID
namespace and with it everything the container and its execs started.

Exit statuses are reported as containerd does: the code, or 128 + the
signal for a process a signal killed.
"""
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time

INIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "container_init.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def probe():
    """(ok, why): can containers be made here?"""
    if not shutil.which("unshare") or not shutil.which("nsenter"):
        return False, "util-linux's unshare and nsenter are needed"
    cmd = ["unshare", "--mount", "--uts", "--net", "--pid", "--fork", "--propagation", "private"]
    if os.geteuid() != 0:
        cmd[1:1] = ["--user", "--map-root-user"]
    r = subprocess.run(cmd + ["true"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=20)
    if r.returncode != 0:
        return False, "unshare failed: %s" % r.stderr.decode(errors="replace").strip()
    return True, ""


class ForkedShim:
    """The shim as a fork of the fake itself (as root): the same as the
    unshare + python3 container_init.py shim, without starting an
    interpreter for every pod.  Quacks like the Popen it stands for."""

    def __init__(self, spec, own_network, log_path):
        from . import container_init
        pr, pw = os.pipe()
        logfd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        pid = os.fork()
        if pid == 0:
            # Only this thread lives on here: drop the fake's descriptors.
            keep = {pw, logfd, spec["errfd"]}
            for fd in [int(x) for x in os.listdir("/proc/self/fd")]:
                if fd > 2 and fd not in keep:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            null = os.open("/dev/null", os.O_RDWR)
            os.dup2(null, 0)
            os.dup2(null, 1)
            os.dup2(logfd, 2)
            os.setsid()
            container_init.shim(spec, own_network, pw)
            os._exit(127)
        os.close(pw)
        os.close(logfd)
        self.pid = pid
        self.stdout = os.fdopen(pr, "rb")
        self.returncode = None
        self.lock = threading.Lock()

    def _reaped(self, status):
        self.returncode = os.waitstatus_to_exitcode(status)

    def poll(self):
        with self.lock:
            if self.returncode is None:
                try:
                    p, st = os.waitpid(self.pid, os.WNOHANG)
                except ChildProcessError:
                    return self.returncode
                if p:
                    self._reaped(st)
            return self.returncode

    def wait(self, timeout=None):
        end = None if timeout is None else time.time() + timeout
        # A pidfd turns readable when the process ends: no polling loop per
        # pod (hundreds of them at a time in the benchmark).  Opened before
        # the first poll(), so a pid reused after the reap is never waited on.
        try:
            fd = os.pidfd_open(self.pid)
        except (OSError, AttributeError):
            fd = None
        try:
            while self.poll() is None:
                left = None if end is None else end - time.time()
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired("shim", timeout)
                if fd is not None:
                    select.select([fd], [], [], 1.0 if left is None else min(left, 1.0))
                else:
                    time.sleep(0.02)
        finally:
            if fd is not None:
                os.close(fd)
        return self.returncode

    def kill(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass


def exit_code(rc):
    """containerd's view of a Popen return code."""
    return 128 - rc if rc < 0 else rc


class Container:
    def __init__(self, pod_dir, name):
        self.dir = os.path.join(pod_dir, "c-" + name)
        self.name = name
        self.shim = None
        self.pid = None           # host PID of the first process
        self.env = {}
        self.uid = None
        self.gid = None
        self.own_network = False
        self.started_at = None
        self.exit = None          # exit code once it ended
        self.lock = threading.Lock()
        self.log_path = None

    def start(self, spec):
        """Starts it; returns None, or the runtime's error message (the
        container did not start)."""
        os.makedirs(self.dir, exist_ok=True)
        root = os.path.join(self.dir, "rootfs")
        os.makedirs(root, exist_ok=True)
        self.log_path = os.path.join(self.dir, "log")
        self.env = spec["env"]
        self.uid, self.gid = spec.get("uid"), spec.get("gid")
        self.own_network = bool(spec.get("own_network"))
        r, w = os.pipe()
        spec = dict(spec, root=root, errfd=w, log=self.log_path)
        spec_path = os.path.join(self.dir, "spec.json")
        try:
            if os.geteuid() == 0:
                self.shim = ForkedShim(spec, self.own_network, self.log_path)
            else:
                # A user namespace that maps us to root, by util-linux.
                cmd = ["unshare", "--user", "--map-root-user", "--mount", "--uts",
                       "--propagation", "private"] + (["--net"] if self.own_network else [])
                spec.pop("uid", None)
                with open(spec_path, "w") as f:
                    json.dump(spec, f)
                with open(self.log_path, "ab") as log:
                    self.shim = subprocess.Popen(cmd + [PYTHON, "-S", INIT, spec_path],
                                                 stdin=subprocess.DEVNULL,
                                                 stdout=subprocess.PIPE, stderr=log,
                                                 pass_fds=(w,), start_new_session=True)
        except OSError as e:
            os.close(r)
            os.close(w)
            return "starting the runtime: %s" % e
        os.close(w)
        line = self.shim.stdout.readline()
        why = b""
        while True:
            b = os.read(r, 4096)
            if not b:
                break
            why += b
        os.close(r)
        try:
            self.pid = int(line)
        except ValueError:
            self.shim.wait()
            return (why.decode(errors="replace").strip()
                    or "the runtime failed (exit %s)" % self.shim.returncode)
        if why:
            self.shim.wait()
            return why.decode(errors="replace").strip()
        self.started_at = time.time()
        return None

    def wait(self):
        """Blocks until the container's first process ended; its exit code."""
        rc = self.shim.wait()
        try:
            self.shim.stdout.close()
        except OSError:
            pass
        with self.lock:
            self.exit = exit_code(rc) if rc >= 0 else 128 + (-rc)
        return self.exit

    def running(self):
        return self.shim is not None and self.exit is None and self.shim.poll() is None

    def signal(self, sig):
        """Sends sig to the first process (SIGKILL ends the whole PID namespace)."""
        if self.pid and self.running():
            try:
                os.kill(self.pid, sig)
            except OSError:
                pass

    def kill(self):
        self.signal(signal.SIGKILL)
        if self.shim is not None:
            try:
                self.shim.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.shim.kill()

    def exec(self, argv, stdin):
        """A process in the container (Popen with stdout and stderr pipes)."""
        cmd = ["nsenter", "--target", str(self.pid), "--mount", "--uts", "--pid",
               "--root", "--wd"]
        if self.own_network:
            cmd.append("--net")
        if self.uid is not None and os.geteuid() == 0:
            cmd += ["--setuid", str(self.uid), "--setgid", str(self.gid if self.gid is not None else self.uid)]
        return subprocess.Popen(cmd + ["--"] + list(argv), env=self.env,
                                stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)
