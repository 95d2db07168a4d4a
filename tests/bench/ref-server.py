#!/usr/bin/env python3
"""tests/bench/ref-server.py - the reference tests/bench/server.sh measures
polysandboxd against: a server built the way PolySandbox's first sketch
was, a FastAPI app under uvicorn running each request's command with
bwrap through subprocess.  A peer to measure, not product code.

Usage: ref-server.py [--port-file FILE]

Listens on 127.0.0.1 on a free port (written to FILE, and to stderr as
"listening on http://127.0.0.1:PORT") with uvicorn's defaults: one
process, an event loop, plain `def` handlers in its thread pool.

POST /run_single {"argv": [...], "stdin": "", "timeout": 10} runs argv in
bwrap (every namespace new; /usr and /etc read-only, /bin, /lib, /lib64
and /sbin as the links of a merged /usr, a new /proc, /dev and /tmp) and
answers {"status", "exit_code", "stdout", "stderr", "time_ms"}: status
"ok" when it exited 0, "error" when it exited otherwise, "timeout" when
it ran out of time.  (Not `--ro-bind / /`: that copies every mount of
the host, sandboxes' included, and fails when one goes meanwhile.)
"""
import socket
import subprocess
import sys
import time
from typing import List

import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel

BWRAP = ["bwrap", "--unshare-all", "--die-with-parent",
         "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
         "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
         "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
         "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]

app = FastAPI()


class RunRequest(BaseModel):
    argv: List[str]
    stdin: str = ""
    timeout: float = 10.0


@app.post("/run_single")
def run_single(req: RunRequest):
    t0 = time.monotonic()
    try:
        p = subprocess.run(BWRAP + ["--"] + req.argv, input=req.stdin.encode(),
                           capture_output=True, timeout=req.timeout)
        status = "ok" if p.returncode == 0 else "error"
        code, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        status, code, out, err = "timeout", None, e.stdout or b"", e.stderr or b""
    return {"status": status, "exit_code": code,
            "stdout": out.decode(errors="replace"), "stderr": err.decode(errors="replace"),
            "time_ms": (time.monotonic() - t0) * 1e3}


def main(args):
    port_file = args[1] if len(args) == 2 and args[0] == "--port-file" else None
    if args and not port_file:
        print("usage: ref-server.py [--port-file FILE]", file=sys.stderr)
        return 2
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    if port_file:
        with open(port_file, "w") as f:
            f.write("%d\n" % port)
    print("ref-server: listening on http://127.0.0.1:%d" % port, file=sys.stderr, flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
