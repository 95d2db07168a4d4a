#!/usr/bin/env python3
"""tests/fakes/e2b.py - a local fake of E2B's wire protocols, with faults.

One HTTP/1.1 listener on 127.0.0.1 serves both sides of E2B (see
doc ../shared/reference/wire-apis.md section 3):

  * the control plane (X-API-KEY): POST /v2/sandboxes, GET /v2/sandboxes
    (metadata/state filters, X-Next-Token paging), GET /sandboxes,
    GET/DELETE /sandboxes/{id}, POST /sandboxes/{id}/timeout,
    POST /v2/sandboxes/{id}/connect; errors {"code":N,"message":...};
  * envd (X-Access-Token), chosen by an E2b-Sandbox-Id header or a
    "49983-<id>.<domain>" Host header: Connect RPC over JSON for
    process.Process (Start/Connect streams with 5-byte envelopes and an
    end-of-stream message, List, SendInput, CloseStdin, SendSignal) and
    filesystem.Filesystem (Stat, MakeDir, Remove, ListDir), and REST
    GET/POST /files (octet-stream from envd 0.5.7, multipart always) and
    GET /health.

Processes run for real on this host, each sandbox in a private temporary
directory that stands for its root file system (/home/user is the home).
This is a protocol fake, not a security boundary: it only refuses file
paths that would leave the sandbox's directory.  Sandboxes created without
internet access get a private network namespace when the host allows it.

Faults are injected on demand, repeatably (seeded RNG), through
POST /_fake/faults with a JSON object, or --faults on the command line:
  latency_ms        delay before answering every request
  error_rate        probability of answering with `status` instead
  status            the injected status (default 503; 429 adds Retry-After)
  retry_after       Retry-After seconds for 429 (default 1)
  drop_stream_rate  probability of cutting a stream (Start, Connect,
                    file download) after its first message
  slow_body_ms      pause between the pieces of a streamed body
  count             apply error/drop faults to this many requests only
  paths             regular expression the request path must match
  seed              reseed the RNG
GET /_fake/state tells which sandboxes and processes are alive and how
many faults were injected ("injected": errors, drops);
POST /_fake/reset clears the faults.  The port is printed on stdout as
"READY port=N netns=yes|no".  Python 3 standard library only.
"""
import argparse
import base64
import ctypes
import ctypes.util
import json
import os
import queue
import random
import re
import secrets
import shutil
import signal
import socket
import stat
import string
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ENVD_PORT = 49983
CONNECT_CODES = {  # Connect error code -> HTTP status (connect protocol.md)
    "canceled": 499, "unknown": 500, "invalid_argument": 400,
    "deadline_exceeded": 504, "not_found": 404, "already_exists": 409,
    "permission_denied": 403, "resource_exhausted": 429,
    "failed_precondition": 400, "aborted": 409, "out_of_range": 400,
    "unimplemented": 501, "internal": 500, "unavailable": 503,
    "data_loss": 500, "unauthenticated": 401,
}
# What Go's ProcessState.String() says for a signal (syscall.Signal.String).
GO_SIGNAL_NAMES = {
    1: "hangup", 2: "interrupt", 3: "quit", 4: "illegal instruction",
    5: "trace/breakpoint trap", 6: "aborted", 7: "bus error",
    8: "floating point exception", 9: "killed", 10: "user defined signal 1",
    11: "segmentation fault", 12: "user defined signal 2", 13: "broken pipe",
    14: "alarm clock", 15: "terminated", 16: "stack fault",
    17: "child exited", 18: "continued", 19: "stopped (signal)",
    20: "stopped", 21: "stopped (tty input)", 22: "stopped (tty output)",
    23: "urgent I/O condition", 24: "CPU time limit exceeded",
    25: "file size limit exceeded", 26: "virtual timer expired",
    27: "profiling timer expired", 28: "window changed",
    29: "I/O possible", 30: "power failure", 31: "bad system call",
}
SIGNALS = {"SIGNAL_SIGKILL": signal.SIGKILL, "SIGNAL_SIGTERM": signal.SIGTERM}
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
HOME = "/home/user"

ARGS = None
NETNS_OK = False
RNG = random.Random(0)
FAULTS = {}
FAULT_LOCK = threading.Lock()
INJECTED = {"errors": 0, "drops": 0}   # faults injected so far, for /_fake/state
SANDBOXES = {}
SB_LOCK = threading.Lock()
LOG_LOCK = threading.Lock()


def log(msg):
    if ARGS and ARGS.verbose:
        with LOG_LOCK:
            sys.stderr.write("e2b-fake: %s\n" % msg)
            sys.stderr.flush()


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + \
        ".%03dZ" % int((t % 1) * 1000)


def version_tuple(v):
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


# ---- network namespaces ---------------------------------------------------

_libc = None


def _unshare_net():
    # Runs in the child between fork and exec.
    if _libc.unshare(0x40000000) != 0:  # CLONE_NEWNET
        os._exit(126)


def probe_netns():
    global _libc
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6",
                            use_errno=True)
        r = subprocess.run(["/bin/true"], preexec_fn=_unshare_net, timeout=10)
        return r.returncode == 0
    except Exception:  # no libc, no permission: run without
        return False


# ---- sandboxes and processes ------------------------------------------------

class Proc:
    """One process started by Start: its pipes, events and subscribers."""

    def __init__(self, sb, popen, config, tag, has_stdin):
        self.sb = sb
        self.popen = popen
        self.pid = popen.pid
        self.config = config
        self.tag = tag
        self.has_stdin = has_stdin
        self.subs = []
        self.lock = threading.Lock()
        self.done = False
        self.stdin_lock = threading.Lock()

    def subscribe(self):
        q = queue.Queue()
        with self.lock:
            if self.done:
                return None
            self.subs.append(q)
        return q

    def unsubscribe(self, q):
        with self.lock:
            if q in self.subs:
                self.subs.remove(q)

    def publish(self, ev, final=False):
        with self.lock:
            for q in self.subs:
                q.put(ev)
            if final:
                self.done = True
                for q in self.subs:
                    q.put(None)

    def close_stdin(self):
        if self.popen.stdin is not None:
            with self.stdin_lock:
                try:
                    self.popen.stdin.close()
                except OSError:
                    pass


class Sandbox:
    def __init__(self, sid, template, timeout, metadata, envs, internet):
        self.id = sid
        self.template = template
        self.token = secrets.token_hex(16)
        self.metadata = metadata
        self.envs = envs
        self.internet = internet
        self.started = time.time()
        self.end = self.started + timeout
        self.dir = tempfile.mkdtemp(prefix="sbx-" + sid + "-", dir=ARGS.state_dir)
        self.root = os.path.join(self.dir, "root")
        os.makedirs(os.path.join(self.root, HOME.lstrip("/")), mode=0o755)
        os.makedirs(os.path.join(self.root, "tmp"), mode=0o1777)
        self.procs = {}
        self.lock = threading.Lock()
        self.alive = True
        self.paused = False

    def host_path(self, path, user_home=HOME):
        """The host path for a sandbox path (absolute, or relative to the
        home), or None when it leaves the sandbox."""
        if not path.startswith("/"):
            path = user_home + "/" + path
        norm = os.path.normpath(path)
        if norm.startswith("//"):
            norm = norm[1:]
        host = os.path.normpath(self.root + norm)
        if host != self.root and not host.startswith(self.root + "/"):
            return None
        return host

    def within(self, host):
        real = os.path.realpath(host)
        rroot = os.path.realpath(self.root)
        return real == rroot or real.startswith(rroot + "/")

    def sandbox_path(self, host):
        rel = os.path.relpath(host, self.root)
        return "/" if rel == "." else "/" + rel

    def detail(self, full=True):
        d = {
            "sandboxID": self.id, "templateID": self.template,
            "clientID": "6532622b", "alias": self.template,
            "startedAt": rfc3339(self.started), "endAt": rfc3339(self.end),
            "cpuCount": 2, "memoryMB": 512, "diskSizeMB": 1024,
            "metadata": dict(self.metadata), "state": "paused" if self.paused else "running",
            "envdVersion": ARGS.envd_version,
        }
        if full:
            d["envdAccessToken"] = self.token
            d["domain"] = None
            d["allowInternetAccess"] = self.internet
        return d

    def kill_all(self):
        """Everything this sandbox ran dies, as with the VM."""
        self.alive = False
        with self.lock:
            procs = list(self.procs.values())
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
        marker = ("E2B_SANDBOX_ID=%s" % self.id).encode()
        for _ in range(3):
            killed = 0
            for d in os.listdir("/proc"):
                if not d.isdigit() or int(d) == os.getpid():
                    continue
                try:
                    with open("/proc/%s/environ" % d, "rb") as f:
                        env = f.read().split(b"\0")
                except OSError:
                    continue
                if marker in env:
                    try:
                        os.kill(int(d), signal.SIGKILL)
                        killed += 1
                    except OSError:
                        pass
            if not killed:
                break
            time.sleep(0.05)
        for p in procs:
            try:
                p.popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)


def new_id():
    alphabet = string.ascii_lowercase + string.digits
    return "i" + "".join(secrets.choice(alphabet) for _ in range(19))


def reaper():
    while True:
        time.sleep(0.5)
        now = time.time()
        with SB_LOCK:
            dead = [s for s in SANDBOXES.values() if s.end <= now]
            for s in dead:
                del SANDBOXES[s.id]
        for s in dead:
            log("sandbox %s reached its timeout" % s.id)
            s.kill_all()


def kill_everything(*_):
    with SB_LOCK:
        boxes = list(SANDBOXES.values())
        SANDBOXES.clear()
    for s in boxes:
        s.kill_all()
    os._exit(0)


# ---- envelopes --------------------------------------------------------------

def envelope(msg, flags=0):
    data = json.dumps(msg, separators=(",", ":")).encode()
    return bytes([flags]) + len(data).to_bytes(4, "big") + data


def go_status(rc):
    if rc < 0:
        return "signal: " + GO_SIGNAL_NAMES.get(-rc, "signal %d" % -rc)
    return "exit status %d" % rc


# ---- the handler -------------------------------------------------------------

class Drop(Exception):
    """Cut the connection without a proper end (an injected fault)."""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "e2b-fake/1"
    # Headers and body go out in separate writes: with Nagle on, the body
    # waits for the client's delayed ACK, 40 ms a request.  E2B's servers
    # are Go, whose net/http sets TCP_NODELAY on every connection.
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        log("%s %s" % (self.address_string(), fmt % args))

    # -- plumbing --

    def body(self):
        if self._body is not None:
            return self._body
        te = self.headers.get("Transfer-Encoding", "")
        if "chunked" in te.lower():
            parts = []
            while True:
                line = self.rfile.readline()
                n = int(line.split(b";")[0].strip() or b"0", 16)
                if n == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                parts.append(self.rfile.read(n))
                self.rfile.readline()
            self._body = b"".join(parts)
        else:
            n = int(self.headers.get("Content-Length") or 0)
            self._body = self.rfile.read(n) if n > 0 else b""
        return self._body

    def send_raw(self, status, data=b"", ctype=None, headers=None):
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data and self.command != "HEAD":
            self.wfile.write(data)

    def send_json(self, status, obj, headers=None):
        self.send_raw(status, json.dumps(obj).encode(), "application/json", headers)

    def api_error(self, status, msg, headers=None):
        self.send_json(status, {"code": status, "message": msg}, headers)

    def connect_error(self, code, msg):
        self.send_json(CONNECT_CODES[code], {"code": code, "message": msg})

    def start_stream(self, ctype):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def chunk(self, data):
        if self.faults.get("slow_body_ms"):
            time.sleep(self.faults["slow_body_ms"] / 1000.0)
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_chunks(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def drop(self):
        """Cut the connection mid-body: no terminating chunk."""
        with FAULT_LOCK:
            INJECTED["drops"] += 1
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        raise Drop()

    def json_body(self):
        try:
            v = json.loads(self.body() or b"{}")
        except ValueError as e:
            raise BadRequest("request body is not JSON: %s" % e)
        if not isinstance(v, dict):
            raise BadRequest("request body is not a JSON object")
        return v

    # -- faults --

    def take_faults(self):
        """Decide, under the lock, which faults hit this request."""
        self.faults = {}
        with FAULT_LOCK:
            f = dict(FAULTS)
            if not f:
                return
            if f.get("paths") and not re.search(f["paths"], self.path):
                return
            self.faults["latency_ms"] = f.get("latency_ms", 0)
            self.faults["slow_body_ms"] = f.get("slow_body_ms", 0)
            hits = FAULTS.get("count")
            if hits is not None and hits <= 0:
                return
            used = False
            if f.get("error_rate") and RNG.random() < f["error_rate"]:
                self.faults["status"] = int(f.get("status", 503))
                INJECTED["errors"] += 1
                used = True
            elif f.get("drop_stream_rate") and RNG.random() < f["drop_stream_rate"]:
                self.faults["drop"] = True
                used = True
            if used and hits is not None:
                FAULTS["count"] = hits - 1
            self.faults["retry_after"] = f.get("retry_after", 1)

    # -- dispatch --

    def handle_one(self):
        self._body = None
        self.faults = {}
        path = urllib.parse.urlsplit(self.path).path
        if path.startswith("/_fake/"):
            return self.fake_control(path)
        self.take_faults()
        if self.faults.get("latency_ms"):
            time.sleep(self.faults["latency_ms"] / 1000.0)
        sid = self.headers.get("E2b-Sandbox-Id")
        host = self.headers.get("Host", "")
        m = re.match(r"^%d-([A-Za-z0-9]+)\." % ENVD_PORT, host)
        if m and not sid:
            sid = m.group(1)
        status = self.faults.get("status")
        if status:
            self.body()
            hdrs = {"Retry-After": str(self.faults["retry_after"])} if status == 429 else None
            if sid:
                code = {429: "resource_exhausted", 503: "unavailable"}.get(status, "internal")
                if path.startswith("/process.") or path.startswith("/filesystem."):
                    return self.send_json(status, {"code": code, "message": "injected fault"}, hdrs)
            return self.api_error(status, "injected fault (%d)" % status, hdrs)
        try:
            if sid:
                return self.envd(sid, path)
            return self.control(path)
        except BadRequest as e:
            return self.api_error(400, str(e))

    def do_any(self):
        try:
            self.handle_one()
        except Drop:
            pass
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    do_GET = do_POST = do_DELETE = do_PUT = do_HEAD = do_any

    # -- fake control --

    def fake_control(self, path):
        global FAULTS
        if path == "/_fake/faults" and self.command == "POST":
            f = self.json_body()
            with FAULT_LOCK:
                if "seed" in f:
                    RNG.seed(f["seed"])
                FAULTS = {k: v for k, v in f.items() if k != "seed"}
            return self.send_json(200, FAULTS)
        if path == "/_fake/faults":
            return self.send_json(200, FAULTS)
        if path == "/_fake/reset":
            with FAULT_LOCK:
                FAULTS = {}
                RNG.seed(ARGS.seed)
            return self.send_json(200, {})
        if path == "/_fake/state":
            with SB_LOCK:
                boxes = list(SANDBOXES.values())
            out = []
            for s in boxes:
                with s.lock:
                    running = [p.pid for p in s.procs.values() if p.popen.poll() is None]
                out.append({"sandboxID": s.id, "templateID": s.template,
                            "metadata": s.metadata, "envVars": s.envs,
                            "allowInternetAccess": s.internet,
                            "secondsLeft": round(s.end - time.time(), 1),
                            "state": "paused" if s.paused else "running",
                            "running": running, "dir": s.dir})
            with FAULT_LOCK:
                injected = dict(INJECTED)
            return self.send_json(200, {"sandboxes": out, "injected": injected})
        return self.api_error(404, "no fake control at %s" % path)

    # -- control plane --

    def control(self, path):
        key = self.headers.get("X-API-KEY")
        if not key:
            return self.api_error(401, "missing API key: set the X-API-KEY header")
        if key != ARGS.api_key:
            return self.api_error(401, "Invalid API key, please visit the dashboard to get your API key")
        m = re.match(r"^/(v2/)?sandboxes(?:/([^/]+))?(?:/([a-z]+))?$", path)
        if not m:
            return self.api_error(404, "no route for %s %s" % (self.command, path))
        v2, sid, action = m.group(1), m.group(2), m.group(3)
        if sid is None and action is None:
            if self.command == "POST":
                return self.create()
            if self.command == "GET":
                return self.list(bool(v2))
            return self.api_error(405, "method %s not allowed" % self.command)
        with SB_LOCK:
            sb = SANDBOXES.get(sid)
        if sb is None:
            self.body()
            return self.api_error(404, "sandbox \"%s\" doesn't exist or you don't have access to it" % sid)
        if action is None and self.command == "GET" and not v2:
            return self.send_json(200, sb.detail())
        if action is None and self.command == "DELETE" and not v2:
            with SB_LOCK:
                SANDBOXES.pop(sid, None)
            sb.kill_all()
            return self.send_raw(204)
        if action == "timeout" and self.command == "POST" and not v2:
            t = self.json_body().get("timeout")
            if not isinstance(t, int) or t < 0 or t > ARGS.max_timeout:
                return self.api_error(400, "timeout must be an integer from 0 to %d" % ARGS.max_timeout)
            sb.end = time.time() + t
            return self.send_raw(204)
        if action == "refreshes" and self.command == "POST" and not v2:
            d = self.json_body().get("duration", 0)
            sb.end = max(sb.end, time.time() + int(d))
            return self.send_raw(204)
        if action == "pause" and self.command == "POST" and not v2:
            self.body()
            if sb.paused:
                return self.api_error(409, "sandbox \"%s\" is already paused" % sid)
            sb.paused = True
            return self.send_raw(204)
        if action == "connect" and self.command == "POST" and v2:
            t = self.json_body().get("timeout", 300)
            sb.end = max(sb.end, time.time() + int(t))
            resumed = sb.paused
            sb.paused = False
            return self.send_json(201 if resumed else 200, sb.detail())
        return self.api_error(404, "no route for %s %s" % (self.command, path))

    def create(self):
        b = self.json_body()
        tmpl = b.get("templateID")
        if not isinstance(tmpl, str) or not tmpl:
            return self.api_error(400, "templateID is required")
        if tmpl not in ARGS.templates.split(","):
            return self.api_error(404, "template '%s' not found" % tmpl)
        timeout = b.get("timeout", 15)
        if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout < 0:
            return self.api_error(400, "timeout must be a non-negative integer")
        if timeout > ARGS.max_timeout:
            return self.api_error(400, "timeout cannot be greater than %d hours" % (ARGS.max_timeout // 3600))
        md = b.get("metadata") or {}
        envs = b.get("envVars") or {}
        for name, d in (("metadata", md), ("envVars", envs)):
            if not isinstance(d, dict) or not all(isinstance(v, str) for v in d.values()):
                return self.api_error(400, "%s must map strings to strings" % name)
        internet = b.get("allow_internet_access", True)
        if not isinstance(internet, bool):
            return self.api_error(400, "allow_internet_access must be a boolean")
        with SB_LOCK:
            if len(SANDBOXES) >= ARGS.max_sandboxes:
                return self.api_error(429, "you have reached the maximum number of concurrent sandboxes (%d)" % ARGS.max_sandboxes)
            sb = Sandbox(new_id(), tmpl, timeout, md, envs, internet)
            SANDBOXES[sb.id] = sb
        log("created %s" % sb.id)
        d = sb.detail()
        out = {k: d[k] for k in ("sandboxID", "templateID", "clientID", "envdVersion",
                                 "envdAccessToken", "domain", "alias")}
        out["trafficAccessToken"] = None
        return self.send_json(201, out)

    def list(self, v2):
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query, keep_blank_values=True)
        want = {}
        if "metadata" in q:
            try:
                want = parse_metadata_filter(q["metadata"][0])
            except ValueError as e:
                return self.api_error(400, "Error parsing metadata: %s" % e)
        states = None
        if "state" in q:
            states = set(",".join(q["state"]).split(","))
            bad = states - {"running", "paused"}
            if bad:
                return self.api_error(400, "unknown state %s" % ",".join(sorted(bad)))
        with SB_LOCK:
            boxes = sorted(SANDBOXES.values(), key=lambda s: (s.started, s.id))
        boxes = [s for s in boxes
                 if all(s.metadata.get(k) == v for k, v in want.items())
                 and (states is None or ("paused" if s.paused else "running") in states)]
        if not v2:
            return self.send_json(200, [s.detail(False) for s in boxes])
        try:
            limit = int(q.get("limit", ["100"])[0])
        except ValueError:
            return self.api_error(400, "limit must be an integer")
        if limit < 1 or limit > 100:
            return self.api_error(400, "limit must be from 1 to 100")
        limit = min(limit, ARGS.max_page)
        start = 0
        tok = q.get("nextToken", [""])[0]
        if tok:
            try:
                after = base64.urlsafe_b64decode(tok.encode()).decode()
                t, i = after.split("|", 1)
                key = (float(t), i)
                start = next((n for n, s in enumerate(boxes) if (s.started, s.id) > key), len(boxes))
            except (ValueError, UnicodeDecodeError):
                return self.api_error(400, "invalid nextToken")
        page = boxes[start:start + limit]
        hdrs = {"X-Total-Running": str(len(boxes))}
        if start + limit < len(boxes) and page:
            last = page[-1]
            hdrs["X-Next-Token"] = base64.urlsafe_b64encode(
                ("%r|%s" % (last.started, last.id)).encode()).decode()
        return self.send_json(200, [s.detail(False) for s in page], hdrs)

    # -- envd --

    def envd(self, sid, path):
        with SB_LOCK:
            sb = SANDBOXES.get(sid)
        if sb is None or not sb.alive or sb.paused:
            self.body()
            return self.api_error(502, "The sandbox %s was not found or is not running" % sid)
        port = self.headers.get("E2b-Sandbox-Port")
        if port is not None and port != str(ENVD_PORT):
            self.body()
            return self.api_error(502, "nothing listens on port %s of sandbox %s" % (port, sid))
        if path == "/health" and self.command == "GET":
            return self.send_raw(204)
        if self.headers.get("X-Access-Token") != sb.token:
            self.body()
            if path.startswith("/process.") or path.startswith("/filesystem."):
                return self.connect_error("unauthenticated", "invalid access token")
            return self.api_error(401, "invalid access token")
        user = "user"
        auth = self.headers.get("Authorization")
        if auth:
            try:
                kind, val = auth.split(" ", 1)
                user = base64.b64decode(val).decode().split(":", 1)[0]
                assert kind == "Basic"
            except Exception:
                self.body()
                return self.connect_error("unauthenticated", "malformed Authorization header")
        if user not in ("user", "root"):
            self.body()
            if path == "/files":
                return self.api_error(401, "user '%s' not found" % user)
            return self.connect_error("unauthenticated", "user '%s' not found" % user)
        home = "/root" if user == "root" else HOME
        if path == "/files":
            return self.files(sb, home)
        m = re.match(r"^/(process\.Process|filesystem\.Filesystem)/([A-Za-z]+)$", path)
        if not m or self.command != "POST":
            self.body()
            return self.send_raw(404, b"404 page not found\n", "text/plain; charset=utf-8")
        service, method = m.groups()
        streaming = service == "process.Process" and method in ("Start", "Connect")
        ctype = self.headers.get("Content-Type", "")
        want = "application/connect+json" if streaming else "application/json"
        if ctype.split(";")[0].strip() != want:
            self.body()
            return self.send_raw(415, b"", None, {"Accept-Post": want})
        if not streaming and self.headers.get("Connect-Protocol-Version") != "1":
            self.body()
            return self.connect_error("invalid_argument", "missing required header: set Connect-Protocol-Version to \"1\"")
        if streaming:
            raw = self.body()
            if len(raw) < 5 or raw[0] & 1 or int.from_bytes(raw[1:5], "big") != len(raw) - 5:
                return self.stream_error("invalid_argument", "malformed envelope")
            try:
                req = json.loads(raw[5:])
                assert isinstance(req, dict)
            except Exception:
                return self.stream_error("invalid_argument", "message is not a JSON object")
            timeout_ms = self.headers.get("Connect-Timeout-Ms")
            if timeout_ms is not None and not re.match(r"^\d{1,10}$", timeout_ms):
                return self.stream_error("invalid_argument", "bad Connect-Timeout-Ms")
            deadline = time.time() + int(timeout_ms) / 1000.0 if timeout_ms and int(timeout_ms) else None
            if method == "Start":
                return self.rpc_start(sb, req, deadline, home)
            return self.rpc_connect(sb, req, deadline)
        try:
            req = self.json_body()
        except BadRequest as e:
            return self.connect_error("invalid_argument", str(e))
        fn = getattr(self, "rpc_%s_%s" % (service.split(".")[0], method), None)
        if fn is None:
            return self.connect_error("unimplemented", "%s.%s is not implemented" % (service, method))
        return fn(sb, req, home)

    def stream_error(self, code, msg):
        self.start_stream("application/connect+json")
        self.chunk(envelope({"error": {"code": code, "message": msg}}, 2))
        self.end_chunks()

    # process.Process

    def rpc_start(self, sb, req, deadline, home):
        p = req.get("process")
        if not isinstance(p, dict) or not isinstance(p.get("cmd"), str) or not p["cmd"]:
            return self.stream_error("invalid_argument", "process.cmd is required")
        args = p.get("args") or []
        envs = p.get("envs") or {}
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args) or \
                not isinstance(envs, dict) or not all(isinstance(v, str) for v in envs.values()):
            return self.stream_error("invalid_argument", "process.args/envs have the wrong type")
        cwd_s = p.get("cwd") or home
        cwd = sb.host_path(cwd_s, home)
        if cwd is None or not sb.within(cwd):
            return self.stream_error("invalid_argument", "cwd %s leaves the sandbox (fake)" % cwd_s)
        if not os.path.isdir(cwd):
            return self.stream_error("internal", "error starting process: chdir %s: no such file or directory" % cwd_s)
        want_stdin = req.get("stdin", True)
        env = {"PATH": BASE_PATH, "HOME": sb.root + home, "USER": "user",
               "LANG": "C.UTF-8", "E2B_SANDBOX": "true", "E2B_SANDBOX_ID": sb.id}
        env.update(sb.envs)
        env.update(envs)
        cmd = p["cmd"]
        with sb.lock:
            if not sb.alive:
                return self.stream_error("unavailable", "sandbox is shutting down")
            try:
                pre = _unshare_net if (NETNS_OK and not sb.internet) else None
                popen = subprocess.Popen(
                    [cmd] + args, cwd=cwd, env=env,
                    stdin=subprocess.PIPE if want_stdin else subprocess.DEVNULL,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    start_new_session=True, preexec_fn=pre)
            except FileNotFoundError:
                what = "exec: \"%s\": executable file not found in $PATH" % cmd if "/" not in cmd \
                    else "fork/exec %s: no such file or directory" % cmd
                return self.stream_error("internal", "error starting process '%s': %s" % (cmd, what))
            except PermissionError:
                return self.stream_error("internal", "error starting process '%s': fork/exec %s: permission denied" % (cmd, cmd))
            except OSError as e:
                return self.stream_error("internal", "error starting process '%s': %s" % (cmd, e.strerror))
            proc = Proc(sb, popen, {"cmd": cmd, "args": args, "envs": envs, "cwd": cwd_s},
                        req.get("tag"), want_stdin)
            sb.procs[proc.pid] = proc
        q = proc.subscribe()
        threading.Thread(target=pump, args=(proc,), daemon=True).start()
        self.stream(sb, proc, q, deadline, True)

    def rpc_connect(self, sb, req, deadline):
        sel = req.get("process") or {}
        proc = find_proc(sb, sel)
        if proc is None:
            return self.stream_error("not_found", "process with %s not found" % json.dumps(sel))
        q = proc.subscribe()
        if q is None:
            return self.stream_error("not_found", "process %d has finished" % proc.pid)
        self.stream(sb, proc, q, deadline, False)

    def stream(self, sb, proc, q, deadline, owner):
        """Relay the process's events as enveloped messages."""
        try:
            ka = int(self.headers.get("Keepalive-Ping-Interval") or 0)
        except ValueError:
            ka = 0
        self.start_stream("application/connect+json")
        sent = 0
        timed_out = False
        try:
            self.chunk(envelope({"event": {"start": {"pid": proc.pid}}}))
            sent += 1
            while True:
                if self.faults.get("drop") and sent >= 1:
                    log("dropping the stream of %d" % proc.pid)
                    self.drop()
                wait = None
                if ka > 0:
                    wait = ka
                if deadline is not None:
                    left = deadline - time.time()
                    if left <= 0 and not timed_out:
                        timed_out = True
                        log("deadline: killing %d" % proc.pid)
                        try:
                            os.kill(proc.pid, signal.SIGKILL)
                        except OSError:
                            pass
                        left = 5
                    wait = max(0.0, min(wait, left) if wait else left)
                try:
                    ev = q.get(timeout=wait)
                except queue.Empty:
                    if ka > 0 and not timed_out:
                        self.chunk(envelope({"event": {"keepalive": {}}}))
                    continue
                if ev is None:
                    break
                self.chunk(envelope({"event": ev}))
                sent += 1
            if timed_out:
                self.chunk(envelope({"error": {"code": "deadline_exceeded",
                                               "message": "context deadline exceeded"}}, 2))
            else:
                self.chunk(envelope({}, 2))
            self.end_chunks()
        finally:
            proc.unsubscribe(q)

    def rpc_process_List(self, sb, req, home):
        with sb.lock:
            procs = [p for p in sb.procs.values() if p.popen.poll() is None]
        out = []
        for p in procs:
            d = {"config": {k: v for k, v in p.config.items() if v}, "pid": p.pid}
            if p.tag:
                d["tag"] = p.tag
            out.append(d)
        return self.send_json(200, {"processes": out} if out else {})

    def rpc_process_SendSignal(self, sb, req, home):
        proc = find_proc(sb, req.get("process") or {})
        if proc is None or proc.popen.poll() is not None:
            return self.connect_error("not_found", "process not found")
        sig = SIGNALS.get(req.get("signal"))
        if sig is None:
            return self.connect_error("invalid_argument", "unknown signal %r" % req.get("signal"))
        try:
            os.kill(proc.pid, sig)
        except OSError as e:
            return self.connect_error("internal", "error sending signal: %s" % e.strerror)
        return self.send_json(200, {})

    def rpc_process_SendInput(self, sb, req, home):
        proc = find_proc(sb, req.get("process") or {})
        if proc is None or proc.popen.poll() is not None:
            return self.connect_error("not_found", "process not found")
        inp = req.get("input") or {}
        try:
            data = base64.b64decode(inp.get("stdin", ""), validate=True)
        except ValueError:
            return self.connect_error("invalid_argument", "input.stdin is not base64")
        if not proc.has_stdin or proc.popen.stdin is None:
            return self.connect_error("failed_precondition", "stdin is not enabled for the process")
        try:
            with proc.stdin_lock:
                if proc.popen.stdin.closed:
                    return self.connect_error("failed_precondition", "stdin is closed")
                proc.popen.stdin.write(data)
                proc.popen.stdin.flush()
        except (BrokenPipeError, ValueError):
            return self.connect_error("internal", "error writing to stdin: broken pipe")
        return self.send_json(200, {})

    def rpc_process_CloseStdin(self, sb, req, home):
        proc = find_proc(sb, req.get("process") or {})
        if proc is None:
            return self.connect_error("not_found", "process not found")
        proc.close_stdin()
        return self.send_json(200, {})

    # filesystem.Filesystem

    def entry(self, sb, host):
        st = os.lstat(host)
        if stat.S_ISLNK(st.st_mode):
            t = "FILE_TYPE_SYMLINK"
        elif stat.S_ISDIR(st.st_mode):
            t = "FILE_TYPE_DIRECTORY"
        else:
            t = "FILE_TYPE_FILE"
        e = {"name": os.path.basename(host) or "/", "type": t, "path": sb.sandbox_path(host),
             "size": str(st.st_size), "mode": stat.S_IMODE(st.st_mode) | (0o20000000000 if t == "FILE_TYPE_DIRECTORY" else 0),
             "permissions": stat.filemode(st.st_mode), "owner": "user", "group": "user",
             "modifiedTime": rfc3339(st.st_mtime)}
        if t == "FILE_TYPE_SYMLINK":
            e["symlinkTarget"] = os.readlink(host)
        return {k: v for k, v in e.items() if v not in (0, "", None)}

    def fs_path(self, sb, req, home):
        path = req.get("path")
        if not isinstance(path, str) or not path:
            self.connect_error("invalid_argument", "path is required")
            return None
        host = sb.host_path(path, home)
        if host is None or not sb.within(os.path.dirname(host)):
            self.connect_error("permission_denied", "path %s leaves the sandbox (fake)" % path)
            return None
        return host

    def rpc_filesystem_Stat(self, sb, req, home):
        host = self.fs_path(sb, req, home)
        if host is None:
            return
        try:
            return self.send_json(200, {"entry": self.entry(sb, host)})
        except FileNotFoundError:
            return self.connect_error("not_found", "no such file or directory: %s" % req["path"])
        except OSError as e:
            return self.connect_error("internal", "error getting file info: %s" % e.strerror)

    def rpc_filesystem_MakeDir(self, sb, req, home):
        host = self.fs_path(sb, req, home)
        if host is None:
            return
        if os.path.isdir(host):
            return self.connect_error("already_exists", "directory %s already exists" % req["path"])
        try:
            os.makedirs(host, 0o755)
        except OSError as e:
            return self.connect_error("internal", "error creating directory: %s" % e.strerror)
        return self.send_json(200, {"entry": self.entry(sb, host)})

    def rpc_filesystem_Remove(self, sb, req, home):
        host = self.fs_path(sb, req, home)
        if host is None:
            return
        try:
            if os.path.isdir(host) and not os.path.islink(host):
                shutil.rmtree(host)
            else:
                os.unlink(host)
        except FileNotFoundError:
            return self.connect_error("not_found", "no such file or directory: %s" % req["path"])
        except OSError as e:
            return self.connect_error("internal", "error removing: %s" % e.strerror)
        return self.send_json(200, {})

    def rpc_filesystem_ListDir(self, sb, req, home):
        host = self.fs_path(sb, req, home)
        if host is None:
            return
        if not sb.within(host) or not os.path.isdir(host):
            return self.connect_error("not_found" if not os.path.exists(host) else "invalid_argument",
                                      "%s is not a directory" % req["path"])
        entries = [self.entry(sb, os.path.join(host, n)) for n in sorted(os.listdir(host))]
        return self.send_json(200, {"entries": entries} if entries else {})

    # REST /files

    def files(self, sb, home):
        q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
        if q.get("username", "user") not in ("user", "root"):
            self.body()
            return self.api_error(401, "user '%s' not found" % q["username"])
        if self.command == "GET":
            path = q.get("path")
            if not path:
                return self.api_error(400, "path is required")
            host = sb.host_path(path, home)
            if host is None or not sb.within(host):
                return self.api_error(403, "path %s leaves the sandbox (fake)" % path)
            if os.path.isdir(host):
                return self.api_error(400, "path '%s' is a directory" % path)
            try:
                with open(host, "rb") as f:
                    data = f.read()
            except FileNotFoundError:
                return self.api_error(404, "path '%s' does not exist" % path)
            except OSError as e:
                return self.api_error(500, "error reading '%s': %s" % (path, e.strerror))
            if self.faults.get("drop") or self.faults.get("slow_body_ms"):
                # Streamed in pieces, so that a fault can strike mid-body.
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                step = max(1, len(data) // 4)
                for i in range(0, len(data), step):
                    if self.faults.get("drop") and i > 0:
                        self.drop()
                    if self.faults.get("slow_body_ms"):
                        time.sleep(self.faults["slow_body_ms"] / 1000.0)
                    self.wfile.write(data[i:i + step])
                    self.wfile.flush()
                return
            return self.send_raw(200, data, "application/octet-stream")
        if self.command != "POST":
            self.body()
            return self.api_error(405, "method %s not allowed on /files" % self.command)
        ctype = self.headers.get("Content-Type", "")
        raw = self.body()
        path = q.get("path")
        if ctype.startswith("multipart/form-data"):
            m = re.search(r'boundary="?([^";]+)"?', ctype)
            if not m:
                return self.api_error(400, "multipart body without a boundary")
            data, fname = parse_multipart(raw, m.group(1).encode())
            if data is None:
                return self.api_error(400, "multipart body has no 'file' part")
            path = path or fname
        elif ctype.split(";")[0].strip() == "application/octet-stream":
            if version_tuple(ARGS.envd_version) < (0, 5, 7):
                return self.api_error(400, "unsupported Content-Type %s: use multipart/form-data" % ctype)
            data = raw
        else:
            return self.api_error(400, "unsupported Content-Type '%s'" % ctype)
        if not path:
            return self.api_error(400, "path is required")
        host = sb.host_path(path, home)
        if host is None or not sb.within(os.path.dirname(host)) or \
                (os.path.lexists(host) and not sb.within(host)):
            return self.api_error(403, "path %s leaves the sandbox (fake)" % path)
        try:
            os.makedirs(os.path.dirname(host), 0o755, exist_ok=True)
            if not sb.within(os.path.dirname(host)):
                return self.api_error(403, "path %s leaves the sandbox (fake)" % path)
            if os.path.isdir(host):
                return self.api_error(400, "path '%s' is a directory" % path)
            with open(host, "wb") as f:
                f.write(data)
        except OSError as e:
            return self.api_error(500, "error writing '%s': %s" % (path, e.strerror))
        sp = sb.sandbox_path(host)
        return self.send_json(200, [{"path": sp, "name": os.path.basename(sp), "type": "file"}])


class BadRequest(Exception):
    pass


def parse_multipart(raw, boundary):
    for part in raw.split(b"--" + boundary):
        if b"\r\n\r\n" not in part:
            continue
        head, body = part.split(b"\r\n\r\n", 1)
        if body.endswith(b"\r\n"):
            body = body[:-2]
        m = re.search(rb'Content-Disposition:[^\r\n]*?;\s*name="([^"]*)"(?:;\s*filename="([^"]*)")?', head, re.I)
        if m and m.group(1) == b"file":
            return body, (m.group(2) or b"").decode() or None
    return None, None


def go_query_unescape(s):
    """Go's url.QueryUnescape: '+' is a space, '%' must start two hex
    digits (ValueError otherwise)."""
    out = bytearray()
    i = 0
    b = s.encode()
    while i < len(b):
        c = b[i]
        if c == 0x25:  # %
            h = b[i + 1:i + 3]
            if len(h) != 2 or not all(x in b"0123456789abcdefABCDEF" for x in h):
                raise ValueError("invalid URL escape %r" % b[i:i + 3].decode("latin-1"))
            out.append(int(h, 16))
            i += 3
            continue
        out.append(0x20 if c == 0x2B else c)
        i += 1
    return out.decode("utf-8", "replace")


def parse_metadata_filter(value):
    """The list's metadata filter, decoded as the service decodes it
    (e2b-dev/infra packages/api/internal/utils parseFilters): the query
    parameter's value (already decoded once by the HTTP layer) is
    unescaped whole, split on '&' and then '=' (exactly one per pair), and
    each key and value unescaped once more.  The SDK encodes to match:
    encodeURIComponent on each key and value, URLSearchParams on the pairs,
    and the query serializer on the whole."""
    filters = {}
    for pair in go_query_unescape(value).split("&"):
        parts = pair.split("=")
        if len(parts) != 2:
            raise ValueError("invalid key value pair in query")
        filters[go_query_unescape(parts[0])] = go_query_unescape(parts[1])
    return filters


def find_proc(sb, sel):
    with sb.lock:
        if "pid" in sel:
            return sb.procs.get(sel["pid"])
        if "tag" in sel:
            return next((p for p in sb.procs.values() if p.tag == sel["tag"]), None)
    return None


def pump(proc):
    """Read the process's output into events; the end event comes last."""
    def reader(f, name):
        fd = f.fileno()
        while True:
            try:
                data = os.read(fd, 32768)
            except OSError:
                break
            if not data:
                break
            proc.publish({"data": {name: base64.b64encode(data).decode()}})
        f.close()

    readers = [threading.Thread(target=reader, args=(proc.popen.stdout, "stdout"), daemon=True),
               threading.Thread(target=reader, args=(proc.popen.stderr, "stderr"), daemon=True)]
    for t in readers:
        t.start()
    rc = proc.popen.wait()
    # A background child may hold the pipes open: give the readers a moment.
    for t in readers:
        t.join(timeout=2.0)
    end = {"exited": rc >= 0, "status": go_status(rc)}
    code = rc if rc >= 0 else -1
    if code:
        end["exitCode"] = code   # proto3 JSON: 0 is omitted
    if rc != 0:
        end["error"] = go_status(rc)
    proc.publish({"end": {k: v for k, v in end.items() if v not in (False, "")}}, final=True)
    proc.close_stdin()
    with proc.sb.lock:
        proc.sb.procs.pop(proc.pid, None)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def main():
    global ARGS, NETNS_OK, FAULTS
    ap = argparse.ArgumentParser(description="A local fake of E2B (control plane and envd).")
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one)")
    ap.add_argument("--api-key", default="e2b_test_key", help="the accepted X-API-KEY")
    ap.add_argument("--envd-version", default="0.5.7", help="envdVersion reported (< 0.5.7: multipart uploads only)")
    ap.add_argument("--templates", default="base", help="comma-separated known template ids")
    ap.add_argument("--max-page", type=int, default=100, help="largest list page served")
    ap.add_argument("--max-timeout", type=int, default=86400, help="largest sandbox timeout, s")
    ap.add_argument("--max-sandboxes", type=int, default=100, help="concurrent sandboxes before 429")
    ap.add_argument("--state-dir", default=None, help="where sandbox directories go")
    ap.add_argument("--seed", type=int, default=0, help="seed of the fault RNG")
    ap.add_argument("--faults", default=None, help="initial faults, a JSON object")
    ap.add_argument("--port-file", default=None, help="also write the port here")
    ap.add_argument("--verbose", action="store_true")
    ARGS = ap.parse_args()
    RNG.seed(ARGS.seed)
    if ARGS.faults:
        FAULTS = json.loads(ARGS.faults)
    NETNS_OK = probe_netns()
    signal.signal(signal.SIGTERM, kill_everything)
    signal.signal(signal.SIGINT, kill_everything)
    srv = Server(("127.0.0.1", ARGS.port), Handler)
    port = srv.server_address[1]
    threading.Thread(target=reaper, daemon=True).start()
    if ARGS.port_file:
        with open(ARGS.port_file + ".tmp", "w") as f:
            f.write("%d\n" % port)
        os.rename(ARGS.port_file + ".tmp", ARGS.port_file)
    print("READY port=%d netns=%s" % (port, "yes" if NETNS_OK else "no"), flush=True)
    try:
        srv.serve_forever(poll_interval=0.2)
    finally:
        kill_everything()


if __name__ == "__main__":
    main()
