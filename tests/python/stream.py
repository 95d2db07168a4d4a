"""tests/python/stream.py - the Python package's Sandbox.stream/astream,
execute_many/aexecute_many and Result.compile, in the process and through
a real polysandboxd, printing TAP.

Run by stream.sh under `make check`.  That chunks arrive while the
command still runs is shown without timing: the command prints, then
waits for a file the test writes into the sandbox's work directory (a
local sandbox's work/ on the host) only once it has seen that chunk.
"""

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, finish, plan, raises, start, stop  # noqa: E402
import polysandbox as psb  # noqa: E402

PLAN = 2 * 11 + 4
plan(PLAN)
tmp, server, client, local = start("ps-python-stream.", 120)

# Prints, waits (at most a minute: a bound on a hang, never reached when
# it works) for the file go, then writes to both streams.
GATED = ("echo first; i=0; while [ ! -e go ] && [ $i -lt 1200 ]; do sleep 0.05; "
         "i=$((i+1)); done; [ -e go ] && echo saw-go >&2 || echo no-go >&2; echo third")
# Stopped after its first line, it never writes late.
STOPPED = "echo once; sleep 30; echo late > late"
C_OK = "#include <stdio.h>\nint main(void) { puts(\"compiled\"); return 0; }\n"
C_BAD = "int main(void) { return undeclared_name; }\n"


def work_dir(sb):
    """The host path of a local sandbox's work directory (see
    plugins/local/README.md)."""
    return os.path.join(os.environ["POLYSANDBOX_STATE_DIR"], "local", sb.id, "work")


def release(sb):
    """Let the gated command go on: write go into its work directory."""
    with open(os.path.join(work_dir(sb), "go"), "w") as f:
        f.write("go\n")


def gated_check(name, how, chunks, first, res):
    out = b"".join(c.data for c in chunks if c.stream == "stdout")
    err = b"".join(c.data for c in chunks if c.stream == "stderr")
    check(f"{name}: {how}: the first chunk came while the command ran (it saw the file "
          "written after it), streams told apart, the result holds the same bytes",
          first == psb.Chunk("stdout", b"first\n") and out == b"first\nthird\n"
          and err == b"saw-go\n" and res is not None and res.status == "ok"
          and res.stdout_bytes == out and res.stderr_bytes == err,
          f"first={first}\nchunks={chunks}\nresult={res}")


async def astream_gated(sb):
    chunks = []
    st = sb.astream(GATED, timeout=120)
    async for c in st:
        if not chunks:
            release(sb)
        chunks.append(c)
    return chunks, st.result


async def abreak(sb):
    st = sb.stream(STOPPED, timeout=120)
    got = []
    async for c in st:
        got.append(c)
        break    # the generator's aclose (asyncio runs it) stops the command
    return got, st.result


def calls(runner, name):
    """stream, execute_many and compile on runner; 11 checks."""
    sb = runner.create_sandbox(provider="local", ttl=300)
    here = os.path.isdir(work_dir(sb))
    check(f"{name}: the sandbox's work directory is on the host", here, work_dir(sb))

    chunks, st = [], sb.stream(GATED, timeout=120)
    for c in st:
        if not chunks and here:
            release(sb)
        chunks.append(c)
    gated_check(name, "stream (for)", chunks, chunks[0] if chunks else None, st.result)
    os.unlink(os.path.join(work_dir(sb), "go")) if here else None

    chunks, res = asyncio.run(astream_gated(sb))
    gated_check(name, "astream (async for)", chunks, chunks[0] if chunks else None, res)

    chunks = list(sb.stream(["sh", "-c", "printf '\\377\\000x'; printf 'e\\n' >&2; exit 3"]))
    out = b"".join(c.data for c in chunks if c.stream == "stdout")
    check(f"{name}: stream of bytes that are not UTF-8: the same bytes back",
          out == b"\xff\x00x" and [c.data for c in chunks if c.stream == "stderr"] == [b"e\n"],
          chunks)

    # Leaving the loop stops the command: it never gets to write late (the
    # next exec in the sandbox runs once it ended, either way).
    it = iter(sb.stream(STOPPED, timeout=120))
    first = next(it)
    it.close()
    r = sb.exec("cat late")
    got, res = asyncio.run(abreak(sb))
    r2 = sb.exec("cat late")
    check(f"{name}: breaking out of a for or async for loop stops the command",
          first.data == b"once\n" and r.status == "nonzero_exit" and got[0].data == b"once\n"
          and res is None and r2.status == "nonzero_exit", f"{first} {r} {got} {r2}")

    ok_, e = raises(TypeError, sb.stream, "true", provider="local", match="'provider'")
    gone = runner.create_sandbox(provider="local")
    gone.destroy()
    ok2, e2 = raises(psb.SandboxError, list, gone.stream("true"), match="destroyed")
    ok3, e3 = raises(psb.InvalidRequestError, list, sb.stream("true", timeout=10**7),
                     match="max_wall")
    check(f"{name}: stream: a bad option raises at the call, a destroyed sandbox and a "
          "refused exec at the loop", ok_ and ok2 and ok3, f"{e}\n{e2}\n{e3}")

    cmds = ["echo a > f; echo a", ["sh", "-c", "cat f; echo b >&2; exit 3"],
            {"command": "echo $V", "env": {"V": "c"}},
            {"language": "python", "code": "import sys; print(sys.argv[1])", "args": ["d"]}]
    rs = sb.execute_many(cmds, env={"V": "ignored"})
    check(f"{name}: execute_many: every command, in order, one sandbox (a file kept), "
          "its own options over the shared ones",
          [r.stdout for r in rs] == ["a\n", "a\n", "c\n", "d\n"]
          and [r.status for r in rs] == ["ok", "nonzero_exit", "ok", "ok"]
          and rs[1].exit_code == 3 and rs[1].stderr == "b\n", rs)

    rs = sb.execute_many(cmds, stop_on_error=True)
    ars = asyncio.run(sb.aexecute_many(cmds, stop_on_error=True))
    check(f"{name}: execute_many and aexecute_many with stop_on_error: up to the first failure",
          [r.status for r in rs] == ["ok", "nonzero_exit"]
          and [r.stdout for r in ars] == [r.stdout for r in rs], f"{rs}\n{ars}")

    ok_, e = raises(TypeError, sb.execute_many, ["rm f", 7], match="commands[1]")
    ok2, e2 = raises(TypeError, sb.execute_many, [{"command": "true", "template": "c"}],
                     match="'template'")
    kept = sb.exec("cat f")
    check(f"{name}: execute_many: a bad command is named before any runs",
          ok_ and ok2 and kept.stdout == "a\n", f"{e}\n{e2}\n{kept}")

    ok = sb.exec_code("c", C_OK)
    one = runner.run_code("c", C_OK, provider="local")
    check(f"{name}: Result.compile of a compiled template: ok, its time, the program ran",
          ok.status == "ok" and ok.stdout == "compiled\n" and ok.compile is not None
          and ok.compile.success and ok.compile.time_ns > 0
          and ok.compile.time_ns == ok.timings_ns["compile"] and one.compile is not None
          and one.compile.status == "ok" and one.stdout == "compiled\n", f"{ok}\n{one}")

    bad = sb.exec_code("c", C_BAD)
    py = sb.exec_code("python", "print(1)")
    check(f"{name}: Result.compile of a failed compile: its own status and the "
          "compiler's output; None without a compile step",
          bad.status == "compile_error" and bad.compile is not None
          and bad.compile.status == "nonzero_exit" and "undeclared_name" in bad.compile.stderr
          and bad.compile.stderr_bytes == bad.stderr_bytes and py.compile is None
          and py.status == "ok" and rs[0].compile is None, f"{bad}\n{py}")
    sb.destroy()
    return ok, bad


ok_l, bad_l = calls(local, "local")
ok_c, bad_c = calls(client, "client")


def comp(r):
    c = r.compile
    return (c.status, c.stdout_bytes, c.stderr_bytes, c.time_ns > 0,
            set(r.to_dict()["compile"]))


check("Result.compile is the same in the process and through polysandboxd",
      comp(ok_l) == comp(ok_c) and comp(bad_l) == comp(bad_c),
      f"{ok_l.compile}\n{ok_c.compile}\n{bad_l.compile}\n{bad_c.compile}")



def hostile(streams):
    """A fake polysandboxd on a free loopback port answering attach, then
    each exec with the next of streams (raw event-stream bytes); what
    stream() raises for each."""
    import http.server
    import threading
    todo = list(streams)

    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def reply(self, ctype, body):
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self.reply("application/json", b'{"id": "x", "provider": "local", "labels": {}}')

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.reply("text/event-stream", todo.pop(0))

    srv = http.server.HTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        sb = psb.Client(f"http://127.0.0.1:{srv.server_port}", timeout=60).attach("x")
        return [raises(psb.ServerError, list, sb.stream("true")) for _ in streams]
    finally:
        srv.shutdown()
        srv.server_close()


got = hostile([b'event: stdout\ndata: {"data": "@@", "encoding": "base64"}\n\n',
               b'event: stdout\ndata: {"data": "x", "encoding": "utf-8"}\n\n',
               b'event: stderr\ndata: {"data": 7}\n\n',
               b': ping\n\nevent: result\ndata: {"status": "fine"}\n\n'])
check("Client: a server's event stream is checked: bad base64, no result, a bad field, "
      "a bad result each raise ServerError",
      all(ok_ for ok_, _ in got)
      and [m in str(e) for (_, e), m in zip(got, ("base64", "ended before", "'data'",
                                                  "unknown status"))] == [True] * 4, got)

stop(tmp, server, local)
finish(PLAN)
