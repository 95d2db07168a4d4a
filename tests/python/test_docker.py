"""tests/python/test_docker.py - the package's main calls on the docker
provider as on the local one, in the process, with pytest: one-shot runs,
a language template, limits, exec in a persistent sandbox, its files,
streaming, the async calls and find, errors.

Run by docker.sh under `make check` (which makes sure dockerd answers and
the test image exists, as tests/docker do; tests/config's docker provider
maps the templates' images to it).  Each test runs once per provider; the
docker ones are skipped, with the reason, when a run on docker fails to
start (no dockerd, no image, the provider not built).
"""

import os

import pytest

from conftest import CFFI_BUILT

PROVIDERS = ["local", "docker"]
TAG = os.urandom(4).hex()
BLOB = bytes(range(256)) * 4


@pytest.fixture(scope="module")
def runners(psb):
    """{"ctypes": Local, "cffi": Local (when built)}, closed at the end."""
    made = {"ctypes": psb.Local(backend="ctypes")}
    if CFFI_BUILT:
        made["cffi"] = psb.Local(backend="cffi")
    yield made
    for r in made.values():
        r.close()


@pytest.fixture(scope="module")
def docker_up(psb, runners):
    """None when a run on docker starts, else why it does not."""
    try:
        r = runners["ctypes"].run("true", provider="docker", timeout=120)
    except psb.SandboxError as e:
        return f"a run on the docker provider fails: {e}"
    return None if r.status == "ok" else f"a run on the docker provider: {r.status}: {r.error}"


@pytest.fixture(params=PROVIDERS)
def prov(request, docker_up):
    """The provider of the test (docker skipped when it does not run)."""
    if request.param == "docker" and docker_up is not None:
        pytest.skip(docker_up)
    return request.param


@pytest.fixture
def lo(runners):
    return runners["ctypes"]


def test_run_shell_exit_stderr(lo, prov):
    r = lo.run("echo hi; echo oops >&2; exit 3", provider=prov)
    assert r.status == "nonzero_exit" and r.exit_code == 3 and r.stdout == "hi\n" \
        and r.stderr == "oops\n" and r.provider == prov and not r.success, r


def test_run_argv_ok(lo, prov):
    r = lo.run(["sh", "-c", "echo \"$X\"; cat in.txt"], env={"X": "y z"},
               files={"in.txt": "data\n"}, provider=prov)
    assert r.status == "ok" and r.stdout == "y z\ndata\n" and r.provider == prov, r


def test_run_code_template(lo, prov):
    """A language template (docker: its image, mapped to the test image)."""
    r = lo.run_code("python", "import sys; print(6*7, sys.argv[1:])", ["a"], provider=prov)
    assert r.status == "ok" and r.stdout == "42 ['a']\n" and r.provider == prov, r


def test_run_through_server(client, prov):
    """The same run through polysandboxd (its configuration is the
    tests', docker included)."""
    r = client.run_code("python", "print(6*7)", provider=prov)
    assert r.status == "ok" and r.stdout == "42\n" and r.provider == prov, r


def test_binary_stdin(lo, prov):
    r = lo.run("cat", stdin=BLOB, provider=prov)
    assert r.status == "ok" and r.stdout_bytes == BLOB, r


def test_timeout(lo, prov):
    r = lo.run("sleep 30", timeout=1, provider=prov)
    assert r.status == "timeout" and r.timed_out and r.exit_code is None, r


def test_output_limit(lo, prov):
    r = lo.run("head -c 100000 /dev/zero", limits={"stdout": 1000}, provider=prov)
    assert r.status == "output_limit" and r.truncated and len(r.stdout_bytes) <= 1000, r


def test_errors(psb, lo, prov):
    """An unknown template and an out-of-range limit: the classes that name them."""
    with pytest.raises(psb.SandboxError, match="no-such-lang"):
        lo.run_code("no-such-lang", "x", provider=prov)
    with pytest.raises((psb.SandboxError, ValueError), match="memory"):
        lo.run("true", limits={"memory": -1}, provider=prov)


@pytest.mark.parametrize("backend", ["ctypes", "cffi", "client"])
def test_sandbox_exec_files_destroy(request, psb, runners, prov, backend):
    """A persistent sandbox, on each backend and through polysandboxd:
    state kept between execs, upload, download, list_files; destroyed,
    its calls raise."""
    if backend == "client":
        runner = request.getfixturevalue("client")
    elif backend not in runners:
        pytest.skip("the cffi backend is not built (configure found no python3-cffi)")
    else:
        runner = runners[backend]
    labels = {"test": "python-docker-" + TAG, "b": backend}
    sb = runner.create_sandbox(provider=prov, labels=labels, ttl=300, env={"A": "1"})
    try:
        assert sb.provider == prov and sb.labels == labels, vars(sb)
        r = sb.exec("echo kept > k.txt; echo \"$A\"")
        assert r.status == "ok" and r.stdout == "1\n", r
        sb.upload("d/in.bin", BLOB)
        r = sb.exec(["sh", "-c", "cat k.txt; wc -c < d/in.bin"])
        assert r.status == "ok" and r.stdout.split() == ["kept", "1024"], r
        assert sb.download("d/in.bin") == BLOB
        names = {(e.name, e.type, e.size) for e in sb.list_files("d")}
        assert names == {("in.bin", "file", 1024)}, names
        r = sb.exec_code("python", "print(open('k.txt').read().strip())")
        assert r.status == "ok" and r.stdout == "kept\n", r
    finally:
        sb.destroy()
    with pytest.raises(psb.SandboxError, match=sb.id):
        sb.exec("true")
    with pytest.raises(psb.SandboxNotFoundError):
        runner.attach(sb.id, provider=prov)


def test_stream(runners, prov):
    """stream: the output in chunks, bytes as written, then the result."""
    with runners["ctypes"].create_sandbox(provider=prov, ttl=300) as sb:
        chunks = list(sb.stream(["sh", "-c", "printf '\\377\\000x'; printf 'e\\n' >&2"]))
    out = b"".join(c.data for c in chunks if c.stream == "stdout")
    assert out == b"\xff\x00x" and [c.data for c in chunks if c.stream == "stderr"] == [b"e\n"], \
        chunks


@pytest.mark.asyncio
async def test_async_with_find(psb, runners, prov):
    """async with Sandbox.create: aupload, aexec_code, adownload; found by
    its labels while it lives, destroyed on exit."""
    runner = runners["ctypes"]
    labels = {"test": "python-docker-async-" + TAG, "p": prov}
    async with psb.Sandbox.create(runner, provider=prov, labels=labels) as a:
        await a.aupload("x.txt", "async\n")
        r = await a.aexec_code("python", "print(open('x.txt').read(), end='')")
        data = await a.adownload("x.txt")
        found = await psb.Sandbox.find(labels, runner=runner)
        sid = a.id
    left = await psb.Sandbox.find(labels, runner=runner)
    assert r.stdout == "async\n" and data == b"async\n", r
    assert sid in [i.id for i in found] and sid not in [i.id for i in left], (found, left)
