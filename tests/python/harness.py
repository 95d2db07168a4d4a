"""tests/python/harness.py - what the Python package's pytest files share
besides conftest.py's fixtures: the polysandbox package from the source
tree on sys.path, the build tree's programs, polysandboxd on a free
loopback port, the evaluation tests' files."""

import asyncio
import atexit
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "python"))

PS = os.path.join(os.environ["top_builddir"], "polysandbox")
PSD = os.path.join(os.environ["top_builddir"], "polysandboxd")


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
    run-python.sh (sanitizer-env.sh) preloads the runtimes and turns leak
    checking off for python3; the server, instrumented itself, gets
    neither."""

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
