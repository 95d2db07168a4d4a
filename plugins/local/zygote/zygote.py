# plugins/local/zygote/zygote.py - the local provider's Python zygote
#
# Started by the provider (launch/zygote.c) as
#   python3 [FLAGS] -c <this> polysandbox-zygote HELPER [MODULE...]
# with its control socket (SOCK_SEQPACKET) on descriptor 3.  It imports
# the MODULEs once (in the root its sandboxes share, which HELPER builds
# first in namespaces of its own), says it is ready, then per request
# forks a child that becomes a fresh sandbox of its own (HELPER,
# zygote/helper.c: cgroup, namespaces, /proc, /tmp, /work, limits,
# privileges dropped, seccomp) and only then runs
# the program, as `python3 [FLAGS] SCRIPT ARGS` would.  The init of each
# sandbox is a clone of this process that runs only the helper's code.  This process never
# runs a program itself and never reads one.
import sys
# `-c` puts the caller's directory ("") first on sys.path: this process
# runs on the host, so nothing is imported from there (the payload gets
# its script's directory back in _run, as `python3 SCRIPT` has it).
_CWD0 = bool(sys.path) and sys.path[0] == ""
if _CWD0:
    del sys.path[0]
import array
import atexit
import builtins
import ctypes
import importlib.machinery
import os
import signal
import socket
import struct
import sys
import types

H = ctypes.CDLL(sys.argv[2])
H.lcl_zc_spawn.argtypes = (ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int),
                           ctypes.c_int, ctypes.POINTER(ctypes.c_int))
H.lcl_zc_spawn.restype = ctypes.c_int
H.lcl_zc_payload.restype = None
H.lcl_zc_enter.argtypes = (ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int)
H.lcl_zc_enter.restype = ctypes.c_int
H.lcl_zc_ready.restype = None
H.lcl_zc_strings.argtypes = (ctypes.c_int,)
H.lcl_zc_strings.restype = ctypes.POINTER(ctypes.c_char_p)
API = ctypes.pythonapi
CTRL = socket.socket(fileno=3)
# Before any import: into a user and mount namespace of our own, whose
# root is the read-only one our sandboxes share (the helper; a failure
# goes to the supervisor and ends us).  The imports see what a sandbox
# sees, and the host's /proc.
_layout = CTRL.recv(1 << 20)
if not _layout or H.lcl_zc_enter(_layout, len(_layout), CTRL.fileno()) != 0:
    os._exit(125)
for _name in sys.argv[3:]:
    try:
        __import__(_name)
    except Exception:
        pass
H.lcl_zc_ready()
os.setsid()


def _exit_code(e):
    """Python's own handling of SystemExit."""
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code if -2**31 <= code < 2**31 else -1
    try:
        sys.stderr.write(str(code) + "\n")
    except Exception:
        pass
    return 1


def _finish(code, interrupted):
    """What the interpreter does at exit, then the exit."""
    try:
        if "threading" in sys.modules:
            sys.modules["threading"]._shutdown()
    except BaseException:
        pass
    try:
        atexit._run_exitfuncs()
    except BaseException:
        pass
    try:
        sys.stdout.flush()
    except BaseException:
        code = 120
    try:
        sys.stderr.flush()
    except BaseException:
        pass
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code & 0xff if code >= 0 else code)


def _run(argv, env):
    """In the sandboxed payload: run SCRIPT as __main__."""
    # The interpreter's own dispositions (the helper reset them all).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    os.environ.clear()
    for kv in env:
        k, _, v = kv.partition(b"=")
        os.environb[k] = v
    script = os.fsdecode(argv[0])
    sys.argv = [os.fsdecode(a) for a in argv]
    path = os.path.abspath(script)
    if _CWD0:
        sys.path.insert(0, os.path.dirname(os.path.realpath(script)))
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__cached__ = None
    main.__builtins__ = builtins
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    sys.modules["__main__"] = main
    try:
        with open(path, "rb") as f:
            src = f.read()
    except OSError as e:
        sys.stderr.write("%s: can't open file %r: [Errno %d] %s\n"
                         % (sys.executable, path, e.errno, e.strerror))
        _finish(2, False)
    code, interrupted = 0, False
    try:
        exec(compile(src, path, "exec", dont_inherit=True), main.__dict__)
    except SystemExit as e:
        code = _exit_code(e)
    except BaseException as e:
        interrupted = isinstance(e, KeyboardInterrupt)
        tb = e.__traceback__
        tb = tb.tb_next if tb else None   # not this frame: the program's only
        e.__traceback__ = tb
        sys.excepthook(type(e), e, tb)
        code = 1
    _finish(code, interrupted)


def _strings(which):
    """The request's argv (0) or environment (1), as the helper read it."""
    v, out = H.lcl_zc_strings(which), []
    while v[len(out)] is not None:
        out.append(v[len(out)])
    return out


def _spawn(msg, fds):
    """Clone the exec's init into fresh namespaces (the helper, which
    reads the request, wire/exec-req.h); returns its pid and a pidfd
    here, and (0, -1) in the payload, where the program then runs."""
    arr = (ctypes.c_int * len(fds))(*fds)
    pidfd = ctypes.c_int(-1)
    # What os.fork does around the fork, for the interpreter's own state.
    API.PyOS_BeforeFork()
    pid = H.lcl_zc_spawn(msg, len(msg), arr, len(fds), ctypes.byref(pidfd))
    if pid != 0:
        API.PyOS_AfterFork_Parent()
        return pid, pidfd.value
    try:
        API.PyOS_AfterFork_Child()
        CTRL.detach()
        argv, env = _strings(0), _strings(1)
        H.lcl_zc_payload()
    except BaseException:
        os._exit(125)
    try:
        _run(argv, env)
    finally:
        os._exit(1)


def _reap(pending):
    """Reap the inits that have ended; the others stay pending."""
    for pid in list(pending):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            pending.remove(pid)


def _serve():
    CTRL.send(b"polysandbox-zygote-ready")
    # Inits killed but maybe not gone yet: an init whose status ended the
    # exec may still be tearing its namespaces down; the next request
    # need not wait for that.
    pending = []
    while True:
        _reap(pending)
        try:
            msg, anc, _, _ = CTRL.recvmsg(1 << 20, socket.CMSG_SPACE(32 * 4))
        except InterruptedError:
            continue
        if not msg:
            return
        fds = []
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                a = array.array("i")
                a.frombytes(data[:len(data) - len(data) % a.itemsize])
                fds.extend(a)
        try:
            pid, pidfd = _spawn(msg, fds)
        except Exception:
            pid, pidfd = -1, -1
        for fd in fds:
            os.close(fd)
        if pid < 0:
            CTRL.send(struct.pack("=i", -1))
            continue
        CTRL.sendmsg([struct.pack("=i", pid)],
                     [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [pidfd]))])
        os.close(pidfd)
        # The supervisor says when the exec is over (or goes away).
        try:
            done = CTRL.recv(16)
        except OSError:
            done = b""
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        pending.append(pid)
        _reap(pending)
        if not done:
            return


_serve()
