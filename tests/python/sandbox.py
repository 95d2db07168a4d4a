"""tests/python/sandbox.py - the Python package's stateful sandboxes,
run_many and cancellation, in the process and through a real polysandboxd,
printing TAP.

Run by sandbox.sh under `make check`.  Every check runs on both runners
(the in-process Local and a Client) and the two must agree: the same
results, the same exceptions.
"""

import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import cancel_later, check, finish, plan, raises, start, stop  # noqa: E402
import polysandbox as psb  # noqa: E402

PLAN = 2 * 16 + 6
plan(PLAN)
tmp, server, client, local = start("ps-python-sandbox.", 60)
tag = os.urandom(4).hex()    # labels of this run only
blob = bytes(range(256)) * 64


def sandbox_calls(runner, name):
    """The sandbox calls and run_many of runner; 16 checks."""
    labels = {"test": "python-" + tag, "runner": name}
    sb = runner.create_sandbox(provider="local", labels=labels, ttl=300, env={"CREATED": "yes"},
                               limits={"memory": 256 << 20})
    check(f"{name}: create_sandbox: an id, its provider, its labels, created",
          sb.id and sb.provider == "local" and sb.labels == labels and sb.created, vars(sb))

    r = sb.exec("echo \"$CREATED $X\"; pwd", env={"X": "exec"})
    cwd = r.stdout.splitlines()[-1] if r.stdout else ""
    check(f"{name}: exec a shell line: the create's env and the exec's",
          r.status == "ok" and r.stdout.startswith("yes exec\n") and r.sandbox_id == sb.id, r)
    r = sb.exec(["sh", "-c", "cat; echo \" in $(pwd)\"; exit 4"], stdin="in", cwd=cwd)
    check(f"{name}: exec an argv with stdin and cwd: nonzero_exit, its code",
          r.status == "nonzero_exit" and r.exit_code == 4 and r.stdout == f"in in {cwd}\n", r)
    r = sb.exec("sleep 5", timeout=0.3)
    check(f"{name}: exec timeout: status timeout", r.timed_out, r)

    sb.upload("d/blob.bin", blob)
    sb.upload("run.sh", "#!/bin/sh\necho ran\n", mode=0o755)
    r = sb.exec("./run.sh && wc -c < d/blob.bin && echo kept > state.txt")
    got = sb.download("d/blob.bin")
    check(f"{name}: upload (binary, mode 0755), exec sees both, download gives the bytes back",
          r.stdout == f"ran\n{len(blob)}\n" and got == blob, f"{r} {len(got)}")

    again = runner.attach(sb.id)
    r = again.exec("cat state.txt")
    listed = runner.sandboxes(labels=labels)
    check(f"{name}: attach by id: the same sandbox, its state kept, its labels; "
          "sandboxes(labels=) finds it alone",
          again.id == sb.id and not again.created and r.stdout == "kept\n"
          and labels.items() <= again.labels.items()
          and [i.id for i in listed] == [sb.id] and labels.items() <= listed[0].labels.items(),
          f"{r}\n{again.labels}\n{listed}")
    again.close()

    one = runner.get_or_create_sandbox(provider="local", labels={"goc": tag, "r": name})
    two = runner.get_or_create_sandbox(provider="local", labels={"goc": tag, "r": name})
    check(f"{name}: get_or_create_sandbox: made once, then found",
          one.created and not two.created and one.id == two.id, f"{vars(one)}\n{vars(two)}")
    two.close()
    one.destroy()

    ok_, e = raises(ValueError, sb.upload, "../x", b"", match="'path'")
    ok2, e2 = raises(TypeError, sb.exec, "true", provider="local", match="'provider'")
    ok3, e3 = raises(ValueError, runner.create_sandbox, labels={"a=b": "c"}, match="'labels'")
    ok4, e4 = raises(ValueError, runner.get_or_create_sandbox, provider="local",
                     match="'labels'")
    check(f"{name}: bad input names the argument (path, an option exec has not, labels)",
          ok_ and ok2 and ok3 and ok4, f"{e}\n{e2}\n{e3}\n{e4}")
    ok_, e = raises(psb.SandboxNotFoundError, sb.download, "nosuch.txt")
    ok2, e2 = raises(psb.InvalidRequestError, sb.download, "d/blob.bin", max_bytes=10)
    check(f"{name}: download: a file that is not there: SandboxNotFoundError; one above "
          "max_bytes: InvalidRequestError, never cut short", ok_ and ok2, f"{e}\n{e2}")

    with sb:
        pass          # `with` destroys it
    ok_, e = raises(psb.SandboxError, sb.exec, "true", match=sb.id)
    ok2, e2 = raises(psb.SandboxNotFoundError, runner.attach, sb.id)
    check(f"{name}: destroyed: calls raise, attach raises SandboxNotFoundError, not listed",
          ok_ and ok2 and not runner.sandboxes(labels=labels), f"{e}\n{e2}")

    async def in_async():
        async with psb.Sandbox.create(runner, provider="local", labels=labels) as a:
            await a.aupload("x.txt", "async\n")
            r = await a.aexec_code("sh", "cat x.txt")
            data = await a.adownload("x.txt")
            sid = a.id
        return r, data, sid, await psb.Sandbox.find(labels, runner=runner)
    r, data, sid, left = asyncio.run(in_async())
    check(f"{name}: async with Sandbox.create: aupload, aexec_code, adownload; "
          "destroyed on exit",
          r.stdout == "async\n" and data == b"async\n" and sid not in [i.id for i in left],
          f"{r} {data} {left}")

    async def cancel_exec():
        a = await psb.Sandbox.create(runner, provider="local")
        how, _ = await cancel_later(a.aexec("sleep 30", timeout=60))
        t0 = time.monotonic()
        # The sandbox is free again only once the command stopped.
        r = await a.aexec("echo after")
        took = time.monotonic() - t0
        await a.adestroy()
        return how, r, took
    how, r, took = asyncio.run(cancel_exec())
    print(f"# {name}: the exec after a cancelled one ended {took:.2f} s later", flush=True)
    # Generous: it tells a stopped command from one that ran its 30 s.
    check(f"{name}: cancelling an aexec stops its command; the sandbox goes on",
          how == "cancelled" and r.stdout == "after\n" and took < 10, f"{how} {took:.1f} s {r}")

    async def destroy_running():
        a = await psb.Sandbox.create(runner, provider="local")
        t = asyncio.create_task(a.aexec("sleep 30", timeout=60))
        await asyncio.sleep(0.5)
        t0 = time.monotonic()
        await a.adestroy()
        r = await t
        return r, time.monotonic() - t0
    r, took = asyncio.run(destroy_running())
    check(f"{name}: destroy stops an exec under way: its result is sandbox_error, cancelled",
          r.status == "sandbox_error" and r.error_code == 21 and took < 10, f"{took:.1f} s {r}")

    reqs = ["echo 0", ["echo", "1"], {"language": "sh", "code": "echo $1", "args": ["2"]},
            {"command": "echo $Y", "env": {"Y": "3"}}, "echo 4 >&2; exit 5"]
    seen = []
    rs = runner.run_many(reqs, concurrency=2, progress=lambda d, t, x: seen.append((d, t)))
    check(f"{name}: run_many: results in order, progress once each",
          [x.stdout for x in rs] == ["0\n", "1\n", "2\n", "3\n", ""] and rs[4].exit_code == 5
          and seen == [(i, 5) for i in range(1, 6)], f"{rs}\n{seen}")

    async def many():
        t0 = time.monotonic()
        rs = await runner.arun_many(["sleep 0.3; echo a", "sleep 0.3; echo b",
                                     "sleep 0.3; echo c"], concurrency=1)
        return rs, time.monotonic() - t0
    rs, took = asyncio.run(many())
    # A lower bound only: one at a time cannot take less than 3 x 0.3 s.
    check(f"{name}: arun_many with concurrency=1: in order, one at a time",
          [x.stdout for x in rs] == ["a\n", "b\n", "c\n"] and took >= 0.9, f"{rs} {took:.2f}")

    rs = runner.run_many(["echo ok", {"command": "true", "provider": "nosuch"}],
                         return_exceptions=True)
    ok_, e = raises(psb.SandboxNotFoundError, runner.run_many,
                    ["true", {"command": "true", "provider": "nosuch"}])
    ok2, e2 = raises(TypeError, runner.run_many, ["true", 7], match="requests[1]")
    check(f"{name}: run_many: a refusal raises, or takes its place; bad input names requests[i]",
          rs[0].stdout == "ok\n" and isinstance(rs[1], psb.SandboxNotFoundError) and ok_ and ok2,
          f"{rs}\n{e}\n{e2}")


sandbox_calls(local, "local")
sandbox_calls(client, "client")

# The same exec requests give the same results both ways.
SAME = ("status", "exit_code", "signal", "stdout_bytes", "stderr_bytes", "stdout_truncated",
        "provider", "error_code")
diffs = []
with local.create_sandbox(provider="local") as a, client.create_sandbox(provider="local") as b:
    for args, kw in ((("cat",), {"stdin": blob}), (("kill -9 $$",), {}),
                     (("head -c 5000 /dev/zero; cat f",), {"files": {"f": "x"}})):
        x, y = a.exec(*args, **kw), b.exec(*args, **kw)
        d = [k for k in SAME if getattr(x, k) != getattr(y, k)]
        if d or set(x.to_dict()) != set(y.to_dict()):
            diffs.append(f"{args}: {d}\n{x}\n{y}")
check("the same execs give the same results in the process and through polysandboxd",
      not diffs, "\n".join(diffs))


async def cancel_run():
    """Cancel a Client run once the server has it; the server's in-flight
    count, polled."""
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
    return how, busy, time.monotonic() - t0


how, busy, took = asyncio.run(cancel_run())
print(f"# the server's run stopped {took:.2f} s after the cancel", flush=True)
check("cancelling a Client.arun closes its connection: the server stops the run",
      how == "cancelled" and max(busy) >= 1 and busy[-1] == 0, f"{how} {busy}")


how, took = asyncio.run(cancel_later(local.arun_many(["sleep 30"] * 3, concurrency=3)))
check("cancelling arun_many stops every run under way", how == "cancelled" and took < 10,
      f"{how} {took:.1f} s")

ok_, e = raises(TypeError, psb.Sandbox.create, runner="local", match="'runner'")
check("Sandbox.create(runner='local'): TypeError naming 'runner'", ok_, e)

stop(tmp, server, local)
finish(PLAN)
