# core/eval/eval-judge-driver.py - the judged tests' runner for Python
# programs: the static runner's protocol (eval-judge-proto.h) in one
# interpreter, which forks once per test and runs the program in the fork
# as `python3 SCRIPT ARGS` would, instead of one exec (one interpreter
# start) per test.  Written into the sandbox by core/eval/eval-judge-batch.c
# and run as `python3 .polysandbox-judge.py -- SCRIPT [ARG...]`.
#
# As the static runner: it decides nothing but "clean" (exit 0, in time,
# within the caps); the core compares the outputs and runs every test that
# is not clean again on an exec of its own.  Its input is checked; the
# tests get their own pipes, never its stdin or stdout (those move to
# descriptors a test closes first thing); it is undumpable, so a test
# (same uid) cannot open its descriptors through /proc; it is a child
# subreaper, and whatever a test leaves running is killed before the next
# test.  It never writes through sys.stdin/stdout/stderr, whose (empty)
# buffers the tests inherit.
import ctypes
import os
import select
import signal
import sys
import time
import types

MAGIC, PREFIX = b"SBXJ1", b"__polysandbox_eval_done__ "
MAX_TESTS, CHUNK, DRAIN = 100000, 65536, 1.0
PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 4, 36


def die(why):
    os.write(2, b"polysandbox judge driver: " + why.encode() + b"\n")
    os._exit(2)


try:
    IN = os.dup(0)
    OUT = os.dup(1)
    LIBC = ctypes.CDLL(None, use_errno=True)
    if LIBC.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) or LIBC.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0):
        die("prctl failed")
except (OSError, AttributeError):
    die("cannot keep stdin and stdout, or no prctl")


# Never a byte of stdin ahead of what is needed: a test's fork inherits
# this process's memory, which then never holds a later test's input.
def get(n):
    """Exactly N bytes of our stdin."""
    d = b""
    while len(d) < n:
        b = os.read(IN, n - len(d))
        if not b:
            die("stdin ended early")
        d += b
    return d


def line(most=256):
    """A line of stdin without its newline, read a byte at a time."""
    d = b""
    while len(d) < most:
        b = get(1)
        if b == b"\n":
            return d
        d += b
    die("a line too long")


def num(s, most):
    if not s or not s.isdigit() or len(s) > 20 or int(s) > most:
        die("a bad number")
    return int(s)


def put(b):
    mv = memoryview(b)
    while mv:
        try:
            mv = mv[os.write(OUT, mv):]
        except OSError:
            os._exit(3)     # the core stopped reading


def reap_all(pgid):
    """Kill the test's group and whatever was reparented to us; True when
    nothing is left."""
    me = str(os.getpid())
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
    for _ in range(2000):
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % p, "rb") as f:
                    st = f.read()
                if st[st.rindex(b")") + 2:].split()[1] == me.encode():
                    os.kill(int(p), signal.SIGKILL)
            except (OSError, ValueError, IndexError):
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            return True
        time.sleep(0.001)
    return False


def finish(code):
    """What the interpreter does at its exit, then the exit (as the local
    provider's zygote does too: that one runs on the host, this one in any
    provider's sandbox, so neither can import the other)."""
    try:
        if "threading" in sys.modules:
            sys.modules["threading"]._shutdown()
    except BaseException:
        pass
    try:
        import atexit
        atexit._run_exitfuncs()
    except BaseException:
        pass
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except BaseException:
            code = code or 120
    os._exit(code & 0xFF)


def child(fds, argv):
    """In the fork: the program as `python3 SCRIPT ARGS` runs it."""
    os.setpgid(0, 0)
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL if sig == signal.SIGCHLD else signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for i, fd in enumerate(fds):
        os.dup2(fd, i)
    os.closerange(3, 1 << 16)
    script = argv[0]
    path = os.path.abspath(script)
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.realpath(script))
    main = types.ModuleType("__main__")
    main.__file__, main.__cached__, main.__builtins__ = path, None, __builtins__
    sys.modules["__main__"] = main
    code = 0
    try:
        with open(path, "rb") as f:
            src = f.read()
        exec(compile(src, path, "exec", dont_inherit=True), main.__dict__)
    except SystemExit as e:
        c = e.code
        code = 0 if c is None else c if isinstance(c, int) and 0 <= c < 256 else 1
        if c is not None and not isinstance(c, int):
            sys.stderr.write(str(c) + "\n")
    except BaseException as e:
        sys.excepthook(type(e), e, e.__traceback__.tb_next if e.__traceback__ else None)
        code = 1
    finish(code)


def run_test(i, in_len, limit, out_cap, err_cap, argv, wake):
    """Test I: its "D" chunks and "T" line; (clean, reaped)."""
    pin, pout, perr = os.pipe(), os.pipe(), os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(IN)
            os.close(OUT)
            child((pin[0], pout[1], perr[1]), argv)
        finally:
            os._exit(1)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
    for fd in (pin[0], pout[1], perr[1]):
        os.close(fd)
    for fd in (pin[1], pout[0], perr[0]):
        os.set_blocking(fd, False)
    left, pend = in_len, b""
    sizes = {pout[0]: 0, perr[0]: 0}
    open_fds = {pout[0], perr[0]}
    feeding = True
    status = ru = None
    end = 0.0
    timed_out = capped = reaped = False
    deadline = t0 + limit / 1e9
    if not left:
        os.close(pin[1])
        feeding = False
    while status is None or open_fds:
        now = time.monotonic()
        stop = end + DRAIN if status is not None else deadline
        if now >= stop:
            if status is not None:
                break               # output held open past the exit
            timed_out = True
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            deadline = float("inf")
            continue
        p = select.poll()
        p.register(wake, select.POLLIN)
        for fd in open_fds:
            p.register(fd, select.POLLIN)
        if feeding:
            p.register(pin[1], select.POLLOUT)
        p.poll(min(1000, int((stop - now) * 1000) + 1))
        try:
            while os.read(wake, 64):
                pass
        except BlockingIOError:
            pass
        if status is None:
            w, st, r = os.wait4(pid, os.WNOHANG)
            if w == pid:
                status, ru, end = st, r, time.monotonic()
                reaped = reap_all(pid)
        for fd in list(open_fds):
            try:
                b = os.read(fd, CHUNK)
            except BlockingIOError:
                continue
            if not b:
                open_fds.discard(fd)
                continue
            if fd == pout[0] and sizes[fd] <= out_cap:
                n = min(len(b), out_cap + 1 - sizes[fd])
                put(b"D %d\n" % n + b[:n])
            sizes[fd] += len(b)
            if sizes[fd] > (out_cap if fd == pout[0] else err_cap):
                capped = True
        while feeding:
            if not pend and left:
                pend = get(min(left, CHUNK))
                left -= len(pend)
            try:
                pend = pend[os.write(pin[1], pend):]
            except BlockingIOError:
                break
            except OSError:         # EPIPE: the program took no more
                pend, feeding = b"", False
                os.close(pin[1])
                break
            if not pend and not left:
                os.close(pin[1])
                feeding = False
        if capped and status is None:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
    if feeding:
        os.close(pin[1])
    for fd in (pout[0], perr[0]):
        os.close(fd)
    if left:
        get(left)                   # the input the program never read
    clean = (reaped and not timed_out and not capped and not open_fds and
             os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0)
    cpu = int((ru.ru_utime + ru.ru_stime) * 1e9)
    put(b"T %d %d %d %d\n" % (i, clean, int((end - t0) * 1e9), cpu))
    return clean, reaped


def main():
    if len(sys.argv) < 3 or sys.argv[1] != "--":
        die("usage: .polysandbox-judge.py -- SCRIPT [ARG...] < tests")
    f = line().split(b" ")
    if len(f) != 7 or f[0] != MAGIC or not f[1] or len(f[1]) > 64:
        die("a bad header")
    marker = f[1]
    if any(c not in b"0123456789abcdefABCDEF" for c in marker):
        die("a bad marker")
    n = num(f[2], MAX_TESTS)
    limit, out_cap, err_cap = (num(x, (1 << 63) - 1) for x in f[3:6])
    fail_fast = num(f[6], 1)
    if not limit:
        die("a bad header")
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda s, f: None)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    put(b"\n" + PREFIX + b"judge " + marker + b"\n")
    done = 0
    for i in range(n):
        length = num(line(), (1 << 63) - 1)
        clean, reaped = run_test(i, length, limit, out_cap, err_cap, sys.argv[2:], wake_r)
        if not reaped:
            break                   # something of a test lives on
        done += 1
        if not clean and fail_fast:
            break
    put(PREFIX + b"judge-end " + marker + b" %d\n" % done)
    os._exit(0)


main()
