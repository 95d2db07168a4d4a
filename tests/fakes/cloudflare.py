#!/usr/bin/env python3
# tests/fakes/cloudflare.py - a faithful local fake of the bridge Worker
# that Cloudflare's @cloudflare/sandbox package ships (src/bridge/routes.ts
# of @cloudflare/sandbox 0.12.10; its OpenAPI document, as that bridge
# serves it, is kept beside this file: cloudflare-openapi.json), for the
# cloudflare provider's tests.  Python 3 standard library only.
#
# What it emulates, route by route as the bridge answers:
#   POST   /v1/sandbox                  {"id": base32 of 16 random bytes}
#   (every /v1/sandbox/{id}/...: the id must match ^[a-z2-7]{1,128}$ (400
#   invalid_request) and "Authorization: Bearer KEY" is required (401
#   unauthorized); the warm pool then binds a container to the id, and
#   503 capacity_exceeded when --max-instances are bound already)
#   POST   /v1/sandbox/{id}/exec        {"argv":[...],"timeout_ms"?,"cwd"?}
#                                       (+ Session-Id): argv shell-quoted as
#                                       the bridge's shellQuote does, run by
#                                       bash in the container's /workspace;
#                                       200 text/event-stream: "stdout" and
#                                       "stderr" events with base64 of the
#                                       output decoded as UTF-8 (so bytes
#                                       that are not UTF-8 are replaced, as
#                                       through the SDK's JS strings), then
#                                       "exit" {"exit_code":N}, or "error"
#                                       {"error","code":"exec_error"} (the
#                                       timeout, the container gone)
#   GET|PUT /v1/sandbox/{id}/file/<path>  octet-stream read / raw write
#                                       (32 MiB; 413 payload_too_large; 404
#                                       workspace_read_not_found; 403 outside
#                                       /workspace; the parent must exist)
#   GET    /v1/sandbox/{id}/running     {"running": bool}
#   POST   /v1/sandbox/{id}/session     {"id"?,"cwd"?,"env"?} -> {"id"}
#   DELETE /v1/sandbox/{id}/session/{sid}
#   DELETE /v1/sandbox/{id}             204 (also when nothing was bound)
#   GET /health, GET /v1/pool/stats, GET /v1/openapi.json
#   Errors: {"error": "...", "code": "snake_case"}.
# Not emulated: /pty (WebSocket), /tunnel, /persist, /hydrate, /mount,
# /unmount, /v1/pool/prime and shutdown-prewarmed (404 here).
#
# A container is a private temporary directory standing for /workspace;
# commands run for real on this host with it as working directory and a
# clean environment (paths are the host's: /workspace itself is not made).
# A container sleeps after --sleep-after-ms without requests and loses its
# files, as the SDK's sleepAfter does.  It is a protocol fake, not a
# security boundary.
#
# Fault injection and control (no key needed) as the Daytona fake's:
#   POST /_fake/faults {"latency_ms","error_rate","status","retry_after",
#       "drop_rate","drop_mode","slow_body_ms","count","path","method","seed"}
#       or a list of such objects (the first that fires wins)
#   GET /_fake/faults, POST /_fake/reset, GET /_fake/stats, GET /_fake/requests
#   POST /_fake/kill {"id": ID}  the container dies (running execs end with
#       an "error" event, as a crashed container's do)
#
# Usage: cloudflare.py [--port N] [--port-file F] [--api-key KEY]
#   [--max-instances N] [--sleep-after-ms MS] [--faults JSON]
# Prints "CLOUDFLARE-FAKE READY http://127.0.0.1:PORT" once listening.

import argparse
import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daytona import (Faults, HTTPError, REASONS, BASE_PATH, kill_tree,  # noqa: E402
                     _kill_until_gone, _proc_pids)

ID_RE = re.compile(r"^[a-z2-7]{1,128}$")
SESSION_RE = re.compile(r"^[a-zA-Z0-9._-]{1,128}$")
SAFE_ARG = re.compile(r"^[A-Za-z0-9@%+=:,./-]+$")
MAX_WRITE = 32 * 1024 * 1024
OPENAPI = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cloudflare-openapi.json")


def shell_quote(arg):
    """The bridge's shellQuote (src/bridge/helpers.ts)."""
    if SAFE_ARG.match(arg):
        return arg
    e = (arg.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
         .replace("\r", "\\r").replace("\t", "\\t"))
    return "$'" + e + "'"


def resolve_workspace(p):
    """The bridge's resolveWorkspacePath: None when outside /workspace."""
    a = p if p.startswith("/") else "/workspace/" + p
    parts = []
    for seg in a.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if parts:
                parts.pop()
        else:
            parts.append(seg)
    r = "/" + "/".join(parts)
    return r if r == "/workspace" or r.startswith("/workspace/") else None


def fault_list(d):
    """The fault specs of a JSON object, or of a list of them (the first
    that fires on a request wins)."""
    specs = d if isinstance(d, list) else [d] if d else []
    if not all(isinstance(x, dict) for x in specs):
        raise ValueError("faults: a JSON object or a list of them")
    return [Faults(x) for x in specs if x]


def b32_id():
    return base64.b32encode(os.urandom(16)).decode().rstrip("=").lower()


class Container:
    def __init__(self, sid):
        self.sid = sid
        self.root = tempfile.mkdtemp(prefix="cf-fake-")
        self.sessions = {}
        self.procs = set()
        self.last = time.time()
        self.dead = False

    def host_path(self, ws_path):
        rel = ws_path[len("/workspace"):].lstrip("/")
        return os.path.join(self.root, rel) if rel else self.root

    def pids(self):
        """Every process of the container: its marker in the environment
        (what a container's death takes with it)."""
        marker = ("CF_FAKE_SANDBOX=%s" % self.sid).encode()
        for p in _proc_pids():
            try:
                with open("/proc/%d/environ" % p, "rb") as f:
                    if marker in f.read().split(b"\0"):
                        yield p
            except OSError:
                pass

    def kill(self):
        self.dead = True
        for p in list(self.procs):
            kill_tree(p.pid, 0.05)
        _kill_until_gone(self.pids, 50)
        shutil.rmtree(self.root, ignore_errors=True)


class Fake:
    def __init__(self, args):
        self.api_key = args.api_key
        self.max_instances = args.max_instances
        self.sleep_after = args.sleep_after_ms / 1000.0
        self.lock = threading.RLock()
        self.containers = {}
        self.faults = fault_list(json.loads(args.faults) if args.faults else None)
        self.requests = []
        self.n_requests = self.n_injected = self.n_dropped = self.n_created = self.n_bound = 0

    def bind(self, sid):
        with self.lock:
            c = self.containers.get(sid)
            if c is None:
                if self.max_instances and len(self.containers) >= self.max_instances:
                    raise HTTPError(503, "instance limit reached (%d)" % self.max_instances,
                                    "capacity_exceeded")
                c = self.containers[sid] = Container(sid)
                self.n_bound += 1
            c.last = time.time()
            return c

    def drop(self, sid):
        with self.lock:
            c = self.containers.pop(sid, None)
        if c:
            c.kill()

    def reaper(self):
        while True:
            time.sleep(0.2)
            if not self.sleep_after:
                continue
            t = time.time()
            with self.lock:
                idle = [s for s, c in self.containers.items()
                        if not c.procs and t - c.last >= self.sleep_after]
            for s in idle:
                self.drop(s)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "cloudflare-bridge-fake/1"
    # Headers and body go out in separate writes: with Nagle on, the body
    # waits for the client's delayed ACK, 40 ms a request.  Cloudflare's edge
    # sends at once (TCP_NODELAY).
    disable_nagle_algorithm = True
    fake = None

    def log_message(self, fmt, *args):
        pass

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_WRITE + 1024 * 1024:
            raise HTTPError(413, "payload too large: %d bytes exceeds the %d-byte limit"
                            % (n, MAX_WRITE), "payload_too_large")
        return self.rfile.read(n) if n else b""

    def _send(self, status, body=b"", ctype="application/json", extra=None):
        self.send_response(status, REASONS.get(status))
        if status != 204:
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        if self._inject == "drop":
            self.end_headers()
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self._kill_connection()
            return
        self.end_headers()
        if status != 204:
            self.wfile.write(body)
        self._status = status

    def _kill_connection(self):
        self.close_connection = True
        try:
            import socket
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._status = 0

    def _json(self, status, obj):
        self._send(status, json.dumps(obj).encode())

    def _error(self, e):
        extra = {}
        if getattr(e, "retry_after", None) is not None:
            extra["Retry-After"] = str(e.retry_after)
        code = e.code or {400: "invalid_request", 401: "unauthorized", 404: "not_found",
                          502: "pool_error", 503: "capacity_exceeded"}.get(e.status, "error")
        self._send(e.status, json.dumps({"error": e.message, "code": code}).encode(),
                   extra=extra)

    def do_GET(self):
        self._dispatch()

    do_POST = do_PUT = do_DELETE = do_GET

    def _dispatch(self):
        f = self.fake
        url = urllib.parse.urlsplit(self.path)
        path = url.path
        self._inject, self._status = None, None
        try:
            body = self._body()
        except HTTPError as e:
            self.close_connection = True
            return self._error(e)
        if path.startswith("/_fake/"):
            return self._control(path, body)
        with f.lock:
            f.n_requests += 1
            inject, latency = None, 0
            for fl in f.faults:
                if not fl.applies(self.command, path):
                    continue
                latency = max(latency, fl.latency_ms)
                if fl.error_rate and fl.rng.random() < fl.error_rate:
                    inject = "error"
                elif fl.drop_rate and fl.rng.random() < fl.drop_rate:
                    inject = "drop"
                if inject:
                    f.n_injected += 1
                    f.n_dropped += inject == "drop"
                    if fl.count is not None:
                        fl.count -= 1
                    break
            entry = {"method": self.command, "path": path, "at": time.monotonic()}
            f.requests.append(entry)
            del f.requests[:-200]
        if latency:
            time.sleep(latency / 1000.0)
        if inject == "error":
            e = HTTPError(fl.status, "fake: injected %d" % fl.status)
            e.retry_after = fl.retry_after
            self._error(e)
            entry["status"] = fl.status
            return
        if inject == "drop" and fl.drop_mode == "before":
            entry["status"] = 0
            return self._kill_connection()
        self._inject = inject
        try:
            self._route(path, url.query, body)
        except HTTPError as e:
            self._error(e)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        entry["status"] = self._status

    def _auth(self):
        h = self.headers.get("Authorization", "")
        if not (h.lower().startswith("bearer ") and h[7:] == self.fake.api_key):
            raise HTTPError(401, "Unauthorized", "unauthorized")

    def _route(self, path, query, body):
        f = self.fake
        if path == "/health" and self.command == "GET":
            return self._json(200, {"ok": True})
        if path == "/v1/openapi.json" and self.command == "GET":
            tok = urllib.parse.parse_qs(query).get("token", [""])[0]
            if tok != f.api_key:
                self._auth()
            with open(OPENAPI, "rb") as fh:
                return self._send(200, fh.read())
        if path.startswith("/v1/pool/"):
            self._auth()
            if path == "/v1/pool/stats" and self.command == "GET":
                with f.lock:
                    n = len(f.containers)
                return self._json(200, {"warm": 0, "assigned": n, "total": n,
                                        "maxInstances": f.max_instances or None,
                                        "config": {"warmTarget": 0, "refreshInterval": 10000}})
            raise HTTPError(404, "Not Found", "not_found")
        if path == "/v1/sandbox" and self.command == "POST":
            self._auth()
            with f.lock:
                f.n_created += 1
            return self._json(200, {"id": b32_id()})
        if not path.startswith("/v1/sandbox/"):
            raise HTTPError(404, "Not Found", "not_found")
        rest = path[len("/v1/sandbox/"):]
        sid, _, tail = rest.partition("/")
        if sid and not ID_RE.match(sid):
            raise HTTPError(400, "Invalid sandbox ID format", "invalid_request")
        self._auth()
        if not tail:
            if self.command != "DELETE":
                raise HTTPError(404, "Not Found", "not_found")
            f.drop(sid)  # lookup only: nothing bound is fine
            return self._send(204)
        c = f.bind(sid)
        if tail == "exec" and self.command == "POST":
            return self._exec(c, body)
        if tail.startswith("file/") or tail == "file":
            return self._file(c, tail[5:], body)
        if tail == "running" and self.command == "GET":
            return self._json(200, {"running": os.path.isdir(c.root)})
        if tail == "session" and self.command == "POST":
            d = self._json_body(body, required=False)
            sid2 = d.get("id") or "session-" + b32_id()[:12]
            c.sessions[sid2] = {"cwd": d.get("cwd"), "env": d.get("env") or {}}
            return self._json(200, {"id": sid2})
        if tail.startswith("session/") and self.command == "DELETE":
            s2 = tail[len("session/"):]
            if not s2:
                raise HTTPError(400, "session ID must not be empty", "invalid_request")
            c.sessions.pop(s2, None)
            return self._json(200, {"success": True, "sessionId": s2})
        raise HTTPError(404, "Not Found", "not_found")

    @staticmethod
    def _json_body(body, required=True):
        try:
            d = json.loads(body or (b"" if required else b"{}"))
        except ValueError:
            if not required:
                return {}
            raise HTTPError(400, "Invalid JSON body", "invalid_request")
        if not isinstance(d, dict):
            raise HTTPError(400, "Invalid JSON body", "invalid_request")
        return d

    def _session(self, c):
        raw = self.headers.get("Session-Id")
        if raw is None:
            return None
        if not SESSION_RE.match(raw) or ".." in raw:
            raise HTTPError(400, "Invalid session ID format", "invalid_request")
        return c.sessions.setdefault(raw, {"cwd": None, "env": {}})

    def _file(self, c, rel, body):
        if not rel:
            raise HTTPError(400, "file path must not be empty", "invalid_request")
        ws = resolve_workspace("/" + urllib.parse.unquote(rel))
        if ws is None:
            raise HTTPError(403, "path must resolve to a location within /workspace",
                            "invalid_request")
        self._session(c)
        hp = c.host_path(ws)
        if self.command == "GET":
            try:
                with open(hp, "rb") as fh:
                    data = fh.read()
            except FileNotFoundError:
                raise HTTPError(404, "File not found: %s" % ws, "workspace_read_not_found")
            except OSError as e:
                raise HTTPError(502, "read failed: %s" % e.strerror, "exec_transport_error")
            return self._send(200, data, "application/octet-stream")
        if self.command == "PUT":
            if len(body) > MAX_WRITE:
                raise HTTPError(413, "payload too large: %d bytes exceeds the %d-byte limit"
                                % (len(body), MAX_WRITE), "payload_too_large")
            try:
                with open(hp, "wb") as fh:
                    fh.write(body)
            except OSError as e:
                raise HTTPError(502, "write failed: %s" % e.strerror,
                                "workspace_archive_write_error")
            return self._json(200, {"ok": True})
        raise HTTPError(404, "Not Found", "not_found")

    # ---- exec as server-sent events ----
    def _exec(self, c, body):
        d = self._json_body(body)
        argv = d.get("argv")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise HTTPError(400, "argv must be a non-empty array", "invalid_request")
        sess = self._session(c)
        cwd = c.root
        if sess and sess.get("cwd"):
            r = resolve_workspace(sess["cwd"])
            cwd = c.host_path(r) if r else cwd
        if isinstance(d.get("cwd"), str):
            r = resolve_workspace(d["cwd"])
            if r is None:
                raise HTTPError(403, "cwd must resolve to a location within /workspace",
                                "invalid_request")
            cwd = c.host_path(r)
        timeout = d.get("timeout_ms")
        timeout = timeout / 1000.0 if isinstance(timeout, (int, float)) and timeout > 0 else None
        env = {"PATH": BASE_PATH, "HOME": "/root", "LANG": "C.UTF-8",
               "CF_FAKE_SANDBOX": c.sid}
        if sess:
            env.update(sess.get("env") or {})
        command = " ".join(shell_quote(a) for a in argv)
        self.send_response(200, "OK")
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self._status = 200
        wlock = threading.Lock()
        broken = threading.Event()

        def event(name, data):
            payload = "\n".join("data: " + ln for ln in data.split("\n"))
            chunk = ("event: %s\n%s\n\n" % (name, payload)).encode()
            with wlock:
                if broken.is_set():
                    return
                try:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                except OSError:
                    broken.set()

        try:
            p = subprocess.Popen(["bash", "-c", command], cwd=cwd, env=env,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, process_group=0)
        except OSError as e:
            event("error", json.dumps({"error": "exec failed: %s" % e.strerror,
                                       "code": "exec_transport_error"}))
            return self._end_chunks()
        c.procs.add(p)

        def pump(pipe, name):
            dec = __import__("codecs").getincrementaldecoder("utf-8")("replace")
            while True:
                b = os.read(pipe.fileno(), 4096)
                text = dec.decode(b, final=not b)
                if text:
                    event(name, base64.b64encode(text.encode()).decode())
                if not b:
                    return
        ts = [threading.Thread(target=pump, args=(p.stdout, n), daemon=True)
              for n in ("stdout",)] + \
             [threading.Thread(target=pump, args=(p.stderr, "stderr"), daemon=True)]
        for t in ts:
            t.start()
        deadline = time.time() + timeout if timeout else None
        timed_out = False
        while p.poll() is None:
            if broken.is_set() or c.dead:
                break
            if deadline and time.time() >= deadline:
                timed_out = True
                break
            time.sleep(0.01)
        if p.poll() is None:
            kill_tree(p.pid, 0.05)
        p.wait()
        for t in ts:
            t.join(2)
        c.procs.discard(p)
        c.last = time.time()
        if timed_out:
            event("error", json.dumps({"error": "Command timed out after %d ms"
                                       % int(timeout * 1000), "code": "exec_error"}))
        elif c.dead:
            event("error", json.dumps({"error": "Container stopped: the sandbox is gone",
                                       "code": "exec_error"}))
        elif self._inject == "drop":
            return self._kill_connection()
        else:
            event("exit", json.dumps({"exit_code": p.returncode if p.returncode >= 0
                                      else 128 - p.returncode}))
        self._end_chunks()

    def _end_chunks(self):
        try:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    # ---- control ----
    def _control(self, path, body):
        f = self.fake
        if path == "/_fake/faults" and self.command == "POST":
            try:
                faults = fault_list(json.loads(body or b"{}"))
            except (ValueError, TypeError) as e:
                return self._json(400, {"error": str(e), "code": "invalid_request"})
            with f.lock:
                f.faults = faults
            return self._json(200, [x.raw for x in faults])
        if path == "/_fake/faults":
            return self._json(200, [x.raw for x in f.faults])
        if path == "/_fake/reset" and self.command == "POST":
            with f.lock:
                f.faults = []
                ids = list(f.containers)
            for s in ids:
                f.drop(s)
            return self._json(200, {})
        if path == "/_fake/kill" and self.command == "POST":
            sid = json.loads(body or b"{}").get("id")
            f.drop(sid)
            return self._json(200, {})
        if path == "/_fake/stats":
            with f.lock:
                return self._json(200, {"live": list(f.containers), "created": f.n_created,
                                        "bound": f.n_bound, "requests": f.n_requests,
                                        "injected": f.n_injected, "dropped": f.n_dropped})
        if path == "/_fake/requests":
            with f.lock:
                return self._json(200, list(f.requests))
        return self._json(404, {"error": "no such control endpoint", "code": "not_found"})


def main():
    ap = argparse.ArgumentParser(description="A local fake of Cloudflare's sandbox bridge.")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--api-key", default="fake-cloudflare-key")
    ap.add_argument("--max-instances", type=int, default=0, help="0: no limit")
    ap.add_argument("--sleep-after-ms", type=float, default=600000,
                    help="idle time after which a container sleeps (losing its files)")
    ap.add_argument("--faults")
    args = ap.parse_args()
    fake = Fake(args)
    Handler.fake = fake
    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True
    port = srv.server_address[1]
    threading.Thread(target=fake.reaper, daemon=True).start()

    def bye(*_):
        for s in list(fake.containers):
            fake.drop(s)
        os._exit(0)
    signal.signal(signal.SIGTERM, bye)
    signal.signal(signal.SIGINT, bye)
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as fh:
            fh.write("%d\n" % port)
        os.rename(args.port_file + ".tmp", args.port_file)
    print("CLOUDFLARE-FAKE READY http://127.0.0.1:%d" % port, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
