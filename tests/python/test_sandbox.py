"""tests/python/test_sandbox.py - the Python package's stateful
sandboxes, run_many and cancellation, in the process and through a real
polysandboxd (conftest.py's server), with pytest.

Run by sandbox.sh under `make check`.  Every check runs on both runners
(the in-process Local and a Client) and the two must agree: the same
results, the same exceptions.
"""

import asyncio
import os
import time

import pytest

from harness import cancel_later

TAG = os.urandom(4).hex()    # labels of this run only
BLOB = bytes(range(256)) * 64


@pytest.fixture(scope="module")
def box(named_backends):
    """A sandbox of the runner, with labels, a create env and a memory
    limit; (the sandbox, its labels).  Destroyed at the end."""
    name, runner = named_backends
    labels = {"test": "python-" + TAG, "runner": name}
    sb = runner.create_sandbox(provider="local", labels=labels, ttl=300,
                               env={"CREATED": "yes"}, limits={"memory": 256 << 20})
    yield sb, labels
    sb.destroy()


def test_create_sandbox(box):
    """create_sandbox: an id, its provider, its labels, created."""
    sb, labels = box
    assert sb.id and sb.provider == "local" and sb.labels == labels and sb.created, vars(sb)


def test_exec_env(box):
    """exec a shell line: the create's env and the exec's."""
    sb, _ = box
    r = sb.exec("echo \"$CREATED $X\"; pwd", env={"X": "exec"})
    assert r.status == "ok" and r.stdout.startswith("yes exec\n") and r.sandbox_id == sb.id, r


def test_exec_argv_stdin_cwd(box):
    """exec an argv with stdin and cwd: nonzero_exit, its code."""
    sb, _ = box
    cwd = sb.exec("pwd").stdout.splitlines()[-1]
    r = sb.exec(["sh", "-c", "cat; echo \" in $(pwd)\"; exit 4"], stdin="in", cwd=cwd)
    assert r.status == "nonzero_exit" and r.exit_code == 4 and r.stdout == f"in in {cwd}\n", r


def test_exec_timeout(box):
    r = box[0].exec("sleep 5", timeout=0.3)
    assert r.timed_out, r


def test_upload_download(box):
    """upload (binary, mode 0755), exec sees both, download gives the bytes back."""
    sb, _ = box
    sb.upload("d/blob.bin", BLOB)
    sb.upload("run.sh", "#!/bin/sh\necho ran\n", mode=0o755)
    r = sb.exec("./run.sh && wc -c < d/blob.bin")
    got = sb.download("d/blob.bin")
    assert r.stdout == f"ran\n{len(BLOB)}\n" and got == BLOB, f"{r} {len(got)}"


def test_attach_keeps_state(named_backends, box):
    """attach by id: the same sandbox, its state kept, its labels;
    sandboxes(labels=) finds it alone."""
    _, runner = named_backends
    sb, labels = box
    assert sb.exec("echo kept > state.txt").status == "ok"
    again = runner.attach(sb.id)
    try:
        r = again.exec("cat state.txt")
        listed = runner.sandboxes(labels=labels)
        assert again.id == sb.id and not again.created and r.stdout == "kept\n", r
        assert labels.items() <= again.labels.items(), again.labels
        assert [i.id for i in listed] == [sb.id] and labels.items() <= listed[0].labels.items(), \
            listed
    finally:
        again.close()


def test_get_or_create(named_backends):
    """get_or_create_sandbox: made once, then found."""
    name, runner = named_backends
    one = runner.get_or_create_sandbox(provider="local", labels={"goc": TAG, "r": name})
    two = runner.get_or_create_sandbox(provider="local", labels={"goc": TAG, "r": name})
    try:
        assert one.created and not two.created and one.id == two.id, f"{vars(one)}\n{vars(two)}"
    finally:
        two.close()
        one.destroy()


def test_bad_input_names_argument(named_backends, box):
    """Bad input names the argument (path, an option exec has not, labels)."""
    _, runner = named_backends
    sb, _ = box
    with pytest.raises(ValueError, match="'path'"):
        sb.upload("../x", b"")
    with pytest.raises(TypeError, match="'provider'"):
        sb.exec("true", provider="local")
    with pytest.raises(ValueError, match="'labels'"):
        runner.create_sandbox(labels={"a=b": "c"})
    with pytest.raises(ValueError, match="'labels'"):
        runner.get_or_create_sandbox(provider="local")


def test_download_refusals(psb, box):
    """download: a file that is not there: SandboxNotFoundError; one above
    max_bytes: InvalidRequestError, never cut short."""
    sb, _ = box
    sb.upload("d/big.bin", BLOB)
    with pytest.raises(psb.SandboxNotFoundError):
        sb.download("nosuch.txt")
    with pytest.raises(psb.InvalidRequestError):
        sb.download("d/big.bin", max_bytes=10)


def test_destroyed(psb, named_backends):
    """destroyed (by `with`): calls raise, attach raises
    SandboxNotFoundError, not listed."""
    name, runner = named_backends
    labels = {"test": "python-gone-" + TAG, "runner": name}
    sb = runner.create_sandbox(provider="local", labels=labels, ttl=300)
    with sb:
        pass          # `with` destroys it
    with pytest.raises(psb.SandboxError, match=sb.id):
        sb.exec("true")
    with pytest.raises(psb.SandboxNotFoundError):
        runner.attach(sb.id)
    assert not runner.sandboxes(labels=labels)


@pytest.mark.asyncio
async def test_async_with(psb, named_backends):
    """async with Sandbox.create: aupload, aexec_code, adownload; destroyed on exit."""
    name, runner = named_backends
    labels = {"test": "python-async-" + TAG, "runner": name}
    async with psb.Sandbox.create(runner, provider="local", labels=labels) as a:
        await a.aupload("x.txt", "async\n")
        r = await a.aexec_code("sh", "cat x.txt")
        data = await a.adownload("x.txt")
        sid = a.id
    left = await psb.Sandbox.find(labels, runner=runner)
    assert r.stdout == "async\n" and data == b"async\n", r
    assert sid not in [i.id for i in left], left


@pytest.mark.asyncio
async def test_cancel_aexec_sandbox_goes_on(psb, named_backends):
    """Cancelling an aexec stops its command; the sandbox goes on.
    Generous: it tells a stopped command from one that ran its 30 s."""
    _, runner = named_backends
    a = await psb.Sandbox.create(runner, provider="local")
    try:
        how, _ = await cancel_later(a.aexec("sleep 30", timeout=60))
        t0 = time.monotonic()
        # The sandbox is free again only once the command stopped.
        r = await a.aexec("echo after")
        took = time.monotonic() - t0
    finally:
        await a.adestroy()
    assert how == "cancelled" and r.stdout == "after\n" and took < 10, f"{how} {took:.1f} s {r}"


@pytest.mark.asyncio
async def test_destroy_stops_running_exec(psb, named_backends):
    """destroy stops an exec under way: its result is sandbox_error, cancelled."""
    _, runner = named_backends
    a = await psb.Sandbox.create(runner, provider="local")
    t = asyncio.create_task(a.aexec("sleep 30", timeout=60))
    await asyncio.sleep(0.5)
    t0 = time.monotonic()
    await a.adestroy()
    r = await t
    took = time.monotonic() - t0
    assert r.status == "sandbox_error" and r.error_code == 21 and took < 10, f"{took:.1f} s {r}"


def test_run_many(named_backends):
    """run_many: results in order, progress once each."""
    _, runner = named_backends
    reqs = ["echo 0", ["echo", "1"], {"language": "sh", "code": "echo $1", "args": ["2"]},
            {"command": "echo $Y", "env": {"Y": "3"}}, "echo 4 >&2; exit 5"]
    seen = []
    rs = runner.run_many(reqs, concurrency=2, progress=lambda d, t, x: seen.append((d, t)))
    assert [x.stdout for x in rs] == ["0\n", "1\n", "2\n", "3\n", ""] and rs[4].exit_code == 5
    assert seen == [(i, 5) for i in range(1, 6)]


@pytest.mark.asyncio
async def test_arun_many_one_at_a_time(named_backends):
    """arun_many with concurrency=1: in order, one at a time (a lower
    bound only: one at a time cannot take less than 3 x 0.3 s)."""
    _, runner = named_backends
    t0 = time.monotonic()
    rs = await runner.arun_many(["sleep 0.3; echo a", "sleep 0.3; echo b",
                                 "sleep 0.3; echo c"], concurrency=1)
    took = time.monotonic() - t0
    assert [x.stdout for x in rs] == ["a\n", "b\n", "c\n"] and took >= 0.9, f"{rs} {took:.2f}"


def test_run_many_refusals(psb, named_backends):
    """run_many: a refusal raises, or takes its place; bad input names requests[i]."""
    _, runner = named_backends
    rs = runner.run_many(["echo ok", {"command": "true", "provider": "nosuch"}],
                         return_exceptions=True)
    assert rs[0].stdout == "ok\n" and isinstance(rs[1], psb.SandboxNotFoundError), rs
    with pytest.raises(psb.SandboxNotFoundError):
        runner.run_many(["true", {"command": "true", "provider": "nosuch"}])
    with pytest.raises(TypeError, match=r"requests\[1\]"):
        runner.run_many(["true", 7])


# ---- both ways at once -----------------------------------------------------------
SAME = ("status", "exit_code", "signal", "stdout_bytes", "stderr_bytes", "stdout_truncated",
        "provider", "error_code")
EXECS = [(("cat",), {"stdin": BLOB}), (("kill -9 $$",), {}),
         (("head -c 5000 /dev/zero; cat f",), {"files": {"f": "x"}})]


@pytest.mark.parametrize("args,kw", EXECS, ids=["stdin", "killed", "files"])
def test_same_execs_both_ways(local, client, args, kw):
    """The same execs give the same results in the process and through polysandboxd."""
    with local.create_sandbox(provider="local") as a, \
            client.create_sandbox(provider="local") as b:
        x, y = a.exec(*args, **kw), b.exec(*args, **kw)
    assert [k for k in SAME if getattr(x, k) != getattr(y, k)] == [], f"{x}\n{y}"
    assert set(x.to_dict()) == set(y.to_dict())


@pytest.mark.asyncio
async def test_cancel_client_arun_stops_server_run(client):
    """Cancelling a Client.arun closes its connection: the server stops
    the run (its in-flight count, polled)."""
    busy = []

    async def running():
        for _ in range(50):
            await asyncio.sleep(0.1)
            busy.append(client._call("GET", "/v1/status")["in_flight"])
            if busy[-1]:
                return
    how, _ = await cancel_later(client.arun("sleep 30", timeout=60), running)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 10:
        busy.append(client._call("GET", "/v1/status")["in_flight"])
        if busy[-1] == 0:
            break
        await asyncio.sleep(0.1)
    assert how == "cancelled" and max(busy) >= 1 and busy[-1] == 0, f"{how} {busy}"


@pytest.mark.asyncio
async def test_cancel_arun_many(local):
    """Cancelling arun_many stops every run under way."""
    how, took = await cancel_later(local.arun_many(["sleep 30"] * 3, concurrency=3))
    assert how == "cancelled" and took < 10, f"{how} {took:.1f} s"


def test_create_runner_str(psb):
    """Sandbox.create(runner='local'): TypeError naming 'runner'."""
    with pytest.raises(TypeError, match="'runner'"):
        psb.Sandbox.create(runner="local")
