#!/usr/bin/env python3
"""tests/fakes/modal.py - a local fake of Modal's gRPC API, with faults.

One gRPC server (Debian's python3-grpcio) on 127.0.0.1 serves both of
Modal's services (see ../shared/reference/wire-apis.md section 5), with the
messages of plugins/modal/api.proto and task_command_router.proto (the
trimmed copies of Modal's own, compiled here with protoc at start):

  * the control plane, modal.client.ModalClient: AuthTokenGet (a JWT with
    an exp claim, --token-ttl), AppGetOrCreate, EnvironmentGetOrCreate,
    ImageGetOrCreate (a new image is "built": its result comes through
    ImageJoinStreaming), SecretGetOrCreate (ephemeral env dicts),
    SandboxCreate, SandboxGetTaskId, SandboxWait, SandboxTerminate,
    SandboxList (tags, before_timestamp paging), SandboxTagsGet/Set,
    TaskGetCommandRouterAccess, and the older exec: ContainerExec,
    ContainerExecGetOutput (batches), ContainerExecPutInput,
    ContainerExecWait.  Every call needs x-modal-token-id and
    x-modal-token-secret; every call but AuthTokenGet a valid, unexpired
    x-modal-auth-token.
  * the command router, modal.task_command_router.TaskCommandRouter, at
    the URL TaskGetCommandRouterAccess names (https://127.0.0.1:PORT, the
    same port: Modal's SDKs reach a local server's router in plain
    HTTP/2): TaskExecStart (idempotent by exec id), TaskExecStdinWrite
    (offsets, eof), TaskExecStdioRead (a stream from an offset),
    TaskExecWait, TaskExecPoll; "authorization: Bearer <jwt>" of the task,
    its own lifetime (--router-ttl).

Commands run for real on this host, each sandbox in a private temporary
directory that stands for its root file system (absolute work directories
map into it).  This is a protocol fake, not a security boundary.  A
sandbox made with its network blocked gets a private network namespace
when the host allows one.

Faults, repeatable (seeded RNG), set through the control port (HTTP, JSON:
POST /_fake/faults, POST /_fake/reset, GET /_fake/state) or --faults:
  latency_ms        delay before answering every call
  error_rate        probability of failing a call with `code`
  code              the gRPC status name (default UNAVAILABLE)
  retry_after       seconds put in an RPCRetryPolicy (grpc-status-details-bin)
  drop_stream_rate  probability of cutting a server stream (RST_STREAM)
                    after its first message
  die_mid_exec_ms   the sandbox of the next exec dies this long after it
                    starts (each use counts against `count`)
  count             apply error/drop/die faults this many times only
  after             no fault until this many calls of `after_methods` (a
                    regular expression; default every method) were made
                    since the faults were set: with error_rate 1 the cloud
                    goes down at a fixed call, e.g. the 9th SandboxCreate
  after_methods
  methods           regular expression the method name must match
  seed              reseed the RNG
POST /_fake/timeout {"id": ID, "timeout": S} moves a sandbox's end.
The ports are printed on stdout as "READY port=N control=M netns=yes|no".
"""
import argparse
import base64
import ctypes
import ctypes.util
import hashlib
import hmac
import json
import os
import random
import re
import secrets
import shutil
import signal
import string
import subprocess
import sys
import tempfile
import threading
import time
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc

ARGS = None
pb = None      # api_pb2
tcr = None     # task_command_router_pb2
NETNS_OK = False
RNG = random.Random(0)
FAULTS = {}
FAULT_LOCK = threading.Lock()
SEEN = {"calls": 0}   # calls of after_methods since the faults were set (for "after")
INJECTED = {"errors": 0, "drops": 0, "deaths": 0}
SANDBOXES = {}
APPS = {}
IMAGES = {}
SECRETS = {}
SB_LOCK = threading.Lock()
LOG_LOCK = threading.Lock()
JWT_KEY = secrets.token_bytes(32)
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
CALLS = {}     # method -> count, for /_fake/state


def log(msg):
    if ARGS and ARGS.verbose:
        with LOG_LOCK:
            sys.stderr.write("modal-fake: %s\n" % msg)
            sys.stderr.flush()


def new_id(prefix):
    alphabet = string.ascii_letters + string.digits
    return prefix + "-" + "".join(secrets.choice(alphabet) for _ in range(22))


# ---- JWTs ----------------------------------------------------------------

def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def jwt_make(claims):
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps(claims).encode())
    sig = hmac.new(JWT_KEY, ("%s.%s" % (head, body)).encode(), hashlib.sha256).digest()
    return "%s.%s.%s" % (head, body, b64url(sig))


def jwt_check(tok):
    """The claims of a token of ours, or a reason string."""
    try:
        head, body, sig = tok.split(".")
        want = hmac.new(JWT_KEY, ("%s.%s" % (head, body)).encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(want, base64.urlsafe_b64decode(sig + "=" * (-len(sig) % 4))):
            return "bad signature"
        claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except Exception:
        return "malformed token"
    if claims.get("exp", 0) <= time.time():
        return "token expired"
    return claims


# ---- network namespaces ---------------------------------------------------

_libc = None


def _unshare_net():
    if _libc.unshare(0x40000000) != 0:  # CLONE_NEWNET
        os._exit(126)


def _new_session_unshare():
    os.setsid()
    _unshare_net()


def probe_netns():
    global _libc
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        r = subprocess.run(["/bin/true"], preexec_fn=_unshare_net, timeout=10)
        return r.returncode == 0
    except Exception:
        return False


# ---- sandboxes and execs -----------------------------------------------------

class Exec:
    """One command: its pipes, its output kept whole (offsets), its end."""

    def __init__(self, sb, exec_id, popen, timeout):
        self.sb = sb
        self.id = exec_id
        self.popen = popen
        self.out = {1: bytearray(), 2: bytearray()}
        self.cond = threading.Condition()
        self.done = False
        self.rc = None
        self.stdin_written = 0
        self.stdin_closed = False
        self.stdin_lock = threading.Lock()
        self.started = time.time()
        self.readers = 0
        self.next_input = 1
        threading.Thread(target=self._pump, args=(1, popen.stdout), daemon=True).start()
        threading.Thread(target=self._pump, args=(2, popen.stderr), daemon=True).start()
        threading.Thread(target=self._reap, args=(timeout,), daemon=True).start()

    def _pump(self, fd, pipe):
        while True:
            try:
                b = os.read(pipe.fileno(), 65536)
            except OSError:
                b = b""
            with self.cond:
                if not b:
                    self.readers += 1
                    self.cond.notify_all()
                    return
                self.out[fd] += b
                self.cond.notify_all()

    def _reap(self, timeout):
        try:
            rc = self.popen.wait(timeout=timeout if timeout else None)
        except subprocess.TimeoutExpired:
            log("exec %s reached its timeout of %s s" % (self.id, timeout))
            self.kill()
            rc = self.popen.wait()
        with self.cond:
            while self.readers < 2:
                if not self.cond.wait(timeout=5):
                    break
            self.rc = rc
            self.done = True
            self.cond.notify_all()

    def kill(self):
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except OSError:
            pass

    def write_stdin(self, offset, data, eof):
        with self.stdin_lock:
            if self.stdin_closed:
                return "stdin is closed"
            if offset > self.stdin_written:
                return "offset %d is past the %d bytes written" % (offset, self.stdin_written)
            data = data[self.stdin_written - offset:]
            try:
                if data:
                    self.popen.stdin.write(data)
                    self.popen.stdin.flush()
                    self.stdin_written += len(data)
                if eof:
                    self.popen.stdin.close()
                    self.stdin_closed = True
            except (BrokenPipeError, ValueError, OSError):
                self.stdin_closed = True
            return None


class Sandbox:
    def __init__(self, app_id, definition, tags, env):
        self.id = new_id("sb")
        self.task_id = new_id("ta")
        self.app_id = app_id
        self.image_id = definition.image_id
        self.tags = dict(tags)
        self.env = env
        self.created = time.time()
        self.timeout = definition.timeout_secs or 300
        self.end = self.created + self.timeout
        na = definition.network_access.network_access_type if definition.HasField("network_access") else 0
        self.blocked = definition.block_network or na == pb.NetworkAccess.BLOCKED
        self.workdir = definition.workdir if definition.HasField("workdir") else "/"
        self.memory_mb = definition.resources.memory_mb
        self.milli_cpu = definition.resources.milli_cpu
        self.dir = tempfile.mkdtemp(prefix="sbx-" + self.id + "-", dir=ARGS.state_dir)
        self.root = os.path.join(self.dir, "root")
        for d in ("tmp", "root", self.workdir.lstrip("/")):
            os.makedirs(os.path.join(self.root, d), exist_ok=True)
        self.execs = {}
        self.lock = threading.Lock()
        self.result = None   # GenericResult once finished
        self.finished_at = None

    def host_path(self, path):
        norm = os.path.normpath("/" + path.lstrip("/"))
        host = os.path.normpath(self.root + norm)
        if host != self.root and not host.startswith(self.root + "/"):
            return None
        return host

    def alive(self):
        return self.result is None

    def finish(self, status, exception=""):
        with self.lock:
            if self.result is not None:
                return
            self.result = pb.GenericResult(status=status, exception=exception)
            self.finished_at = time.time()
            execs = list(self.execs.values())
        for e in execs:
            e.kill()
        marker = ("MODAL_SANDBOX_ID=%s" % self.id).encode()
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
        for e in execs:
            try:
                e.popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)
        log("sandbox %s finished (status %d)" % (self.id, status))

    def start(self, exec_id, argv, workdir, env, timeout):
        cwd = self.host_path(workdir or self.workdir)
        if cwd is None or not os.path.isdir(cwd):
            return None, "workdir %s does not exist" % workdir
        full = {"PATH": BASE_PATH, "HOME": self.host_path("/root"), "LANG": "C.UTF-8",
                "MODAL_SANDBOX_ID": self.id, "MODAL_TASK_ID": self.task_id}
        full.update(self.env)
        full.update(env)
        try:
            popen = subprocess.Popen(
                argv, cwd=cwd, env=full, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                preexec_fn=_new_session_unshare if (NETNS_OK and self.blocked) else os.setsid)
        except FileNotFoundError:
            # What a container runtime says: the exec runs and fails, 127.
            popen = subprocess.Popen(
                ["/bin/sh", "-c", 'printf "%s\\n" "$1" >&2; exit 127', "sh",
                 'exec: "%s": executable file not found in $PATH' % argv[0]],
                cwd=cwd, env=full, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, preexec_fn=os.setsid)
        except PermissionError:
            popen = subprocess.Popen(
                ["/bin/sh", "-c", 'printf "%s\\n" "$1" >&2; exit 126', "sh",
                 'exec: "%s": permission denied' % argv[0]],
                cwd=cwd, env=full, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, preexec_fn=os.setsid)
        except OSError as e:
            return None, "cannot start %s: %s" % (argv[0], e.strerror)
        ex = Exec(self, exec_id, popen, timeout)
        with self.lock:
            self.execs[exec_id] = ex
        return ex, None

    def info(self):
        return pb.SandboxInfo(
            id=self.id, created_at=self.created, app_id=self.app_id, image_id=self.image_id,
            timeout_secs=self.timeout,
            tags=[pb.SandboxTag(tag_name=k, tag_value=v) for k, v in sorted(self.tags.items())],
            task_info=pb.TaskInfo(id=self.task_id, started_at=self.created,
                                  sandbox_id=self.id,
                                  finished_at=self.finished_at or 0,
                                  result=self.result))


def reaper():
    while True:
        time.sleep(0.5)
        now = time.time()
        with SB_LOCK:
            due = [s for s in SANDBOXES.values() if s.alive() and s.end <= now]
            # Finished sandboxes are forgotten a while after.
            for s in [s for s in SANDBOXES.values()
                      if not s.alive() and s.finished_at < now - ARGS.keep_finished]:
                del SANDBOXES[s.id]
        for s in due:
            s.finish(pb.GenericResult.GENERIC_STATUS_TIMEOUT, "Sandbox timed out")


def kill_everything(*_):
    with SB_LOCK:
        boxes = list(SANDBOXES.values())
    for s in boxes:
        s.finish(pb.GenericResult.GENERIC_STATUS_TERMINATED)
    os._exit(0)


# ---- faults and auth ------------------------------------------------------------

CODES = {c.name: c for c in grpc.StatusCode}


class Abort(Exception):
    pass


def take_faults(method):
    """Which faults hit this call."""
    hit = {}
    with FAULT_LOCK:
        f = dict(FAULTS)
        if not f:
            return hit
        hit["latency_ms"] = f.get("latency_ms", 0)
        if f.get("after") is not None:
            if not f.get("after_methods") or re.search(f["after_methods"], method):
                SEEN["calls"] += 1
            if SEEN["calls"] <= f["after"]:
                return hit
        if f.get("methods") and not re.search(f["methods"], method):
            return hit
        left = FAULTS.get("count")
        if left is not None and left <= 0:
            return hit
        used = False
        if f.get("error_rate") and RNG.random() < f["error_rate"]:
            hit["code"] = f.get("code", "UNAVAILABLE")
            hit["retry_after"] = f.get("retry_after")
            INJECTED["errors"] += 1
            used = True
        elif f.get("drop_stream_rate") and RNG.random() < f["drop_stream_rate"]:
            hit["drop"] = True
            used = True
        elif f.get("die_mid_exec_ms") and method in ("TaskExecStart", "ContainerExec"):
            hit["die_ms"] = f["die_mid_exec_ms"]
            used = True
        if used and left is not None:
            FAULTS["count"] = left - 1
    return hit


def abort(ctx, code, msg, retry_after=None):
    if retry_after is not None:
        pol = pb.RPCRetryPolicy(retry_after_secs=float(retry_after))
        st = pb.RPCStatus(code=CODES[code].value[0], message=msg, details=[
            pb.Any(type_url="type.googleapis.com/modal.client.RPCRetryPolicy",
                   value=pol.SerializeToString())])
        ctx.set_trailing_metadata((("grpc-status-details-bin", st.SerializeToString()),))
    ctx.abort(CODES[code], msg)


def md(ctx):
    return {k: v for k, v in ctx.invocation_metadata()}


def check_client(ctx, method):
    m = md(ctx)
    if m.get("x-modal-token-id") != ARGS.token_id or \
            m.get("x-modal-token-secret") != ARGS.token_secret:
        abort(ctx, "UNAUTHENTICATED", "Invalid token id or secret: run `modal token new`")
    if method == "AuthTokenGet":
        return
    tok = m.get("x-modal-auth-token")
    if not tok:
        abort(ctx, "UNAUTHENTICATED", "missing x-modal-auth-token")
    c = jwt_check(tok)
    if isinstance(c, str):
        abort(ctx, "UNAUTHENTICATED", "auth token: %s" % c)


def check_router(ctx, task_id):
    auth = md(ctx).get("authorization", "")
    if not auth.startswith("Bearer "):
        abort(ctx, "UNAUTHENTICATED", "missing bearer token")
    c = jwt_check(auth[7:])
    if isinstance(c, str):
        abort(ctx, "UNAUTHENTICATED", "router token: %s" % c)
    if c.get("task_id") != task_id:
        abort(ctx, "PERMISSION_DENIED", "the token is not for task %s" % task_id)


def sandbox(ctx, sid):
    with SB_LOCK:
        s = SANDBOXES.get(sid)
    if s is None:
        abort(ctx, "NOT_FOUND", "Sandbox with id %s not found" % sid)
    return s


def task(ctx, task_id):
    with SB_LOCK:
        s = next((x for x in SANDBOXES.values() if x.task_id == task_id), None)
    if s is None:
        abort(ctx, "NOT_FOUND", "task %s not found" % task_id)
    if not s.alive():
        abort(ctx, "NOT_FOUND", "task %s has finished" % task_id)
    return s


def find_exec(ctx, s, exec_id):
    with s.lock:
        e = s.execs.get(exec_id)
    if e is None:
        abort(ctx, "NOT_FOUND", "exec %s not found" % exec_id)
    return e


# ---- the control plane -----------------------------------------------------------

def AuthTokenGet(req, ctx):
    now = int(time.time())
    return pb.AuthTokenGetResponse(token=jwt_make({"sub": ARGS.token_id, "iat": now,
                                                   "exp": now + ARGS.token_ttl}))


def AppGetOrCreate(req, ctx):
    key = (req.environment_name, req.app_name)
    with SB_LOCK:
        if key not in APPS:
            if req.object_creation_type != pb.OBJECT_CREATION_TYPE_CREATE_IF_MISSING:
                abort(ctx, "NOT_FOUND", "App '%s' not found" % req.app_name)
            APPS[key] = new_id("ap")
        return pb.AppGetOrCreateResponse(app_id=APPS[key])


def EnvironmentGetOrCreate(req, ctx):
    return pb.EnvironmentGetOrCreateResponse(
        environment_id="en-fake", metadata=pb.EnvironmentMetadata(
            name=req.deployment_name or "main",
            settings=pb.EnvironmentSettings(image_builder_version="2025.06")))


def ImageGetOrCreate(req, ctx):
    cmds = list(req.image.dockerfile_commands)
    if not cmds or not cmds[0].startswith("FROM "):
        abort(ctx, "INVALID_ARGUMENT", "an image needs a FROM command")
    iid = "im-" + hashlib.sha256("\n".join(cmds).encode()).hexdigest()[:22]
    with SB_LOCK:
        known = iid in IMAGES
        if not known:
            ok = "does-not-exist" not in cmds[0]
            IMAGES[iid] = {"ready_at": time.time() + ARGS.build_s, "ok": ok, "from": cmds[0]}
        img = IMAGES[iid]
    if known and time.time() >= img["ready_at"]:
        return pb.ImageGetOrCreateResponse(image_id=iid, result=image_result(img))
    return pb.ImageGetOrCreateResponse(image_id=iid)


def image_result(img):
    if img["ok"]:
        return pb.GenericResult(status=pb.GenericResult.GENERIC_STATUS_SUCCESS)
    return pb.GenericResult(status=pb.GenericResult.GENERIC_STATUS_FAILURE,
                            exception="pull access denied for %s" % img["from"][5:])


def ImageJoinStreaming(req, ctx):
    with SB_LOCK:
        img = IMAGES.get(req.image_id)
    if img is None:
        abort(ctx, "NOT_FOUND", "Image %s not found" % req.image_id)
    end = time.time() + min(req.timeout or 55, 55)
    n = 0
    while time.time() < img["ready_at"]:
        if time.time() >= end:
            return
        n += 1
        yield pb.ImageJoinStreamingResponse(entry_id="%d-0" % n)
        time.sleep(min(0.05, max(0, img["ready_at"] - time.time())))
    yield pb.ImageJoinStreamingResponse(result=image_result(img), entry_id="%d-1" % (n + 1),
                                        eof=True)


def SecretGetOrCreate(req, ctx):
    if req.object_creation_type != pb.OBJECT_CREATION_TYPE_EPHEMERAL:
        abort(ctx, "NOT_FOUND", "Secret '%s' not found" % req.deployment_name)
    sid = new_id("st")
    with SB_LOCK:
        SECRETS[sid] = dict(req.env_dict)
    return pb.SecretGetOrCreateResponse(secret_id=sid)


def SandboxCreate(req, ctx):
    if req.app_id not in APPS.values():
        abort(ctx, "NOT_FOUND", "App %s not found" % req.app_id)
    d = req.definition
    with SB_LOCK:
        img = IMAGES.get(d.image_id)
    if img is None or not img["ok"] or time.time() < img["ready_at"]:
        abort(ctx, "FAILED_PRECONDITION", "Image %s is not built" % d.image_id)
    if d.timeout_secs > 86400:
        abort(ctx, "INVALID_ARGUMENT", "timeout_secs must be at most 86400")
    env = {}
    for sec in d.secret_ids:
        with SB_LOCK:
            if sec not in SECRETS:
                abort(ctx, "NOT_FOUND", "Secret %s not found" % sec)
            env.update(SECRETS[sec])
    tags = {}
    for t in req.tags:
        tags[t.tag_name] = t.tag_value
    with SB_LOCK:
        alive = sum(1 for s in SANDBOXES.values() if s.alive())
        if alive >= ARGS.max_sandboxes:
            abort(ctx, "RESOURCE_EXHAUSTED", "you have reached the limit of %d running sandboxes"
                  % ARGS.max_sandboxes, retry_after=1)
        s = Sandbox(req.app_id, d, tags, env)
        SANDBOXES[s.id] = s
    log("created %s (task %s, blocked=%s)" % (s.id, s.task_id, s.blocked))
    return pb.SandboxCreateResponse(sandbox_id=s.id)


def SandboxGetTaskId(req, ctx):
    s = sandbox(ctx, req.sandbox_id)
    if not s.alive():
        return pb.SandboxGetTaskIdResponse(task_result=s.result)
    return pb.SandboxGetTaskIdResponse(task_id=s.task_id)


def SandboxWait(req, ctx):
    s = sandbox(ctx, req.sandbox_id)
    end = time.time() + max(0.0, min(req.timeout, 55.0))
    while s.alive() and time.time() < end:
        time.sleep(0.05)
    if s.alive():
        return pb.SandboxWaitResponse()
    return pb.SandboxWaitResponse(result=s.result)


def SandboxTerminate(req, ctx):
    s = sandbox(ctx, req.sandbox_id)
    existing = s.result
    s.finish(pb.GenericResult.GENERIC_STATUS_TERMINATED)
    return pb.SandboxTerminateResponse(existing_result=existing)


def SandboxList(req, ctx):
    want = {t.tag_name: t.tag_value for t in req.tags}
    with SB_LOCK:
        boxes = [s for s in SANDBOXES.values()
                 if (req.include_finished or s.alive())
                 and (not req.app_id or s.app_id == req.app_id)
                 and all(s.tags.get(k) == v for k, v in want.items())
                 and (not req.before_timestamp or s.created < req.before_timestamp)]
    boxes.sort(key=lambda s: s.created, reverse=True)
    return pb.SandboxListResponse(sandboxes=[s.info() for s in boxes[:ARGS.page_size]])


def SandboxTagsGet(req, ctx):
    s = sandbox(ctx, req.sandbox_id)
    return pb.SandboxTagsGetResponse(tags=[pb.SandboxTag(tag_name=k, tag_value=v)
                                           for k, v in sorted(s.tags.items())])


def SandboxTagsSet(req, ctx):
    s = sandbox(ctx, req.sandbox_id)
    s.tags = {t.tag_name: t.tag_value for t in req.tags}
    return pb.Empty()


def TaskGetCommandRouterAccess(req, ctx):
    task(ctx, req.task_id)
    if ARGS.no_router:
        abort(ctx, "FAILED_PRECONDITION", "command router access is not enabled for this task")
    now = int(time.time())
    return pb.TaskGetCommandRouterAccessResponse(
        jwt=jwt_make({"task_id": req.task_id, "iat": now, "exp": now + ARGS.router_ttl}),
        url="https://127.0.0.1:%d" % ARGS.bound_port)


def die_later(s, ms):
    def go():
        time.sleep(ms / 1000.0)
        with FAULT_LOCK:
            INJECTED["deaths"] += 1
        log("sandbox %s dies mid-exec (injected)" % s.id)
        s.finish(pb.GenericResult.GENERIC_STATUS_INTERNAL_FAILURE, "worker lost (injected)")
    threading.Thread(target=go, daemon=True).start()


def ContainerExec(req, ctx):
    s = task(ctx, req.task_id)
    if not req.command:
        abort(ctx, "INVALID_ARGUMENT", "empty command")
    exec_id = new_id("ce")
    wd = req.workdir if req.HasField("workdir") else None
    env = {}
    for sec in req.secret_ids:
        env.update(SECRETS.get(sec, {}))
    e, err = s.start(exec_id, list(req.command), wd, env, req.timeout_secs)
    if e is None:
        abort(ctx, "INVALID_ARGUMENT", err)
    if ctx.fault.get("die_ms"):
        die_later(s, ctx.fault["die_ms"])
    return pb.ContainerExecResponse(exec_id=exec_id)


def legacy_exec(ctx, exec_id):
    with SB_LOCK:
        boxes = list(SANDBOXES.values())
    for s in boxes:
        with s.lock:
            e = s.execs.get(exec_id)
        if e is not None:
            return s, e
    abort(ctx, "NOT_FOUND", "exec %s not found" % exec_id)


def ContainerExecGetOutput(req, ctx):
    s, e = legacy_exec(ctx, req.exec_id)
    fd = 2 if req.file_descriptor == pb.FILE_DESCRIPTOR_STDERR else 1
    # A batch per 64 KiB of output: batch n holds bytes [(n-1)*64K, n*64K).
    chunk = 65536
    index = req.last_batch_index
    end = time.time() + max(0.1, min(req.timeout or 55, 55))
    sent = 0
    while True:
        with e.cond:
            while True:
                have = len(e.out[fd])
                full = have // chunk
                done = e.done
                if index < full or (done and index * chunk < have) or done:
                    break
                if not s.alive() or time.time() >= end:
                    break
                e.cond.wait(timeout=0.2)
            data = bytes(e.out[fd][index * chunk:(index + 1) * chunk])
        if not s.alive() and not done:
            abort(ctx, "NOT_FOUND", "the sandbox has finished")
        if data and (len(data) == chunk or done):
            index += 1
            yield pb.RuntimeOutputBatch(
                batch_index=index,
                items=[pb.RuntimeOutputMessage(file_descriptor=req.file_descriptor,
                                               message_bytes=data)])
            sent += 1
            if ctx.fault.get("drop") and sent == 1:
                drop(ctx)
            continue
        if done:
            rc = e.rc if e.rc >= 0 else 128 - e.rc
            yield pb.RuntimeOutputBatch(batch_index=index + 1, exit_code=rc)
            return
        if time.time() >= end:
            return


def ContainerExecPutInput(req, ctx):
    s, e = legacy_exec(ctx, req.exec_id)
    with e.stdin_lock:
        if req.input.message_index < e.next_input:
            return pb.Empty()   # a repeat
        e.next_input = req.input.message_index + 1
    err = e.write_stdin(e.stdin_written, req.input.message, req.input.eof)
    if err:
        abort(ctx, "FAILED_PRECONDITION", err)
    return pb.Empty()


def ContainerExecWait(req, ctx):
    s, e = legacy_exec(ctx, req.exec_id)
    end = time.time() + max(0.0, min(req.timeout, 55.0))
    with e.cond:
        while not e.done and time.time() < end and s.alive():
            e.cond.wait(timeout=0.2)
        if not e.done:
            if not s.alive():
                abort(ctx, "NOT_FOUND", "the sandbox has finished")
            return pb.ContainerExecWaitResponse(completed=False)
        rc = e.rc if e.rc >= 0 else 128 - e.rc
    return pb.ContainerExecWaitResponse(completed=True, exit_code=rc)


# ---- the command router --------------------------------------------------------------

def TaskExecStart(req, ctx):
    check_router(ctx, req.task_id)
    s = task(ctx, req.task_id)
    if not req.exec_id or not req.command_args:
        abort(ctx, "INVALID_ARGUMENT", "exec_id and command_args are required")
    with s.lock:
        if req.exec_id in s.execs:
            return tcr.TaskExecStartResponse()   # idempotent
    wd = req.workdir if req.HasField("workdir") else None
    timeout = req.timeout_secs if req.HasField("timeout_secs") else 0
    env = {}
    for sec in req.secret_ids:
        env.update(SECRETS.get(sec, {}))
    env.update(dict(req.env))
    e, err = s.start(req.exec_id, list(req.command_args), wd, env, timeout)
    if e is None:
        abort(ctx, "INVALID_ARGUMENT", err)
    if ctx.fault.get("die_ms"):
        die_later(s, ctx.fault["die_ms"])
    return tcr.TaskExecStartResponse()


def TaskExecStdinWrite(req, ctx):
    check_router(ctx, req.task_id)
    s = task(ctx, req.task_id)
    e = find_exec(ctx, s, req.exec_id)
    err = e.write_stdin(req.offset, req.data, req.eof)
    if err:
        abort(ctx, "FAILED_PRECONDITION", err)
    return tcr.TaskExecStdinWriteResponse()


def drop(ctx):
    with FAULT_LOCK:
        INJECTED["drops"] += 1
    log("dropping a stream (injected)")
    ctx.cancel()
    raise Abort()


def TaskExecStdioRead(req, ctx):
    check_router(ctx, req.task_id)
    s = task(ctx, req.task_id)
    e = find_exec(ctx, s, req.exec_id)
    fd = 2 if req.file_descriptor == tcr.TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDERR else 1
    off = req.offset
    sent = 0
    while True:
        with e.cond:
            while len(e.out[fd]) <= off and not (e.done or e.readers >= 2) and s.alive():
                e.cond.wait(timeout=0.2)
            data = bytes(e.out[fd][off:off + 65536])
            finished = e.readers >= 2 and len(e.out[fd]) <= off + len(data)
        if not data:
            if not s.alive():
                abort(ctx, "NOT_FOUND", "task %s has finished" % req.task_id)
            if finished or e.done:
                return
            continue
        off += len(data)
        sent += 1
        yield tcr.TaskExecStdioReadResponse(data=data)
        if ctx.fault.get("drop") and sent == 1:
            drop(ctx)
        if not ctx.is_active():
            return


def exit_status(e):
    if e.rc < 0:
        return {"signal": -e.rc}
    return {"code": e.rc}


def TaskExecWait(req, ctx):
    check_router(ctx, req.task_id)
    s = task(ctx, req.task_id)
    e = find_exec(ctx, s, req.exec_id)
    with e.cond:
        while not e.done and s.alive() and ctx.is_active():
            e.cond.wait(timeout=0.2)
    if not e.done:
        abort(ctx, "NOT_FOUND", "task %s has finished" % req.task_id)
    return tcr.TaskExecWaitResponse(**exit_status(e))


# ---- the server ----------------------------------------------------------------------

class Ctx:
    """The servicer context, with the faults this call drew."""

    def __init__(self, ctx, fault):
        self._ctx = ctx
        self.fault = fault

    def __getattr__(self, name):
        return getattr(self._ctx, name)


def wrap(name, fn, streaming, client):
    def count():
        with FAULT_LOCK:
            CALLS[name] = CALLS.get(name, 0) + 1

    def pre(req, ctx):
        count()
        fault = take_faults(name)
        if fault.get("latency_ms"):
            time.sleep(fault["latency_ms"] / 1000.0)
        c = Ctx(ctx, fault)
        if client:
            check_client(c, name)
        if fault.get("code"):
            abort(c, fault["code"], "injected %s" % fault["code"], fault.get("retry_after"))
        if fault.get("drop") and not streaming:
            c.fault = {}
        return c

    if streaming:
        def handler(req, ctx):
            c = pre(req, ctx)
            try:
                yield from fn(req, c)
            except Abort:
                return
        return handler

    def handler(req, ctx):
        return fn(req, pre(req, ctx))
    return handler


def service(name, module, methods, client):
    handlers = {}
    for method, req_t, resp_t, streaming in methods:
        fn = wrap(method, globals()[method], streaming, client)
        maker = grpc.unary_stream_rpc_method_handler if streaming else grpc.unary_unary_rpc_method_handler
        handlers[method] = maker(fn, request_deserializer=getattr(module, req_t).FromString,
                                 response_serializer=getattr(module, resp_t).SerializeToString)
    return grpc.method_handlers_generic_handler(name, handlers)


def control_methods():
    return [
        ("AppGetOrCreate", "AppGetOrCreateRequest", "AppGetOrCreateResponse", False),
        ("AuthTokenGet", "AuthTokenGetRequest", "AuthTokenGetResponse", False),
        ("ContainerExec", "ContainerExecRequest", "ContainerExecResponse", False),
        ("ContainerExecGetOutput", "ContainerExecGetOutputRequest", "RuntimeOutputBatch", True),
        ("ContainerExecPutInput", "ContainerExecPutInputRequest", "Empty", False),
        ("ContainerExecWait", "ContainerExecWaitRequest", "ContainerExecWaitResponse", False),
        ("EnvironmentGetOrCreate", "EnvironmentGetOrCreateRequest",
         "EnvironmentGetOrCreateResponse", False),
        ("ImageGetOrCreate", "ImageGetOrCreateRequest", "ImageGetOrCreateResponse", False),
        ("ImageJoinStreaming", "ImageJoinStreamingRequest", "ImageJoinStreamingResponse", True),
        ("SandboxCreate", "SandboxCreateRequest", "SandboxCreateResponse", False),
        ("SandboxGetTaskId", "SandboxGetTaskIdRequest", "SandboxGetTaskIdResponse", False),
        ("SandboxList", "SandboxListRequest", "SandboxListResponse", False),
        ("SandboxTagsGet", "SandboxTagsGetRequest", "SandboxTagsGetResponse", False),
        ("SandboxTagsSet", "SandboxTagsSetRequest", "Empty", False),
        ("SandboxTerminate", "SandboxTerminateRequest", "SandboxTerminateResponse", False),
        ("SandboxWait", "SandboxWaitRequest", "SandboxWaitResponse", False),
        ("SecretGetOrCreate", "SecretGetOrCreateRequest", "SecretGetOrCreateResponse", False),
        ("TaskGetCommandRouterAccess", "TaskGetCommandRouterAccessRequest",
         "TaskGetCommandRouterAccessResponse", False),
    ]


def router_methods():
    return [
        ("TaskExecStart", "TaskExecStartRequest", "TaskExecStartResponse", False),
        ("TaskExecStdinWrite", "TaskExecStdinWriteRequest", "TaskExecStdinWriteResponse", False),
        ("TaskExecStdioRead", "TaskExecStdioReadRequest", "TaskExecStdioReadResponse", True),
        ("TaskExecWait", "TaskExecWaitRequest", "TaskExecWaitResponse", False),
    ]


# ---- the control port (HTTP, JSON) ---------------------------------------------------

class Control(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        log("control: " + fmt % args)

    def reply(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path != "/_fake/state":
            return self.reply(404, {"message": "no such control"})
        with SB_LOCK:
            boxes = list(SANDBOXES.values())
        out = []
        for s in boxes:
            if not s.alive():
                continue
            with s.lock:
                running = [e.popen.pid for e in s.execs.values() if e.popen.poll() is None]
            out.append({"id": s.id, "task_id": s.task_id, "tags": s.tags, "env": s.env,
                        "blocked": s.blocked, "memory_mb": s.memory_mb,
                        "milli_cpu": s.milli_cpu, "workdir": s.workdir,
                        "secondsLeft": round(s.end - time.time(), 1), "running": running})
        with FAULT_LOCK:
            injected = dict(INJECTED)
            calls = dict(CALLS)
        self.reply(200, {"sandboxes": out, "injected": injected, "calls": calls})

    def do_POST(self):
        global FAULTS
        n = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            return self.reply(400, {"message": "not JSON"})
        if self.path == "/_fake/faults":
            with FAULT_LOCK:
                if "seed" in body:
                    RNG.seed(body["seed"])
                FAULTS = {k: v for k, v in body.items() if k != "seed"}
                SEEN["calls"] = 0
            return self.reply(200, FAULTS)
        if self.path == "/_fake/timeout":
            with SB_LOCK:
                s = SANDBOXES.get(body.get("id"))
            if s is None or not s.alive():
                return self.reply(404, {"message": "no such sandbox"})
            s.end = time.time() + float(body.get("timeout", 0))
            return self.reply(200, {})
        if self.path == "/_fake/reset":
            with FAULT_LOCK:
                FAULTS = {}
                SEEN["calls"] = 0
                RNG.seed(ARGS.seed)
            return self.reply(200, {})
        return self.reply(404, {"message": "no such control"})


def compile_protos(out):
    src = ARGS.proto_dir
    os.makedirs(out, exist_ok=True)
    r = subprocess.run(["protoc", "-I", src, "--python_out=" + out,
                        os.path.join(src, "api.proto"),
                        os.path.join(src, "task_command_router.proto")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("modal-fake: protoc failed: %s" % r.stderr.strip())
    sys.path.insert(0, out)


def main():
    global ARGS, pb, tcr, NETNS_OK, FAULTS
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--state-dir", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--proto-dir", default=os.path.join(here, "..", "..", "plugins", "modal"))
    ap.add_argument("--token-id", default="ak-fake")
    ap.add_argument("--token-secret", default="as-fake")
    ap.add_argument("--token-ttl", type=int, default=1200, help="auth token lifetime, s")
    ap.add_argument("--router-ttl", type=int, default=600, help="router JWT lifetime, s")
    ap.add_argument("--no-router", action="store_true",
                    help="tasks have no command router (FAILED_PRECONDITION)")
    ap.add_argument("--build-s", type=float, default=0.2, help="how long an image builds")
    ap.add_argument("--max-sandboxes", type=int, default=64)
    ap.add_argument("--page-size", type=int, default=100)
    ap.add_argument("--keep-finished", type=float, default=60.0)
    ap.add_argument("--faults", default="")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=64)
    ap.add_argument("--verbose", action="store_true")
    ARGS = ap.parse_args()
    compile_protos(os.path.join(ARGS.state_dir, "pb"))
    import api_pb2
    import task_command_router_pb2
    pb, tcr = api_pb2, task_command_router_pb2
    RNG.seed(ARGS.seed)
    if ARGS.faults:
        FAULTS = json.loads(ARGS.faults)
        if "seed" in FAULTS:
            RNG.seed(FAULTS.pop("seed"))
    NETNS_OK = probe_netns()
    opts = [("grpc.max_receive_message_length", 100 * 1024 * 1024),
            ("grpc.max_send_message_length", 100 * 1024 * 1024)]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=ARGS.workers), options=opts)
    server.add_generic_rpc_handlers((
        service("modal.client.ModalClient", pb, control_methods(), True),
        service("modal.task_command_router.TaskCommandRouter", tcr, router_methods(), False),
    ))
    ARGS.bound_port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    ctl = ThreadingHTTPServer(("127.0.0.1", 0), Control)
    ctl.daemon_threads = True
    threading.Thread(target=ctl.serve_forever, daemon=True).start()
    threading.Thread(target=reaper, daemon=True).start()
    signal.signal(signal.SIGTERM, kill_everything)
    signal.signal(signal.SIGINT, kill_everything)
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d %d\n" % (ARGS.bound_port, ctl.server_address[1]))
    os.rename(tmp, ARGS.port_file)
    print("READY port=%d control=%d netns=%s" % (ARGS.bound_port, ctl.server_address[1],
                                                  "yes" if NETNS_OK else "no"), flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
