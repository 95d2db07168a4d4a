#!/usr/bin/env python3
# tests/docker/server.py - the helper's exec server (docker-init --serve)
# driven directly through its frames (plugins/docker/init/proto.h), on
# this machine, without Docker: concurrent execs, stdin, timeouts and
# kills that reach every process, signals (and bytes that are none), a command that kills its supervisor,
# output that looks like frames, input that loses the framing.
#
# Usage: server.py PATH-TO-docker-init.  Prints TAP.
import os
import random
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time

INIT = sys.argv[1]
MAGIC = b"\x53\xd8"
SYNC = MAGIC + b"Y\0" + struct.pack(">QI", 0x53594E432D535258, 0)
MARK = str(random.randint(100000, 999999))  # tags this run's sleepers
n = 0
failed = 0


def ok(cond, desc, diag=None):
    global n, failed
    n += 1
    print(("ok" if cond else "not ok") + " %d - %s" % (n, desc))
    if not cond:
        failed += 1
        if diag is not None:
            print("# " + repr(diag)[:600])
    sys.stdout.flush()


def frame(t, i, p=b""):
    return MAGIC + t.encode() + b"\0" + struct.pack(">QI", i, len(p)) + p


def request(i, opts, argv, stdin=None):
    b = b"".join(a.encode() + b"\0" for a in opts + ["--"] + argv)
    out = frame("R", i, b)
    if stdin is not None:
        for off in range(0, len(stdin), 1 << 20):
            out += frame("D", i, stdin[off:off + (1 << 20)])
        out += frame("E", i)
    return out


class Server:
    def __init__(self):
        self.p = subprocess.Popen([INIT, "--serve"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        self.buf = b""
        self.res = {}
        self.send(SYNC)

    def send(self, b):
        self.p.stdin.write(b)
        self.p.stdin.flush()

    def pump(self, timeout):
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            return False
        chunk = os.read(self.p.stdout.fileno(), 1 << 20)
        if not chunk:
            raise EOFError("the server ended")
        self.buf += chunk
        while len(self.buf) >= 16:
            if self.buf[:2] != MAGIC:
                raise ValueError("bad frame from the server: %r" % self.buf[:16])
            t = chr(self.buf[2])
            i, ln = struct.unpack(">QI", self.buf[4:16])
            if len(self.buf) < 16 + ln:
                break
            self.res.setdefault(i, []).append((t, self.buf[16:16 + ln]))
            self.buf = self.buf[16 + ln:]
        return True

    def wait(self, ids, timeout=30):
        """Frames of each id until its 'X' or 'L' (or id 0's 'Z')."""
        end = time.time() + timeout
        left = set(ids)
        while left and time.time() < end:
            self.pump(0.2)
            for i in list(left):
                fr = self.res.get(i, [])
                if fr and fr[-1][0] in ("XZ" if i == 0 else "XL"):
                    left.discard(i)
        return {i: self.res.pop(i, []) for i in ids}

    def wait_type(self, i, t, timeout):
        """True when a frame of type t and id i came within timeout."""
        end = time.time() + timeout
        while time.time() < end:
            if any(k == t for (k, _) in self.res.get(i, [])):
                return True
            self.pump(0.1)
        return any(k == t for (k, _) in self.res.get(i, []))

    def close(self):
        self.p.stdin.close()
        self.p.kill()
        self.p.wait()


def joined(frames, t):
    return b"".join(d for (k, d) in frames if k == t)


def last(frames):
    return frames[-1] if frames else ("", b"")


def sleepers():
    """Processes of this run's sleepers that are still alive."""
    alive = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ")
            with open("/proc/%s/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if MARK.encode() in cmd and b"sleep" in cmd and state != "Z":
            alive.append(cmd)
    return alive




def main(s):

    # Four execs at once, each told apart by its id.
    ids = [11, 12, 13, 14]
    s.send(b"".join(request(i, ["-t", "20000"], ["sh", "-c", "sleep 0.3; echo out%d; echo err%d >&2; exit %d" % (i, i, i)]) for i in ids))
    res = s.wait(ids)
    ok(all(joined(res[i], "1") == b"out%d\n" % i and joined(res[i], "2") == b"err%d\n" % i
           and last(res[i])[1].startswith(b"x=%d " % i) for i in ids),
       "four concurrent execs: each its own output and exit code", res)

    # Stdin: 3 MiB through cat, while another exec runs.
    data = bytes(random.getrandbits(8) for _ in range(1 << 16)) * 48
    s.send(request(21, ["-t", "20000", "-s"], ["cat"], data) +
           request(22, ["-t", "20000", "-e", "FOO=bar baz"], ["sh", "-c", 'printf %s "$FOO"']))
    res = s.wait([21, 22])
    ok(joined(res[21], "1") == data and last(res[21])[1].startswith(b"x=0 "),
       "3 MiB of stdin echoed back intact", len(joined(res[21], "1")))
    ok(joined(res[22], "1") == b"bar baz", "the request's environment reaches the command", res[22])

    # A timeout kills every process of the exec, also those in a new session.
    s.send(request(31, ["-t", "500"], ["sh", "-c", "sleep 100%s & setsid sleep 101%s & sleep 102%s" % (MARK, MARK, MARK)]))
    res = s.wait([31])
    ok(last(res[31])[1].startswith(b"t "), "the timeout is reported", res[31])
    time.sleep(0.2)
    ok(not sleepers(), "no process of the timed-out exec is left", sleepers())

    # A kill request ends a running exec.
    s.send(request(41, ["-t", "20000"], ["sh", "-c", "echo started; sleep 103%s" % MARK]))
    while b"started" not in joined(s.res.get(41, []), "1"):
        s.pump(1)
    s.send(frame("K", 41))
    res = s.wait([41])
    ok(last(res[41])[1].startswith(b"k "), "a kill frame ends the exec", res[41])

    # Output that looks like the server's frames is only output.
    fake = frame("X", 51, b"x=0 cpu=0 rss=0\n") + frame("1", 52, b"forged")
    s.send(request(51, ["-t", "20000", "-s"], ["sh", "-c", "cat; exit 7"], fake))
    res = s.wait([51])
    ok(joined(res[51], "1") == fake and last(res[51])[1].startswith(b"x=7 "),
       "frame-like output is delivered verbatim, the real status stays", res[51])

    # The report pipe is not the command's: a report written to every
    # descriptor it might be is only output, or nothing.
    s.send(request(56, ["-t", "20000"], ["sh", "-c", "for fd in 3 4 5 6 7 8 9; do "
                                         "(echo 'x=0 cpu=0 rss=0' >&$fd) 2>/dev/null && echo fd$fd; "
                                         "done; exit 7"]))
    res = s.wait([56])
    ok(joined(res[56], "1") == b"" and [d for (t, d) in res[56] if t == "X"] and
       last(res[56])[1].startswith(b"x=7 "),
       "the command holds no descriptor beyond its stdio: the report is the real one", res[56])

    # A supervisor killed (from outside: a command cannot, when the server
    # started as root and set itself apart): the exec is lost, its
    # leftovers die, another exec running at the same time is not touched.
    ppid_file = os.path.join(tempfile.mkdtemp(prefix="ps-server-"), "ppid")
    s.send(request(61, ["-t", "20000"], ["sh", "-c", "echo ok61; sleep 1.5; echo done61"]))
    s.send(request(62, ["-t", "20000"], ["sh", "-c", "(sleep 104%s &) ; echo $PPID >%s.tmp && mv %s.tmp %s; sleep 105%s" % (MARK, ppid_file, ppid_file, ppid_file, MARK)]))
    for _ in range(100):
        if os.path.exists(ppid_file):
            break
        time.sleep(0.05)
    time.sleep(0.3)
    os.kill(int(open(ppid_file).read()), signal.SIGKILL)
    res = s.wait([61, 62])
    ok(last(res[62])[0] == "L" and b"supervisor" in last(res[62])[1],
       "a killed supervisor: the exec is reported lost", res[62])
    time.sleep(0.2)
    ok(not sleepers(), "the lost exec's processes are killed", sleepers())
    ok(joined(res[61], "1") == b"ok61\ndone61\n" and last(res[61])[1].startswith(b"x=0 "),
       "the other exec runs on to its end", res[61])

    # Signals ('S'): one sent with the request waits until the command
    # runs (then it dies of it, long before its sleep ends); bytes that
    # are no signal a command may get (SIGKILL, SIGSTOP, 0, 255, ...)
    # are dropped, those that are reach the command's group.
    s.send(request(65, ["-t", "20000"], ["sleep", "20"]) + frame("S", 65, bytes([signal.SIGTERM])))
    res = s.wait([65])
    ok(last(res[65])[1].startswith(b"s=%d " % signal.SIGTERM),
       "a signal sent with the request reaches the command once it runs", res[65])
    s.send(request(66, ["-t", "20000"], ["sh", "-c", "trap 'echo got USR1' USR1; "
                                         "trap 'echo got TERM; exit 7' TERM; echo ready; "
                                         "while :; do sleep 0.1; done"]))
    while b"ready" not in joined(s.res.get(66, []), "1"):
        s.pump(1)
    s.send(frame("S", 66, bytes([0, signal.SIGKILL, signal.SIGSTOP, 255, signal.SIGCHLD,
                                 signal.SIGUSR1])) + frame("S", 67, bytes([signal.SIGTERM])))
    while b"got USR1" not in joined(s.res.get(66, []), "1") and s.pump(10):
        pass
    s.send(frame("S", 66, bytes([signal.SIGTERM])))
    res = s.wait([66])
    ok(joined(res[66], "1") == b"ready\ngot USR1\ngot TERM\n" and last(res[66])[1].startswith(b"x=7 "),
       "signals reach the command's traps; other bytes, and other ids', are dropped", res[66])

    # A lease: killed when no frame of its id renews it in time (the
    # provider went away), kept alive by 'P' frames.
    s.send(request(81, ["-t", "20000", "-l", "400"], ["sh", "-c", "sleep 106%s" % MARK]))
    s.send(request(82, ["-t", "20000", "-l", "400"], ["sh", "-c", "sleep 1.2; echo kept"]))
    end = time.time() + 1.5
    while time.time() < end:
        s.send(frame("P", 82))
        s.pump(0.1)
    res = s.wait([81, 82])
    ok(last(res[81])[1].startswith(b"k "), "an exec whose lease is not renewed is killed", res[81])
    ok(joined(res[82], "1") == b"kept\n" and last(res[82])[1].startswith(b"x=0 "),
       "an exec whose lease is renewed runs to its end", res[82])

    # A probe is answered at once.
    s.send(frame("Q", 91))
    res = s.wait_type(91, "q", 10)
    ok(res, "a probe is answered", s.res.get(91))

    # A writer that died inside a frame (here: the header, cut where the
    # zeros that follow make the largest frame there is): a probe gets no
    # answer, the filler of zeros and a sync bring the server back.
    cut = MAGIC + b"D\0" + struct.pack(">Q", 12345) + b"\x00\x10"
    s.send(cut + SYNC + frame("Q", 92))
    ok(not s.wait_type(92, "q", 1.5), "inside a dead writer's frame, a probe gets no answer")
    s.send(b"\0" * ((1 << 20) + 32) + SYNC + frame("Q", 93))
    ok(s.wait_type(93, "q", 10), "after the filler and a sync, the probe is answered", s.res.get(93))
    s.res.pop(0, None)
    s.send(request(94, ["-t", "20000"], ["sh", "-c", "echo 94"]))
    res = s.wait([94], 10)
    ok(joined(res[94], "1") == b"94\n", "and requests are served again", res)

    # Input that loses the framing: discarded up to the next sync, then all
    # is well again.
    s.send(b"\x00garbage that is no frame\xff" * 3 + SYNC[:5])
    res = s.wait([0], 10)
    ok(last(res[0])[0] == "Z", "lost framing is announced", res[0])
    s.send(request(71, ["-t", "20000"], ["true"]) + SYNC[:4] + SYNC + request(72, ["-t", "20000"], ["sh", "-c", "echo 72"]))
    res = s.wait([72], 10)
    ok(joined(res[72], "1") == b"72\n" and 71 not in s.res,
       "after a sync (behind a piece of one), requests are served again, none before it", res)


print("1..21")
srv = Server()
try:
    main(srv)
finally:
    srv.close()
    for cmd in sleepers():
        print("# left over: %r" % cmd)
sys.exit(1 if failed else 0)
