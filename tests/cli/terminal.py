"""tests/cli/terminal.py - polysandbox exec -i and run -i on a real
terminal (a pseudo-terminal made here), as a person types at it; TAP.

Run by terminal.sh.  polysandbox runs as the session leader of a new
pseudo-terminal in canonical mode (what a shell hands a command), so the
terminal's own line discipline is in the path: its echo, its line
editing (erase, kill), Ctrl+D (end of file at the start of a line, the
typed bytes at once in the middle of one) and Ctrl+C (SIGINT to the
foreground process group: polysandbox and whatever of the sandbox shares
it).  The man page promises: each line typed is answered as typed, Ctrl+D
closes the program's stdin, the program's status is ours, Ctrl+C cancels
the program and exits 130 with a note, and so does a hangup of the
terminal (129: nothing is left running); without -i the program reads an
empty stdin and nothing typed is taken from the terminal.

Every wait is for an answer, bounded only by a generous deadline that
turns a hang into a failed check.
"""

import os
import pty
import re
import select
import signal
import subprocess
import sys
import time

PS = os.path.join(os.environ["top_builddir"], "polysandbox")
DEADLINE = 60.0        # a hang's bound, never reached by a working run
ANSWER = 'while read -r l; do echo "got $l"; done; echo eof; exit 3'

n = failed = 0


def check(desc, cond, why=""):
    global n, failed
    n += 1
    if not cond:
        failed += 1
        for line in str(why).splitlines() or [""]:
            print(f"# {line}")
    print(f"{'ok' if cond else 'not ok'} {n} - {desc}", flush=True)


class Term:
    """polysandbox ARGS on a new pseudo-terminal, its controlling one."""

    def __init__(self, *args):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                # A login shell's defaults: a test run from a background
                # job (nohup, `&` in a script) inherits these ignored,
                # and polysandbox rightly keeps an ignored signal ignored.
                for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP, signal.SIGTERM):
                    signal.signal(s, signal.SIG_DFL)
                os.execv(PS, [PS, *args])
            finally:
                os._exit(127)
        self.seen = b""
        self.status = None

    def type(self, data):
        os.write(self.fd, data)

    def _read(self, until):
        """Read into self.seen until the deadline (None: once, if ready)."""
        wait = None if until is None else max(0.0, until - time.monotonic())
        r, _, _ = select.select([self.fd], [], [], 0 if wait is None else wait)
        if not r:
            return False
        try:
            data = os.read(self.fd, 4096)
        except OSError:   # EIO: every writer of the terminal is gone
            data = b""
        self.seen += data
        return bool(data)

    def expect(self, pattern):
        """Wait for pattern (a regex on the bytes seen since the last
        expect); the text up to its end, or None when it never came."""
        until = time.monotonic() + DEADLINE
        rx = re.compile(pattern)
        while True:
            m = rx.search(self.seen)
            if m:
                got, self.seen = self.seen[:m.end()], self.seen[m.end():]
                return got
            if time.monotonic() >= until or not self._read(until):
                return None

    def end(self):
        """Read to the end (unless the terminal was closed), reap: (exit
        status or -signal, the rest seen)."""
        until = time.monotonic() + DEADLINE
        while self.fd is not None and time.monotonic() < until and self._read(until):
            pass
        while self.status is None:
            pid, st = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(st)
            elif time.monotonic() >= until:
                os.kill(self.pid, signal.SIGKILL)
            else:
                time.sleep(0.05)
        if self.fd is not None:
            os.close(self.fd)
        rest, self.seen = self.seen, b""
        return self.status, rest.decode("utf-8", "replace")


def ps(*args):
    return subprocess.run([PS, *args], capture_output=True, text=True, timeout=DEADLINE,
                          stdin=subprocess.DEVNULL)


print("1..14", flush=True)
label = f"suite=cli-terminal-hup-{os.getpid()}"   # the hangup's run
made = ps("create", "--provider", "local", "--label", "suite=cli-terminal")
sid = made.stdout.strip()
check("create a local sandbox", made.returncode == 0 and sid, made.stderr)
try:
    # ---- exec -i: echo, line by line, line editing, Ctrl+D, the status ----
    t = Term("exec", "-i", sid, "--", "sh", "-c", ANSWER)
    t.type(b"one\r")
    got = t.expect(rb"got one\r\n")
    check("exec -i: the terminal echoes the typed line, the program answers it while "
          "stdin is open", got is not None and got.startswith(b"one\r\n"), repr(t.seen))
    # erase (DEL) and kill (Ctrl+U) are the terminal's: the program gets the
    # edited line, which only holds if polysandbox leaves canonical mode on
    t.type(b"wrold\x7f\x7f\x7f\x7forld\r")
    a = t.expect(rb"got [^\r]*\r\n")
    t.type(b"junk\x15two\r")
    b = t.expect(rb"got [^\r]*\r\n")
    check("exec -i: the terminal's line editing applies (erase, kill)",
          a is not None and a.endswith(b"got world\r\n")
          and b is not None and b.endswith(b"got two\r\n"), f"{a!r} {b!r} {t.seen!r}")
    t.type(b"\x04")
    rc, rest = t.end()
    check("exec -i: Ctrl+D at the start of a line closes the program's stdin",
          "eof" in rest, repr(rest))
    check("exec -i: the program's status (3) is polysandbox's", rc == 3, f"status {rc}")

    # Ctrl+D in the middle of a line hands the typed bytes on at once
    t = Term("exec", "-i", sid, "--", "cat")
    t.type(b"abc\x04")
    got = t.expect(rb"abcabc")
    t.type(b"\x04")
    rc, rest = t.end()
    check("exec -i cat: Ctrl+D mid-line delivers the bytes typed so far, a second one "
          "ends it with status 0", got is not None and rc == 0, f"{got!r} {rc} {rest!r}")

    # ---- Ctrl+C ----
    t = Term("exec", "-i", sid, "--", "sh", "-c", 'echo ready; read -r l; echo "late $l"')
    ready = t.expect(rb"ready\r\n")
    t.type(b"\x03")
    rc, rest = t.end()
    check("exec -i: Ctrl+C while the program reads ends polysandbox with 130",
          ready is not None and rc == 130, f"{ready!r} status {rc} {rest!r}")
    check("exec -i: Ctrl+C cancelled the exec and said so; the program did not go on",
          "exec: interrupted by signal 2" in rest and "late" not in rest, repr(rest))
    again = ps("exec", sid, "--", "sh", "-c", "echo still here")
    check("the sandbox is usable after an exec interrupted from the terminal",
          again.returncode == 0 and again.stdout == "still here\n", again.stderr)

    # ---- without -i nothing is read from the terminal ----
    t = Term("exec", sid, "--", "sh", "-c", 'cat; echo "cat ended"')
    got = t.expect(rb"cat ended\r\n")
    rc, rest = t.end()
    check("exec without -i on a terminal: the program's stdin is empty, it ends at once",
          got == b"cat ended\r\n" and rc == 0, f"{got!r} {rc} {rest!r}")

    # Typed ahead (before polysandbox starts): still the terminal's once it ended
    master, slave = os.openpty()
    os.write(master, b"typed ahead\r")
    echo, until = b"", time.monotonic() + DEADLINE   # the echo: the terminal has it
    while b"typed ahead\r\n" not in echo and time.monotonic() < until and \
            select.select([master], [], [], until - time.monotonic())[0]:
        echo += os.read(master, 4096)
    run = subprocess.run([PS, "exec", sid, "--", "sh", "-c", "cat; echo done"], stdin=slave,
                         stdout=slave, stderr=slave, timeout=DEADLINE)
    os.set_blocking(slave, False)
    try:
        left = os.read(slave, 4096)
    except BlockingIOError:
        left = b"(nothing)"
    os.close(slave)
    os.close(master)
    check("exec without -i: a line typed ahead on the terminal is left to the next reader",
          run.returncode == 0 and left == b"typed ahead\n", f"{run.returncode} {left!r}")

    # ---- run -i shares the path ----
    t = Term("run", "--provider", "local", "-i", "--", "sh", "-c", ANSWER)
    t.type(b"alpha\r")
    got = t.expect(rb"got alpha\r\n")
    t.type(b"\x04")
    rc, rest = t.end()
    check("run -i: a typed line is answered, Ctrl+D ends it, status 3",
          got is not None and "eof" in rest and rc == 3, f"{got!r} {rc} {rest!r}")
    t = Term("run", "--provider", "local", "-i", "--", "sh", "-c", "echo ready; read -r l")
    ready = t.expect(rb"ready\r\n")
    t.type(b"\x03")
    rc, rest = t.end()
    check("run -i: Ctrl+C cancels the run with 130 and a note",
          ready is not None and rc == 130 and "run: interrupted by signal 2" in rest,
          f"{ready!r} status {rc} {rest!r}")

    # ---- the terminal hangs up (a closed window, a dropped ssh session) ----
    t = Term("run", "--provider", "local", "--label", label, "-i", "--", "sh", "-c",
             "echo ready; sleep 300")
    ready = t.expect(rb"ready\r\n")
    during = ps("list", "--provider", "local", "--label", label)
    os.close(t.fd)    # the last holder of the terminal's master: a hangup
    t.fd = None
    rc, _ = t.end()
    after = ps("list", "--provider", "local", "--label", label)
    check("run -i: a terminal hangup cancels the run (129), its sandbox destroyed",
          ready is not None and "lcl-" in during.stdout and rc == 129
          and after.returncode == 0 and "lcl-" not in after.stdout,
          f"{ready!r} status {rc}\nduring {during.stdout}\nafter {after.stdout}")
finally:
    if sid:
        ps("destroy", "--provider", "local", sid)
    for word in ps("list", "--provider", "local", "--label", label).stdout.split():
        if word.startswith("lcl-"):    # a hangup that left it (a failed check)
            ps("destroy", "--provider", "local", word)
print(f"# {n} checks, {failed} failed", flush=True)
sys.exit(1 if failed else 0)
