"""tests/python/binding.py - the Python package, in the process and through
a real polysandboxd (started here on a free loopback port), printing TAP.

Run by binding.sh under `make check` (build-tree library, providers and
test configuration).  Local and remote runs of the same requests must
give the same results; bad input must raise the class naming it.
"""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import PS, Server, cancel_later, check, finish, plan, raises  # noqa: E402
import polysandbox as psb  # noqa: E402

PLAN = 38
plan(PLAN)
tmp = tempfile.mkdtemp(prefix="ps-python-test.")
os.environ["XDG_STATE_HOME"] = os.path.join(tmp, "xdg-state")
# A state directory (so a polysandbox-locald) of its own: the shared one
# of `make check` has other tests' daemons and settings come and go.
os.environ["POLYSANDBOX_STATE_DIR"] = os.path.join(tmp, "state")

# ---- in the process --------------------------------------------------------
r = psb.run("echo hi")
check("run: a shell line, status ok, its stdout", r.status == "ok" and r.stdout == "hi\n"
      and r.exit_code == 0 and r.success and r.provider == "local", r)

r = psb.run(["sh", "-c", "echo oops >&2; exit 3"])
check("run: an argv, nonzero_exit with its code and stderr",
      r.status == "nonzero_exit" and r.exit_code == 3 and r.stderr == "oops\n"
      and not r.success, r)

r = psb.run_code("python", "import sys; print(6*7, sys.argv[1:])", ["a", "b"])
check("run_code: python with args", r.status == "ok" and r.stdout == "42 ['a', 'b']\n", r)

blob = bytes(range(256)) * 4
r = psb.run("cat", stdin=blob)
check("binary stdin comes back byte for byte (base64 in the JSON)",
      r.stdout_bytes == blob and r.raw.get("stdout_encoding") == "base64", r.raw)

r = psb.run("cat in.txt; echo \"$X\"; pwd", files={"in.txt": "data\n"}, env={"X": "y z"})
check("files and env reach the command", r.status == "ok"
      and r.stdout.startswith("data\ny z\n"), r)

r = psb.run("sleep 5", timeout=0.3)
check("timeout: status timeout, timed_out", r.status == "timeout" and r.timed_out
      and r.exit_code is None, r)

r = psb.run("head -c 100000 /dev/zero", limits={"stdout": 1000})
check("an output cap: output_limit, truncated", r.status == "output_limit" and r.truncated
      and len(r.stdout_bytes) <= 1000, r)

cli = subprocess.run([PS, "run", "--json", "--shell", "echo hi"], capture_output=True,
                     timeout=60)
try:
    cj = json.loads(cli.stdout)
except ValueError as e:
    cj = {"unparsed": str(e)}
r = psb.run("echo hi")
check("Result has exactly the fields of `polysandbox run --json`",
      set(r.to_dict()) == set(cj) and json.loads(r.to_json())["stdout"] == cj.get("stdout"),
      f"lib {sorted(r.to_dict())}\ncli {sorted(cj)}")


def five_at_once(runner, desc):
    """arun and arun_code of runner, five runs awaited at once from one
    event loop, each with its own output."""
    async def gather():
        return await asyncio.gather(*[runner.arun(f"echo {i}") for i in range(4)],
                                    runner.arun_code("sh", "echo code"))
    rs = asyncio.run(gather())
    check(desc, [x.stdout for x in rs] == ["0\n", "1\n", "2\n", "3\n", "code\n"], rs)


five_at_once(psb, "arun and arun_code, five at once from one event loop")



how, took = asyncio.run(cancel_later(psb.arun("sleep 30", timeout=60)))
print(f"# the cancelled run ended {took:.2f} s after the cancel", flush=True)
# The bound is generous (the command sleeps 30 s, its timeout 60 s): it
# tells a run that was stopped from one that ran to its end, not a speed.
check("a cancelled arun stops its run and raises CancelledError",
      how == "cancelled" and took < 10, f"{how} after {took:.1f} s")

# Bad input: the argument named, the right class.
ok_, e = raises(TypeError, psb.run, 123, match="'command'")
check("run(123): TypeError naming 'command'", ok_, e)
ok_, e = raises(ValueError, psb.run, "true", timeout=0, match="'timeout'")
check("timeout=0: ValueError naming 'timeout' (0 is never unlimited)", ok_, e)
ok_, e = raises(ValueError, psb.run, "true", limits={"walls": 1}, match="'walls'")
check("an unknown limit: ValueError naming it", ok_, e)
ok_, e = raises(TypeError, psb.run, "true", timout=1, match="'timout'")
check("an unknown option: TypeError naming it", ok_, e)
ok_, e = raises(ValueError, psb.run, "true", env={"A=B": "c"}, match="'env'")
check("an env key with '=': ValueError naming 'env'", ok_, e)
ok_, e = raises(ValueError, psb.run, "echo \0", match="NUL")
check("a NUL in the command: ValueError", ok_, e)
ok_, e = raises(ValueError, psb.run, "true", network="wide", match="egress")
check("an unknown network: ValueError naming the three", ok_, e)
ok_, e = raises(psb.SandboxError, psb.run, "true", network="egress", match="without a template")
check("network='egress' of no template: refused (a run never widens its template)", ok_, e)
ok_, e = raises(psb.SandboxNotFoundError, psb.run, "true", provider="nosuch", match="nosuch")
check("an unknown provider: SandboxNotFoundError from the library, naming it", ok_, e)
ok_, e = raises(psb.SandboxNotFoundError, psb.run_code, "cobol", "x", match="cobol")
check("an unknown language: SandboxNotFoundError naming it", ok_, e)
ok_, e = raises(psb.InvalidRequestError, psb.run, "true", limits={"memory": 1 << 50})
check("a limit above the maximum: InvalidRequestError (SBX_E_LIMIT)",
      ok_ and e.code == 12 if ok_ else False, e)



def cli_json(*args):
    out = subprocess.run([PS, *args, "--json"], capture_output=True, timeout=60)
    try:
        return json.loads(out.stdout)
    except ValueError:
        return f"{args}: {out.stdout[-300:]!r} {out.stderr[-300:]!r}"


cli_provs = cli_json("providers")
cli_tpls = cli_json("templates")
try:
    same = ([psb.Provider.from_json(o) for o in cli_provs] == psb.providers()
            and [psb.Template.from_json(o) for o in cli_tpls] == psb.templates())
except (psb.SandboxError, TypeError) as e:
    same = e
check("providers() and templates() equal `polysandbox providers|templates --json`",
      same is True and any(p.name == "local" and p.state == "ready" for p in psb.providers())
      and "python" in [t.name for t in psb.templates()], f"{same}\n{cli_provs}\n{cli_tpls}")

good = psb.run("echo hi").to_dict()
hostile = [dict(good, exit_code="0"), dict(good, status="fine"),
           dict(good, stdout_encoding="rot13"), dict(good, stdout="!!", stdout_encoding="base64"),
           dict(good, timings_ns={"exec": 1}), {k: v for k, v in good.items() if k != "error_code"},
           dict(good, stderr_truncated=1), [good]]
named = []
for obj in hostile:
    ok_, e = raises(psb.ServerError, psb.Result.from_json, obj, match="result:")
    named.append(ok_ or f"{str(obj)[:80]}: {e}")
check(f"{len(hostile)} malformed result objects: ServerError naming the field",
      all(x is True for x in named), "\n".join(x for x in named if x is not True))

bad = subprocess.run([sys.executable, "-c", "import polysandbox as p; p.run('true')"],
                     capture_output=True, text=True, timeout=60,
                     env=dict(os.environ, POLYSANDBOX_LIBRARY=os.path.join(tmp, "nolib.so"),
                              PYTHONPATH=os.path.join(os.environ["top_srcdir"], "python")))
check("a library that cannot be loaded: OSError naming the path and the variable",
      bad.returncode != 0 and "nolib.so" in bad.stderr and "POLYSANDBOX_LIBRARY" in bad.stderr,
      bad.stderr[-600:])

# ---- through polysandboxd --------------------------------------------------
server = Server(tmp)
url, token = server.url, server.token
check("polysandboxd starts on a free loopback port", url is not None, server.text()[-600:])
url = url or "http://127.0.0.1:9"
client = psb.Client(url, token=token, timeout=60)

REQUESTS = [
    ("run", ("echo hi",), {}),
    ("run", (["sh", "-c", "echo oops >&2; exit 3"],), {}),
    ("run_code", ("python", "import sys; print(6*7, sys.argv[1:])", ["a", "b"]), {}),
    ("run", ("cat",), {"stdin": blob}),
    ("run", ("cat in.txt; echo \"$X\"",), {"files": {"in.txt": "data\n"}, "env": {"X": "y"}}),
    ("run", ("sleep 5",), {"timeout": 0.3}),
    ("run", ("head -c 100000 /dev/zero",), {"limits": {"stdout": 1000}}),
    ("run", ("kill -9 $$",), {}),
]
SAME = ("status", "exit_code", "signal", "stdout_bytes", "stdout_truncated", "stderr_bytes",
        "stderr_truncated", "provider", "error", "error_code")
diffs = []
for call, args, kw in REQUESTS:
    a = getattr(psb, call)(*args, **kw)
    b = getattr(client, call)(*args, **kw)
    d = [k for k in SAME if getattr(a, k) != getattr(b, k)]
    if d or set(a.to_dict()) != set(b.to_dict()):
        diffs.append(f"{call}{args[:1]}: {d} local {a} remote {b}")
check(f"the same {len(REQUESTS)} requests give the same results locally and remotely",
      not diffs, "\n".join(diffs))

five_at_once(client, "Client.arun and arun_code, five at once")
check("Client.providers() and templates() equal the local ones",
      client.providers() == psb.providers() and client.templates() == psb.templates(),
      f"{client.providers()}\n{psb.providers()}")

ok_, e = raises(psb.SandboxNotFoundError, client.run, "true", provider="nosuch",
                match="nosuch")
check("remote: an unknown provider raises the same class as locally", ok_, e)
ok_, e = raises(psb.InvalidRequestError, client.run, "true", limits={"memory": 1 << 50})
check("remote: a limit above the maximum: InvalidRequestError", ok_, e)
ok_, e = raises(ValueError, client.run, "true", timeout=-1, match="'timeout'")
check("remote: bad input is refused before any request, naming the argument", ok_, e)
ok_, e = raises(TypeError, lambda: client.arun(b"true"), match="'command'")
check("arun: bad input raises at the call, before any await", ok_, e)
ok_, e = raises(psb.AuthError, psb.Client(url).run, "true")
check("remote: no token: AuthError", ok_, e)
ok_, e = raises(psb.AuthError, psb.Client(url, token=token + "x").run, "true")
check("remote: a wrong token: AuthError", ok_, e)
ok_, e = raises(ValueError, psb.Client, "ftp://127.0.0.1/", match="'url'")
check("Client('ftp://...'): ValueError naming 'url'", ok_, e)
check("repr(Client) never shows the token", token not in repr(client), repr(client))

src = server.stop()
ok_, e = raises(psb.ServerError, client.run, "true", match=url)
check("a server that is gone: ServerError naming its URL", ok_, e)
check("polysandboxd stopped cleanly, no sanitizer report, the token never logged",
      server.clean(src), f"exit {src}\n" + server.text()[-1500:])
shutil.rmtree(tmp, ignore_errors=True)
finish(PLAN)
