"""tests/python/test_asyncio.py - what issue 18 asks of the package under
asyncio beyond the ported checks, in the process and through a real
polysandboxd (conftest.py's server), with pytest-asyncio: many
concurrent sandboxes from one event loop and no leak of fds or threads,
a cancelled task's exec killed, the exception hierarchy, binary data
round trips.

Run by asyncio.sh under `make check`.
"""

import asyncio
import os
import threading
import time

import pytest

BLOB = bytes(range(256)) * 4
# Sandboxes at once (issue 18 says 200; a lean default for `make check`
# on a shared machine, PSB_TEST_SANDBOXES raises it).
SANDBOXES = int(os.environ.get("PSB_TEST_SANDBOXES", "24"))


@pytest.fixture
def runner(named):
    """The module's Local, then the session's Client (see conftest.py)."""
    return named[1]


def open_fds():
    return sorted(os.listdir("/proc/self/fd"))


def threads():
    """Python's threads and the process's (the library's own too)."""
    return threading.active_count(), len(os.listdir("/proc/self/task"))


async def one_sandbox(psb, runner, i):
    async with psb.Sandbox.create(runner, provider="local", ttl=300) as sb:
        r = await sb.aexec(f"echo {i}")
        return sb.id, r.stdout


async def many(psb, runner):
    return await asyncio.gather(*[one_sandbox(psb, runner, i) for i in range(SANDBOXES)])


@pytest.mark.asyncio
async def test_many_sandboxes_one_loop_no_leak(psb, runner):
    """SANDBOXES sandboxes at once from one event loop, each with its own
    output and id, all destroyed; fds and threads the same before and
    after (a first round warms up what is made once and kept: the
    loop's default executor keeps its idle worker threads)."""
    await many(psb, runner)
    fds0, th0 = open_fds(), threads()
    got = await many(psb, runner)
    assert [out for _, out in got] == [f"{i}\n" for i in range(SANDBOXES)]
    assert len({sid for sid, _ in got}) == SANDBOXES
    # Worker threads of the default executor may end a moment later.
    deadline = time.monotonic() + 10
    while threads() != th0 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert open_fds() == fds0
    assert threads() == th0
    left = [s for s in runner.sandboxes() if s.id in {sid for sid, _ in got}]
    assert left == [], left


def alive(marker):
    """Pids whose command line holds marker."""
    pids = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        pids.append(pid)
            except OSError:
                pass
    return pids


async def cancel_and_watch(coro_of, marker):
    """Run coro_of(command) as a task, wait for its process to show up,
    cancel the task; (how it ended, pids of the command still alive ten
    seconds on at most)."""
    task = asyncio.create_task(coro_of(f"exec sleep {marker}"))
    deadline = time.monotonic() + 30
    while not alive(marker) and time.monotonic() < deadline and not task.done():
        await asyncio.sleep(0.05)
    started = bool(alive(marker))
    task.cancel()
    try:
        await task
        how = "not cancelled"
    except asyncio.CancelledError:
        how = "cancelled"
    deadline = time.monotonic() + 10
    while alive(marker) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return started, how, alive(marker)


def marker():
    # A sleep of 30 s with a unique fraction: its process is found by it.
    return f"30.{int.from_bytes(os.urandom(4), 'big'):010d}"


@pytest.mark.asyncio
async def test_cancel_arun_kills_exec(runner):
    """Cancelling the task awaiting arun kills the command it ran."""
    started, how, left = await cancel_and_watch(lambda c: runner.arun(c, timeout=60), marker())
    assert started and how == "cancelled" and left == [], (started, how, left)


@pytest.mark.asyncio
async def test_cancel_sandbox_aexec_kills_exec(psb, runner):
    """Cancelling the task awaiting Sandbox.aexec kills the command; the
    sandbox runs the next exec."""
    async with psb.Sandbox.create(runner, provider="local", ttl=300) as sb:
        started, how, left = await cancel_and_watch(lambda c: sb.aexec(c, timeout=60),
                                                    marker())
        assert started and how == "cancelled" and left == [], (started, how, left)
        r = await sb.aexec("echo next")
        assert r.stdout == "next\n", r


# ---- exceptions ---------------------------------------------------------------
CLASSES = ["InvalidRequestError", "ConfigError", "SandboxNotFoundError", "ProviderError",
           "AuthError", "SandboxTimeoutError", "CancelledRunError", "ServerError"]


@pytest.mark.parametrize("name", CLASSES)
def test_exception_in_hierarchy(psb, name):
    """Every error class is a SandboxError, exported by the package, and
    carries its message, code and provider."""
    cls = getattr(psb, name)
    assert issubclass(cls, psb.SandboxError)
    e = cls("the message", 7, "docker")
    assert (str(e), e.message, e.code, e.provider) == ("the message", "the message", 7, "docker")


def test_exception_builtin_bases(psb):
    """The classes a caller may catch by a built-in base."""
    assert issubclass(psb.InvalidRequestError, ValueError)
    assert issubclass(psb.SandboxNotFoundError, LookupError)
    assert issubclass(psb.SandboxTimeoutError, TimeoutError)


def test_every_code_has_a_class():
    """Every library code and every server error name maps to one class,
    the same for a code and its name; loader refusals (32 and up) are
    ProviderError."""
    from polysandbox import errors
    for code, (name, cls) in errors._CODES.items():
        local = errors.error_for_code(code, f"m{code}", "p")
        remote = errors.error_for_remote(name, f"m{code}", "p")
        assert type(local) is cls and type(remote) is cls, (code, name)
        assert (local.code, local.message, local.provider) == (code, f"m{code}", "p")
        assert remote.code == code
    assert type(errors.error_for_code(40, "x")) is errors.ProviderError
    assert type(errors.error_for_code(31, "x")) is errors.SandboxError
    assert type(errors.error_for_remote("no_such_name", "x")) is errors.ServerError


def test_library_error_carries_message(psb, runner):
    """A real error of the library (and of the server) carries its
    message, naming what was wrong, and its code."""
    with pytest.raises(psb.SandboxNotFoundError) as e:
        runner.run("true", provider="nosuch")
    assert "nosuch" in e.value.message and e.value.code == 6, e.value


# ---- binary data --------------------------------------------------------------
@pytest.mark.asyncio
async def test_binary_upload_download(psb, runner):
    """Every byte value through aupload, the command and adownload."""
    async with psb.Sandbox.create(runner, provider="local", ttl=300) as sb:
        await sb.aupload("in.bin", BLOB)
        r = await sb.aexec("cat in.bin; cat in.bin > out.bin")
        assert r.stdout_bytes == BLOB
        assert await sb.adownload("out.bin") == BLOB


def test_binary_files_and_output(runner):
    """Bytes given as files and stdin come back byte for byte on both streams."""
    r = runner.run("cat b.bin; cat >&2", files={"b.bin": BLOB}, stdin=BLOB[::-1])
    assert r.status == "ok", r
    assert r.stdout_bytes == BLOB and r.stderr_bytes == BLOB[::-1]
