"""tests/python/harness.py - what the Python package's tests share: TAP
checks, the polysandbox package from the source tree, and a real
polysandboxd on a free loopback port."""

import asyncio
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "python"))

PS = os.path.join(os.environ["top_builddir"], "polysandbox")
PSD = os.path.join(os.environ["top_builddir"], "polysandboxd")
n = 0
failed = 0


def plan(count):
    print(f"1..{count}", flush=True)


def check(desc, cond, why=""):
    global n, failed
    n += 1
    print(("ok" if cond else "not ok") + f" {n} - {desc}", flush=True)
    if not cond:
        failed += 1
        for line in str(why).splitlines()[:20]:
            print(f"# {line}", flush=True)


def raises(cls, fn, *args, match=None, **kw):
    """(True, e) when fn(*args, **kw) raises cls with match in its text."""
    try:
        fn(*args, **kw)
    except cls as e:
        return match is None or match in str(e), e
    except Exception as e:  # the wrong class: say which
        return False, f"{type(e).__name__}: {e}"
    return False, "no exception"


def finish(planned):
    print(f"# {n} checks, {failed} failed", flush=True)
    if n != planned:
        print(f"# planned {planned}, ran {n}")
    sys.exit(1 if failed or n != planned else 0)


async def cancel_later(coro, wait=None):
    """Run coro as a task and cancel it half a second on (or once wait()
    returns); ("cancelled" or "not cancelled", seconds from the cancel to
    its end)."""
    t = asyncio.create_task(coro)
    await (wait() if wait else asyncio.sleep(0.5))
    t0 = time.monotonic()
    t.cancel()
    try:
        await t
        how = "not cancelled"
    except asyncio.CancelledError:
        how = "cancelled"
    return how, time.monotonic() - t0


class Server:
    """polysandboxd with a bearer token, its log in tmp.  Under ASan
    binding.sh/sandbox.sh preload the runtimes and turn leak checking off
    for python3; the server, instrumented itself, gets neither."""

    def __init__(self, tmp):
        self.token = "python-test-token-" + os.urandom(8).hex()
        tokfile = os.path.join(tmp, "tokens")
        with open(os.open(tokfile, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(self.token + "\n")
        self.log = open(os.path.join(tmp, "server.log"), "w+")
        env = dict(os.environ)
        for var in ("ASAN_OPTIONS", "LD_PRELOAD"):
            if "SERVER_" + var in os.environ:
                env[var] = os.environ["SERVER_" + var]
                if not env[var]:
                    del env[var]
        self.proc = subprocess.Popen([PSD, "--listen", "127.0.0.1:0", "--token-file", tokfile],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.log, env=env)
        atexit.register(self.stop)
        self.url = None
        deadline = time.monotonic() + 20
        while self.url is None and time.monotonic() < deadline and self.proc.poll() is None:
            m = re.search(r"listening on (http://\S+)", self.text())
            self.url = m.group(1) if m else None
            if self.url is None:
                time.sleep(0.05)

    def text(self):
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        """Stop it (also when a check raised: it never outlives the test);
        its exit status."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait()

    def clean(self, status):
        """True when it stopped cleanly with no sanitizer report and the
        token never logged."""
        text = self.text()
        return (status == 0 and not re.search(r"runtime error:|AddressSanitizer|LeakSanitizer",
                                               text) and self.token not in text)


def scratch(prefix):
    """A scratch directory, made the XDG_STATE_HOME and
    POLYSANDBOX_STATE_DIR of the test (so a polysandbox-locald of its own:
    the shared one of `make check` has other tests' daemons and settings
    come and go); its path."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    os.environ["XDG_STATE_HOME"] = os.path.join(tmp, "xdg-state")
    os.environ["POLYSANDBOX_STATE_DIR"] = os.path.join(tmp, "state")
    return tmp


def start(prefix, timeout):
    """What a test of both runners begins with: a scratch directory (see
    scratch), polysandboxd (checked: one check), a
    Client to it (timeout seconds) and a Local; (tmp, server, client,
    local)."""
    import polysandbox as psb
    tmp = scratch(prefix)
    server = Server(tmp)
    check("polysandboxd starts on a free loopback port", server.url is not None,
          server.text()[-600:])
    client = psb.Client(server.url or "http://127.0.0.1:9", token=server.token,
                        timeout=timeout)
    return tmp, server, client, psb.Local()


def stop(tmp, server, local):
    """The end of start's test: the Local closed, the server stopped
    (checked: one check), the scratch directory removed."""
    local.close()
    src = server.stop()
    check("polysandboxd stopped cleanly, no sanitizer report, the token never logged",
          server.clean(src), f"exit {src}\n" + server.text()[-1500:])
    shutil.rmtree(tmp, ignore_errors=True)


def read_text(path):
    """The text of the file at path, or "" when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""


def write_jsonl(tmp, name, rows):
    """rows as the JSON Lines file tmp/name; its path."""
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    return path


def sh_eval_files(tmp):
    """The evaluation tests' dataset and samples, in tmp: two sh tasks,
    five samples (three pass), so every verdict is known in advance and
    none hangs on timing; (dataset, samples)."""
    dataset = write_jsonl(tmp, "tasks.jsonl", [
        {"task_id": "sh/add", "language": "sh", "prompt": "# add A B: print A + B\n",
         "test": '[ "$(add 2 3)" = 5 ] && [ "$(add -1 1)" = 0 ]\n',
         "canonical_solution": "add() { echo $(($1 + $2)); }\n"},
        {"task_id": "sh/greet", "language": "sh", "prompt": "# greet NAME: print hello NAME\n",
         "test": '[ "$(greet bob)" = "hello bob" ]\n',
         "canonical_solution": 'greet() { echo "hello $1"; }\n'},
    ])
    samples = write_jsonl(tmp, "samples.jsonl", [
        {"task_id": "sh/add", "completion": "add() { echo $(($1 + $2)); }\n"},
        {"task_id": "sh/add", "completion": "add() { echo $(($1 - $2)); }\n"},
        {"task_id": "sh/greet", "completion": 'greet() { echo "hello $1"; }\n'},
        {"task_id": "sh/greet", "completion": "greet() { echo hi; }\n"},
        {"task_id": "sh/greet", "completion": 'greet() { printf "hello %s\\n" "$1"; }\n'},
    ])
    return dataset, samples
