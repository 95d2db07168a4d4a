"""kubefake/server.py - the HTTP side of the fake API server.

Paths as the real server's: /api/v1/..., /apis/GROUP/VERSION/...,
[namespaces/NS/]RESOURCE[/NAME[/SUBRESOURCE]], with the verbs get, list,
watch (?watch=1, chunked newline-delimited WatchEvents, resourceVersion,
timeoutSeconds, allowWatchBookmarks), create, update (optimistic
concurrency on resourceVersion), patch (merge, strategic, JSON patch),
delete (DeleteOptions: gracePeriodSeconds, propagationPolicy,
preconditions) and deletecollection; dryRun=All; label and field
selectors; limit and continue; Table answers for kubectl; discovery,
/version and the health endpoints.  Subresources: pods/exec (WebSocket, see
execsession.py), pods/log, pods/status, pods/eviction,
serviceaccounts/token, */status.  Every error is a Status.

Control of the fake itself (loopback tests only, no authentication):
POST /_fake/faults, GET /_fake/faults, POST /_fake/reset, GET /_fake/state,
POST /_fake/evict {"namespace","name"}, POST /_fake/compact (forget the
event log: the next watch from an older version gets 410 Gone),
POST /_fake/token {"token", "expires_in" seconds or null},
GET /_fake/requests (counts of requests by verb and resource).
"""
import copy
import json
import socket
import ssl
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import admission, execsession, patch, proto, resources, tables
from .auth import DISCOVERY_PREFIXES, PUBLIC_PATHS, User
from .errors import ApiError, not_found, status_object
from .labelsel import SelectorError, fields_match, labels_match, parse_fields, parse_labels
from .store import now_rfc3339
from .ws import WebSocket, accept_key

TABLE_ACCEPT = "as=Table"


def truthy(v):
    return v is not None and v.lower() in ("1", "true", "t", "yes", "y")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, addr, handler, ctx, tls=None):
        self.ctx = ctx
        self.tls = tls
        super().__init__(addr, handler)

    def get_request(self):
        sock, addr = self.socket.accept()
        if self.tls is not None:
            # The handshake happens on the first read, in the handler's thread.
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr

    def handle_error(self, request, client_address):
        # Clients that hang up mid-handshake are no news.
        pass


class Drop(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kube-fake/1"
    # Headers and body go out in separate writes: with Nagle on, the body
    # waits for the client's delayed ACK, 40 ms a request.  The API server (Go)
    # sends at once (TCP_NODELAY).
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        t0 = getattr(self, "_t0", None)
        took = " %.0f ms" % ((time.time() - t0) * 1000) if t0 else ""
        self.server.ctx.log("%s %s%s" % (self.address_string(), fmt % args, took))

    def setup(self):
        super().setup()
        self.user = None

    # -- plumbing --

    def body_bytes(self):
        if getattr(self, "_body", None) is not None:
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

    def json_body(self, required=True):
        raw = self.body_bytes()
        if not raw.strip():
            if required:
                raise ApiError(400, "BadRequest", "the body of the request was in an unknown "
                               "format - accepted media types include: application/json, "
                               "application/yaml, application/vnd.kubernetes.protobuf")
            return None
        ct = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if ct == "application/vnd.kubernetes.protobuf":
            return proto.decode(raw)
        try:
            if ct in ("application/yaml", "application/apply-patch+yaml"):
                import yaml   # python3-yaml, when a client sends YAML
                return yaml.safe_load(raw)
            return json.loads(raw)
        except Exception as e:
            raise ApiError(400, "BadRequest", "couldn't get version/kind; json parse error: %s" % e)

    def send_json(self, code, obj, headers=None):
        data = json.dumps(obj, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "no-cache, private")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_text(self, code, text, ctype="text/plain; charset=utf-8"):
        data = text.encode() if isinstance(text, str) else text
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_error_status(self, e):
        self.send_json(e.code, e.status(), e.headers)

    def start_chunked(self, ctype="application/json"):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_chunks(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def cut(self):
        """Close the connection mid-answer (an injected fault)."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        raise Drop()

    # -- entry --

    def do_any(self):
        self._body = None
        self._t0 = time.time()
        ctx = self.server.ctx
        try:
            self.dispatch()
        except ApiError as e:
            try:
                self.body_bytes()
            except Exception:
                self.close_connection = True
            try:
                self.send_error_status(e)
            except OSError:
                self.close_connection = True
        except Drop:
            pass
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True
        except Exception as e:
            ctx.log("internal error on %s %s: %r" % (self.command, self.path, e))
            import traceback
            ctx.log(traceback.format_exc())
            try:
                self.send_json(500, status_object(500, "InternalError",
                                                  "Internal error occurred: %s" % e))
            except OSError:
                pass

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_any

    def dispatch(self):
        ctx = self.server.ctx
        u = urllib.parse.urlsplit(self.path)
        path = u.path
        self.q = urllib.parse.parse_qs(u.query, keep_blank_values=True)
        if path.startswith("/_fake/"):
            return self.fake_control(path)
        peer = None
        if isinstance(self.connection, ssl.SSLSocket):
            try:
                peer = self.connection.getpeercert()
            except (ValueError, ssl.SSLError):
                peer = None
        user = ctx.auth.authenticate(self.headers, peer)
        if user is None and not path.startswith(PUBLIC_PATHS):
            if ctx.args.anonymous:
                user = User("system:anonymous", ["system:unauthenticated"])
            else:
                raise ApiError(401, "Unauthorized", "Unauthorized")
        self.user = user
        parsed = self.parse_resource_path(path)
        if parsed is None:
            if not path.startswith(DISCOVERY_PREFIXES):
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            return self.non_resource(path)
        res, ns, name, sub = parsed
        verb = self.verb_of(name, sub)
        ctx.count(verb, res.plural + ("/" + sub if sub else ""))
        f = ctx.faults.decide(path, "exec" if sub == "exec" else verb)
        if f.get("latency_ms"):
            time.sleep(f["latency_ms"] / 1000.0)
        if f.get("status"):
            hdrs = {"Retry-After": str(f["retry_after"])} if f["status"] in (429, 503) and \
                f["status"] == 429 else {}
            if f["status"] == 429:
                raise ApiError(429, "TooManyRequests", "Too many requests, please try again "
                               "later.", details={"retryAfterSeconds": f["retry_after"]},
                               headers=hdrs)
            reason = {500: "InternalError", 502: "InternalError", 503: "ServiceUnavailable",
                      504: "Timeout"}.get(f["status"], "InternalError")
            raise ApiError(f["status"], reason, "injected fault (%d)" % f["status"])
        self.faults = f
        authz_verb = "create" if sub == "exec" else verb
        ctx.authz.check(user, authz_verb, res.group, res.plural, sub,
                        ns if res.namespaced else "", name)
        return self.resource(res, ns, name, sub, verb)

    # -- paths --

    def parse_resource_path(self, path):
        """(Resource, namespace or None, name or None, subresource or None)."""
        reg = self.server.ctx.reg
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
        if len(parts) >= 3 and parts[0] == "api" and parts[1] == "v1":
            group, version, rest = "", "v1", parts[2:]
        elif len(parts) >= 4 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return None
        ns = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            ns, rest = rest[1], rest[2:]
        res = reg.find(group, version, rest[0])
        if res is None:
            if reg.resource_list(group, version) is None:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if res.namespaced is False and ns is not None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        name = rest[1] if len(rest) >= 2 else None
        sub = rest[2] if len(rest) >= 3 else None
        if len(rest) > 3:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if sub is not None and sub not in [s for s, _, _ in res.subresources] and \
                not (res.plural == "serviceaccounts" and sub == "token"):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if res.namespaced and name is not None and ns is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return res, ns, name, sub

    def verb_of(self, name, sub):
        m = self.command
        if m in ("GET", "HEAD"):
            if name is None:
                return "watch" if truthy(self.q.get("watch", [None])[0]) else "list"
            return "get"
        if m == "POST":
            return "create"
        if m == "PUT":
            return "update"
        if m == "PATCH":
            return "patch"
        if m == "DELETE":
            return "deletecollection" if name is None else "delete"
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the "
                       "requested resource")

    def qget(self, k, default=None):
        v = self.q.get(k)
        return v[0] if v else default

    # -- non-resource paths --

    def non_resource(self, path):
        ctx = self.server.ctx
        reg = ctx.reg
        p = path.rstrip("/")
        if p in ("/healthz", "/livez", "/readyz"):
            return self.send_text(200, "ok")
        if p == "/version":
            return self.send_json(200, {"major": "1", "minor": "32", "gitVersion": "v1.32.4-fake",
                                        "gitCommit": "0" * 40, "gitTreeState": "clean",
                                        "buildDate": "2025-04-22T00:00:00Z", "goVersion": "go1.23.8",
                                        "compiler": "gc", "platform": "linux/amd64"})
        if p == "/api":
            return self.send_json(200, reg.api_versions(ctx.address))
        if p == "/openapi/v3":
            return self.send_json(200, resources.openapi_root(reg))
        if p.startswith("/openapi/v3/"):
            parts = p[len("/openapi/v3/"):].split("/")
            d = None
            if parts[0] == "api" and len(parts) == 2:
                d = resources.openapi_doc(reg, "", parts[1])
            elif parts[0] == "apis" and len(parts) == 3:
                d = resources.openapi_doc(reg, parts[1], parts[2])
            if d is None:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            return self.send_json(200, d)
        if p == "/apis":
            return self.send_json(200, reg.group_list())
        parts = p.strip("/").split("/")
        if len(parts) == 2 and parts[0] == "api":
            d = reg.resource_list("", parts[1])
        elif len(parts) == 2 and parts[0] == "apis":
            d = reg.group(parts[1])
        elif len(parts) == 3 and parts[0] == "apis":
            d = reg.resource_list(parts[1], parts[2])
        else:
            d = None
        if d is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return self.send_json(200, d)

    # -- resources --

    def wants_table(self):
        return TABLE_ACCEPT in (self.headers.get("Accept") or "")

    def resource(self, res, ns, name, sub, verb):
        ctx = self.server.ctx
        if sub == "exec":
            return self.pod_exec(res, ns, name)
        if sub == "log":
            return self.pod_log(res, ns, name)
        if sub == "eviction":
            return self.pod_eviction(res, ns, name)
        if sub == "token":
            return self.sa_token(res, ns, name)
        if res.kind == "SelfSubjectAccessReview" and verb == "create":
            return self.access_review()
        if verb == "get":
            o = ctx.store.get(res, ns or "", name)
            if o is None:
                raise not_found(res, name)
            if self.wants_table():
                return self.send_json(200, tables.table(res.kind, [o]))
            return self.send_json(200, o)
        if verb == "list":
            return self.do_list(res, ns)
        if verb == "watch":
            return self.do_watch(res, ns)
        if verb == "create":
            return self.do_create(res, ns)
        if verb in ("update", "patch"):
            return self.do_update(res, ns, name, sub, verb)
        if verb == "delete":
            return self.do_delete(res, ns, name)
        if verb == "deletecollection":
            return self.do_deletecollection(res, ns)
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the "
                       "requested resource")

    def predicate(self, res):
        try:
            lsel = parse_labels(self.qget("labelSelector"))
            fsel = parse_fields(self.qget("fieldSelector"), res.plural)
        except SelectorError as e:
            raise ApiError(400, "BadRequest", str(e))
        return lambda o: labels_match(lsel, (o.get("metadata") or {}).get("labels")) and \
            fields_match(fsel, o)

    def do_list(self, res, ns):
        ctx = self.server.ctx
        pred = self.predicate(res)
        try:
            limit = int(self.qget("limit", "0") or 0)
        except ValueError:
            raise ApiError(400, "BadRequest", "invalid limit")
        items, rv, cont = ctx.store.list(res, ns, pred, limit, self.qget("continue"))
        if self.wants_table():
            return self.send_json(200, tables.table(res.kind, items, rv, cont))
        for o in items:
            o.pop("kind", None)
            o.pop("apiVersion", None)
        md = {"resourceVersion": str(rv)}
        if cont:
            md["continue"] = cont
        return self.send_json(200, {"kind": res.kind + "List", "apiVersion": res.api_version,
                                    "metadata": md, "items": items})

    def do_watch(self, res, ns):
        ctx = self.server.ctx
        pred = self.predicate(res)
        rv_s = self.qget("resourceVersion", "")
        try:
            timeout = int(self.qget("timeoutSeconds", "0") or 0)
        except ValueError:
            raise ApiError(400, "BadRequest", "invalid timeoutSeconds")
        if not timeout:
            timeout = ctx.args.watch_timeout
        bookmarks = truthy(self.qget("allowWatchBookmarks"))
        table = self.wants_table()
        initial = []
        if rv_s in ("", "0"):
            # "Get state and start at most recent": the objects as ADDED first.
            items, rv, _ = ctx.store.list(res, ns, pred)
            initial = [("ADDED", o) for o in items]
            since = rv
        else:
            try:
                since = int(rv_s)
            except ValueError:
                raise ApiError(400, "BadRequest", 'resourceVersion: Invalid value: "%s": must be '
                               "a valid resource version" % rv_s)
        self.start_chunked()
        self.close_connection = True
        sent = 0

        def emit(etype, obj):
            nonlocal sent
            if table and etype in ("ADDED", "MODIFIED", "DELETED"):
                obj = tables.table(res.kind, [obj], with_headers=(sent == 0))
            self.chunk(json.dumps({"type": etype, "object": obj}, separators=(",", ":")).encode()
                       + b"\n")
            sent += 1
            if self.faults.get("drop_watch"):
                ctx.log("watch: dropping the stream (fault)")
                self.cut()

        try:
            if self.faults.get("gone"):
                raise ApiError(410, "Expired", "too old resource version: %s (%d)"
                               % (rv_s or "0", ctx.store.current_rv()))
            for etype, o in initial:
                emit(etype, o)
            last_bm = time.time()
            stop = lambda: ctx.stopping
            for ev in ctx.store.watch(res, ns, pred, since, stop, timeout):
                emit(*ev)
                if bookmarks and time.time() - last_bm > ctx.args.bookmark_interval:
                    last_bm = time.time()
                    emit("BOOKMARK", {"kind": res.kind, "apiVersion": res.api_version,
                                      "metadata": {"resourceVersion": str(ctx.store.current_rv())}})
        except ApiError as e:
            emit("ERROR", e.status())
        self.end_chunks()

    def admit_create(self, res, ns, obj):
        ctx = self.server.ctx
        if res.namespaced:
            admission.check_namespace(ctx.store, ctx.reg, ns)
        if res.kind == "Pod":
            admission.default_pod(obj)
            admission.validate_pod(res, obj)
            classes = {o["metadata"]["name"] for o in
                       ctx.store.all_of(ctx.reg.get("node.k8s.io", "runtimeclasses"))}
            admission.check_runtime_class(res, obj, classes)
            nsobj = ctx.store.get(ctx.reg.get("", "namespaces"), "", ns)
            admission.check_pod_security(res, obj, ((nsobj or {}).get("metadata", {}).get("labels")
                                                    or {}).get("pod-security.kubernetes.io/enforce"))
            quotas = ctx.store.all_of(ctx.reg.get("", "resourcequotas"), ns)
            if quotas:
                admission.check_quota(res, obj, quotas, ctx.store.all_of(res, ns))
        else:
            admission.validate_generic(res, obj)
        ctx.agent_admit(res, ns, obj)

    def do_create(self, res, ns):
        ctx = self.server.ctx
        obj = self.json_body()
        if not isinstance(obj, dict):
            raise ApiError(400, "BadRequest", "the body is not an object")
        kind, av = obj.get("kind"), obj.get("apiVersion")
        if (kind and kind != res.kind) or (av and av != res.api_version):
            raise ApiError(400, "BadRequest", "the API version in the data (%s) does not match "
                           "the expected API version (%s)" % (av, res.api_version)
                           if av != res.api_version else
                           "the kind in the data (%s) does not match the expected kind (%s)"
                           % (kind, res.kind))
        md = obj.setdefault("metadata", {})
        if res.namespaced:
            if md.get("namespace") and md["namespace"] != ns:
                raise ApiError(400, "BadRequest", "the namespace of the provided object does "
                               "not match the namespace sent on the request")
        dry = self.qget("dryRun") == "All"
        with ctx.admission_lock:
            self.admit_create(res, ns, obj)
            if res.kind == "Namespace":
                obj["status"] = {"phase": "Active"}
                obj.setdefault("spec", {"finalizers": ["kubernetes"]})
            out = ctx.store.create(res, ns or "", obj, dry)
        if not dry:
            ctx.created(res, out)
        return self.send_json(201, out)

    def do_update(self, res, ns, name, sub, verb):
        ctx = self.server.ctx
        cur = ctx.store.get(res, ns or "", name)
        body = self.json_body()
        if verb == "patch":
            if cur is None:
                raise not_found(res, name)
            new = patch.apply(cur, body, self.headers.get("Content-Type"))
            check = "resourceVersion" in ((body or {}).get("metadata") or {}) \
                if isinstance(body, dict) else False
        else:
            if cur is None:
                raise not_found(res, name)
            new = body
            if not isinstance(new, dict):
                raise ApiError(400, "BadRequest", "the body is not an object")
            if (new.get("metadata") or {}).get("name") not in (None, name):
                raise ApiError(400, "BadRequest", "the name of the object (%s) does not match "
                               "the name on the URL (%s)" % (new["metadata"]["name"], name))
            check = True
        new.setdefault("metadata", {})["name"] = name
        if not check:
            new["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"]
        dry = self.qget("dryRun") == "All"
        if sub != "status" and res.kind != "Pod":
            admission.validate_generic(res, new)
        out = ctx.store.update(res, ns or "", name, new, True, dry, status_only=(sub == "status"))
        if not dry:
            ctx.updated(res, out)
        return self.send_json(200, out)

    def delete_options(self):
        opts = {}
        if self.headers.get("Content-Length") not in (None, "0") or \
                "chunked" in (self.headers.get("Transfer-Encoding") or ""):
            b = self.json_body(required=False)
            if isinstance(b, dict):
                opts = b
        for k in ("gracePeriodSeconds", "propagationPolicy", "dryRun"):
            v = self.qget(k)
            if v is not None:
                opts[k] = int(v) if k == "gracePeriodSeconds" else (v if k != "dryRun" else [v])
        return opts

    def do_delete(self, res, ns, name):
        ctx = self.server.ctx
        opts = self.delete_options()
        out, code = ctx.delete(res, ns or "", name, opts)
        return self.send_json(code, out)

    def do_deletecollection(self, res, ns):
        ctx = self.server.ctx
        opts = self.delete_options()
        pred = self.predicate(res)
        items, rv, _ = ctx.store.list(res, ns, pred)
        for o in items:
            try:
                ctx.delete(res, o["metadata"].get("namespace", ""), o["metadata"]["name"], opts)
            except ApiError:
                pass
        for o in items:
            o.pop("kind", None)
            o.pop("apiVersion", None)
        return self.send_json(200, {"kind": res.kind + "List", "apiVersion": res.api_version,
                                    "metadata": {"resourceVersion": str(rv)}, "items": items})

    # -- subresources --

    def pod_log(self, res, ns, name):
        ctx = self.server.ctx
        pod = ctx.store.get(res, ns, name)
        if pod is None:
            raise not_found(res, name)
        data = ctx.pods_log(pod, self.qget("container"))
        tail = self.qget("tailLines")
        if tail is not None:
            lines = data.splitlines(True)
            data = b"".join(lines[-int(tail):]) if int(tail) else b""
        lb = self.qget("limitBytes")
        if lb is not None:
            data = data[:int(lb)]
        return self.send_text(200, data)

    def pod_eviction(self, res, ns, name):
        ctx = self.server.ctx
        self.json_body(required=False)
        pod = ctx.store.get(res, ns, name)
        if pod is None:
            raise not_found(res, name)
        ctx.check_disruption(pod)
        ctx.delete(res, ns, name, {})
        return self.send_json(201, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                    "status": "Success", "code": 201})

    def sa_token(self, res, ns, name):
        ctx = self.server.ctx
        body = self.json_body(required=False) or {}
        if ctx.store.get(res, ns, name) is None:
            raise not_found(res, name)
        secs = ((body.get("spec") or {}).get("expirationSeconds")) or 3600
        tok, exp = ctx.auth.mint(ns, name, secs)
        out = {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
               "metadata": {"name": name, "namespace": ns, "creationTimestamp": None},
               "spec": {"audiences": ["https://kubernetes.default.svc.cluster.local"],
                        "expirationSeconds": secs, "boundObjectRef": None},
               "status": {"token": tok, "expirationTimestamp": now_rfc3339(exp)}}
        return self.send_json(201, out)

    def access_review(self):
        ctx = self.server.ctx
        body = self.json_body()
        spec = (body or {}).get("spec") or {}
        ra = spec.get("resourceAttributes")
        if ra:
            sub = ra.get("subresource") or None
            ok = ctx.authz.allowed(self.user, ra.get("verb", ""), ra.get("group", ""),
                                   ra.get("resource", ""), sub, ra.get("namespace", ""),
                                   ra.get("name"))
        else:
            ok = True   # non-resource URLs: discovery and health are open
        body["status"] = {"allowed": ok}
        body.setdefault("metadata", {})["creationTimestamp"] = None
        return self.send_json(201, body)

    def pod_exec(self, res, ns, name):
        ctx = self.server.ctx
        pod = ctx.store.get(res, ns, name)
        if pod is None:
            raise not_found(res, name)
        argv = self.q.get("command") or []
        if not argv:
            raise ApiError(400, "BadRequest", "you must specify at least 1 command")
        cname = self.qget("container")
        names = [c["name"] for c in pod["spec"]["containers"]]
        if not cname:
            if len(names) > 1:
                raise ApiError(400, "BadRequest", "a container name must be specified for pod "
                               "%s, choose one of: [%s]" % (name, " ".join(names)))
            cname = names[0]
        if cname not in names:
            raise ApiError(400, "BadRequest", "container %s is not valid for pod %s" % (cname, name))
        phase = pod["status"].get("phase")
        if phase in ("Succeeded", "Failed"):
            raise ApiError(400, "BadRequest", "cannot exec into a container in a completed pod; "
                           "current phase is %s" % phase)
        if not pod["spec"].get("nodeName"):
            raise ApiError(400, "BadRequest", "pod %s does not have a host assigned" % name)
        cont = ctx.container_of(pod, cname)
        if cont is None or not cont.running():
            raise ApiError(400, "BadRequest", 'unable to upgrade connection: container not '
                           'found ("%s")' % cname)
        want = {k: truthy(self.qget(k, "false")) for k in ("stdin", "stdout", "stderr", "tty")}
        if self.qget("stdout") is None:
            want["stdout"] = True
        if self.qget("stderr") is None:
            want["stderr"] = True
        if want["tty"]:
            raise ApiError(400, "BadRequest", "tty is not supported by the fake")
        if not any(want[k] for k in ("stdin", "stdout", "stderr")):
            raise ApiError(400, "BadRequest", "you must specify at least 1 of stdin, stdout, stderr")
        if (self.headers.get("Upgrade") or "").lower() != "websocket":
            raise ApiError(400, "BadRequest", "Upgrade request required")
        key = self.headers.get("Sec-WebSocket-Key")
        if not key or self.headers.get("Sec-WebSocket-Version") != "13":
            raise ApiError(400, "BadRequest", "websocket: the client is not using the websocket "
                           "protocol: 'Sec-WebSocket-Key' or version 13 missing")
        offered = [p.strip() for h in self.headers.get_all("Sec-WebSocket-Protocol") or []
                   for p in h.split(",") if p.strip()]
        served = getattr(ctx.args, "exec_protocols", execsession.PROTOCOLS)
        chosen = execsession.negotiate(offered, served)
        if chosen is None:
            raise ApiError(400, "BadRequest", "unable to upgrade: unable to negotiate protocol: "
                           "client supports %s, server supports %s" % (offered, list(served)))
        # The kubelet refuses a missing program before starting anything.
        missing = ctx.missing_program(cont, argv[0])
        self.send_response(101, "Switching Protocols")
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept_key(key))
        if offered:
            self.send_header("Sec-WebSocket-Protocol", chosen)
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        ws = WebSocket(self.connection, self.rfile)
        sess = execsession.Session(ws, chosen, argv, want, self.faults.get("drop_exec"), ctx.log)
        if missing:
            lowest = 1 if want["stdout"] else 2 if want["stderr"] else 3
            sess.send(lowest, b"")
            msg = ("error executing command in container: failed to exec in container: failed "
                   "to start exec: OCI runtime exec failed: exec failed: unable to start "
                   "container process: exec: \"%s\": %s: unknown" % (argv[0], missing))
            if sess.v4:
                sess.send(3, json.dumps(execsession.internal_error(msg)).encode())
            else:
                sess.send(3, msg.encode())
            ws.close(1000)
            return
        proc = cont.exec(argv, want["stdin"])
        ctx.log("exec %s/%s (%s): %r pid %d" % (ns, name, chosen, argv[:3], proc.pid))
        code = sess.run(proc)
        ctx.log("exec %s/%s pid %d: exit %d" % (ns, name, proc.pid, code))

    # -- fake control --

    def fake_control(self, path):
        ctx = self.server.ctx
        if path == "/_fake/faults" and self.command == "POST":
            return self.send_json(200, ctx.faults.set(self.json_body()))
        if path == "/_fake/faults":
            return self.send_json(200, ctx.faults.conf)
        if path == "/_fake/reset":
            self.body_bytes()
            ctx.faults.reset()
            return self.send_json(200, {})
        if path == "/_fake/state":
            return self.send_json(200, ctx.state())
        if path == "/_fake/requests":
            return self.send_json(200, ctx.request_counts())
        if path == "/_fake/compact":
            self.body_bytes()
            ctx.store.compact()
            return self.send_json(200, {"resourceVersion": ctx.store.current_rv()})
        if path == "/_fake/evict" and self.command == "POST":
            b = self.json_body()
            ok = ctx.pods.evict(b.get("namespace", "default"), b["name"])
            return self.send_json(200 if ok else 404, {"evicted": ok})
        if path == "/_fake/token" and self.command == "POST":
            b = self.json_body()
            exp = b.get("expires_in")
            ctx.auth.set_expiry(b["token"], None if exp is None else time.time() + exp)
            return self.send_json(200, {})
        raise ApiError(404, "NotFound", "no fake control at %s" % path)


def deep(o):
    return copy.deepcopy(o)


def start(ctx, port, tls_ctx):
    srv = Server(("127.0.0.1", port), Handler, ctx, tls_ctx)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    t.start()
    return srv
