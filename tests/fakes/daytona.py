#!/usr/bin/env python3
# tests/fakes/daytona.py - a faithful local fake of the Daytona API and of
# the sandbox toolbox (daemon) behind its proxy, for the daytona provider's
# tests.  Python 3 standard library only.
#
# What it emulates (see ../shared/reference/wire-apis.md section 4):
#   API, under /api, "Authorization: Bearer KEY" required (401 otherwise):
#     POST   /api/sandbox                     create (state creating -> started)
#     GET    /api/sandbox                     list: ?labels=<JSON object>&limit=&cursor=&states=
#                                             -> {"items":[...],"nextCursor":str|null}
#                                             (--legacy-list: a bare array)
#     GET    /api/sandbox/{idOrName}          one sandbox
#     DELETE /api/sandbox/{idOrName}          destroy (destroying, then gone)
#     POST   /api/sandbox/{id}/start|stop     start / stop
#     PUT    /api/sandbox/{id}/labels         {"labels":{...}} replaces all
#     POST   /api/sandbox/{id}/autostop|autodelete|autoarchive/{minutes}
#     GET    /api/sandbox/{id}/toolbox-proxy-url   {"url": ...}
#   Toolbox, under /toolbox/{id} (the sandbox's toolboxProxyUrl is
#   http://127.0.0.1:PORT/toolbox) and the legacy /api/toolbox/{id}/toolbox,
#   as the current daemon (daytonaio/daytona apps/daemon, 2026-06) serves it:
#     POST /process/execute   {"command","cwd"?,"timeout"?,"envs"?} -> {"exitCode","result"}
#                             the command is fed on stdin to the shell the
#                             daemon picks (zsh, bash, $SHELL, sh); "envs"
#                             added to the environment (names checked);
#                             stdout and stderr merged; invalid UTF-8
#                             replaced (Go strings); at "timeout" seconds
#                             (none: no limit) the process group is
#                             SIGKILLed and 408 answered; -1 for a signal or
#                             a start failure
#     POST /process/code-run  {"code","language","argv"?,"envs"?,"timeout"?}
#                             -> {"exitCode","result"}: the daemon's shell
#                             line for python, javascript, typescript
#     POST /files/upload[-v2]?path=   multipart field "file" or a raw body;
#                                     upload answers an empty 200, upload-v2
#                                     {"name","path","type"} (the SDK's
#                                     toolbox client and signed upload URLs)
#     POST /files/bulk-upload         multipart files[i].path, files[i].file
#                                     -> {"files":[{"path","bytes"}]}
#     POST /files/bulk-download       {"paths":[...]} -> multipart, a part
#                                     "file" or "error" (JSON) per path
#     GET  /files/download?path=      raw bytes; 404 missing, 400 directory
#     GET  /work-dir, /user-home-dir  {"dir": ...};  GET /version
#   --legacy-daemon plays an older daemon instead: execute without a shell
#   (split on spaces honouring only ' and ", no escapes), "envs" ignored,
#   "code" for the exit status, 360 s without a timeout, the process tree
#   terminated (TERM, grace, KILL); /files/upload multipart only, no
#   upload-v2 and no code-run.
#   Errors: {"statusCode":N,"message":"...","error":"..."} (API) and
#   {"statusCode":N,"message":"...","code":"...",...} (toolbox).
#
# Each sandbox is a private temporary directory; commands run for real on
# this host with their working directory in it and a clean environment.
# A sandbox created with networkBlockAll runs its commands in a network
# namespace of their own (inside a user namespace mapping our ids to
# themselves), so they reach no network, the host's loopback included.
# It is a protocol fake, not a security boundary.  Paths outside the
# sandbox's directory are refused.
#
# Fault injection (control endpoints need no key):
#   POST /_fake/faults {"latency_ms":0,"error_rate":0,"status":503,
#       "retry_after":null,"drop_rate":0,"drop_mode":"mid"|"before",
#       "slow_body_ms":0,"count":null,"path":"/api/sandbox","method":"POST",
#       "seed":1}
#     error_rate/drop_rate are probabilities drawn from a seeded RNG; count
#     (if set) turns every fault off after that many injections; path and
#     method restrict which requests are touched.
#   GET /_fake/faults, POST /_fake/reset (faults off, sandboxes destroyed),
#   GET /_fake/stats {"sandboxes":N,"live":[ids],"requests":N,"injected":N,
#   "created":N},
#   GET /_fake/requests  the last 200 requests (method, path, status, body
#   of API requests; never the Authorization header).
#   Magic snapshot (or FROM image of a buildInfo) names: "fake-error" ends
#   in state "error", "fake-build-failed" in "build_failed".  A buildInfo
#   {"dockerfileContent": "FROM image"} passes through pending_build.
#
# Usage: daytona.py [--port N] [--port-file F] [--api-key KEY] [--seed S]
#   [--start-ms MS] [--minute-ms MS] [--page-size N] [--legacy-daemon]
#   [--legacy-list] [--faults JSON]
# Prints "DAYTONA-FAKE READY http://127.0.0.1:PORT" once listening.

import argparse
import base64
import datetime
import json
import mimetypes
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATES_GONE = ("destroyed",)
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def now_iso(t=None):
    t = time.time() if t is None else t
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def go_json(obj):
    """JSON the way Go's encoding/json writes it (HTML characters escaped)."""
    s = json.dumps(obj, separators=(",", ":"))
    return (s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def parse_command(command):
    """The daemon's parseCommand: split on spaces, ' and " quote, no escapes."""
    args, cur, in_q, qc = [], [], False, None
    for r in command:
        if r in "\"'":
            if not in_q:
                in_q, qc = True, r
            elif qc == r:
                in_q, qc = False, None
            else:
                cur.append(r)
        elif r == " " and not in_q:
            if cur:
                args.append("".join(cur))
                cur = []
        else:
            cur.append(r)
    if cur:
        args.append("".join(cur))
    return args


# ---- network isolation -----------------------------------------------------

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
_libc = None


def _isolate_network():
    """In the child before exec: a user namespace mapping our own ids to
    themselves (so nothing else changes) holding a new network namespace
    with only a loopback that is down: networkBlockAll."""
    uid, gid = os.getuid(), os.getgid()
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
        os.write(2, b"daytona-fake: cannot isolate the network (unshare failed)\n")
        os._exit(126)
    for name, text in (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid, uid)),
                       ("gid_map", "%d %d 1" % (gid, gid))):
        try:
            fd = os.open("/proc/self/" + name, os.O_WRONLY)
            os.write(fd, text.encode())
            os.close(fd)
        except OSError:
            if name != "setgroups":
                os.write(2, b"daytona-fake: cannot map ids in the user namespace\n")
                os._exit(126)


def _join_namespaces(pid):
    """A preexec function joining the user and network namespaces of
    process @pid (a sandbox's holder): every process of one sandbox shares
    one network, as in the service, and sees the others in /proc."""
    def join():
        for kind, flag in (("user", CLONE_NEWUSER), ("net", CLONE_NEWNET)):
            try:
                fd = os.open("/proc/%d/ns/%s" % (pid, kind), os.O_RDONLY)
            except OSError:
                fd = -1
            if fd < 0 or _libc.setns(fd, flag) != 0:
                os.write(2, b"daytona-fake: cannot join the sandbox's namespaces\n")
                os._exit(126)
            os.close(fd)
    return join


def netns_works():
    """Whether this host lets us make the namespaces networkBlockAll needs."""
    global _libc
    import ctypes
    try:
        _libc = ctypes.CDLL(None, use_errno=True)
        r = subprocess.run(["true"], preexec_fn=_isolate_network, stderr=subprocess.DEVNULL)
        return r.returncode == 0
    except (OSError, AttributeError):
        return False


# ---- processes -------------------------------------------------------------

def _proc_pids():
    for d in os.listdir("/proc"):
        if d.isdigit():
            yield int(d)


def _ppid(pid):
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            s = f.read()
        return int(s[s.rindex(b")") + 2:].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def descendants(root):
    kids = {}
    for p in _proc_pids():
        pp = _ppid(p)
        if pp is not None:
            kids.setdefault(pp, []).append(p)
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        for c in kids.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def _signal(pids, sig):
    for p in pids:
        try:
            os.kill(p, sig)
        except OSError:
            pass


def _kill_until_gone(living, rounds):
    """SIGKILL the live processes living() lists until there are none
    (at most @rounds rounds, 20 ms apart)."""
    for _ in range(rounds):
        alive = [p for p in set(living()) if _alive(p)]
        if not alive:
            return
        _signal(alive, signal.SIGKILL)
        time.sleep(0.02)


def kill_tree(root, grace):
    """Terminate a process tree gracefully (TERM, grace, KILL), as the
    daemon's TerminateProcessTreeGracefully does."""
    tree = [root] + descendants(root)
    _signal(tree, signal.SIGTERM)
    time.sleep(grace)

    def living():
        # Children reparented away from the tree are still ours.
        nonlocal tree
        tree = [root] + descendants(root) + [p for p in tree if _alive(p)]
        return tree
    _kill_until_gone(living, 20)


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            s = f.read()
        return s[s.rindex(b")") + 2:s.rindex(b")") + 3] != b"Z"
    except (OSError, ValueError):
        return False


def sandbox_pids(sb):
    """Every process of a sandbox: its marker in the environment, or a
    working directory inside its directory."""
    marker = ("DAYTONA_SANDBOX_ID=%s" % sb.id).encode()
    me = os.getpid()
    for p in _proc_pids():
        if p == me:
            continue
        try:
            with open("/proc/%d/environ" % p, "rb") as f:
                if marker in f.read().split(b"\0"):
                    yield p
                    continue
            cwd = os.readlink("/proc/%d/cwd" % p)
            if cwd == sb.root or cwd.startswith(sb.root + "/"):
                yield p
        except OSError:
            pass


def kill_sandbox(sb):
    _kill_until_gone(lambda: sandbox_pids(sb), 50)


# ---- state -----------------------------------------------------------------

class Sandbox:
    def __init__(self, srv, body):
        self.id = str(uuid.uuid4())
        self.name = body.get("name") or self.id
        self.root = os.path.realpath(tempfile.mkdtemp(prefix="daytona-fake-"))
        self.home = os.path.join(self.root, "home", "daytona")
        self.tmp = os.path.join(self.root, "tmp")
        os.makedirs(self.home)
        os.makedirs(self.tmp)
        self.snapshot = body.get("snapshot") or "daytonaio/sandbox:0.4.3"
        build = body.get("buildInfo")
        image = None
        if build:
            # A declarative image: built first (pending_build), then started.
            for line in build.get("dockerfileContent", "").splitlines():
                if line.strip().upper().startswith("FROM "):
                    image = line.split(None, 1)[1].strip()
            self.snapshot = image or "built"
        self.user = body.get("user") or "daytona"
        self.env = dict(body.get("env") or {})
        self.labels = dict(body.get("labels") or {})
        self.public = bool(body.get("public", False))
        self.network_block_all = bool(body.get("networkBlockAll", False))
        self.ns_holder = None    # the process holding its namespaces (networkBlockAll)
        self.target = body.get("target") or "us"
        self.cpu = body.get("cpu") or 1
        self.memory = body.get("memory") or 1
        self.disk = body.get("disk") or 3
        self.auto_stop = body.get("autoStopInterval", 15)
        self.auto_archive = body.get("autoArchiveInterval", 10080)
        self.auto_delete = body.get("autoDeleteInterval", -1)
        self.created = time.time()
        self.updated = self.created
        self.activity = self.created
        self.stopped_at = None
        self.error_reason = None
        self.state = "creating"
        self.until = self.created + srv.start_s
        self.then = "started"
        if build:
            self.state = "pending_build"
        if self.snapshot == "fake-error":
            self.then = "error"
        elif self.snapshot == "fake-build-failed":
            self.state, self.then = "pending_build", "build_failed"

    def to_json(self, srv):
        return {
            "id": self.id, "name": self.name, "organizationId": "fake-org",
            "snapshot": self.snapshot, "user": self.user, "env": self.env,
            "labels": self.labels, "public": self.public,
            "networkBlockAll": self.network_block_all, "target": self.target,
            "cpu": self.cpu, "gpu": 0, "memory": self.memory, "disk": self.disk,
            "state": self.state, "desiredState": "destroyed" if self.state == "destroying"
            else ("stopped" if self.state in ("stopping", "stopped") else "started"),
            "errorReason": self.error_reason, "backupState": "None",
            "autoStopInterval": self.auto_stop, "autoArchiveInterval": self.auto_archive,
            "autoDeleteInterval": self.auto_delete, "createdAt": now_iso(self.created),
            "updatedAt": now_iso(self.updated), "runnerDomain": "127.0.0.1",
            "toolboxProxyUrl": srv.base_url + "/toolbox",
        }


class Faults:
    KEYS = ("latency_ms", "error_rate", "status", "retry_after", "drop_rate",
            "drop_mode", "slow_body_ms", "count", "path", "method", "seed")

    def __init__(self, d=None):
        d = d or {}
        for k in d:
            if k not in self.KEYS:
                raise ValueError("unknown fault key '%s' (known: %s)" % (k, ", ".join(self.KEYS)))
        self.latency_ms = float(d.get("latency_ms", 0))
        self.error_rate = float(d.get("error_rate", 0))
        self.status = int(d.get("status", 503))
        self.retry_after = d.get("retry_after")
        self.drop_rate = float(d.get("drop_rate", 0))
        self.drop_mode = d.get("drop_mode", "mid")
        if self.drop_mode not in ("mid", "before"):
            raise ValueError("drop_mode must be 'mid' or 'before'")
        self.slow_body_ms = float(d.get("slow_body_ms", 0))
        self.count = d.get("count")
        self.path = d.get("path")
        self.method = d.get("method")
        self.rng = random.Random(d.get("seed", 1))
        self.raw = dict(d)

    def applies(self, method, path):
        if self.count is not None and self.count <= 0:
            return False
        if self.path and not path.startswith(self.path):
            return False
        if self.method and method != self.method:
            return False
        return True


class Fake:
    def __init__(self, args):
        self.api_key = args.api_key
        self.start_s = args.start_ms / 1000.0
        self.minute_s = args.minute_ms / 1000.0
        self.page_size = args.page_size
        self.legacy_daemon = args.legacy_daemon
        self.shell = daemon_shell()
        self.legacy_list = args.legacy_list
        self.grace = args.grace_ms / 1000.0
        # True: enforce networkBlockAll; "off": ignore it; False: refuse it.
        self.netns = "off" if args.no_netns else netns_works()
        self.lock = threading.RLock()
        self.sandboxes = {}      # id -> Sandbox (in creation order)
        self.faults = Faults(json.loads(args.faults) if args.faults else None)
        self.requests = []
        self.n_requests = 0
        self.n_injected = 0
        self.n_created = 0
        self.base_url = None

    # Lazy state machine, run under the lock before every look.
    def tick(self):
        t = time.time()
        for sb in list(self.sandboxes.values()):
            if sb.state in ("creating", "starting", "pending_build", "restoring") and t >= sb.until:
                sb.state = sb.then
                sb.updated = t
                sb.activity = t
                if sb.state == "error":
                    sb.error_reason = "fake: the snapshot failed to start"
                elif sb.state == "build_failed":
                    sb.error_reason = "fake: the snapshot build failed"
            elif sb.state == "stopping" and t >= sb.until:
                sb.state, sb.updated, sb.stopped_at = "stopped", t, t
            elif sb.state == "destroying" and t >= sb.until:
                del self.sandboxes[sb.id]
            elif sb.state == "started" and sb.auto_stop and sb.auto_stop > 0 and \
                    t - sb.activity >= sb.auto_stop * self.minute_s:
                self._stop(sb)
                sb.state, sb.stopped_at = "stopped", t
            elif sb.state == "stopped" and sb.auto_delete is not None and sb.auto_delete >= 0 \
                    and sb.stopped_at is not None and \
                    t - sb.stopped_at >= sb.auto_delete * self.minute_s:
                self._destroy(sb)

    def isolation(self, sb):
        """The preexec function of a process of @sb: None, or joining the
        namespaces of its networkBlockAll (made by a holder process on the
        first exec after each start)."""
        if sb.network_block_all and not self.netns:
            raise HTTPError(500, "fake: networkBlockAll needs user and network namespaces, which "
                            "this host refuses (run the fake with --no-netns to ignore "
                            "networkBlockAll)")
        if not sb.network_block_all or self.netns is not True:
            return None
        with self.lock:
            h = sb.ns_holder
            if h is None or h.poll() is not None:
                h = subprocess.Popen(["sleep", "2147483647"], cwd=sb.root,
                                     env={"PATH": BASE_PATH, "DAYTONA_SANDBOX_ID": sb.id},
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True,
                                     preexec_fn=_isolate_network)
                sb.ns_holder = h
        return _join_namespaces(h.pid)

    @staticmethod
    def _kill(sb):
        kill_sandbox(sb)
        if sb.ns_holder is not None:
            sb.ns_holder.kill()
            sb.ns_holder.wait()
            sb.ns_holder = None

    def _stop(self, sb):
        self._kill(sb)
        sb.updated = time.time()

    def _destroy(self, sb):
        self._kill(sb)
        shutil.rmtree(sb.root, ignore_errors=True)
        sb.state = "destroying"
        sb.updated = time.time()
        sb.until = sb.updated + min(self.start_s, 0.2)

    def find(self, key):
        sb = self.sandboxes.get(key)
        if sb is None:
            for s in self.sandboxes.values():
                if s.name == key:
                    return s
        return sb

    def reaper(self):
        while True:
            time.sleep(0.1)
            with self.lock:
                self.tick()


class HTTPError(Exception):
    def __init__(self, status, message, code=None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


REASONS = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           408: "Request Timeout", 409: "Conflict", 411: "Length Required",
           413: "Payload Too Large", 422: "Unprocessable Entity", 429: "Too Many Requests",
           500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
           504: "Gateway Timeout"}
CODES = {400: "BAD_REQUEST", 401: "UNAUTHORIZED", 403: "FORBIDDEN", 404: "NOT_FOUND",
         408: "REQUEST_TIMEOUT", 409: "CONFLICT", 500: "INTERNAL_SERVER_ERROR"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "daytona-fake/1"
    fake = None  # set in main
    # Headers and body go out in separate writes: with Nagle on, the body
    # waits for the client's delayed ACK, 40 ms a request.  Daytona's API
    # (Node, noDelay by default) and toolbox daemon (Go) send at once.
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):  # quiet: tests read stdout
        pass

    # ---- plumbing ----
    def _body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            # The SDK streams its uploads (form-data, chunked).
            parts = []
            while True:
                line = self.rfile.readline(1024)
                try:
                    n = int(line.split(b";")[0].strip(), 16)
                except ValueError:
                    raise HTTPError(400, "malformed chunked request body")
                if n == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(n))
                self.rfile.readline(8)
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _send(self, status, body=b"", ctype="application/json; charset=utf-8", extra=None):
        f = self.fake
        faults = getattr(self, "_faults_now", None)
        self.send_response(status, REASONS.get(status))
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        if faults == "drop":
            # The answer starts, then the connection dies half way.
            self.end_headers()
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self._kill_connection()
            return
        self.end_headers()
        slow = f.faults.slow_body_ms if faults == "slow" else 0
        if slow and body:
            pieces = 10
            step = max(1, (len(body) + pieces - 1) // pieces)
            for i in range(0, len(body), step):
                self.wfile.write(body[i:i + step])
                self.wfile.flush()
                time.sleep(slow / 1000.0 / pieces)
        else:
            self.wfile.write(body)
        self._status = status

    def _kill_connection(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._status = 0

    def _json(self, status, obj, toolbox=False):
        body = (go_json(obj) if toolbox else json.dumps(obj)).encode()
        self._send(status, body)

    def _error(self, e, toolbox):
        if toolbox:
            obj = {"statusCode": e.status, "message": e.message,
                   "code": e.code or CODES.get(e.status, "ERROR"),
                   "timestamp": now_iso(), "path": self.path.split("?")[0],
                   "method": self.command}
        else:
            obj = {"statusCode": e.status, "message": e.message,
                   "error": REASONS.get(e.status, "Error")}
        extra = {}
        if e.status == 429 or getattr(e, "retry_after", None) is not None:
            ra = getattr(e, "retry_after", None)
            if ra is not None:
                extra["Retry-After"] = str(ra)
        body = (go_json(obj) if toolbox else json.dumps(obj)).encode()
        self._send(e.status, body, extra=extra)

    def _record(self, path, body):
        f = self.fake
        entry = {"method": self.command, "path": path, "status": getattr(self, "_status", None)}
        if path.startswith("/api/sandbox") and body:
            try:
                entry["body"] = json.loads(body)
            except ValueError:
                entry["body"] = None
        with f.lock:
            f.requests.append(entry)
            del f.requests[:-200]
        return entry

    # ---- dispatch ----
    def do_GET(self):
        self._dispatch()

    def do_POST(self):
        self._dispatch()

    def do_PUT(self):
        self._dispatch()

    def do_DELETE(self):
        self._dispatch()

    def _dispatch(self):
        f = self.fake
        url = urllib.parse.urlsplit(self.path)
        path = url.path
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        self._faults_now = None
        self._status = None
        toolbox = path.startswith("/toolbox/") or path.startswith("/api/toolbox/")
        try:
            body = self._body()
        except HTTPError as e:
            self.close_connection = True
            return self._error(e, toolbox)
        if path.startswith("/_fake/"):
            return self._control(path, body)
        with f.lock:
            f.n_requests += 1
            fl = f.faults
            inject, latency = None, 0
            if fl.applies(self.command, path):
                latency = fl.latency_ms
                if fl.error_rate and fl.rng.random() < fl.error_rate:
                    inject = "error"
                elif fl.drop_rate and fl.rng.random() < fl.drop_rate:
                    inject = "drop"
                elif fl.slow_body_ms:
                    inject = "slow"
                if inject in ("error", "drop"):
                    f.n_injected += 1
                    if fl.count is not None:
                        fl.count -= 1
        entry = self._record(path, body)
        if latency:
            time.sleep(latency / 1000.0)
        if inject == "error":
            e = HTTPError(fl.status, "fake: injected %d" % fl.status)
            if fl.retry_after is not None:
                e.retry_after = fl.retry_after
            self._error(e, toolbox)
            entry["status"] = fl.status
            return
        if inject == "drop" and fl.drop_mode == "before":
            entry["status"] = 0
            self._kill_connection()
            return
        self._faults_now = inject
        try:
            if not self._authorized():
                raise HTTPError(401, "Unauthorized")
            if toolbox:
                self._toolbox(path, query, body)
            elif path == "/api/sandbox" or path.startswith("/api/sandbox/"):
                self._api(path, query, body)
            else:
                raise HTTPError(404, "Cannot %s %s" % (self.command, path))
        except HTTPError as e:
            self._error(e, toolbox)
        except BrokenPipeError:
            self.close_connection = True
        entry["status"] = self._status

    def _authorized(self):
        h = self.headers.get("Authorization", "")
        return h == "Bearer " + self.fake.api_key

    # ---- control ----
    def _control(self, path, body):
        f = self.fake
        if path == "/_fake/faults" and self.command == "POST":
            try:
                d = json.loads(body or b"{}")
                if not isinstance(d, dict):
                    raise ValueError("faults must be a JSON object")
                faults = Faults(d)
            except (ValueError, TypeError) as e:
                return self._json(400, {"statusCode": 400, "message": str(e)})
            with f.lock:
                f.faults = faults
            return self._json(200, faults.raw)
        if path == "/_fake/faults":
            return self._json(200, f.faults.raw)
        if path == "/_fake/reset" and self.command == "POST":
            with f.lock:
                f.faults = Faults()
                for sb in list(f.sandboxes.values()):
                    f._destroy(sb)
                f.sandboxes.clear()
            return self._json(200, {})
        if path == "/_fake/stats":
            with f.lock:
                f.tick()
                live = [s.id for s in f.sandboxes.values() if s.state != "destroying"]
                return self._json(200, {"sandboxes": len(f.sandboxes), "live": live,
                                        "requests": f.n_requests, "injected": f.n_injected,
                                        "created": f.n_created,
                                        "states": {s.id: s.state for s in f.sandboxes.values()}})
        if path == "/_fake/requests":
            with f.lock:
                return self._json(200, list(f.requests))
        return self._json(404, {"statusCode": 404, "message": "no such control endpoint"})

    # ---- API ----
    def _json_body(self, body):
        if not body:
            return {}
        try:
            d = json.loads(body)
        except ValueError:
            raise HTTPError(400, "request body is not valid JSON")
        if not isinstance(d, dict):
            raise HTTPError(400, "request body must be a JSON object")
        return d

    @staticmethod
    def _check_map(d, key):
        v = d.get(key)
        if v is None:
            return
        if not isinstance(v, dict) or not all(isinstance(k, str) and isinstance(x, str)
                                              for k, x in v.items()):
            raise HTTPError(400, "%s must be an object of strings" % key)

    @staticmethod
    def _check_int(d, key, lo):
        v = d.get(key)
        if v is None:
            return
        if not isinstance(v, int) or isinstance(v, bool) or v < lo:
            raise HTTPError(400, "%s must be an integer >= %d" % (key, lo))

    def _get_sb(self, key):
        f = self.fake
        sb = f.find(key)
        if sb is None:
            raise HTTPError(404, "Sandbox with ID or name %s not found" % key)
        return sb

    def _api(self, path, query, body):
        f = self.fake
        parts = [urllib.parse.unquote(p) for p in path.split("/")[2:]]  # ["sandbox", ...]
        m = self.command
        with f.lock:
            f.tick()
            if len(parts) == 1:
                if m == "POST":
                    return self._create(body)
                if m == "GET":
                    return self._list(query)
                raise HTTPError(404, "Cannot %s %s" % (m, path))
            if len(parts) == 2 and parts[1] == "paginated" and m == "GET":
                return self._list(query, force_items=True)
            sb = self._get_sb(parts[1])
            if len(parts) == 2:
                if m == "GET":
                    return self._json(200, sb.to_json(f))
                if m == "DELETE":
                    if sb.state != "destroying":
                        f._destroy(sb)
                    return self._json(200, sb.to_json(f))
                raise HTTPError(404, "Cannot %s %s" % (m, path))
            op = parts[2]
            if op == "start" and m == "POST":
                if sb.state in ("stopped", "archived"):
                    sb.state, sb.then = "starting", "started"
                    sb.until = time.time() + f.start_s
                    sb.stopped_at = None
                elif sb.state in ("error", "build_failed", "destroying"):
                    raise HTTPError(400, "Sandbox is in state %s and cannot be started" % sb.state)
                sb.activity = time.time()
                return self._json(200, sb.to_json(f))
            if op == "stop" and m == "POST":
                if sb.state == "started":
                    f._stop(sb)
                    sb.state, sb.until = "stopping", time.time() + min(f.start_s, 0.1)
                elif sb.state != "stopped":
                    raise HTTPError(400, "Sandbox is in state %s and cannot be stopped" % sb.state)
                return self._json(200, sb.to_json(f))
            if op == "labels" and m == "PUT":
                d = self._json_body(body)
                self._check_map(d, "labels")
                if "labels" not in d:
                    raise HTTPError(400, "labels is required")
                sb.labels = dict(d["labels"])
                sb.updated = time.time()
                return self._json(200, {"labels": sb.labels})
            if op in ("autostop", "autodelete", "autoarchive") and m == "POST" and len(parts) == 4:
                try:
                    v = int(parts[3])
                except ValueError:
                    raise HTTPError(400, "interval must be an integer")
                if v < (-1 if op == "autodelete" else 0):
                    raise HTTPError(400, "interval out of range")
                setattr(sb, {"autostop": "auto_stop", "autodelete": "auto_delete",
                             "autoarchive": "auto_archive"}[op], v)
                sb.updated = time.time()
                return self._json(200, sb.to_json(f))
            if op == "toolbox-proxy-url" and m == "GET":
                return self._json(200, {"url": f.base_url + "/toolbox"})
            raise HTTPError(404, "Cannot %s %s" % (m, path))

    def _create(self, body):
        f = self.fake
        d = self._json_body(body)
        for k in ("env", "labels"):
            self._check_map(d, k)
        for k, lo in (("autoStopInterval", 0), ("autoArchiveInterval", 0),
                      ("autoDeleteInterval", -1), ("cpu", 1), ("memory", 1), ("disk", 1)):
            self._check_int(d, k, lo)
        b = d.get("buildInfo")
        if b is not None and (not isinstance(b, dict)
                              or not isinstance(b.get("dockerfileContent"), str)):
            raise HTTPError(400, "buildInfo.dockerfileContent must be a string")
        if b is not None and d.get("snapshot"):
            raise HTTPError(400, "Cannot specify both snapshot and buildInfo")
        for k in ("snapshot", "name", "user", "target"):
            if k in d and d[k] is not None and not isinstance(d[k], str):
                raise HTTPError(400, "%s must be a string" % k)
        if d.get("name") and f.find(d["name"]):
            raise HTTPError(409, "Sandbox with name %s already exists" % d["name"])
        sb = Sandbox(f, d)
        f.sandboxes[sb.id] = sb
        f.n_created += 1
        return self._json(200, sb.to_json(f))

    def _list(self, query, force_items=False):
        f = self.fake
        want = {}
        if "labels" in query:
            try:
                want = json.loads(query["labels"][0])
            except ValueError:
                raise HTTPError(400, "labels must be a JSON object")
            if not isinstance(want, dict):
                raise HTTPError(400, "labels must be a JSON object")
        states = set()
        for s in query.get("states", []):
            states.update(x for x in s.split(",") if x)
        items = [s for s in f.sandboxes.values()
                 if all(s.labels.get(k) == v for k, v in want.items())
                 and (not states or s.state in states)]
        if f.legacy_list and not force_items:
            return self._json(200, [s.to_json(f) for s in items])
        try:
            limit = int(query.get("limit", [f.page_size])[0])
            off = int(base64.urlsafe_b64decode(query["cursor"][0]).decode()) \
                if query.get("cursor", [""])[0] else 0
        except (ValueError, UnicodeDecodeError):
            raise HTTPError(400, "bad limit or cursor")
        if limit < 1 or limit > 200:
            raise HTTPError(400, "limit must be from 1 to 200")
        limit = min(limit, f.page_size)     # the service caps pages
        page = items[off:off + limit]
        nxt = None
        if off + limit < len(items):
            nxt = base64.urlsafe_b64encode(str(off + limit).encode()).decode()
        return self._json(200, {"items": [s.to_json(f) for s in page], "nextCursor": nxt})

    # ---- toolbox ----
    def _toolbox(self, path, query, body):
        f = self.fake
        parts = path.split("/")
        if parts[1] == "api":   # /api/toolbox/{id}/toolbox/...
            if len(parts) < 5 or parts[4] != "toolbox":
                raise HTTPError(404, "Cannot %s %s" % (self.command, path))
            sid, rest = parts[3], "/" + "/".join(parts[5:])
        else:                   # /toolbox/{id}/...
            sid, rest = parts[2], "/" + "/".join(parts[3:])
        with f.lock:
            f.tick()
            sb = f.sandboxes.get(urllib.parse.unquote(sid))
            if sb is None:
                raise HTTPError(404, "Sandbox with ID %s not found" % sid)
            if sb.state != "started":
                raise HTTPError(400, "Sandbox is not running (state %s)" % sb.state)
            sb.activity = time.time()
        m = self.command
        if rest == "/process/execute" and m == "POST":
            if f.legacy_daemon:
                return self._execute_legacy(sb, body)
            return self._execute(sb, body)
        if rest == "/process/code-run" and m == "POST" and not f.legacy_daemon:
            return self._code_run(sb, body)
        if rest == "/files/upload" and m == "POST":
            return self._upload(sb, query, body, False)
        if rest == "/files/upload-v2" and m == "POST" and not f.legacy_daemon:
            return self._upload(sb, query, body, True)
        if rest == "/files/bulk-upload" and m == "POST":
            return self._bulk_upload(sb, body)
        if rest == "/files/bulk-download" and m == "POST":
            return self._bulk_download(sb, body)
        if rest == "/files/download" and m == "GET":
            return self._download(sb, query)
        if rest == "/work-dir" and m == "GET":
            return self._json(200, {"dir": sb.home}, toolbox=True)
        if rest == "/user-home-dir" and m == "GET":
            return self._json(200, {"dir": sb.home}, toolbox=True)
        if rest == "/version" and m == "GET":
            return self._json(200, {"version": "v0.0.0-fake"}, toolbox=True)
        raise HTTPError(404, "404 page not found")

    def _sandbox_path(self, sb, p):
        if not p:
            raise HTTPError(400, "path is required")
        full = p if p.startswith("/") else os.path.join(sb.home, p)
        real = os.path.realpath(full)
        if real != sb.root and not real.startswith(sb.root + "/"):
            raise HTTPError(403, "fake: path %s is outside the sandbox" % p)
        return real

    def _write_file(self, path, data):
        os.makedirs(os.path.dirname(path), 0o755, exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)

    def _upload(self, sb, query, body, v2):
        path = self._sandbox_path(sb, query.get("path", [""])[0])
        ctype = self.headers.get("Content-Type", "")
        if ctype.startswith("multipart/form-data"):
            data = multipart_file(ctype, body, "file")
        elif not self.fake.legacy_daemon:
            data = body     # a raw body, since upload-v2 came
        else:
            # An older daemon's gin c.FormFile("file").
            raise HTTPError(400, "request Content-Type isn't multipart/form-data")
        try:
            self._write_file(path, data)
        except OSError as e:
            raise HTTPError(400, "%s: %s" % (path, e.strerror))
        if v2:
            return self._json(200, {"name": os.path.basename(path), "path": path,
                                    "type": "file"}, toolbox=True)
        self._send(200, b"", ctype="text/plain; charset=utf-8")

    def _bulk_upload(self, sb, body):
        """POST /files/bulk-upload: multipart fields files[i].path then
        files[i].file (the SDK's uploadFile/uploadFiles); the daemon's
        fs/upload_files.go."""
        ctype = self.headers.get("Content-Type", "")
        if not ctype.startswith("multipart/form-data"):
            return self._json(400, {"errors": ["invalid multipart form"]}, toolbox=True)
        dests, errs, files = {}, [], []
        for name, _fname, data in multipart_parts(ctype, body):
            idx = name
            if name.startswith("files["):
                idx = name[len("files["):]
            if name.endswith(".path"):
                idx = idx[:-len("].path")] if idx.endswith("].path") else idx[:-len(".path")]
                dest = data.decode("utf-8", "replace").strip()
                if not dest:
                    errs.append("path[%s]: empty path" % idx)
                else:
                    dests[idx] = dest
            elif name.endswith(".file"):
                idx = idx[:-len("].file")] if idx.endswith("].file") else idx[:-len(".file")]
                dest = dests.get(idx)
                if dest is None:
                    errs.append("file[%s]: missing .path metadata" % idx)
                    continue
                try:
                    self._write_file(self._sandbox_path(sb, dest), data)
                except HTTPError as e:
                    errs.append("%s: %s" % (dest, e.message))
                    continue
                except OSError as e:
                    errs.append("%s: create: %s" % (dest, e.strerror))
                    continue
                files.append({"path": dest, "bytes": len(data)})
        if errs:
            return self._json(400, {"errors": errs, "files": files}, toolbox=True)
        return self._json(200, {"files": files}, toolbox=True)

    def _bulk_download(self, sb, body):
        """POST /files/bulk-download {"paths":[...]}: a multipart answer, a
        part named "file" per file read, "error" (an ErrorResponse) per
        failure, each with filename = the path asked; the daemon's
        fs/download_files.go."""
        try:
            d = json.loads(body or b"null")
            paths = d.get("paths") if isinstance(d, dict) else None
            if not isinstance(paths, list) or not paths or \
                    not all(isinstance(p, str) for p in paths):
                raise ValueError
        except ValueError:
            return self._json(400, {"error": 'request body must be {"paths": [ ... ]} and non-empty'},
                              toolbox=True)
        bnd = "DAYTONA-FILE-BOUNDARY"
        out = []
        for p in paths:
            err = None
            try:
                if not p:
                    raise HTTPError(400, "invalid file path: path is empty", "INVALID_FILE_PATH")
                host = self._sandbox_path(sb, p)
                if os.path.isdir(host):
                    raise HTTPError(400, "invalid file path: path points to a directory: %s" % p,
                                    "INVALID_FILE_PATH")
                with open(host, "rb") as fh:
                    data = fh.read()
            except HTTPError as e:
                err = (e.status, e.code or CODES.get(e.status, "ERROR"), e.message)
            except FileNotFoundError:
                err = (404, "FILE_NOT_FOUND", "file not found: %s" % p)
            except PermissionError:
                err = (403, "FILE_ACCESS_DENIED", "permission denied: %s" % p)
            except OSError as e:
                err = (500, "FILE_READ_FAILED", "failed to open file: %s" % e.strerror)
            disp = 'form-data; name="%s"; filename="%s"; filename*=utf-8\'\'%s' % (
                "error" if err else "file", content_disposition_name(p), rfc5987(p))
            if err:
                payload = go_json({"statusCode": err[0], "message": err[2], "code": err[1],
                                   "timestamp": now_iso(), "path": p,
                                   "method": self.command}).encode()
                head = {"Content-Disposition": disp,
                        "Content-Type": "application/json; charset=utf-8"}
            else:
                payload = data
                ctype = mimetypes.guess_type(p)[0] or "application/octet-stream"
                head = {"Content-Disposition": disp, "Content-Length": str(len(data)),
                        "Content-Type": ctype}
            # Go's multipart.Writer: sorted header keys; "\r\n" before each
            # later boundary.
            out.append((b"\r\n" if out else b"") + ("--%s\r\n" % bnd).encode() +
                       "".join("%s: %s\r\n" % (k, head[k]) for k in sorted(head)).encode() +
                       b"\r\n" + payload)
        out.append(("\r\n--%s--\r\n" % bnd).encode())
        self._send(200, b"".join(out), ctype="multipart/form-data; boundary=" + bnd)

    def _download(self, sb, query):
        path = self._sandbox_path(sb, query.get("path", [""])[0])
        try:
            os.stat(path)
        except FileNotFoundError as e:
            raise HTTPError(404, "stat %s: %s" % (path, e.strerror))
        except PermissionError as e:
            raise HTTPError(403, "stat %s: %s" % (path, e.strerror))
        except OSError as e:
            raise HTTPError(400, "stat %s: %s" % (path, e.strerror))
        if os.path.isdir(path):
            raise HTTPError(400, "path must be a file")
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except PermissionError as e:
            raise HTTPError(403, "%s: %s" % (path, e.strerror))
        name = os.path.basename(path)
        self._send(200, data, ctype="application/octet-stream",
                   extra={"Content-Disposition": 'attachment; filename="%s"; filename*=utf-8\'\'%s'
                          % (content_disposition_name(name), rfc5987(name))})

    # -- process/execute and process/code-run --

    @staticmethod
    def _run_request(body):
        """The JSON body of execute or code-run, checked as Go's
        json.Unmarshal into the daemon's request types would."""
        try:
            d = json.loads(body or b"null")
        except ValueError as e:
            raise HTTPError(400, "invalid request body: %s" % e)
        if not isinstance(d, dict):
            raise HTTPError(400, "invalid request body: not a JSON object")
        t = d.get("timeout")
        if t is not None and (not isinstance(t, int) or isinstance(t, bool) or t < 0
                              or t > 0xffffffff):
            raise HTTPError(400, "invalid request body: timeout must be an unsigned 32-bit integer")
        envs = d.get("envs")
        if envs is not None:
            if not isinstance(envs, dict) or not all(isinstance(v, str) for v in envs.values()):
                raise HTTPError(400, "invalid request body: envs must map strings to strings")
            for k in envs:
                if not ENV_KEY.match(k):
                    raise HTTPError(400, "invalid environment variable name: '%s'" % k)
        return d

    def _run_shell(self, sb, script, cwd, envs, timeout, key):
        """Run @script through the sandbox's shell, fed on its standard
        input, in a process group of its own, as the daemon's ExecuteCommand
        and CodeRun do: stdout and stderr merged, the group SIGKILLed at
        @timeout seconds (none when 0) and 408 answered, -1 for a signal."""
        f = self.fake
        env = sandbox_env(sb)
        env.update(envs or {})
        isolate = f.isolation(sb)
        shell = f.shell
        try:
            p = subprocess.Popen([shell], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 process_group=0, preexec_fn=isolate)
        except OSError as e:
            what = ("chdir %s" % cwd) if e.filename == cwd else ("fork/exec %s" % shell)
            return self._json(200, {key: -1, "result": "%s: %s" % (what, e.strerror.lower())},
                              toolbox=True)
        try:
            out, _ = p.communicate(script.encode(), timeout=timeout or None)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            p.wait()
            # A child that left the group may hold the pipe: drain briefly.
            try:
                p.communicate(timeout=2)
            except subprocess.TimeoutExpired:
                p.stdout.close()
            raise HTTPError(408, "command execution timeout")
        code = p.returncode if p.returncode >= 0 else -1
        return self._json(200, {key: code, "result": out.decode("utf-8", "replace")}, toolbox=True)

    def _execute(self, sb, body):
        d = self._run_request(body)
        command = d.get("command", "")
        if not isinstance(command, str):
            raise HTTPError(400, "invalid request body: command must be a string")
        if not command.strip():
            raise HTTPError(400, "command cannot be empty or whitespace-only")
        cwd = self._sandbox_path(sb, d["cwd"]) if d.get("cwd") is not None else sb.home
        return self._run_shell(sb, command, cwd, d.get("envs"), d.get("timeout"), "exitCode")

    def _code_run(self, sb, body):
        d = self._run_request(body)
        code, lang, argv = d.get("code"), d.get("language"), d.get("argv") or []
        if not isinstance(code, str) or not isinstance(argv, list) or \
                not all(isinstance(a, str) for a in argv):
            raise HTTPError(400, "invalid request body: code, language and argv have the wrong type")
        run = code_run_command(lang, code, argv)
        if run is None:
            raise HTTPError(400, "unsupported language: %s" % lang)
        return self._run_shell(sb, run, sb.home, d.get("envs"), d.get("timeout"), "exitCode")

    def _execute_legacy(self, sb, body):
        """An older daemon's execute: no shell (the command split on spaces,
        honouring only ' and " quotes), "envs" ignored, "code" for the exit
        status, 360 s without a timeout, the process tree terminated."""
        f = self.fake
        try:
            d = json.loads(body)
            if not isinstance(d, dict) or not isinstance(d.get("command"), str):
                raise ValueError
        except ValueError:
            raise HTTPError(400, "command is required")
        argv = parse_command(d["command"])
        if not argv:
            raise HTTPError(400, "empty command")
        timeout = d.get("timeout")
        if timeout is not None and (not isinstance(timeout, int) or timeout < 0
                                    or timeout > 0xffffffff):
            raise HTTPError(400, "timeout must be an unsigned 32-bit integer")
        timeout = timeout or 360
        cwd = d.get("cwd")
        if cwd is not None:
            cwd = self._sandbox_path(sb, cwd)
        else:
            cwd = sb.home
        env = sandbox_env(sb)
        key = "code"
        try:
            isolate = f.isolation(sb)
            p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 process_group=0, preexec_fn=isolate)
        except OSError as e:
            return self._json(200, {key: -1, "result": "fork/exec %s: %s" % (argv[0], e.strerror)},
                              toolbox=True)
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_tree(p.pid, f.grace)
            try:
                p.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.stdout.close()
                p.wait()
            raise HTTPError(408, "Command execution timed out after %d seconds. The timeout can "
                            "be increased by adjusting the timeout parameter in the request."
                            % timeout)
        code = p.returncode if p.returncode >= 0 else -1
        self._json(200, {key: code, "result": out.decode("utf-8", "replace")}, toolbox=True)


ENV_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def sandbox_env(sb):
    """The environment the sandbox's processes start with: a clean one with
    the sandbox's own variables (the daemon's environment, in the service)."""
    env = {"PATH": BASE_PATH, "HOME": sb.home, "USER": sb.user, "LANG": "C.UTF-8",
           "TMPDIR": sb.tmp, "DAYTONA_SANDBOX_ID": sb.id,
           "DAYTONA_SANDBOX_SNAPSHOT": sb.snapshot, "DAYTONA_SANDBOX_USER": sb.user}
    env.update(sb.env)
    return env


def daemon_shell():
    """The daemon's common.GetShell: zsh, then bash, as /etc/shells lists
    them, else $SHELL, else sh."""
    try:
        with open("/etc/shells") as fh:
            listed = fh.read()
    except OSError:
        return "sh"
    for s in ("/usr/bin/zsh", "/bin/zsh", "/usr/bin/bash", "/bin/bash"):
        if s in listed:
            return s
    return os.environ.get("SHELL") or "sh"


def code_run_command(language, code, argv):
    """The shell line the daemon's code-run toolboxes feed the shell
    (process/coderun: python.go, javascript.go, typescript.go); None for a
    language it does not know.  matplotlib's chart capture is not
    emulated."""
    args = " ".join(argv)
    if language == "python":
        enc = base64.b64encode(code.encode()).decode()
        return "printf '%%s' '%s' | base64 -d | python3 -u - %s" % (enc, args)
    if language in ("javascript", "typescript"):
        enc = base64.b64encode(("process.argv.splice(1, 1);\n" + code).encode()).decode()
        if language == "javascript":
            return "printf '%%s' '%s' | base64 -d | node - %s" % (enc, args)
        return "; ".join([
            "_f=/tmp/dtn_$$.ts",
            "printf '%%s' '%s' | base64 -d > \"$_f\"" % enc,
            "npm_config_loglevel=error npx ts-node -T --ignore-diagnostics 5107 -O "
            "'{\"module\":\"CommonJS\"}' \"$_f\" %s" % args,
            "_dtn_ec=$?", "rm -f \"$_f\"", "exit $_dtn_ec"])
    return None


def content_disposition_name(s):
    """The daemon's toLatin1: a quoted-string filename."""
    s = s.replace("\\", "\\\\").replace('"', '\\"')
    s = s.replace("\r", "").replace("\n", "").replace("\0", "")
    return "".join("_" if ord(c) > 0xff or ord(c) < 0x20 or ord(c) == 0x7f else c for c in s)


def rfc5987(s):
    safe = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$&+-.^_`|~")
    return "".join(chr(b) if b in safe else "%%%02X" % b for b in s.encode())


def multipart_parts(ctype, body):
    """The parts of a multipart/form-data body: (name, filename, bytes)."""
    bnd = None
    for part in ctype.split(";")[1:]:
        k, _, v = part.strip().partition("=")
        if k.lower() == "boundary":
            bnd = v.strip('"')
    if not bnd:
        raise HTTPError(400, "multipart body without a boundary")
    delim = b"--" + bnd.encode()
    out = []
    for chunk in body.split(delim)[1:]:
        if chunk.startswith(b"--"):
            break
        if chunk.startswith(b"\r\n"):
            chunk = chunk[2:]
        head, sep, data = chunk.partition(b"\r\n\r\n")
        if not sep:
            raise HTTPError(400, "malformed multipart part")
        if data.endswith(b"\r\n"):
            data = data[:-2]
        disp = [ln for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-disposition:")]
        name = fname = None
        if disp:
            m = re.search(rb';\s*name="([^"]*)"', disp[0])
            name = m.group(1).decode("utf-8", "replace") if m else None
            m = re.search(rb';\s*filename="([^"]*)"', disp[0])
            fname = m.group(1).decode("utf-8", "replace") if m else None
        out.append((name or "", fname, data))
    return out


def multipart_file(ctype, body, field):
    """The bytes of the file part @field (one with a filename, as Go's
    FormFile wants)."""
    for name, fname, data in multipart_parts(ctype, body):
        if name == field and fname is not None:
            return data
    raise HTTPError(400, "http: no such file")


def main():
    ap = argparse.ArgumentParser(description="A local fake of the Daytona API and toolbox.")
    ap.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: pick one)")
    ap.add_argument("--port-file", help="write the chosen port to this file")
    ap.add_argument("--api-key", default="fake-daytona-key", help="the one accepted API key")
    ap.add_argument("--start-ms", type=float, default=150,
                    help="time a sandbox spends creating/starting")
    ap.add_argument("--minute-ms", type=float, default=60000,
                    help="length of one 'minute' of the auto-stop/delete intervals")
    ap.add_argument("--page-size", type=int, default=100, help="largest list page (the service caps the limit asked)")
    ap.add_argument("--grace-ms", type=float, default=100,
                    help="grace between TERM and KILL on an execute timeout")
    ap.add_argument("--legacy-daemon", "--legacy-code", dest="legacy_daemon", action="store_true",
                    help="an older toolbox daemon: execute without a shell (split on spaces, "
                    'quotes only), "envs" ignored, "code" instead of "exitCode", multipart '
                    "uploads only, no /files/upload-v2 nor /process/code-run")
    ap.add_argument("--legacy-list", action="store_true",
                    help="list answers a bare array (older API)")
    ap.add_argument("--no-netns", action="store_true",
                    help="do not enforce networkBlockAll (no namespaces on this host)")
    ap.add_argument("--faults", help="initial faults, as JSON (see POST /_fake/faults)")
    args = ap.parse_args()

    fake = Fake(args)
    Handler.fake = fake
    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True
    port = srv.server_address[1]
    fake.base_url = "http://127.0.0.1:%d" % port
    threading.Thread(target=fake.reaper, daemon=True).start()

    def bye(*_):
        with fake.lock:
            for sb in list(fake.sandboxes.values()):
                fake._kill(sb)
                shutil.rmtree(sb.root, ignore_errors=True)
        os._exit(0)
    signal.signal(signal.SIGTERM, bye)
    signal.signal(signal.SIGINT, bye)
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as fh:
            fh.write("%d\n" % port)
        os.rename(args.port_file + ".tmp", args.port_file)
    print("DAYTONA-FAKE READY %s" % fake.base_url, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
