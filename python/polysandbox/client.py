"""polysandbox.client - the same calls, through polysandboxd.

Client sends the body request.py built to POST /v1/run with the standard
library's http.client (no dependency), one connection a call, so that
closing it cancels the call on the server; it builds the Result from the
reply: the same object a local run gives.  Sandbox.stream asks the exec
route for server-sent events (Accept: text/event-stream) and hands each
stdout/stderr event on as it is read.  The server's error replies
({"error": {"code", "message", "provider"}}) raise the exception class of
the same library code.

Client.evaluate sends the dataset and samples files, their bytes as they
are, in POST /v1/eval ({"name", "base64"}: the server needs no access to
the client's files), follows the job's server-sent events (progress
events to the progress callback), and builds the EvalReport from the
ended job's summary, the object `polysandbox eval --json` prints; with
out, each item event's record is appended to that file as it comes (the
engine's records, as the local evaluate's journal holds them); with
resume, the file's records go in the request's "results" and the job
starts from them.
Cancelling it (or an exception from progress) cancels the job (DELETE)
and waits for it to stop.
"""

from __future__ import annotations

import base64
import dataclasses
import http.client
import json
import os
import socket
import stat
import threading
import time
import urllib.parse
from typing import Any, Callable, Iterator

from ._fields import field as json_field
from .errors import (CancelledRunError, InvalidRequestError, ServerError,
                     error_for_code, error_for_remote)
from .evalargs import FORMATS
from .info import Pool, Provider, Template, listing
from .report import CompareReport, EvalReport
from .request import OutputSink, Runner
from .result import Result, decode_output
from .sandbox import FileList, SandboxInfo, warn_unlisted

__all__ = ["Client"]


class Client(Runner):
    """A runner over polysandboxd at url (http:// or https://), with the
    bearer token when the server asks for one.  timeout: seconds to wait
    for a reply (the run's own time included); None waits as long as it
    takes.  One Client may be used from many threads."""

    def __init__(self, url: str, token: str | None = None, timeout: float | None = None):
        if not isinstance(url, str):
            raise TypeError(f"polysandbox.Client: argument 'url' must be a str, "
                            f"not {type(url).__name__}")
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.netloc:
            raise ValueError(f"polysandbox.Client: argument 'url' must be an http:// or "
                             f"https:// URL with a host, not {url!r}")
        if token is not None and (not isinstance(token, str) or not token
                                  or any(c in token for c in "\r\n\0")):
            raise ValueError("polysandbox.Client: argument 'token' must be a non-empty str "
                             "on one line")
        self.url = url.rstrip("/")
        self._split = urllib.parse.urlsplit(self.url)
        self._base = self._split.path
        self._token = token
        self._timeout = timeout

    def __repr__(self) -> str:
        return f"Client({self.url!r})"   # never the token

    def providers(self) -> list[Provider]:
        """The server's providers (GET /v1/providers)."""
        return listing(self._call("GET", "/v1/providers"), "providers", Provider)

    def templates(self) -> list[Template]:
        """The server's language templates (GET /v1/templates)."""
        return listing(self._call("GET", "/v1/templates"), "templates", Template)

    def pools(self, wait: float | None = None) -> list[Pool]:
        """The server's warm pools and their state (GET /v1/pools).  The
        server cannot be asked to wait for them to fill: wait must be None
        (NotImplementedError otherwise)."""
        if wait is not None:
            raise NotImplementedError("polysandbox.Client.pools: polysandboxd's GET /v1/pools "
                                      "cannot wait for the pools to fill; call it without "
                                      "wait and poll Pool.ready")
        return listing(self._call("GET", "/v1/pools"), "pools", Pool)

    def _evaluate(self, body: dict[str, Any], cancel: "_Abort | None" = None) -> EvalReport:
        """evaluate (see Runner.evaluate) as a job of polysandboxd's POST
        /v1/eval: the files sent inline, the job followed to its end."""
        call = "polysandbox.Client.evaluate"
        req = self._eval_request(call, body)
        # Opened before the job is asked for: a results file that cannot be
        # kept starts nothing.  With resume its records go with the request
        # (the server checks they are this evaluation's, 400 otherwise).
        results = _Results(call, body["out"], body["resume"]) \
            if body["out"] is not None else None
        if results is not None and results.kept:
            req["results"] = results.kept
        jid, view = self._eval_job(call, req, results, body["progress"], cancel)
        rep = EvalReport.from_json(view.get("summary"))
        if results is None:
            return rep
        if len(results.samples) != rep.done:
            raise ServerError(f"polysandboxd at {self.url}: job {jid}: {rep.done} samples "
                              f"done but {len(results.samples)} with a record in "
                              f"{body['out']}")
        # As the local evaluate: the report names the results file.
        return dataclasses.replace(rep, results=body["out"])

    def _eval_request(self, call: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST /v1/eval's body for evaluate's or compare's @body (one
        column's providers in it), the files inline."""
        if body["jobs"]:
            raise ValueError(f"{call}: argument 'jobs': polysandboxd runs an evaluation with "
                             "its own workers ([server] job_workers); give jobs=0")
        req: dict[str, Any] = {"dataset": _file_field(call, "dataset", body["dataset"]),
                               "format": FORMATS[body.get("format", 0)], "k": body["k"],
                               "allow_partial": body.get("allow_partial", False)}
        if body["samples"] is None:
            req["canonical"] = True
        else:
            req["samples"] = _file_field(call, "samples", body["samples"])
        for name in ("providers", "timeout", "memory", "retries"):
            if body.get(name) is not None:
                req[name] = body[name]
        return req

    def _eval_job(self, call: str, req: dict[str, Any], results: "_Results | None",
                  progress: Any, cancel: "_Abort | None") -> tuple[str, dict[str, Any]]:
        """An eval job of @req followed to its end, its records to
        @results (closed after): (its id, the ended job's object); a job
        that failed or was cancelled raises.  Stopped when the caller is
        interrupted."""
        try:
            try:
                job = self._call("POST", "/v1/eval", req)
            except InvalidRequestError as e:
                if "max_body" not in e.message:
                    raise
                sizes = ", ".join(f"{n} {len(req[n]['base64']) * 3 // 4} bytes"
                                  for n in ("dataset", "samples") if n in req)
                raise InvalidRequestError(f"{call}: the files sent inline ({sizes}, base64 in "
                                          f"the body) are too large for the server: "
                                          f"{e.message}", e.code) from None
            jid = job.get("id") if isinstance(job, dict) else None
            if not isinstance(jid, str) or not jid or "/" in jid:
                raise ServerError(f"polysandboxd at {self.url}: /v1/eval: the reply names no "
                                  "job")
            try:
                if cancel is not None and cancel.fired:
                    raise CancelledRunError(f"polysandboxd at {self.url}: job {jid}: cancelled")
                view = self._follow(jid, progress, cancel, results)
            except BaseException:
                self._stop_job(jid)
                raise
        finally:
            if results is not None:
                results.close()
        state = view.get("state")
        if state == "failed":
            err = view.get("error") if isinstance(view.get("error"), dict) else {}
            raise error_for_remote(str(err.get("code")), str(err.get("message")))
        if state != "succeeded":
            raise CancelledRunError(f"polysandboxd at {self.url}: job {jid} was {state}")
        return jid, view

    def _follow(self, jid: str, progress: Any, cancel: "_Abort | None",
                results: "_Results | None" = None) -> dict[str, Any]:
        """The job's events to its done event (the ended job's object):
        each progress event to progress(done, total, passed), each item
        event's record to results.  A stream cut before the end is taken
        up again after the last event seen."""
        seen, quiet = 0, 0
        while True:
            path = f"/v1/jobs/{urllib.parse.quote(jid, safe='')}/events?after={seen}"
            where = f"polysandboxd at {self.url}: {path}"

            def read(reply: Any) -> Any:
                nonlocal seen, quiet
                for name, eid, obj in _sse(reply, where):
                    if name == "done":
                        return obj
                    if name == "item" and results is not None:
                        if not eid.isdigit():
                            raise ServerError(f"{where}: an item event without a number")
                        results.put(int(eid), obj, where)
                    if eid.isdigit():
                        seen, quiet = max(seen, int(eid)), 0
                    if name == "progress" and progress is not None:
                        progress(*(json_field(obj, where, f, int)
                                   for f in ("done", "total", "passed")))
                return None
            status, reason, got = self._send("GET", path, None, None, cancel, read=read)
            if status >= 400:
                raise self._refusal(path, status, reason, got)
            if isinstance(got, dict):
                return got
            quiet += 1
            if quiet > 3:
                raise ServerError(f"{where}: the event stream ended before the job did")

    def _stop_job(self, jid: str) -> None:
        """Cancel the job and wait (at most a minute) for its running
        items to stop; errors are left unsaid (a cancel is under way)."""
        path = f"/v1/jobs/{urllib.parse.quote(jid, safe='')}"
        try:
            view = self._call("DELETE", path)
            deadline = time.monotonic() + 60
            while view.get("state") not in ("succeeded", "failed", "cancelled") \
                    and time.monotonic() < deadline:
                time.sleep(0.05)
                view = self._call("GET", path + "?limit=0")
        except Exception:
            pass

    def _compare(self, body: dict[str, Any], cancel: "_Abort | None" = None
                 ) -> CompareReport:
        """compare (see Runner.compare) through polysandboxd: an eval job
        per column, one after the other as the command runs them (each
        column's records to PREFIX.LABEL.jsonl with report), then POST
        /v1/compare of the jobs, whose Markdown and HTML pages go to
        PREFIX.md and PREFIX.html."""
        call = "polysandbox.Client.compare"
        if body["settings"]:
            raise NotImplementedError(f"{call}: argument 'settings': a column's configuration "
                                      "is the server's; give each setting to polysandboxd, "
                                      "or compare on the in-process runner")
        prefix = body["report"]
        jids = []
        for label, prov in body["columns"]:
            req = self._eval_request(call, dict(body, providers=[prov]))
            results = _Results(call, f"{prefix}.{label}.jsonl", False) \
                if prefix is not None else None
            jids.append(self._eval_job(call, req, results, None, cancel)[0])
        creq = {"jobs": jids, "k": body["k"]}
        obj = self._call("POST", "/v1/compare", creq, cancel)
        if not isinstance(obj, dict):
            raise ServerError(f"polysandboxd at {self.url}: /v1/compare: the reply is not "
                              "an object")
        if prefix is not None:
            for suffix, accept in ((".md", "text/markdown"), (".html", "text/html")):
                page = self._call("POST", "/v1/compare", creq, cancel, accept=accept)
                with open(prefix + suffix, "wb") as f:
                    f.write(page)
            # As the local compare: the columns' records and the pages are
            # the files written here, not the server's.
            obj["report"] = {"markdown": prefix + ".md", "html": prefix + ".html"}
            for (label, _), col in zip(body["columns"], obj.get("columns") or []):
                if isinstance(col, dict):
                    col["results"] = f"{prefix}.{label}.jsonl"
        return CompareReport.from_json(obj)

    def _compare_from(self, body: dict[str, Any]) -> Any:
        raise NotImplementedError("polysandbox.Client.compare_from: the results files are "
                                  "this machine's; call polysandbox.compare_from (nothing "
                                  "runs: no server is needed)")

    # Cancellation tokens of Runner._acall: the connection of the call.
    def _cancel_new(self) -> "_Abort":
        return _Abort()

    def _cancel_fire(self, token: "_Abort") -> None:
        token.fire()

    def _connect(self) -> http.client.HTTPConnection:
        u = self._split
        cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
        return cls(u.hostname or "", u.port, timeout=self._timeout)

    def _send(self, method: str, path: str, data: bytes | None, ctype: str | None,
              cancel: "_Abort | None", read: Callable[[Any], Any] | None = None,
              accept: str | None = None) -> tuple[int, str, Any]:
        """One request on a connection of its own (closed after, or when
        cancel fires: polysandboxd then cancels what it was doing for it).
        (status, reason, body); ServerError when the server cannot be
        reached or the connection broke.  read, when given, asks for
        server-sent events and reads a reply that is not an error with
        read(reply) (its value is the body); accept names another type of
        reply than JSON."""
        conn = self._connect()
        headers = {"Accept": accept or ("text/event-stream" if read else "application/json"),
                   "Connection": "close"}
        if ctype is not None:
            headers["Content-Type"] = ctype
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        try:
            conn.connect()
            if cancel is not None:
                cancel.watch(conn)    # from here firing it shuts the socket down
            conn.request(method, self._base + path, body=data, headers=headers)
            reply = conn.getresponse()
            if read is not None and reply.status < 400:
                return reply.status, reply.reason, read(reply)
            return reply.status, reply.reason, reply.read()
        except (OSError, http.client.HTTPException) as e:
            if cancel is not None and cancel.fired:
                raise CancelledRunError(f"polysandboxd at {self.url}: {path}: cancelled") \
                    from None
            raise ServerError(f"polysandboxd at {self.url}: {path}: {e or type(e).__name__}") \
                from None
        finally:
            if cancel is not None:
                cancel.watch(None)
            conn.close()

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None,
              cancel: "_Abort | None" = None, raw: bytes | None = None,
              json_reply: bool = True, accept: str | None = None) -> Any:
        """A request with a JSON body (or raw bytes), its JSON reply (or
        bytes: not json_reply, or a reply of type accept, a page); an
        error reply raises the class of its code."""
        data = json.dumps(body).encode("utf-8") if body is not None else raw
        ctype = "application/json" if body is not None else (
            "application/octet-stream" if raw is not None else None)
        status, reason, reply = self._send(method, path, data, ctype, cancel, accept=accept)
        if status >= 400:
            raise self._refusal(path, status, reason, reply)
        if not json_reply or accept is not None:
            return reply
        try:
            return json.loads(reply)
        except ValueError as e:
            raise ServerError(f"polysandboxd at {self.url}: {path}: the reply is not "
                              f"JSON: {e}") from None

    def _refusal(self, path: str, status: int, reason: str, reply: bytes) -> Exception:
        try:
            err = json.loads(reply)["error"]
            name, msg = str(err["code"]), str(err["message"])
            prov = err.get("provider")
        except (ValueError, KeyError, TypeError):
            return ServerError(f"polysandboxd at {self.url}: {path}: HTTP {status} {reason}")
        return error_for_remote(name, msg, prov if isinstance(prov, str) else None)

    def _execute(self, body: dict[str, Any], cancel: "_Abort | None" = None) -> Result:
        return Result.from_json(self._call("POST", "/v1/run", body, cancel))

    # ---- sandboxes (handles are (id, provider); see sandbox.py) --------------

    _interrupts_locally = False   # DELETE stops the exec on the server

    @staticmethod
    def _box(handle: tuple[str, str], tail: str = "") -> str:
        sid, prov = handle
        return (f"/v1/sandboxes/{urllib.parse.quote(sid, safe='')}{tail}"
                f"{'&' if '?' in tail else '?'}provider={urllib.parse.quote(prov, safe='')}")

    def _sb_create(self, body: dict[str, Any]) -> tuple[tuple[str, str], SandboxInfo, bool]:
        reply = self._call("POST", "/v1/sandboxes", body)
        info = SandboxInfo.from_json(reply)
        created = reply.get("created")
        if not isinstance(created, bool):
            raise ServerError("sandbox: field 'created' must be bool")
        return (info.id, info.provider), info, created

    def _sb_attach(self, sandbox_id: str, provider: str | None
                   ) -> tuple[tuple[str, str], SandboxInfo]:
        q = f"?provider={urllib.parse.quote(provider, safe='')}" if provider else ""
        info = SandboxInfo.from_json(self._call(
            "GET", f"/v1/sandboxes/{urllib.parse.quote(sandbox_id, safe='')}{q}"))
        return (info.id, info.provider), info

    def _sb_exec(self, handle: tuple[str, str], body: dict[str, Any],
                 cancel: "_Abort | None" = None, on_output: OutputSink | None = None) -> Result:
        path = self._box(handle, "/exec")
        if on_output is None:
            return Result.from_json(self._call("POST", path, body, cancel))
        return self._streamed(path, body, cancel, on_output)

    def _streamed(self, path: str, body: dict[str, Any], cancel: "_Abort | None",
                  on_output: OutputSink) -> Result:
        """POST body to path asking for server-sent events: the stdout and
        stderr events go to on_output as they come, the result event is
        the Result, an error event raises the class of its code."""
        status, reason, got = self._send(
            "POST", path, json.dumps(body).encode("utf-8"), "application/json", cancel,
            read=lambda reply: _events(reply, f"polysandboxd at {self.url}: {path}",
                                       on_output))
        if status >= 400:
            raise self._refusal(path, status, reason, got)
        name, obj = got
        if name == "error":
            raise self._refusal(path, 200, "error event", json.dumps(obj).encode())
        return Result.from_json(obj)

    def _sb_upload(self, handle: tuple[str, str], path: str, data: bytes, mode: int) -> None:
        self._call("PUT", self._box(handle, f"/files/{urllib.parse.quote(path)}?mode={mode:o}"),
                   raw=data)

    def _sb_download(self, handle: tuple[str, str], path: str, max_bytes: int) -> bytes:
        data = self._call("GET", self._box(handle, f"/files/{urllib.parse.quote(path)}"),
                          json_reply=False)
        if len(data) > max_bytes:
            raise InvalidRequestError(f"polysandbox.Sandbox.download: {path} is larger than "
                                      f"max_bytes ({max_bytes})", 12)
        return data

    def _sb_list_files(self, handle: tuple[str, str], path: str, limit: int) -> FileList:
        q = urllib.parse.urlencode({"path": path, "limit": limit})
        return FileList.from_json(self._call("GET", self._box(handle, f"/files?{q}")))

    def _sb_destroy(self, handle: tuple[str, str]) -> None:
        self._call("DELETE", self._box(handle))

    def _sb_release(self, handle: tuple[str, str]) -> None:
        pass   # nothing held here: the server keeps it

    def _sb_list(self, labels: dict[str, str], provider: str | None) -> list[SandboxInfo]:
        q = [("label", f"{k}={v}") for k, v in labels.items()]
        if provider is not None:
            q.append(("provider", provider))
        reply = self._call("GET", "/v1/sandboxes" + ("?" + urllib.parse.urlencode(q) if q
                                                      else ""))
        if provider is None and isinstance(reply, dict):
            for u in reply.get("unlisted") or []:
                if isinstance(u, dict):
                    warn_unlisted(str(u.get("provider")), str(u.get("error")))
        return listing(reply, "sandboxes", SandboxInfo)


# The longest line of an event stream taken (a result holds at most the
# output caps, 64 MiB by default, base64 at worst).
_LINE_MAX = 128 << 20


def _events(reply: Any, where: str, on_output: OutputSink) -> tuple[str, Any]:
    """Reads polysandboxd's server-sent events from reply: each stdout
    and stderr event (OutputEvent) goes to on_output; the first result or
    error event ends it: (its name, its JSON object)."""
    for name, _, obj in _sse(reply, where):
        if name in ("stdout", "stderr"):
            on_output(name, _chunk(obj, where, name))
        elif name in ("result", "error"):
            return name, obj
    raise ServerError(f"{where}: the event stream ended before the result")


def _sse(reply: Any, where: str) -> Iterator[tuple[str, str, Any]]:
    """polysandboxd's server-sent events from reply, as (name, id, JSON
    object), to the end of the stream.  What the server sent is checked
    as hostile: ServerError naming what is wrong."""
    if not reply.getheader("Content-Type", "").startswith("text/event-stream"):
        raise ServerError(f"{where}: the reply is not text/event-stream")
    name, eid, data = "", "", []
    while True:
        line = reply.readline(_LINE_MAX + 1)
        if not line:
            return
        if len(line) > _LINE_MAX:
            raise ServerError(f"{where}: an event line is over {_LINE_MAX} bytes")
        line = line.rstrip(b"\r\n")
        if line:
            if line.startswith(b":"):
                continue   # a heartbeat
            key, _, value = line.decode("utf-8", "replace").partition(":")
            value = value[1:] if value.startswith(" ") else value
            if key == "event":
                name = value
            elif key == "id":
                eid = value
            elif key == "data":
                data.append(value)
            continue
        if not data:
            name = ""
            continue
        try:
            obj = json.loads("\n".join(data))
        except ValueError as e:
            raise ServerError(f"{where}: the data of event '{name}' is not JSON: {e}") \
                from None
        yield name, eid, obj
        name, data = "", []


# The largest file Client.evaluate reads to send (the server's max_body,
# 16 MiB by default, is the bound that applies; this one keeps a mistaken
# path from being read into memory).
_FILE_MAX = 1 << 30


def _file_field(call: str, arg: str, path: str) -> dict[str, str]:
    """The file at path as POST /v1/eval's {"name", "base64"}; an error
    naming the argument when it cannot be read or is no regular file."""
    try:
        # O_NONBLOCK: a FIFO is refused, not waited on
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise InvalidRequestError(f"{call}: argument '{arg}': {path} is not a regular "
                                          "file", 2)
            if st.st_size > _FILE_MAX:
                raise InvalidRequestError(f"{call}: argument '{arg}': {path} is larger than "
                                          f"{_FILE_MAX} bytes, too large to send", 12)
            data = f.read(_FILE_MAX + 1)
    except OSError as e:
        raise error_for_code(6 if isinstance(e, FileNotFoundError) else 11,
                             f"{call}: argument '{arg}': {path}: {e.strerror or e}") from None
    if not data:
        raise InvalidRequestError(f"{call}: argument '{arg}': {path} is empty", 2)
    return {"name": path, "base64": base64.b64encode(data).decode("ascii")}


class _Results:
    """Client.evaluate's results file: the job's records, a JSONL line
    each, appended as their item events come (each event numbered: one
    seen again after a reconnection is not written twice).  As the local
    evaluate, a file with records in it is refused (FileExistsError)
    unless resume, and one that is empty or missing is written; a file
    this made is removed again when the evaluation ends with no record
    written.  With resume, kept is the file's whole lines (a torn last
    line is cut off, as the library's journal cuts it), which the job
    gets as its first records and sends back as its first item events:
    those are not written again."""

    def __init__(self, call: str, path: str, resume: bool = False):
        self.path, self.count, self.kept = path, 0, ""
        self.samples: set[Any] = set()      # samples with a record in the file
        self._again: dict[str, int] = {}    # kept records the job will send back
        flags = os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC
        try:
            try:
                self._fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o666)
                self._made = True
            except FileExistsError:
                self._fd = os.open(path, flags | os.O_NONBLOCK)
                self._made = False
                os.set_blocking(self._fd, True)   # O_NONBLOCK: a FIFO without reader fails
        except OSError as e:
            raise error_for_code(6 if isinstance(e, FileNotFoundError) else 11,
                                 f"{call}: argument 'out': {path}: {e.strerror or e}") from None
        size = os.fstat(self._fd).st_size
        if size > 0 and not resume:
            os.close(self._fd)
            raise FileExistsError(f"{call}: the results file {path} exists ({size} bytes): "
                                  "remove it, or give another out, or resume=True to "
                                  "continue it")
        if size > 0:
            self._keep(call)

    def _keep(self, call: str) -> None:
        """Read the file's records to resume; cut a torn last line off."""
        try:
            with open(self.path, "rb") as f:
                data = f.read()
            whole = data[:data.rfind(b"\n") + 1]
            if len(whole) < len(data):
                os.truncate(self.path, len(whole))
            self.kept = whole.decode("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            os.close(self._fd)
            raise error_for_code(11, f"{call}: argument 'out': {self.path}: "
                                 f"{getattr(e, 'strerror', None) or e}") from None
        for line in self.kept.splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue    # the server names the line in its 400
            if isinstance(rec, dict):
                self.samples.add(rec.get("sample"))
                key = _canon(rec)
                self._again[key] = self._again.get(key, 0) + 1

    def put(self, number: int, item: Any, where: str) -> None:
        """Append the record of item event number (1, 2, ...), once."""
        if number <= self.count:
            return
        if number != self.count + 1:
            raise ServerError(f"{where}: item event {number} came after {self.count}")
        rec = item.get("record") if isinstance(item, dict) else None
        if not isinstance(rec, dict):
            raise ServerError(f"{where}: item event {number} holds no record")
        self.samples.add(rec.get("sample"))
        key = _canon(rec)
        if self._again.get(key):
            self._again[key] -= 1     # one of the file's own, sent back
            self.count = number
            return
        data = (json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        try:
            while data:
                data = data[os.write(self._fd, data):]
        except OSError as e:
            raise error_for_code(11, f"polysandbox.Client.evaluate: {self.path}: "
                                 f"{e.strerror or e}") from None
        self.count = number

    def close(self) -> None:
        os.close(self._fd)
        if self._made and not self.samples:
            try:
                os.unlink(self.path)
            except OSError:
                pass


def _canon(rec: dict[str, Any]) -> str:
    """A record as a key: the same record whatever its keys' order."""
    return json.dumps(rec, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _chunk(obj: Any, where: str, name: str) -> bytes:
    """The bytes of an OutputEvent."""
    what = f"{where}: event '{name}'"
    return decode_output(json_field(obj, what, "data", str),
                         json_field(obj, what, "encoding", str), what, "data")


class _Abort:
    """The cancellation token of one Client call: firing it shuts its
    connection down, from any thread, whether or not it is open yet."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self.fired = False

    def watch(self, conn: http.client.HTTPConnection | None) -> None:
        with self._lock:
            if conn is not None and self.fired:
                raise OSError("cancelled")
            # The socket itself: once the reply's headers are in, the
            # connection hands it to the reply (conn.sock is then None)
            # while a stream is still read from it.
            self._sock = conn.sock if conn is not None else None

    def fire(self) -> None:
        with self._lock:
            self.fired = True
            sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass   # already closed
