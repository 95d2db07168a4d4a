#!/usr/bin/env python3
# tests/fakes/volcengine.py - a faithful local fake of what the volcengine
# provider talks to (plugins/volcengine/README.md names the sources):
# Volcengine's OpenAPI gateway for the veFaaS sandbox actions (service
# vefaas, version 2024-06-06), and the function's API gateway routing
# ?faasInstanceName=<id> to a sandbox's AIO sandbox server.  Python 3
# standard library only.
#
# The OpenAPI gateway (POST /?Action=A&Version=V, JSON body):
#   every request's signature is checked as the gateway checks it: the
#   Authorization header "HMAC-SHA256 Credential=AK/DATE/REGION/SERVICE/
#   request, SignedHeaders=..., Signature=..." is parsed, the canonical
#   request is rebuilt from what arrived (the method, the path, the query
#   sorted and RFC 3986 encoded, the signed headers lower-cased with their
#   values' white space collapsed, and SHA-256 of the body as received,
#   whatever X-Content-Sha256 claims), the key derived from the secret of
#   the access key (DATE, REGION, SERVICE, "request") and the HMAC
#   compared.  X-Date must be signed, agree with the credential's date and
#   lie within --max-skew seconds of the fake's clock; X-Security-Token,
#   when the fake has --session-token, must be sent and signed.  Refusals:
#   MissingAuthenticationToken 401, InvalidAuthorization 400,
#   InvalidAccessKey 401, InvalidTimestamp 401, SignatureDoesNotMatch 403,
#   InvalidSecretToken 401, InvalidActionOrVersion 404.  Answers are
#   {"ResponseMetadata": {RequestId, Action, Version, Service, Region,
#   Error?: {Code, CodeN, Message}}, "Result"?: {...}}.
#   Actions: CreateSandbox {FunctionId, Timeout (minutes), Metadata, Envs
#   [{Key, Value}], NetworkRules {AllowEgressAccess}, CpuMilli, MemoryMB}
#   -> {SandboxId}; DescribeSandbox {FunctionId, SandboxId}; ListSandboxes
#   {FunctionId, Metadata, SandboxId, Status, PageNumber, PageSize} ->
#   {Sandboxes, Total, StatusCount}; SetSandboxTimeout {FunctionId,
#   SandboxId, Timeout} -> {ExpireAt}; KillSandbox.  An unknown function
#   is FunctionNotFound 404, an unknown sandbox SandboxNotFound 404.
#   A sandbox dies (its processes and files) when its Timeout runs out
#   (--minute-ms per minute) or it is killed.
#
# The function gateway (any path but "/" and /_fake/..., with
# ?faasInstanceName=ID; no such live sandbox: 404), the AIO sandbox
# server's routes the provider uses, as its OpenAPI document (version
# 1.9.4) describes them; answers {"success", "message", "data"}:
#   POST /v1/bash/exec {command, exec_dir, env, async_mode, timeout,
#       hard_timeout, max_output_length, session_id}: bash -c COMMAND in a
#       (new or named) session; data {session_id, command_id, command,
#       status: running|completed|timed_out|killed, stdout, stderr,
#       exit_code, offset, stderr_offset}
#   POST /v1/bash/output {session_id, command_id, offset, stderr_offset,
#       wait, wait_timeout}: output past the offsets (long-poll with wait)
#   POST /v1/bash/kill {session_id, signal}
#   POST /v1/file/write {file, content, encoding: utf-8|base64, append}
#   GET  /v1/file/download?path=
#   With --sandbox-api-key, X-AIO-API-Key, "Authorization: Bearer" or
#   ?api_key= must carry it (401 otherwise).
# A sandbox is a private temporary directory standing for its home
# (--home, /home/gem); commands run for real on this host, with the
# sandbox's Envs, in that directory; paths outside the home are refused
# (the host has no /home/gem).  NetworkRules.AllowEgressAccess false runs
# them in a network namespace of their own (as the daytona fake does).
# Not emulated: the other AIO routes (browser, jupyter, shell, mcp...),
# the other vefaas actions, sandbox images, CPU and memory limits, pause
# and snapshots.  It is a protocol fake, not a security boundary.
#
# Fault injection and control (no signature needed):
#   POST /_fake/faults {"latency_ms","error_rate","status","retry_after",
#       "drop_rate","drop_mode","count","path","method","action","seed"}
#       or a list of such objects (the first that fires wins); "path" is
#       a prefix ("/" alone: the OpenAPI gateway), "action" an OpenAPI
#       action.  An injected error is the gateway's: a Volcengine error
#       (429 FlowLimitExceeded, 5xx InternalError/ServiceUnavailable) on
#       the OpenAPI side, {"message"} on the function side.
#   GET /_fake/faults, POST /_fake/reset, GET /_fake/stats,
#   GET /_fake/requests, POST /_fake/kill {"id"} (the sandbox dies, its
#   running commands with it), POST /_fake/clock {"offset": seconds}
#   (the fake's clock, for the timestamp check).
#
# Usage: volcengine.py [--port N] [--port-file F] [--access-key AK]
#   [--secret-key SK] [--session-token T] [--region R] [--function-id F]
#   [--sandbox-api-key K] [--home DIR] [--minute-ms MS] [--max-skew S]
#   [--faults JSON] [--verbose]
# Prints "VOLCENGINE-FAKE READY http://127.0.0.1:PORT" once listening.

import argparse
import base64
import calendar
import datetime
import hashlib
import hmac
import json
import os
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daytona import (Faults, HTTPError, REASONS, BASE_PATH, kill_tree,  # noqa: E402
                     _kill_until_gone, _proc_pids, _isolate_network, _join_namespaces,
                     netns_works)

SERVICE = "vefaas"
VERSION = "2024-06-06"
ACTIONS = ("CreateSandbox", "DescribeSandbox", "ListSandboxes", "SetSandboxTimeout",
           "KillSandbox")
AUTH_RE = re.compile(r"^HMAC-SHA256 Credential=([^/,\s]+)/(\d{8})/([^/,\s]+)/([^/,\s]+)/request,"
                     r"\s*SignedHeaders=([a-z0-9;_.-]+),\s*Signature=([0-9a-f]{64})$")
# CodeN as the fake numbers them (Volcengine's common error table has
# such numbers; these are not checked against the live service).
CODE_N = {"MissingAuthenticationToken": 100006, "InvalidActionOrVersion": 100008,
          "InvalidAccessKey": 100009, "SignatureDoesNotMatch": 100010,
          "InvalidTimestamp": 100011, "InvalidAuthorization": 100012,
          "InvalidSecretToken": 100014, "FlowLimitExceeded": 100018,
          "InternalError": 100024, "ServiceUnavailable": 100027,
          "InvalidParameter": 100025, "FunctionNotFound": 100040,
          "SandboxNotFound": 100041}
MAX_BODY = 64 * 1024 * 1024


class VError(Exception):
    """An OpenAPI error: HTTP status, Code, Message."""
    def __init__(self, status, code, message, retry_after=None):
        super().__init__(message)
        self.status, self.code, self.message, self.retry_after = \
            status, code, message, retry_after


class VFaults(Faults):
    KEYS = Faults.KEYS + ("action",)

    def __init__(self, d=None):
        super().__init__(d)
        self.action = (d or {}).get("action")

    def matches(self, method, path, action):
        """Whether this spec is for the request ("/" alone is the OpenAPI
        gateway, not every path)."""
        return self.applies(method, path) and not (self.action and action != self.action) \
            and not (self.path == "/" and path != "/")

    def fire(self):
        if self.error_rate and self.rng.random() < self.error_rate:
            return "error"
        if self.drop_rate and self.rng.random() < self.drop_rate:
            return "drop"
        return None


def uri_escape(s):
    """RFC 3986: unreserved characters kept, the rest %XX (upper case)."""
    return urllib.parse.quote(s, safe="-_.~")


def canonical_query(raw):
    pairs = urllib.parse.parse_qsl(raw, keep_blank_values=True)
    return "&".join("%s=%s" % (uri_escape(k), uri_escape(v)) for k, v in sorted(pairs))


def hmac256(key, msg):
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def x_date_time(s):
    try:
        return calendar.timegm(time.strptime(s, "%Y%m%dT%H%M%SZ"))
    except (TypeError, ValueError):
        return None


def rfc3339(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone(datetime.timedelta(hours=8))) \
        .isoformat(timespec="seconds")


# ---- sandboxes --------------------------------------------------------------

class Command:
    def __init__(self, cid, session, command):
        self.id, self.session, self.command = cid, session, command
        self.out, self.err = bytearray(), bytearray()
        self.status, self.exit_code = "running", None
        self.proc = None
        self.cond = threading.Condition()
        self.killed_by = None

    def info(self):
        return {"command_id": self.id, "command": self.command, "status": self.status,
                "exit_code": self.exit_code}


class Sandbox:
    def __init__(self, fake, body):
        self.id = "sb-" + uuid.uuid4().hex[:20]
        self.root = tempfile.mkdtemp(prefix="volc-fake-")
        self.created = fake.now()
        self.metadata = body.get("Metadata") or {}
        self.envs = {e["Key"]: e.get("Value", "") for e in body.get("Envs") or []}
        self.egress = (body.get("NetworkRules") or {}).get("AllowEgressAccess", True)
        self.cpu = body.get("CpuMilli") or 1000
        self.mem = body.get("MemoryMB") or 2048
        self.timeout = body.get("Timeout", 60)
        self.expire = self.created + self.timeout * fake.minute_s
        self.sessions = {}      # id -> {"cwd", "current": Command|None}
        self.commands = {}      # id -> Command
        self.dead = False
        self.ns_holder = None

    def to_json(self, full=False):
        j = {"Id": self.id, "FunctionId": Fake.inst.function_id, "Status": "Ready",
             "CreatedAt": rfc3339(self.created), "ExpireAt": rfc3339(self.expire),
             "CpuMilli": self.cpu, "MemoryMB": self.mem, "Pending": False,
             "NetworkRules": {"AllowEgressAccess": self.egress}}
        if full:
            j["MetadataList"] = [{"MetaKey": k, "MetaValue": v} for k, v in self.metadata.items()]
            j["Envs"] = [{"Key": k, "Value": v} for k, v in self.envs.items()]
        else:
            j["Metadata"] = dict(self.metadata)
        return j

    def host_path(self, p, home):
        """The host path of the sandbox's absolute @p, or None outside home."""
        if not isinstance(p, str) or not p.startswith("/"):
            return None
        parts = []
        for seg in p.split("/"):
            if seg in ("", "."):
                continue
            if seg == "..":
                if parts:
                    parts.pop()
            else:
                parts.append(seg)
        a = "/" + "/".join(parts)
        if a == home:
            return self.root
        if a.startswith(home + "/"):
            return os.path.join(self.root, a[len(home) + 1:])
        return None

    def pids(self):
        marker = ("VOLC_FAKE_SANDBOX=%s" % self.id).encode()
        for p in _proc_pids():
            try:
                with open("/proc/%d/environ" % p, "rb") as f:
                    if marker in f.read().split(b"\0"):
                        yield p
            except OSError:
                pass

    def kill(self):
        self.dead = True
        for c in list(self.commands.values()):
            if c.proc is not None and c.proc.poll() is None:
                # Marked first: the command's watcher, woken by the death
                # of its process, must say killed, not completed.
                c.killed_by = c.killed_by or "sandbox"
                kill_tree(c.proc.pid, 0.02)
            with c.cond:
                if c.status == "running":
                    c.status = "killed"
                c.cond.notify_all()
        _kill_until_gone(self.pids, 50)
        if self.ns_holder is not None:
            self.ns_holder.kill()
            self.ns_holder.wait()
        shutil.rmtree(self.root, ignore_errors=True)


class Fake:
    inst = None

    def __init__(self, args):
        self.keys = {args.access_key: args.secret_key}
        self.session_token = args.session_token
        self.region = args.region
        self.function_id = args.function_id
        self.sandbox_api_key = args.sandbox_api_key
        self.home = args.home.rstrip("/") or "/"
        self.minute_s = args.minute_ms / 1000.0
        self.max_skew = args.max_skew
        self.verbose = args.verbose
        self.clock_offset = 0.0
        self.netns = netns_works()
        self.lock = threading.RLock()
        self.sandboxes = {}
        self.faults = self.parse_faults(json.loads(args.faults) if args.faults else None)
        self.requests = []
        self.n = {"requests": 0, "created": 0, "killed": 0, "expired": 0}
        self.injected = {"errors": 0, "drops": 0}

    @staticmethod
    def parse_faults(d):
        if d is None:
            return []
        specs = d if isinstance(d, list) else [d]
        if not all(isinstance(x, dict) for x in specs):
            raise ValueError("faults: a JSON object or a list of them")
        return [VFaults(x) for x in specs if x]

    def now(self):
        return time.time() + self.clock_offset

    def drop_sandbox(self, sid, why):
        with self.lock:
            sb = self.sandboxes.pop(sid, None)
            if sb:
                self.n[why] += 1
        if sb:
            sb.kill()
        return sb

    def reaper(self):
        while True:
            time.sleep(0.1)
            t = self.now()
            with self.lock:
                gone = [s for s, sb in self.sandboxes.items() if t >= sb.expire]
            for s in gone:
                self.drop_sandbox(s, "expired")

    def isolation(self, sb):
        """None, or the preexec function running a command of @sb inside
        its network namespace (no egress)."""
        if sb.egress:
            return None
        if self.netns is not True:
            raise HTTPError(500, "fake: AllowEgressAccess false needs user and network "
                            "namespaces, which this host refuses")
        with self.lock:
            h = sb.ns_holder
            if h is None or h.poll() is not None:
                h = subprocess.Popen(["sleep", "2147483647"], cwd=sb.root,
                                     env={"PATH": BASE_PATH, "VOLC_FAKE_SANDBOX": sb.id},
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True,
                                     preexec_fn=_isolate_network)
                sb.ns_holder = h
        return _join_namespaces(h.pid)


# ---- the signature ------------------------------------------------------------

def check_signature(fake, method, path, query, headers, body):
    """Raises VError unless the request is signed as the gateway wants."""
    auth = headers.get("Authorization")
    if not auth:
        raise VError(401, "MissingAuthenticationToken", "the request has no Authorization")
    m = AUTH_RE.match(auth.strip())
    if not m:
        raise VError(400, "InvalidAuthorization", "the Authorization header is malformed")
    ak, date, region, service, signed, sig = m.groups()
    sk = fake.keys.get(ak)
    if sk is None:
        raise VError(401, "InvalidAccessKey", "the access key is not valid")
    names = signed.split(";")
    if "x-date" not in names:
        raise VError(400, "InvalidAuthorization", "X-Date must be signed")
    x_date = headers.get("X-Date")
    t = x_date_time(x_date)
    if t is None:
        raise VError(401, "InvalidTimestamp", "X-Date is missing or not YYYYMMDDTHHMMSSZ")
    if abs(fake.now() - t) > fake.max_skew:
        raise VError(401, "InvalidTimestamp", "the request time %s is more than %d s from "
                     "the server's" % (x_date, fake.max_skew))
    if fake.session_token is not None:
        tok = headers.get("X-Security-Token")
        if tok is None or "x-security-token" not in names or \
                not hmac.compare_digest(tok, fake.session_token):
            raise VError(401, "InvalidSecretToken", "the security token is missing or not valid")
    lines = []
    for n in names:
        vals = headers.get_all(n)
        if vals is None:
            raise VError(403, "SignatureDoesNotMatch", "signed header %s is absent" % n)
        v = re.sub(r"\s+", " ", ",".join(vals)).strip()
        lines.append("%s:%s\n" % (n, v))
    creq = "\n".join([method, path, canonical_query(query), "".join(lines), signed,
                      hashlib.sha256(body).hexdigest()])
    scope = "%s/%s/%s/request" % (date, region, service)
    sts = "\n".join(["HMAC-SHA256", x_date, scope,
                     hashlib.sha256(creq.encode()).hexdigest()])
    k = hmac256(sk.encode(), date)
    for part in (region, service, "request"):
        k = hmac256(k, part)
    want = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    if date != x_date[:8] or region != fake.region or service != SERVICE or \
            not hmac.compare_digest(want, sig):
        raise VError(403, "SignatureDoesNotMatch", "the request signature we calculated "
                     "does not match the signature you provided")


# ---- HTTP ---------------------------------------------------------------------

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "volcengine-fake/1"
    # Headers and body go out in separate writes: with Nagle on, the body
    # waits for the client's delayed ACK, 40 ms a request.  Volcengine's gateways
    # send at once (TCP_NODELAY).
    disable_nagle_algorithm = True
    fake = None

    def log_message(self, fmt, *args):
        pass

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            raise HTTPError(413, "request body too large")
        return self.rfile.read(n) if n else b""

    def _send(self, status, body=b"", ctype="application/json", extra=None):
        self.send_response(status, REASONS.get(status))
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self._inject == "drop":
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            return self._kill_connection()
        self.wfile.write(body)
        self._status = status

    def _kill_connection(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._status = 0

    def _json(self, status, obj, extra=None):
        self._send(status, json.dumps(obj).encode(), extra=extra)

    def _meta(self, action, version):
        return {"RequestId": uuid.uuid4().hex, "Action": action, "Version": version,
                "Service": SERVICE, "Region": self.fake.region}

    def _verror(self, e, action, version):
        meta = self._meta(action, version)
        meta["Error"] = {"Code": e.code, "CodeN": CODE_N.get(e.code, 100000),
                         "Message": e.message}
        extra = {"Retry-After": str(e.retry_after)} if e.retry_after is not None else None
        self._json(e.status, {"ResponseMetadata": meta}, extra)

    def do_GET(self):
        self._dispatch()

    do_POST = do_PUT = do_DELETE = do_GET

    def _dispatch(self):
        f = self.fake
        url = urllib.parse.urlsplit(self.path)
        path, q = url.path, urllib.parse.parse_qs(url.query, keep_blank_values=True)
        self._inject, self._status = None, None
        try:
            body = self._body()
        except HTTPError as e:
            self.close_connection = True
            return self._json(e.status, {"success": False, "message": e.message})
        if path.startswith("/_fake/"):
            return self._control(path, body)
        action = q.get("Action", [None])[0] if path == "/" else None
        with f.lock:
            f.n["requests"] += 1
            inject, latency, spec = None, 0, None
            for fl in f.faults:
                if not fl.matches(self.command, path, action):
                    continue
                latency = max(latency, fl.latency_ms)
                inject = fl.fire()
                if inject:
                    spec = fl
                    f.injected["errors" if inject == "error" else "drops"] += 1
                    if fl.count is not None:
                        fl.count -= 1
                    break
            entry = {"method": self.command, "path": path, "action": action}
            f.requests.append(entry)
            del f.requests[:-500]
        if latency:
            time.sleep(latency / 1000.0)
        try:
            if inject == "error":
                self._injected_error(spec, path, action)
            elif inject == "drop" and spec.drop_mode == "before":
                self._kill_connection()
            else:
                self._inject = inject
                if path == "/":
                    self._openapi(url.query, action, body)
                else:
                    self._aio(path, q, body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        entry["status"] = self._status
        if f.verbose:
            sys.stderr.write("%s %s %s %s\n" % (self.command, path, action or "", self._status))

    def _injected_error(self, fl, path, action):
        if path == "/":
            code = {429: "FlowLimitExceeded", 503: "ServiceUnavailable"}.get(
                fl.status, "InternalError" if fl.status >= 500 else "InvalidParameter")
            self._verror(VError(fl.status, code, "fake: injected %d" % fl.status,
                                fl.retry_after), action, VERSION)
        else:
            extra = {"Retry-After": str(fl.retry_after)} if fl.retry_after is not None else None
            self._json(fl.status, {"message": "fake: injected %d" % fl.status}, extra)

    # ---- the OpenAPI gateway ----
    def _openapi(self, query, action, body):
        f = self.fake
        q = urllib.parse.parse_qs(query, keep_blank_values=True)
        version = q.get("Version", [None])[0]
        try:
            check_signature(f, self.command, "/", query, self.headers, body)
            if action not in ACTIONS or version != VERSION or self.command != "POST":
                raise VError(404, "InvalidActionOrVersion", "Action %s or Version %s is not "
                             "valid for %s" % (action, version, SERVICE))
            try:
                d = json.loads(body or b"{}")
            except ValueError:
                raise VError(400, "InvalidParameter", "the body is not JSON")
            if not isinstance(d, dict):
                raise VError(400, "InvalidParameter", "the body is not a JSON object")
            if d.get("FunctionId") != f.function_id:
                if not d.get("FunctionId"):
                    raise VError(400, "InvalidParameter", "FunctionId is required")
                raise VError(404, "FunctionNotFound", "function %s is not found"
                             % d.get("FunctionId"))
            result = getattr(self, "_a_" + action)(d)
        except VError as e:
            return self._verror(e, action, version)
        self._json(200, {"ResponseMetadata": self._meta(action, version), "Result": result})

    @staticmethod
    def _str_map(d, key):
        m = d.get(key)
        if m is None:
            return {}
        if not isinstance(m, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in m.items()):
            raise VError(400, "InvalidParameter", "%s must map strings to strings" % key)
        return m

    @staticmethod
    def _int(d, key, lo, hi, default):
        v = d.get(key, default)
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
            raise VError(400, "InvalidParameter", "%s must be a whole number from %d to %d"
                         % (key, lo, hi))
        return v

    def _sandbox(self, d):
        sid = d.get("SandboxId")
        if not isinstance(sid, str) or not sid:
            raise VError(400, "InvalidParameter", "SandboxId is required")
        with self.fake.lock:
            sb = self.fake.sandboxes.get(sid)
        if sb is None:
            raise VError(404, "SandboxNotFound", "sandbox %s is not found" % sid)
        return sb

    def _a_CreateSandbox(self, d):
        f = self.fake
        self._str_map(d, "Metadata")
        self._int(d, "Timeout", 1, 1440, 60)
        envs = d.get("Envs") or []
        if not isinstance(envs, list) or not all(
                isinstance(e, dict) and isinstance(e.get("Key"), str) and e["Key"] and
                isinstance(e.get("Value", ""), str) for e in envs):
            raise VError(400, "InvalidParameter", "Envs must be a list of {Key, Value}")
        nr = d.get("NetworkRules") or {}
        if not isinstance(nr, dict) or not isinstance(nr.get("AllowEgressAccess", True), bool):
            raise VError(400, "InvalidParameter", "NetworkRules.AllowEgressAccess must be a "
                         "boolean")
        sb = Sandbox(f, d)
        if not sb.egress and f.netns is not True:
            shutil.rmtree(sb.root, ignore_errors=True)
            raise VError(500, "InternalError", "fake: AllowEgressAccess false needs user and "
                         "network namespaces, which this host refuses")
        with f.lock:
            f.sandboxes[sb.id] = sb
            f.n["created"] += 1
        return {"SandboxId": sb.id, "AssignStatus": "Assigned"}

    def _a_DescribeSandbox(self, d):
        return self._sandbox(d).to_json(full=True)

    def _a_ListSandboxes(self, d):
        md = self._str_map(d, "Metadata")
        page = self._int(d, "PageNumber", 1, 1 << 30, 1)
        size = self._int(d, "PageSize", 1, 100, 10)
        with self.fake.lock:
            sbs = sorted(self.fake.sandboxes.values(), key=lambda s: s.created)
        sbs = [s for s in sbs if all(s.metadata.get(k) == v for k, v in md.items())
               and d.get("SandboxId") in (None, "", s.id) and d.get("Status") in (None, "", "Ready")]
        return {"Sandboxes": [s.to_json() for s in sbs[(page - 1) * size:page * size]],
                "Total": len(sbs), "StatusCount": {"Ready": len(sbs)}}

    def _a_SetSandboxTimeout(self, d):
        sb = self._sandbox(d)
        sb.timeout = self._int(d, "Timeout", 1, 1440, None)
        sb.expire = self.fake.now() + sb.timeout * self.fake.minute_s
        return {"FunctionId": self.fake.function_id, "SandboxId": sb.id,
                "ExpireAt": rfc3339(sb.expire)}

    def _a_KillSandbox(self, d):
        sb = self._sandbox(d)
        self.fake.drop_sandbox(sb.id, "killed")
        return {}

    # ---- the function gateway and the AIO server ----
    def _aio(self, path, q, body):
        f = self.fake
        sid = q.get("faasInstanceName", [""])[0]
        with f.lock:
            sb = f.sandboxes.get(sid)
        if sb is None or sb.dead:
            return self._json(404, {"message": "no running instance '%s' of the function" % sid})
        if f.sandbox_api_key is not None:
            given = self.headers.get("X-AIO-API-Key") or q.get("api_key", [None])[0]
            a = self.headers.get("Authorization", "")
            if not given and a.lower().startswith("bearer "):
                given = a[7:]
            if not given or not hmac.compare_digest(given, f.sandbox_api_key):
                return self._json(401, {"success": False, "message": "Unauthorized"})
        if path == "/v1/file/download" and self.command == "GET":
            return self._download(sb, q)
        routes = {"/v1/bash/exec": self._exec, "/v1/bash/output": self._output,
                  "/v1/bash/kill": self._kill, "/v1/file/write": self._write}
        if path not in routes or self.command != "POST":
            return self._json(404, {"detail": "Not Found"})
        try:
            d = json.loads(body or b"{}")
        except ValueError:
            d = None
        if not isinstance(d, dict):
            return self._json(422, {"detail": [{"loc": ["body"], "msg": "a JSON object is "
                                                "required", "type": "value_error"}]})
        r = routes[path](sb, d)
        if r is not None:
            self._json(200, r)

    @staticmethod
    def _ok(data, message="Operation successful"):
        return {"success": True, "message": message, "data": data}

    @staticmethod
    def _fail(message, data=None):
        return {"success": False, "message": message, "data": data}

    def _need(self, d, key, kind):
        v = d.get(key)
        if not isinstance(v, kind) or isinstance(v, bool) and kind is not bool:
            self._json(422, {"detail": [{"loc": ["body", key], "msg": "field required or of the "
                                         "wrong type", "type": "value_error"}]})
            return None
        return v

    def _exec(self, sb, d):
        f = self.fake
        command = self._need(d, "command", str)
        if command is None:
            return None
        cwd = sb.root
        if d.get("exec_dir"):
            cwd = sb.host_path(d["exec_dir"], f.home)
            if cwd is None or not os.path.isdir(cwd):
                return self._fail("exec_dir %s does not exist" % d["exec_dir"])
        sid = d.get("session_id") or "session-" + uuid.uuid4().hex[:12]
        with f.lock:
            sess = sb.sessions.setdefault(sid, {"cwd": cwd, "current": None})
            cur = sess["current"]
            if cur is not None and cur.status == "running":
                return self._fail("session %s is busy with command %s" % (sid, cur.id))
            c = Command(uuid.uuid4().hex[:16], sid, command)
            sess["current"] = c
            sb.commands[c.id] = c
        env = {"PATH": BASE_PATH, "HOME": f.home, "LANG": "C.UTF-8", "USER": "gem"}
        env.update(sb.envs)
        if isinstance(d.get("env"), dict):
            env.update({k: str(v) for k, v in d["env"].items()})
        env["VOLC_FAKE_SANDBOX"] = sb.id
        try:
            pre = f.isolation(sb)
            c.proc = subprocess.Popen(["bash", "-c", command], cwd=cwd, env=env,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, start_new_session=pre is None,
                                      preexec_fn=(lambda: (os.setsid(), pre())) if pre else None)
        except (OSError, HTTPError) as e:
            c.status = "killed"
            return self._fail("cannot run the command: %s" % e)
        hard = d.get("hard_timeout")
        self._start_watch(sb, c, hard if isinstance(hard, (int, float)) else None)
        wait = None if d.get("async_mode") else d.get("timeout")
        if not d.get("async_mode"):
            with c.cond:
                c.cond.wait_for(lambda: c.status != "running",
                                timeout=wait if isinstance(wait, (int, float)) else None)
        with c.cond:
            out, err, status, code = bytes(c.out), bytes(c.err), c.status, c.exit_code
        mx = d.get("max_output_length", 50000)
        res = {"session_id": sid, "command_id": c.id, "command": command, "status": status,
               "stdout": self._cut(out, mx), "stderr": self._cut(err, mx),
               "exit_code": code, "offset": len(out), "stderr_offset": len(err)}
        return self._ok(res)

    @staticmethod
    def _cut(b, mx):
        s = b.decode("utf-8", "replace")
        if isinstance(mx, int) and mx > 0 and len(s) > mx:
            half = mx // 2
            s = s[:half] + "\n... [truncated] ...\n" + s[len(s) - half:]
        return s

    def _start_watch(self, sb, c, hard):
        def pump(pipe, buf):
            while True:
                b = os.read(pipe.fileno(), 65536)
                if not b:
                    return
                with c.cond:
                    buf.extend(b)
                    c.cond.notify_all()

        ts = [threading.Thread(target=pump, args=(c.proc.stdout, c.out), daemon=True),
              threading.Thread(target=pump, args=(c.proc.stderr, c.err), daemon=True)]
        for t in ts:
            t.start()

        def watch():
            deadline = time.time() + hard if hard else None
            while c.proc.poll() is None:
                if deadline and time.time() >= deadline:
                    c.killed_by = "timeout"
                    kill_tree(c.proc.pid, 0.02)
                    break
                if c.killed_by:
                    break
                time.sleep(0.01)
            c.proc.wait()
            for t in ts:
                t.join(5)
            rc = c.proc.returncode
            with c.cond:
                if c.status == "running":
                    if c.killed_by == "timeout":
                        c.status = "timed_out"
                    elif c.killed_by:
                        c.status = "killed"
                    else:
                        c.status = "completed"
                        c.exit_code = rc if rc >= 0 else 128 - rc
                c.cond.notify_all()
        threading.Thread(target=watch, daemon=True).start()

    def _command(self, sb, d):
        sid = d.get("session_id")
        sess = sb.sessions.get(sid) if isinstance(sid, str) else None
        if sess is None:
            return None, self._fail("session %s is not found" % sid)
        cid = d.get("command_id")
        c = sb.commands.get(cid) if cid else sess["current"]
        if c is None or c.session != sid:
            return None, self._fail("command %s is not found in session %s" % (cid, sid))
        return c, None

    def _output(self, sb, d):
        if self._need(d, "session_id", str) is None:
            return None
        c, err = self._command(sb, d)
        if err:
            return err
        off, eoff = d.get("offset", 0), d.get("stderr_offset", 0)
        if not isinstance(off, int) or not isinstance(eoff, int) or off < 0 or eoff < 0:
            return self._fail("offsets must be whole numbers")
        wt = d.get("wait_timeout", 30)
        if d.get("wait"):
            with c.cond:
                c.cond.wait_for(lambda: len(c.out) > off or len(c.err) > eoff or
                                c.status != "running" or sb.dead,
                                timeout=wt if isinstance(wt, (int, float)) else 30)
        if sb.dead:
            # The instance went away under a long-poll: the gateway's 502.
            self._json(502, {"message": "the function instance exited"})
            return None
        with c.cond:
            out, err, info = bytes(c.out[off:]), bytes(c.err[eoff:]), c.info()
            o2, e2 = max(off, len(c.out)), max(eoff, len(c.err))
        return self._ok({"session_id": c.session, "stdout": out.decode("utf-8", "replace"),
                         "stderr": err.decode("utf-8", "replace"), "offset": o2,
                         "stderr_offset": e2, "command": info})

    def _kill(self, sb, d):
        if self._need(d, "session_id", str) is None:
            return None
        sess = sb.sessions.get(d["session_id"])
        if sess is None:
            return self._fail("session %s is not found" % d["session_id"])
        c = sess["current"]
        if c is None or c.status != "running":
            return self._ok(None, "no running command")
        c.killed_by = "kill"
        kill_tree(c.proc.pid, 0.02)
        with c.cond:
            c.cond.wait_for(lambda: c.status != "running", timeout=5)
        return self._ok({"session_id": c.session, "command_id": c.id, "status": c.status})

    def _write(self, sb, d):
        f = self.fake
        path = self._need(d, "file", str)
        content = self._need(d, "content", str) if path is not None else None
        if content is None:
            return None
        enc = d.get("encoding") or "utf-8"
        if enc == "base64":
            try:
                data = base64.b64decode(content, validate=True)
            except ValueError:
                return self._fail("content is not base64")
        elif enc in ("utf-8", "raw"):
            data = content.encode()
        else:
            self._json(422, {"detail": [{"loc": ["body", "encoding"], "msg": "unknown encoding",
                                         "type": "enum"}]})
            return None
        hp = sb.host_path(path, f.home)
        err = {"path": path, "operation": "write", "error_type": "permission_denied",
               "retryable": False}
        if hp is None:
            return self._fail("cannot write %s" % path, dict(err, message="outside the sandbox "
                                                                  "home (fake)"))
        try:
            os.makedirs(os.path.dirname(hp), exist_ok=True)
            with open(hp, "ab" if d.get("append") else "wb") as fh:
                fh.write(data)
        except OSError as e:
            return self._fail("cannot write %s" % path, dict(err, message=e.strerror,
                                                             error_type="os_error",
                                                             errno=e.errno))
        return self._ok({"file": path, "bytes_written": len(data)})

    def _download(self, sb, q):
        hp = sb.host_path(q.get("path", [""])[0], self.fake.home)
        try:
            with open(hp or "", "rb") as fh:
                data = fh.read()
        except OSError:
            return self._json(404, {"success": False, "message": "file not found"})
        self._send(200, data, "application/octet-stream")

    # ---- control ----
    def _control(self, path, body):
        f = self.fake
        if path == "/_fake/faults" and self.command == "POST":
            try:
                faults = f.parse_faults(json.loads(body or b"{}"))
            except (ValueError, TypeError) as e:
                return self._json(400, {"message": str(e)})
            with f.lock:
                f.faults = faults
            return self._json(200, [x.raw for x in faults])
        if path == "/_fake/faults":
            return self._json(200, [x.raw for x in f.faults])
        if path == "/_fake/reset" and self.command == "POST":
            with f.lock:
                f.faults = []
                ids = list(f.sandboxes)
            for s in ids:
                f.drop_sandbox(s, "killed")
            return self._json(200, {})
        if path == "/_fake/kill" and self.command == "POST":
            sid = json.loads(body or b"{}").get("id")
            return self._json(200 if f.drop_sandbox(sid, "killed") else 404, {})
        if path == "/_fake/clock" and self.command == "POST":
            f.clock_offset = float(json.loads(body or b"{}").get("offset", 0))
            return self._json(200, {"offset": f.clock_offset})
        if path == "/_fake/stats":
            with f.lock:
                live = {s: {"metadata": sb.metadata, "timeout": sb.timeout,
                            "egress": sb.egress, "envs": sb.envs, "running": sum(
                            1 for c in sb.commands.values() if c.status == "running")}
                        for s, sb in f.sandboxes.items()}
                return self._json(200, dict(f.n, live=list(live), sandboxes=live,
                                            injected=dict(f.injected)))
        if path == "/_fake/requests":
            with f.lock:
                return self._json(200, list(f.requests))
        return self._json(404, {"message": "no such control endpoint"})


def main():
    ap = argparse.ArgumentParser(description="A local fake of Volcengine's veFaaS sandboxes.")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--access-key", default="AKLTfakeaccesskey")
    ap.add_argument("--secret-key", default="fake-secret-key")
    ap.add_argument("--session-token")
    ap.add_argument("--region", default="cn-beijing")
    ap.add_argument("--function-id", default="fn-fake")
    ap.add_argument("--sandbox-api-key")
    ap.add_argument("--home", default="/home/gem")
    ap.add_argument("--minute-ms", type=float, default=60000)
    ap.add_argument("--max-skew", type=int, default=900)
    ap.add_argument("--faults")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    fake = Fake(args)
    Fake.inst = fake
    Handler.fake = fake
    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True
    port = srv.server_address[1]
    threading.Thread(target=fake.reaper, daemon=True).start()

    def bye(*_):
        for s in list(fake.sandboxes):
            fake.drop_sandbox(s, "killed")
        os._exit(0)
    signal.signal(signal.SIGTERM, bye)
    signal.signal(signal.SIGINT, bye)
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as fh:
            fh.write("%d\n" % port)
        os.rename(args.port_file + ".tmp", args.port_file)
    print("VOLCENGINE-FAKE READY http://127.0.0.1:%d" % port, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
