"""tests/python/test_stream.py - the Python package's Sandbox.stream/
astream, execute_many/aexecute_many and Result.compile, in the process
and through a real polysandboxd (conftest.py's server), with pytest.

Run by stream.sh under `make check`.  That chunks arrive while the
command still runs is shown without timing: the command prints, then
waits for a file the test writes into the sandbox's work directory (a
local sandbox's work/ on the host) only once it has seen that chunk.
"""

import http.server
import os
import threading

import pytest

# Prints, waits (at most a minute: a bound on a hang, never reached when
# it works) for the file go, then writes to both streams.
GATED = ("echo first; i=0; while [ ! -e go ] && [ $i -lt 1200 ]; do sleep 0.05; "
         "i=$((i+1)); done; [ -e go ] && echo saw-go >&2 || echo no-go >&2; echo third")
# Stopped after its first line, it never writes late.
STOPPED = "echo once; sleep 30; echo late > late"
C_OK = "#include <stdio.h>\nint main(void) { puts(\"compiled\"); return 0; }\n"
C_BAD = "int main(void) { return undeclared_name; }\n"
CMDS = ["echo a > f; echo a", ["sh", "-c", "cat f; echo b >&2; exit 3"],
        {"command": "echo $V", "env": {"V": "c"}},
        {"language": "python", "code": "import sys; print(sys.argv[1])", "args": ["d"]}]


def work_dir(sb):
    """The host path of a local sandbox's work directory (see
    plugins/local/README.md)."""
    return os.path.join(os.environ["POLYSANDBOX_STATE_DIR"], "local", sb.id, "work")


def release(sb):
    """Let the gated command go on: write go into its work directory."""
    with open(os.path.join(work_dir(sb), "go"), "w") as f:
        f.write("go\n")


@pytest.fixture(scope="module")
def box(named_backends):
    """A local sandbox of the runner, destroyed at the end."""
    sb = named_backends[1].create_sandbox(provider="local", ttl=300)
    yield sb
    sb.destroy()


@pytest.fixture
def gated_box(box):
    """The sandbox, its work directory on the host checked and no go file
    in it before or after the test."""
    go = os.path.join(work_dir(box), "go")
    assert os.path.isdir(work_dir(box)), "the sandbox's work directory is on the host"
    if os.path.exists(go):
        os.unlink(go)
    yield box
    if os.path.exists(go):
        os.unlink(go)


def test_work_dir_on_host(box):
    """The sandbox's work directory is on the host."""
    assert os.path.isdir(work_dir(box)), work_dir(box)


def check_gated(psb, chunks, res):
    """The first chunk came while the command ran (it saw the file written
    after it), streams told apart, the result holds the same bytes."""
    first = chunks[0] if chunks else None
    out = b"".join(c.data for c in chunks if c.stream == "stdout")
    err = b"".join(c.data for c in chunks if c.stream == "stderr")
    assert first == psb.Chunk("stdout", b"first\n") and out == b"first\nthird\n" \
        and err == b"saw-go\n", f"first={first}\nchunks={chunks}"
    assert res is not None and res.status == "ok" and res.stdout_bytes == out \
        and res.stderr_bytes == err, f"result={res}"


def test_stream_for(psb, gated_box):
    """stream (for): chunks arrive while the command runs."""
    chunks, st = [], gated_box.stream(GATED, timeout=120)
    for c in st:
        if not chunks:
            release(gated_box)
        chunks.append(c)
    check_gated(psb, chunks, st.result)


@pytest.mark.asyncio
async def test_astream_async_for(psb, gated_box):
    """astream (async for): chunks arrive while the command runs."""
    chunks = []
    st = gated_box.astream(GATED, timeout=120)
    async for c in st:
        if not chunks:
            release(gated_box)
        chunks.append(c)
    check_gated(psb, chunks, st.result)


def test_stream_not_utf8(box):
    """stream of bytes that are not UTF-8: the same bytes back."""
    chunks = list(box.stream(["sh", "-c", "printf '\\377\\000x'; printf 'e\\n' >&2; exit 3"]))
    out = b"".join(c.data for c in chunks if c.stream == "stdout")
    assert out == b"\xff\x00x" and [c.data for c in chunks if c.stream == "stderr"] == [b"e\n"], \
        chunks


def test_break_for_stops_command(box):
    """Leaving a for loop stops the command: it never gets to write late
    (the next exec in the sandbox runs once it ended, either way)."""
    it = iter(box.stream(STOPPED, timeout=120))
    first = next(it)
    it.close()
    r = box.exec("cat late")
    assert first.data == b"once\n" and r.status == "nonzero_exit", f"{first} {r}"


@pytest.mark.asyncio
async def test_break_async_for_stops_command(box):
    """Leaving an async for loop stops the command (the generator's aclose)."""
    st = box.stream(STOPPED, timeout=120)
    got = []
    async for c in st:
        got.append(c)
        break
    res = st.result
    r2 = await box.aexec("cat late")
    assert got[0].data == b"once\n" and res is None and r2.status == "nonzero_exit", \
        f"{got} {res} {r2}"


def test_stream_refusals(psb, named_backends, box):
    """stream: a bad option raises at the call, a destroyed sandbox and a
    refused exec at the loop."""
    with pytest.raises(TypeError, match="'provider'"):
        box.stream("true", provider="local")
    gone = named_backends[1].create_sandbox(provider="local")
    gone.destroy()
    with pytest.raises(psb.SandboxError, match="destroyed"):
        list(gone.stream("true"))
    with pytest.raises(psb.InvalidRequestError, match="max_wall"):
        list(box.stream("true", timeout=10**7))


def test_execute_many(box):
    """execute_many: every command, in order, one sandbox (a file kept),
    its own options over the shared ones."""
    rs = box.execute_many(CMDS, env={"V": "ignored"})
    assert [r.stdout for r in rs] == ["a\n", "a\n", "c\n", "d\n"], rs
    assert [r.status for r in rs] == ["ok", "nonzero_exit", "ok", "ok"], rs
    assert rs[1].exit_code == 3 and rs[1].stderr == "b\n", rs
    assert rs[0].compile is None, rs[0]


@pytest.mark.asyncio
async def test_execute_many_stop_on_error(box):
    """execute_many and aexecute_many with stop_on_error: up to the first failure."""
    rs = box.execute_many(CMDS, stop_on_error=True)
    ars = await box.aexecute_many(CMDS, stop_on_error=True)
    assert [r.status for r in rs] == ["ok", "nonzero_exit"], rs
    assert [r.stdout for r in ars] == [r.stdout for r in rs], f"{rs}\n{ars}"


def test_execute_many_bad_command_first(box):
    """execute_many: a bad command is named_backends before any runs."""
    assert box.exec("echo a > f").status == "ok"
    with pytest.raises(TypeError, match=r"commands\[1\]"):
        box.execute_many(["rm f", 7])
    with pytest.raises(TypeError, match="'template'"):
        box.execute_many([{"command": "true", "template": "c"}])
    kept = box.exec("cat f")
    assert kept.stdout == "a\n", kept


def test_compile_ok(named_backends, box):
    """Result.compile of a compiled template: ok, its time, the program ran."""
    ok = box.exec_code("c", C_OK)
    one = named_backends[1].run_code("c", C_OK, provider="local")
    assert ok.status == "ok" and ok.stdout == "compiled\n" and ok.compile is not None, ok
    assert ok.compile.success and ok.compile.time_ns > 0 \
        and ok.compile.time_ns == ok.timings_ns["compile"], ok
    assert one.compile is not None and one.compile.status == "ok" \
        and one.stdout == "compiled\n", one


def test_compile_failed(box):
    """Result.compile of a failed compile: its own status and the
    compiler's output; None without a compile step."""
    bad = box.exec_code("c", C_BAD)
    py = box.exec_code("python", "print(1)")
    assert bad.status == "compile_error" and bad.compile is not None \
        and bad.compile.status == "nonzero_exit" and "undeclared_name" in bad.compile.stderr \
        and bad.compile.stderr_bytes == bad.stderr_bytes, bad
    assert py.compile is None and py.status == "ok", py


def comp(r):
    c = r.compile
    return (c.status, c.stdout_bytes, c.stderr_bytes, c.time_ns > 0,
            set(r.to_dict()["compile"]))


@pytest.mark.parametrize("code", [C_OK, C_BAD], ids=["ok", "bad"])
def test_compile_same_both_ways(local, client, code):
    """Result.compile is the same in the process and through polysandboxd."""
    with local.create_sandbox(provider="local") as a, \
            client.create_sandbox(provider="local") as b:
        x, y = a.exec_code("c", code), b.exec_code("c", code)
    assert comp(x) == comp(y), f"{x.compile}\n{y.compile}"


def hostile(psb, streams):
    """A fake polysandboxd on a free loopback port answering attach, then
    each exec with the next of streams (raw event-stream bytes); what
    stream() raises for each (None when it did not raise ServerError)."""
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
    got = []
    try:
        sb = psb.Client(f"http://127.0.0.1:{srv.server_port}", timeout=60).attach("x")
        for _ in streams:
            try:
                list(sb.stream("true"))
                got.append(None)
            except psb.ServerError as e:
                got.append(str(e))
        return got
    finally:
        srv.shutdown()
        srv.server_close()


def test_client_checks_event_stream(psb):
    """Client: a server's event stream is checked: bad base64, no result,
    a bad field, a bad result each raise ServerError."""
    got = hostile(psb, [b'event: stdout\ndata: {"data": "@@", "encoding": "base64"}\n\n',
                        b'event: stdout\ndata: {"data": "x", "encoding": "utf-8"}\n\n',
                        b'event: stderr\ndata: {"data": 7}\n\n',
                        b': ping\n\nevent: result\ndata: {"status": "fine"}\n\n'])
    assert None not in got, got
    assert [m in e for e, m in zip(got, ("base64", "ended before", "'data'",
                                         "unknown status"))] == [True] * 4, got
