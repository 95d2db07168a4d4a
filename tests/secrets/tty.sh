#!/bin/sh
# tests/secrets/tty.sh - secret seal on a terminal: the value is not
# echoed, and echo comes back on every exit, a signal included.
. "$top_srcdir/tests/cli/lib.sh"

command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP no python3"; exit 0; }
mkdir -p "$tmp/conf" && "$PS" --config-dir "$tmp/conf" secret init >/dev/null || exit 99

python3 - "$PS" "$tmp/conf" <<'PY'
import os, pty, signal, sys, termios, time

ps, conf = sys.argv[1], sys.argv[2]
secret = b"tty-Secret-91c4-do-not-echo"
n = 0
failed = False

def check(cond, what):
    global n, failed
    n += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n, what))
    failed = failed or not cond

def spawn():
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(ps, [ps, "--config-dir", conf, "secret", "seal"])
    return pid, fd

def read_until(fd, needle, limit=30.0):
    """Read from the pty until needle shows up or the child is gone."""
    buf = b""
    end = time.monotonic() + limit
    while needle not in buf and time.monotonic() < end:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        buf += chunk
    return buf

def echo_on(fd):
    return bool(termios.tcgetattr(fd)[3] & termios.ECHO)

# A value typed on the terminal.
pid, fd = spawn()
out = read_until(fd, b"not shown): ")
check(b"Value to seal" in out, "a prompt on the terminal")
check(not echo_on(fd), "echo is off while the value is typed")
os.write(fd, secret + b"\n")
out = read_until(fd, b"\0", 60.0)   # to the end: the pty fails once it exits
_, status = os.waitpid(pid, 0)
check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "seal exits 0")
check(b"sealed:v1:" in out, "the sealed value is printed")
check(secret not in out, "the value was not echoed")
check(echo_on(fd), "echo is back on after it")
os.close(fd)

# Interrupted while waiting for the value.
for sig in (signal.SIGINT, signal.SIGTERM):
    pid, fd = spawn()
    read_until(fd, b"not shown): ")
    off = not echo_on(fd)
    os.kill(pid, sig)
    _, status = os.waitpid(pid, 0)
    check(off and os.WIFSIGNALED(status) and os.WTERMSIG(status) == sig,
          "killed by %s while reading" % signal.Signals(sig).name)
    check(echo_on(fd), "echo is back on after %s" % signal.Signals(sig).name)
    os.close(fd)

print("1..%d" % n)
sys.exit(1 if failed else 0)
PY
