"""tests/python/files.py - Sandbox.list_files and alist_files, in the
process and through a real polysandboxd, printing TAP.

Run by files.sh under `make check`.  Both runners list the same sandbox
contents and must give equal FileEntry lists and the same exceptions.
"""

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, finish, plan, raises, start, stop  # noqa: E402
import polysandbox as psb  # noqa: E402

PLAN = 2 * 5 + 3
plan(PLAN)
tmp, server, client, local = start("ps-python-files.", 60)
tag = os.urandom(4).hex()
# A name that is not UTF-8: its bytes kept in raw, shown with U+FFFD.
ODD = b"odd\xff"


def listing(runner, name):
    """list_files and alist_files of runner; 5 checks; the entries."""
    sb = runner.create_sandbox(provider="local", labels={"test": "files-" + tag, "r": name},
                               ttl=300)
    try:
        sb.upload("d/a.txt", "hello")
        sb.upload("d/.h", b"\0" * 300)
        sb.upload("d/sub/c", "c")
        r = sb.exec("touch -d @1700000000 d/a.txt && ln -s /etc/passwd d/ln && "
                    "printf x > \"d/$(printf 'odd\\377')\"")
        got = sb.list_files("d")
        by = {e.name: e for e in got}
        check(f"{name}: list_files: every entry, with type, size and mtime",
              r.status == "ok" and isinstance(got, psb.FileList) and len(got) == 5
              and not got.truncated
              and by.get("a.txt") == psb.FileEntry("a.txt", "file", 5, 1700000000, b"a.txt")
              and by.get(".h") and by[".h"].size == 300 and by[".h"].type == "file"
              and by.get("sub") and by["sub"].type == "directory"
              and by.get("ln") and by["ln"].type == "symlink", f"{r}\n{got}")
        odd = [e for e in got if e.raw == ODD]
        check(f"{name}: a name that is not UTF-8: raw has its bytes, name U+FFFD",
              len(odd) == 1 and odd[0].name == "odd\ufffd", got)
        top = asyncio.run(sb.alist_files())
        two = sb.list_files("d", limit=2)
        check(f"{name}: alist_files() lists the work directory; limit=2 truncates",
              [e.name for e in top] == ["d"] and top[0].type == "directory"
              and len(two) == 2 and two.truncated, f"{top}\n{two}")
        ok1, e1 = raises(psb.SandboxNotFoundError, sb.list_files, "d/a.txt")
        ok2, e2 = raises(psb.SandboxNotFoundError, sb.list_files, "nosuch")
        check(f"{name}: a file or a missing path: SandboxNotFoundError naming it",
              ok1 and ok2 and "d/a.txt" in str(e1) and "nosuch" in str(e2), f"{e1}\n{e2}")
        ok1, e1 = raises(ValueError, sb.list_files, "../x", match="'path'")
        ok2, e2 = raises(ValueError, sb.list_files, "d", limit=0, match="'limit'")
        check(f"{name}: bad path and limit name the argument", ok1 and ok2, f"{e1}\n{e2}")
        return sorted(got, key=lambda e: e.raw)
    finally:
        sb.destroy()


mine = listing(local, "local")
theirs = listing(client, "client")
strip = [(e.name, e.type, e.size, e.raw) for e in mine]
check("local and server mode give the same entries (but the times)",
      strip == [(e.name, e.type, e.size, e.raw) for e in theirs], f"{mine}\n{theirs}")

stop(tmp, server, local)
finish(PLAN)
