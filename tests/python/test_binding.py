"""tests/python/test_binding.py - the Python package, in the process and
through a real polysandboxd (conftest.py's server), with pytest.

Run by binding.sh under `make check` (build-tree library, providers and
test configuration).  Local and remote runs of the same requests must
give the same results; bad input must raise the class naming it.
"""

import asyncio
import json
import os
import subprocess
import sys
import threading
import time

import pytest

from conftest import CFFI_BUILT
from harness import PS, Server

BLOB = bytes(range(256)) * 4


# ---- in the process --------------------------------------------------------
def test_run_shell_line(psb):
    """run: a shell line, status ok, its stdout."""
    r = psb.run("echo hi")
    assert r.status == "ok" and r.stdout == "hi\n" and r.exit_code == 0 and r.success \
        and r.provider == "local", r


def test_run_argv_nonzero_exit(psb):
    """run: an argv, nonzero_exit with its code and stderr."""
    r = psb.run(["sh", "-c", "echo oops >&2; exit 3"])
    assert r.status == "nonzero_exit" and r.exit_code == 3 and r.stderr == "oops\n" \
        and not r.success, r


def test_run_code_python_args(psb):
    r = psb.run_code("python", "import sys; print(6*7, sys.argv[1:])", ["a", "b"])
    assert r.status == "ok" and r.stdout == "42 ['a', 'b']\n", r


def test_binary_stdin_round_trip(psb):
    """Binary stdin comes back byte for byte (base64 in the JSON)."""
    r = psb.run("cat", stdin=BLOB)
    assert r.stdout_bytes == BLOB and r.raw.get("stdout_encoding") == "base64", r.raw


def test_files_and_env(psb):
    r = psb.run("cat in.txt; echo \"$X\"; pwd", files={"in.txt": "data\n"}, env={"X": "y z"})
    assert r.status == "ok" and r.stdout.startswith("data\ny z\n"), r


def test_timeout(psb):
    r = psb.run("sleep 5", timeout=0.3)
    assert r.status == "timeout" and r.timed_out and r.exit_code is None, r


def test_output_cap(psb):
    r = psb.run("head -c 100000 /dev/zero", limits={"stdout": 1000})
    assert r.status == "output_limit" and r.truncated and len(r.stdout_bytes) <= 1000, r


def test_result_fields_match_cli_json(psb):
    """Result has exactly the fields of `polysandbox run --json`."""
    cli = subprocess.run([PS, "run", "--json", "--shell", "echo hi"], capture_output=True,
                         timeout=60)
    try:
        cj = json.loads(cli.stdout)
    except ValueError as e:
        cj = {"unparsed": str(e)}
    r = psb.run("echo hi")
    assert set(r.to_dict()) == set(cj) and json.loads(r.to_json())["stdout"] == cj.get("stdout"), \
        f"lib {sorted(r.to_dict())}\ncli {sorted(cj)}"


async def five_at_once(runner):
    """arun and arun_code of runner, five runs awaited at once from one
    event loop; their stdouts."""
    rs = await asyncio.gather(*[runner.arun(f"echo {i}") for i in range(4)],
                              runner.arun_code("sh", "echo code"))
    return [x.stdout for x in rs]


@pytest.mark.asyncio
async def test_five_at_once_local(psb):
    """arun and arun_code, five at once from one event loop, each its own output."""
    assert await five_at_once(psb) == ["0\n", "1\n", "2\n", "3\n", "code\n"]


@pytest.mark.asyncio
async def test_cancelled_arun_stops(psb):
    """A cancelled arun stops its run and raises CancelledError.  The bound
    is generous (the command sleeps 30 s, its timeout 60 s): it tells a
    run that was stopped from one that ran to its end, not a speed."""
    t = asyncio.create_task(psb.arun("sleep 30", timeout=60))
    await asyncio.sleep(0.5)
    t0 = time.monotonic()
    t.cancel()
    with pytest.raises(asyncio.CancelledError):
        await t
    took = time.monotonic() - t0
    assert took < 10, f"cancelled after {took:.1f} s"


# Bad input: the argument named, the right class.
BAD_INPUT = [
    ("run(123): TypeError naming 'command'", TypeError, "'command'", "run", (123,), {}),
    ("timeout=0: ValueError naming 'timeout' (0 is never unlimited)", ValueError, "'timeout'",
     "run", ("true",), {"timeout": 0}),
    ("an unknown limit: ValueError naming it", ValueError, "'walls'",
     "run", ("true",), {"limits": {"walls": 1}}),
    ("an unknown option: TypeError naming it", TypeError, "'timout'",
     "run", ("true",), {"timout": 1}),
    ("an env key with '=': ValueError naming 'env'", ValueError, "'env'",
     "run", ("true",), {"env": {"A=B": "c"}}),
    ("a NUL in the command: ValueError", ValueError, "NUL", "run", ("echo \0",), {}),
    ("an unknown network: ValueError naming the three", ValueError, "egress",
     "run", ("true",), {"network": "wide"}),
    ("network='egress' of no template: refused (a run never widens its template)",
     "SandboxError", "without a template", "run", ("true",), {"network": "egress"}),
    ("an unknown provider: SandboxNotFoundError from the library, naming it",
     "SandboxNotFoundError", "nosuch", "run", ("true",), {"provider": "nosuch"}),
    ("an unknown language: SandboxNotFoundError naming it", "SandboxNotFoundError", "cobol",
     "run_code", ("cobol", "x"), {}),
]


@pytest.mark.parametrize("desc,cls,match,call,args,kw", BAD_INPUT,
                         ids=[b[0].split(":")[0] for b in BAD_INPUT])
def test_bad_input(psb, desc, cls, match, call, args, kw):
    cls = getattr(psb, cls) if isinstance(cls, str) else cls
    with pytest.raises(cls) as e:
        getattr(psb, call)(*args, **kw)
    assert match in str(e.value), desc


def test_limit_above_maximum(psb):
    """A limit above the maximum: InvalidRequestError (SBX_E_LIMIT)."""
    with pytest.raises(psb.InvalidRequestError) as e:
        psb.run("true", limits={"memory": 1 << 50})
    assert e.value.code == 12


def cli_json(*args):
    out = subprocess.run([PS, *args, "--json"], capture_output=True, timeout=60)
    try:
        return json.loads(out.stdout)
    except ValueError:
        return f"{args}: {out.stdout[-300:]!r} {out.stderr[-300:]!r}"


def test_providers_templates_match_cli(psb):
    """providers() and templates() equal `polysandbox providers|templates --json`."""
    cli_provs = cli_json("providers")
    cli_tpls = cli_json("templates")
    assert [psb.Provider.from_json(o) for o in cli_provs] == psb.providers(), cli_provs
    assert [psb.Template.from_json(o) for o in cli_tpls] == psb.templates(), cli_tpls
    assert any(p.name == "local" and p.state == "ready" for p in psb.providers())
    assert "python" in [t.name for t in psb.templates()]


def hostile_results(good):
    return [dict(good, exit_code="0"), dict(good, status="fine"),
            dict(good, stdout_encoding="rot13"), dict(good, stdout="!!", stdout_encoding="base64"),
            dict(good, timings_ns={"exec": 1}),
            {k: v for k, v in good.items() if k != "error_code"},
            dict(good, stderr_truncated=1), [good]]


@pytest.mark.parametrize("which", range(8))
def test_malformed_result(psb, which):
    """A malformed result object: ServerError naming the field."""
    obj = hostile_results(psb.run("echo hi").to_dict())[which]
    with pytest.raises(psb.ServerError, match="result:"):
        psb.Result.from_json(obj)


def test_backend_in_use(psb):
    """The module-level calls use the backend $POLYSANDBOX_BACKEND names
    (binding-cffi.sh: cffi), else ctypes ($POLYSANDBOX_LIBRARY is set)."""
    want = os.environ.get("POLYSANDBOX_BACKEND") or "ctypes"
    assert psb.backend() == want and psb.default().backend == want
    assert psb.run("echo hi").stdout == "hi\n"


def test_unknown_backend(psb):
    """A backend that is not one: ValueError naming both."""
    with pytest.raises(ValueError, match="'cfi' is not one of"):
        psb.Local(backend="cfi")


def test_library_not_loadable(scratch):
    """A library that cannot be loaded: OSError naming the path and the variable."""
    bad = subprocess.run([sys.executable, "-c", "import polysandbox as p; p.run('true')"],
                         capture_output=True, text=True, timeout=60,
                         env=dict(os.environ,
                                  POLYSANDBOX_LIBRARY=os.path.join(scratch, "nolib.so"),
                                  POLYSANDBOX_BACKEND="ctypes",
                                  PYTHONPATH=os.path.join(os.environ["top_srcdir"], "python")))
    assert bad.returncode != 0 and "nolib.so" in bad.stderr \
        and "POLYSANDBOX_LIBRARY" in bad.stderr, bad.stderr[-600:]


class _Refused:
    """Stands for _native's ctypes library: any use fails the test."""

    def __getattr__(self, name):
        raise AssertionError(f"{name} went through ctypes on the cffi backend")

    def __call__(self, *args, **kw):
        raise AssertionError("a ctypes call on the cffi backend")


@pytest.fixture
def no_ctypes(psb, monkeypatch):
    """ctypes refused: _native's library, its free and its callback types
    fail the test when used (after the cffi module's one look through
    ctypes at load, that the library is the one ctypes would load)."""
    if not CFFI_BUILT:
        pytest.skip("the cffi backend is not built (configure found no python3-cffi)")
    from polysandbox import _cffi, _native
    _cffi.module()
    refused = _Refused()
    monkeypatch.setattr(_native, "_lib", refused)
    for name in ("lib", "free", "LIST_CB", "OUTPUT_CB", "FILE_CB", "EVAL_CB"):
        monkeypatch.setattr(_native, name, refused)


@pytest.mark.asyncio
async def test_cffi_without_ctypes(psb, no_ctypes, tmp_path):
    """On the cffi backend every call goes through the compiled module,
    none through ctypes: the context made and freed, the error text of a
    bad configuration and of a refused run, cancellation tokens (a
    cancelled arun, and every exec's own), a sandbox attached by id,
    listed by its labels, let go of and destroyed."""
    (tmp_path / "polysandbox.ini").write_text("[core]\nno_such_key = 1\n")
    with pytest.raises(psb.SandboxError, match="polysandbox.ini") as bad:
        psb.Local(config_dir=str(tmp_path), backend="cffi")
    assert isinstance(bad.value, psb.ConfigError), repr(bad.value)
    runner = psb.Local(backend="cffi")
    try:
        assert runner.backend == "cffi" and not hasattr(runner, "_lib")
        assert runner.run("echo hi").stdout == "hi\n"
        with pytest.raises(psb.SandboxNotFoundError, match="nosuch"):
            runner.run("true", provider="nosuch")
        t = asyncio.create_task(runner.arun("sleep 30", timeout=60))
        await asyncio.sleep(0.5)
        t.cancel()
        with pytest.raises(asyncio.CancelledError):
            await t
        labels = {"test": f"cffi-no-ctypes-{os.getpid()}"}
        sb = runner.create_sandbox(provider="local", labels=labels, ttl=300)
        try:
            again = runner.attach(sb.id, "local")
            assert (again.id, again.provider) == (sb.id, "local") \
                and labels.items() <= again.labels.items(), again.labels
            assert again.exec("echo again").stdout == "again\n"
            again.close()
            assert [i.id for i in runner.sandboxes(labels, provider="local")] == [sb.id]
        finally:
            sb.destroy()
        assert runner.sandboxes(labels, provider="local") == []
    finally:
        runner.close()


@pytest.mark.parametrize("backend", ["ctypes", "cffi"] if CFFI_BUILT else ["ctypes"])
def test_close_while_async_calls_run(psb, backend):
    """close() while threads are in the middle of async calls: it waits
    for them (the context is not freed under a call: that crashed), each
    ends with a result or "closed", the spare cancellation tokens are
    freed once, and a long exec in flight is cancelled, not waited out."""
    runner = psb.Local(backend=backend)
    errors: list = []
    stop = threading.Event()

    def loop():
        async def calls():
            while not stop.is_set():
                try:
                    await runner.arun(["/bin/true"])
                except psb.SandboxError as e:
                    if "closed" not in str(e):
                        errors.append(e)
                    return
        asyncio.run(calls())

    def long():
        async def call():
            try:
                r = await runner.arun("sleep 60", timeout=120)
                # cancelled in the exec, or while its sandbox was made
                if r.status != "cancelled" and "cancelled" not in (r.error or ""):
                    errors.append("the 60 s exec was not cancelled: %s %s" % (r.status, r.error))
            except psb.SandboxError as e:
                if "cancel" not in str(e).lower():
                    errors.append(e)
        asyncio.run(call())

    threads = [threading.Thread(target=loop) for _ in range(4)] + [threading.Thread(target=long)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    t0 = time.monotonic()
    runner.close()
    waited = time.monotonic() - t0
    stop.set()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert errors == [], errors
    assert runner._spare == [] and waited < 50, waited
    with pytest.raises(psb.SandboxError, match="closed"):
        runner.run(["/bin/true"])


# ---- through polysandboxd --------------------------------------------------
REQUESTS = [
    ("run", ("echo hi",), {}),
    ("run", (["sh", "-c", "echo oops >&2; exit 3"],), {}),
    ("run_code", ("python", "import sys; print(6*7, sys.argv[1:])", ["a", "b"]), {}),
    ("run", ("cat",), {"stdin": BLOB}),
    ("run", ("cat in.txt; echo \"$X\"",), {"files": {"in.txt": "data\n"}, "env": {"X": "y"}}),
    ("run", ("sleep 5",), {"timeout": 0.3}),
    ("run", ("head -c 100000 /dev/zero",), {"limits": {"stdout": 1000}}),
    ("run", ("kill -9 $$",), {}),
]
SAME = ("status", "exit_code", "signal", "stdout_bytes", "stdout_truncated", "stderr_bytes",
        "stderr_truncated", "provider", "error", "error_code")


@pytest.mark.parametrize("call,args,kw", REQUESTS, ids=[str(r[1][0])[:24] for r in REQUESTS])
def test_local_and_remote_agree(psb, client, call, args, kw):
    """The same request gives the same result locally and remotely."""
    a = getattr(psb, call)(*args, **kw)
    b = getattr(client, call)(*args, **kw)
    assert [k for k in SAME if getattr(a, k) != getattr(b, k)] == [], f"local {a} remote {b}"
    assert set(a.to_dict()) == set(b.to_dict())


@pytest.mark.asyncio
async def test_five_at_once_remote(client):
    """Client.arun and arun_code, five at once."""
    assert await five_at_once(client) == ["0\n", "1\n", "2\n", "3\n", "code\n"]


def test_remote_providers_templates(psb, client):
    """Client.providers() and templates() equal the local ones."""
    assert client.providers() == psb.providers()
    assert client.templates() == psb.templates()


def test_remote_unknown_provider(psb, client):
    """Remote: an unknown provider raises the same class as locally."""
    with pytest.raises(psb.SandboxNotFoundError, match="nosuch"):
        client.run("true", provider="nosuch")


def test_remote_limit_above_maximum(psb, client):
    with pytest.raises(psb.InvalidRequestError):
        client.run("true", limits={"memory": 1 << 50})


def test_remote_bad_input_before_request(client):
    """Remote: bad input is refused before any request, naming the argument."""
    with pytest.raises(ValueError, match="'timeout'"):
        client.run("true", timeout=-1)


def test_arun_bad_input_at_call(client):
    """arun: bad input raises at the call, before any await."""
    with pytest.raises(TypeError, match="'command'"):
        client.arun(b"true")


def test_remote_no_token(psb, server):
    with pytest.raises(psb.AuthError):
        psb.Client(server.url).run("true")


def test_remote_wrong_token(psb, server):
    with pytest.raises(psb.AuthError):
        psb.Client(server.url, token=server.token + "x").run("true")


def test_client_bad_url(psb):
    """Client('ftp://...'): ValueError naming 'url'."""
    with pytest.raises(ValueError, match="'url'"):
        psb.Client("ftp://127.0.0.1/")


def test_client_repr_hides_token(client, server):
    assert server.token not in repr(client), repr(client)


def test_server_gone(psb, tmp_path):
    """A server that is gone: ServerError naming its URL; it stopped
    cleanly, with no sanitizer report and the token never logged."""
    srv = Server(str(tmp_path))
    assert srv.url is not None, srv.text()[-600:]
    c = psb.Client(srv.url, token=srv.token, timeout=60)
    assert c.run("echo hi").stdout == "hi\n"
    status = srv.stop()
    with pytest.raises(psb.ServerError, match=srv.url):
        c.run("true")
    assert srv.clean(status), f"exit {status}\n" + srv.text()[-1500:]
