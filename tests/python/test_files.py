"""tests/python/test_files.py - Sandbox.list_files and alist_files, in
the process and through a real polysandboxd (conftest.py's server), with
pytest.

Run by files.sh under `make check`.  Every runner (Local on ctypes, on
cffi when it is built, and Client) lists the same sandbox contents and
must give equal FileEntry lists and the same exceptions.
"""

import os

import pytest

from conftest import CFFI_BUILT

RUNNERS = ["local", "client"] + (["cffi"] if CFFI_BUILT else [])
# A name that is not UTF-8: its bytes kept in raw, shown with U+FFFD.
ODD = b"odd\xff"


@pytest.fixture(scope="module")
def boxes(psb, client):
    """A sandbox per runner with the same files under d/; name -> (the
    sandbox, the setup exec's result, list_files("d"))."""
    tag = os.urandom(4).hex()
    local = psb.Local(backend="ctypes")
    cffi = psb.Local(backend="cffi") if CFFI_BUILT else None
    made = {}
    try:
        for name in RUNNERS:
            runner = {"local": local, "client": client, "cffi": cffi}[name]
            sb = runner.create_sandbox(provider="local", ttl=300,
                                       labels={"test": "files-" + tag, "r": name})
            made[name] = sb
            sb.upload("d/a.txt", "hello")
            sb.upload("d/.h", b"\0" * 300)
            sb.upload("d/sub/c", "c")
            r = sb.exec("touch -d @1700000000 d/a.txt && ln -s /etc/passwd d/ln && "
                        "printf x > \"d/$(printf 'odd\\377')\"")
            made[name] = (sb, r, sb.list_files("d"))
        yield made
    finally:
        for v in made.values():
            (v[0] if isinstance(v, tuple) else v).destroy()
        local.close()
        if cffi is not None:
            cffi.close()


@pytest.mark.parametrize("name", RUNNERS)
def test_list_files_every_entry(psb, boxes, name):
    """list_files: every entry, with type, size and mtime."""
    _, r, got = boxes[name]
    by = {e.name: e for e in got}
    assert r.status == "ok", r
    assert isinstance(got, psb.FileList) and len(got) == 5 and not got.truncated, got
    assert by.get("a.txt") == psb.FileEntry("a.txt", "file", 5, 1700000000, b"a.txt"), got
    assert by.get(".h") and by[".h"].size == 300 and by[".h"].type == "file", got
    assert by.get("sub") and by["sub"].type == "directory", got
    assert by.get("ln") and by["ln"].type == "symlink", got


@pytest.mark.parametrize("name", RUNNERS)
def test_list_files_name_not_utf8(boxes, name):
    """A name that is not UTF-8: raw has its bytes, name U+FFFD."""
    got = boxes[name][2]
    odd = [e for e in got if e.raw == ODD]
    assert len(odd) == 1 and odd[0].name == "odd\ufffd", got


@pytest.mark.asyncio
@pytest.mark.parametrize("name", RUNNERS)
async def test_alist_files_and_limit(boxes, name):
    """alist_files() lists the work directory; limit=2 truncates."""
    sb = boxes[name][0]
    top = await sb.alist_files()
    two = sb.list_files("d", limit=2)
    assert [e.name for e in top] == ["d"] and top[0].type == "directory", top
    assert len(two) == 2 and two.truncated, two


@pytest.mark.parametrize("name", RUNNERS)
@pytest.mark.parametrize("path", ["d/a.txt", "nosuch"])
def test_list_files_not_a_directory(psb, boxes, name, path):
    """A file or a missing path: SandboxNotFoundError naming it."""
    with pytest.raises(psb.SandboxNotFoundError, match=path):
        boxes[name][0].list_files(path)


@pytest.mark.parametrize("name", RUNNERS)
def test_list_files_bad_arguments(boxes, name):
    """Bad path and limit name the argument."""
    sb = boxes[name][0]
    with pytest.raises(ValueError, match="'path'"):
        sb.list_files("../x")
    with pytest.raises(ValueError, match="'limit'"):
        sb.list_files("d", limit=0)


def test_local_and_server_same_entries(boxes):
    """Local (each backend) and server mode give the same entries (but
    the times)."""
    seen = {n: [(e.name, e.type, e.size, e.raw) for e in sorted(boxes[n][2],
                                                              key=lambda e: e.raw)]
            for n in RUNNERS}
    assert all(v == seen["local"] for v in seen.values()), seen
