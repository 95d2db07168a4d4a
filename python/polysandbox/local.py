"""polysandbox.local - runs in this process, through libpolysandbox.

Local turns a request body (see request.py) into the library's create
and exec options and calls sbx_run; the result comes back through
sbx_result_to_json, the object the CLI's --json prints.

Two backends call the library: ctypes (this module, always there) and,
when the package's compiled module _polysandbox_cffi is installed, cffi
in API mode (_cffi.py: every call, ctypes is not used).  Local() takes
the one that
$POLYSANDBOX_BACKEND names ("cffi" or "ctypes"); unset, cffi when it
loads and $POLYSANDBOX_LIBRARY does not name a library, else ctypes.
Local.backend and polysandbox.backend() tell which is in use.
Providers, templates, pools, evaluate and compare are in localeval.py.
"""

from __future__ import annotations

import atexit
import base64
import functools
import ctypes
import json
import os
import threading
from ctypes import c_bool, c_char_p, c_void_p
from typing import Any, Callable, Sequence

from . import _native
from .errors import SandboxError, error_for_code
from .localeval import EvalCalls, _LIMIT_IDS, _ns
from .result import Result
from .request import OutputSink, Runner
from .sandbox import FileEntry, FileList, SandboxInfo, warn_unlisted

__all__ = ["Local", "default", "backend"]

BACKENDS = ("cffi", "ctypes")

# How a request's limit becomes an sbx_limit value (_LIMIT_IDS).
_NS_LIMITS = ("wall", "cpu")
# sbx_network: SBX_NET_NONE, SBX_NET_HOST, SBX_NET_EGRESS
_NETWORKS = {"none": 0, "host": 1, "egress": 2}
# The body's keys _create_opts reads.
_CREATE_KEYS = ("provider", "fallback", "template", "language", "image", "network", "limits")
# SBX_STREAM_* (common.h).
_STREAMS = {1: "stdout", 2: "stderr"}


# The C types of Local._array.
_CTYPES = {"unsigned int": ctypes.c_uint, "uint64_t": ctypes.c_uint64, "char": ctypes.c_char}


class _Out:
    """An out-parameter of one handle (T **, see Local._out): arg is
    passed, value read after the call (None for NULL)."""

    __slots__ = ("_c",)

    def __init__(self) -> None:
        self._c = c_void_p()

    @property
    def arg(self) -> Any:
        return ctypes.byref(self._c)

    @property
    def value(self) -> int | None:
        return self._c.value


def _cstrs(items: Sequence[str]) -> ctypes.Array:
    """A NULL-terminated char *[] (the library copies it)."""
    arr = (c_char_p * (len(items) + 1))()
    arr[:len(items)] = [s.encode("utf-8") for s in items]
    arr[len(items)] = None
    return arr


def _taken_json(text: int | None, what: str) -> Any:
    """The JSON of a char * the library gave (transfer full; freed here);
    NULL is its out of memory."""
    return json.loads(_taken_text(text, what))


def _taken_text(text: int | None, what: str) -> bytes:
    """The bytes of a char * the library gave (transfer full; freed
    here); NULL is its out of memory."""
    if not text:
        raise MemoryError(f"polysandbox: out of memory for {what}")
    try:
        return ctypes.string_at(text)
    finally:
        _native.free(text)


class Local(EvalCalls, Runner):
    """A runner over the library in this process: one sbx_ctx, shared by
    every thread (the library allows it).

    config_dir: where polysandbox.ini is read; None means
    $POLYSANDBOX_CONFIG_DIR, else the system directory.  Close it (or use
    it as a context manager) to free the context; no run may be under
    way then.
    """

    #: "ctypes" or "cffi": how this runner calls the library.
    backend = "ctypes"

    def __new__(cls, config_dir: str | None = None, backend: str | None = None) -> "Local":
        if cls is Local and _choose(backend) == "cffi":
            from ._cffi import CffiLocal
            cls = CffiLocal
        return super().__new__(cls)

    def __init__(self, config_dir: str | None = None, backend: str | None = None):
        """backend: "cffi" or "ctypes"; None: as the module says (above)."""
        if config_dir is not None and not isinstance(config_dir, str):
            raise TypeError("polysandbox.Local: argument 'config_dir' must be a str, "
                            f"not {type(config_dir).__name__}")
        # Cancellation tokens never fired, kept for the next call (see
        # _cancel_free); the lock keeps close() from freeing one a call
        # on another thread is taking or giving back.
        self._spare: list[Any] = []
        self._spare_lock = threading.Lock()
        # The tokens of calls in flight, fired by close().
        self._live: set[Any] = set()
        # Calls in flight on the context (see _in_flight): close() waits
        # for them before it frees what they use.
        self._calls = 0
        self._calls_cv = threading.Condition()
        self._closing = False
        self._depth = threading.local()
        self._bind()
        lib, ctx = self._xlib, self._out("sbx_ctx")
        rc = lib.sbx_ctx_new(ctx.arg, self._opt_str(config_dir or None))
        if rc != 0:
            err = self._error(rc, ctx.value or None)
            lib.sbx_ctx_free(ctx.value)
            raise err
        self._ctx = ctx.value
        self._config_dir = config_dir
        # The sandbox handles open on ctx: let go of before it is freed.
        self._boxes: set[int] = set()
        self._boxes_lock = threading.Lock()

    def _bind(self) -> None:
        """Set _xlib, the library every call goes through (_cffi.py's
        own), and _lib, this backend's ctypes one."""
        self._lib = self._xlib = _native.lib()

    def _error(self, rc: int, ctx: Any) -> SandboxError:
        """The exception for rc, with the calling thread's error message
        (ctx: a context as _xlib takes it, or None)."""
        lib = self._xlib
        e = lib.sbx_ctx_last_error(self._null if ctx is None else ctx)
        msg = self._text(lib.sbx_error_message(e)) if e else None
        prov = self._text(lib.sbx_error_provider(e)) if e else None
        text = msg or self._text(lib.sbx_strerror(rc)) or "error"
        return error_for_code(rc, text, prov)

    def _check(self, rc: int) -> None:
        if rc != 0:
            raise self._error(rc, self._ctx)

    def close(self) -> None:
        """Free the context (destroying what it still holds; the sandboxes
        made or attached through it are let go of, see Sandbox.close).
        Calls in flight on other threads are cancelled where they can be
        and waited for; a call made after close() begins raises
        SandboxError("... closed")."""
        cv = getattr(self, "_calls_cv", None)
        if cv is not None:
            if getattr(self._depth, "n", 0):
                raise SandboxError("polysandbox.Local: close() from inside a call on this "
                                   "runner (a progress or output callback)")
            with self._spare_lock:
                for token in self._live:
                    self._xlib.sbx_cancel_fire(token)
            with cv:
                self._closing = True
                while self._calls:
                    cv.wait()
        ctx, self._ctx = getattr(self, "_ctx", None), None
        if ctx:
            with self._boxes_lock:
                boxes, self._boxes = self._boxes, set()
            for sb in boxes:
                self._xlib.sbx_sandbox_close(self._box(sb))
            self._xlib.sbx_ctx_free(ctx)
        lock = getattr(self, "_spare_lock", None)
        if lock is None:
            return      # __init__ failed before any token was kept
        with lock:
            spare, self._spare = self._spare, []
        for token in spare:
            self._xlib.sbx_cancel_free(token)

    def _enter(self) -> None:
        with self._calls_cv:
            if self._closing or not self._ctx:
                raise SandboxError("polysandbox.Local: the runner is closed")
            self._calls += 1
        self._depth.n = getattr(self._depth, "n", 0) + 1

    def _leave(self) -> None:
        self._depth.n -= 1
        with self._calls_cv:
            self._calls -= 1
            if not self._calls:
                self._calls_cv.notify_all()

    def __enter__(self) -> "Local":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    # How values cross to and from _xlib, the library every call but the
    # ctypes backend's own runs and execs goes through (_cffi.py's differ):
    # string lists, bytes, cancellation tokens, the context, sandbox
    # handles, out-parameters of handles, arrays, returned strings,
    # returned char * to free, and the callbacks of evaluate and listing.
    _strv = staticmethod(_cstrs)
    #: NULL, as _xlib takes it.
    _null: Any = None

    def _opt_str(self, s: str | None) -> Any:
        """s as a const char *, or NULL."""
        return s.encode("utf-8") if s is not None else self._null

    @staticmethod
    def _buf(data: bytes) -> Any:
        return data

    @staticmethod
    def _cancel_ptr(token: int) -> Any:
        return token

    def _xctx(self) -> Any:
        """The open context, as _xlib takes it."""
        return self._ctx_open()

    @staticmethod
    def _box(sb: int) -> Any:
        """A sandbox handle (its address, see sandbox.py) as _xlib takes it."""
        return sb

    @staticmethod
    def _handle(p: Any) -> int:
        """The handle (an int) of an sbx_sandbox * _xlib gave."""
        return p

    @staticmethod
    def _out(_ctype: str) -> "_Out":
        """An out-parameter for one handle of type _ctype *."""
        return _Out()

    @staticmethod
    def _array(ctype: str, init: int | Sequence[int]) -> Any:
        """A C array of ctype ("unsigned int", "uint64_t", "char"): init
        its length (zeroed) or its items."""
        ct = _CTYPES[ctype]
        if isinstance(init, int):
            return (ct * init)()
        return (ct * len(init))(*init)

    def _text(self, p: Any) -> str | None:
        """The text of a const char * _xlib returned, or of a char array;
        None for NULL."""
        if isinstance(p, ctypes.Array):
            p = p.value
        return p.decode("utf-8", "replace") if p is not None else None

    def _taken(self, p: Any, what: str) -> bytes:
        """The bytes of a char * _xlib returned (transfer full: freed
        here); NULL is its out of memory."""
        return _taken_text(p, what)

    def _progress_arg(self, fn: Callable[..., int]) -> tuple[Any, Any]:
        """(the sbx_eval_record_cb, its user data) that call fn(ud, rec,
        done, total, passed); the caller keeps both until the run ends."""
        return _native.EVAL_CB(fn), None

    def _list_arg(self, fn: Callable[[bytes, list, int], int]) -> tuple[Any, Any]:
        """(the sbx_list_cb, its user data) that call fn(id, labels,
        created_ns), id and labels as bytes; kept by the caller as above."""
        def cb(_ud: Any, sid: bytes, lp: Any, n: int, created_ns: int) -> int:
            return fn(sid, [lp[i] for i in range(n)], created_ns)
        return _native.LIST_CB(cb), None

    def _create_opts(self, o: Any, body: dict[str, Any]) -> None:
        lib, chk = self._xlib, self._check
        if "provider" in body:
            chk(lib.sbx_create_opts_set_provider(o, body["provider"].encode()))
        if "fallback" in body:
            chk(lib.sbx_create_opts_set_fallback(o, self._strv(body["fallback"])))
        # As polysandboxd: code runs in a sandbox of its language's template.
        tpl = body.get("template", body.get("language"))
        if tpl is not None:
            chk(lib.sbx_create_opts_set_template(o, tpl.encode()))
        if "image" in body:
            chk(lib.sbx_create_opts_set_image(o, body["image"].encode()))
        if "network" in body:
            chk(lib.sbx_create_opts_set_network(o, _NETWORKS[body["network"]]))
        for k, v in body.get("limits", {}).items():
            chk(lib.sbx_create_opts_set_limit(o, _LIMIT_IDS[k],
                                              _ns(v) if k in _NS_LIMITS else v))

    def _exec_opts(self, x: Any, body: dict[str, Any], cancel: int | None) -> None:
        lib, chk = self._xlib, self._check
        if cancel:
            chk(lib.sbx_exec_opts_set_cancel(x, self._cancel_ptr(cancel)))
        if "shell" in body:
            chk(lib.sbx_exec_opts_set_shell(x, body["shell"].encode()))
        elif "argv" in body:
            chk(lib.sbx_exec_opts_set_argv(x, self._strv(body["argv"])))
        else:
            code = body["code"].encode("utf-8")
            chk(lib.sbx_exec_opts_set_code(x, body["language"].encode(), code, len(code)))
            if "args" in body:
                chk(lib.sbx_exec_opts_set_args(x, self._strv(body["args"])))
        if "stdin_base64" in body:
            data = base64.b64decode(body["stdin_base64"])
            chk(lib.sbx_exec_opts_set_stdin(x, self._buf(data), len(data)))
        for path, b64 in body.get("files", {}).items():
            data = base64.b64decode(b64)
            chk(lib.sbx_exec_opts_add_file(x, path.encode(), self._buf(data), len(data),
                                           0o644))
        for k, v in body.get("env", {}).items():
            chk(lib.sbx_exec_opts_add_env(x, k.encode(), v.encode()))
        if "cwd" in body:
            chk(lib.sbx_exec_opts_set_cwd(x, body["cwd"].encode()))
        if "timeout" in body:
            chk(lib.sbx_exec_opts_set_timeout(x, _ns(body["timeout"])))

    # Cancellation tokens of Runner._acall: the library's handles, as
    # _xlib gives them.  Every arun and exec takes one and almost none is
    # fired: one that was not is kept for the next call (at most
    # _SPARE_TOKENS), a malloc and a free fewer on the event loop's
    # thread per call.
    _SPARE_TOKENS = 64

    def _cancel_new(self) -> Any:
        with self._spare_lock:
            if self._spare:
                token = self._spare.pop()
                self._live.add(token)
                return token
        lib = self._xlib
        cancel = lib.sbx_cancel_new()
        if not cancel:
            raise self._error(lib.sbx_error_code(lib.sbx_ctx_last_error(self._null)) or 11,
                              None)
        with self._spare_lock:
            self._live.add(cancel)
        return cancel

    def _cancel_fire(self, token: Any) -> None:
        self._xlib.sbx_cancel_fire(token)

    def _cancel_free(self, token: Any) -> None:
        lib = self._xlib
        with self._spare_lock:
            self._live.discard(token)
        if not lib.sbx_cancel_fired(token):
            # Under the lock: a close() after this sees the token in the
            # list it frees, one before it leaves _ctx None here.
            with self._spare_lock:
                if self._ctx and len(self._spare) < self._SPARE_TOKENS:
                    self._spare.append(token)
                    return
        lib.sbx_cancel_free(token)

    def _ctx_open(self) -> Any:
        if not self._ctx:
            raise SandboxError("polysandbox.Local: the runner is closed")
        return self._ctx

    def _result(self, res: c_void_p) -> Result:
        return Result.from_json(_taken_json(self._lib.sbx_result_to_json(res), "the result"))

    def _execute(self, body: dict[str, Any], cancel: int | None = None) -> Result:
        lib = self._lib
        ctx = self._ctx_open()
        # No create options when the body sets none (sbx_run takes NULL):
        # two calls fewer on the way of every plain run.
        need_co = any(k in body for k in _CREATE_KEYS)
        co = lib.sbx_create_opts_new() if need_co else None
        xo = lib.sbx_exec_opts_new()
        res = c_void_p()
        try:
            if (need_co and not co) or not xo:
                raise MemoryError("polysandbox: out of memory for the run's options")
            if co:
                self._create_opts(co, body)
            self._exec_opts(xo, body, cancel)
            self._check(lib.sbx_run(ctx, co, xo, ctypes.byref(res)))
            return self._result(res)
        finally:
            lib.sbx_result_free(res)
            lib.sbx_exec_opts_free(xo)
            if co:
                lib.sbx_create_opts_free(co)

    # ---- sandboxes (handles are sbx_sandbox pointers; see sandbox.py) --------

    def _hold(self, sb: int) -> None:
        with self._boxes_lock:
            self._boxes.add(sb)

    def _held(self, sb: int, drop: bool = False) -> int:
        """sb, when it is still open on this runner's context (close()
        let go of them all); else SandboxError."""
        with self._boxes_lock:
            if sb not in self._boxes:
                raise SandboxError("polysandbox.Local: the runner of this sandbox is closed")
            if drop:
                self._boxes.discard(sb)
        return sb

    def _info(self, sb: int) -> tuple[str, str]:
        lib, box = self._xlib, self._box(sb)
        return self._text(lib.sbx_sandbox_id(box)), self._text(lib.sbx_sandbox_provider(box))

    def _sb_create(self, body: dict[str, Any]) -> tuple[int, SandboxInfo, bool]:
        lib = self._lib
        ctx = self._ctx_open()
        co = lib.sbx_create_opts_new()
        if not co:
            raise MemoryError("polysandbox: out of memory for the sandbox's options")
        sb = c_void_p()
        created = c_bool(True)
        try:
            self._create_opts(co, body)
            # As polysandboxd and `polysandbox create`: found again by id.
            self._check(lib.sbx_create_opts_set_persistent(co, True))
            for k, v in body.get("labels", {}).items():
                self._check(lib.sbx_create_opts_add_label(co, k.encode(), v.encode()))
            for k, v in body.get("env", {}).items():
                self._check(lib.sbx_create_opts_add_env(co, k.encode(), v.encode()))
            if "ttl" in body:
                self._check(lib.sbx_create_opts_set_ttl(co, _ns(body["ttl"])))
            if body.get("get_or_create"):
                self._check(lib.sbx_sandbox_get_or_create(ctx, co, ctypes.byref(sb),
                                                          ctypes.byref(created)))
            else:
                self._check(lib.sbx_sandbox_create(ctx, co, ctypes.byref(sb)))
        finally:
            lib.sbx_create_opts_free(co)
        self._hold(sb.value)
        sid, prov = self._info(sb.value)
        return sb.value, SandboxInfo(sid, prov, dict(body.get("labels", {}))), created.value

    def _sb_attach(self, sandbox_id: str, provider: str | None) -> tuple[int, SandboxInfo]:
        sb = self._out("sbx_sandbox")
        self._check(self._xlib.sbx_sandbox_open(self._xctx(), self._opt_str(provider or None),
                                                sandbox_id.encode(), sb.arg))
        handle = self._handle(sb.value)
        self._hold(handle)
        sid, prov = self._info(handle)
        try:
            found = [i for i in self._list(prov, {}) if i.id == sid]
        except SandboxError:
            found = []    # a provider that cannot list: it opened, so it is
        return handle, found[0] if found else SandboxInfo(sid, prov)

    def _sb_exec(self, sb: int, body: dict[str, Any], cancel: int | None = None,
                 on_output: OutputSink | None = None) -> Result:
        lib = self._lib
        xo = lib.sbx_exec_opts_new()
        res = c_void_p()
        try:
            if not xo:
                raise MemoryError("polysandbox: out of memory for the exec's options")
            self._exec_opts(xo, body, cancel)
            if on_output is not None:
                # Kept alive by this frame until the exec returns.
                cb = _native.OUTPUT_CB(_output_cb(on_output))
                self._check(lib.sbx_exec_opts_set_output_cb(xo, cb, None))
            self._check(lib.sbx_sandbox_exec(self._held(sb), xo, ctypes.byref(res)))
            return self._result(res)
        finally:
            lib.sbx_result_free(res)
            lib.sbx_exec_opts_free(xo)

    def _sb_upload(self, sb: int, path: str, data: bytes, mode: int) -> None:
        self._check(self._lib.sbx_sandbox_upload(self._held(sb), path.encode(), data,
                                                 len(data), mode))

    def _sb_download(self, sb: int, path: str, max_bytes: int) -> bytes:
        data, n = c_void_p(), ctypes.c_size_t()
        self._check(self._lib.sbx_sandbox_download(self._held(sb), path.encode(), max_bytes,
                                                   ctypes.byref(data), ctypes.byref(n)))
        try:
            return ctypes.string_at(data, n.value) if n.value else b""
        finally:
            _native.free(data)

    def _sb_list_files(self, sb: int, path: str, limit: int) -> FileList:
        out = FileList()
        more = c_bool()

        def seen(_ud: Any, name: int, n: int, kind: int, size: int, mtime: int) -> int:
            raw = ctypes.string_at(name, n)
            type_name = self._lib.sbx_file_type_name(kind).decode()
            out.append(FileEntry(raw.decode("utf-8", "replace"), type_name, size, mtime, raw))
            return 0

        self._check(self._lib.sbx_sandbox_list_files(self._held(sb), path.encode(), limit,
                                                     _native.FILE_CB(seen), None,
                                                     ctypes.byref(more)))
        out.truncated = more.value
        return out

    def _sb_destroy(self, sb: int) -> None:
        self._check(self._lib.sbx_sandbox_destroy(self._held(sb, drop=True)))

    def _sb_release(self, sb: int) -> None:
        with self._boxes_lock:
            if sb not in self._boxes:
                return      # close() let go of it already
            self._boxes.discard(sb)
        self._xlib.sbx_sandbox_close(self._box(sb))

    def _list(self, provider: str, labels: dict[str, str]) -> list[SandboxInfo]:
        out: list[SandboxInfo] = []

        def seen(sid: bytes, lp: list, created_ns: int) -> int:
            kv = (b.decode("utf-8", "replace").partition("=") for b in lp)
            out.append(SandboxInfo(sid.decode("utf-8", "replace"), provider,
                                   {k: v for k, _, v in kv},
                                   created_ns // 1_000_000_000 if created_ns else None))
            return 0

        filt = [f"{k}={v}" for k, v in labels.items()]
        cb, ud = self._list_arg(seen)
        self._check(self._xlib.sbx_list_labeled(self._xctx(), provider.encode(),
                                                self._strv(filt), len(filt), cb, ud))
        return out

    def _sb_list(self, labels: dict[str, str], provider: str | None) -> list[SandboxInfo]:
        if provider is not None:
            return self._list(provider, labels)
        # As polysandboxd: every ready provider that can list; one that
        # fails is named (a warning), not let hide the others.
        out: list[SandboxInfo] = []
        for p in self.providers():
            if p.state != "ready" or "list" not in p.capabilities:
                continue
            try:
                out += self._list(p.name, labels)
            except SandboxError as e:
                warn_unlisted(p.name, str(e))
        return out


def _output_cb(sink: OutputSink) -> Any:
    """The sbx_output_cb of sink: the chunk copied out of the library's
    buffer (valid only during the call).  A sink that raises stops the
    command rather than lose output silently."""
    def cb(_ud: Any, stream: int, buf: int, n: int) -> int:
        try:
            sink(_STREAMS.get(stream, "stdout"), ctypes.string_at(buf, n) if n else b"")
            return 0
        except BaseException:
            return 1
    return cb


def _choose(asked: str | None) -> str:
    """The backend of a Local given backend=asked (None: as the module says)."""
    asked = asked or os.environ.get("POLYSANDBOX_BACKEND") or None
    if asked is not None:
        if asked not in BACKENDS:
            raise ValueError(f"polysandbox: backend {asked!r} is not one of {BACKENDS}")
        return asked
    if os.environ.get("POLYSANDBOX_LIBRARY"):
        return "ctypes"     # a library named by path: ctypes loads that one
    try:
        from . import _cffi
        _cffi.module()
    except ImportError:
        return "ctypes"
    return "cffi"


def backend() -> str:
    """"cffi" or "ctypes": the backend the module-level calls use (that
    of default())."""
    return default().backend


_default: Local | None = None
_default_lock = threading.Lock()


def default() -> Local:
    """The runner of the module-level calls, made on first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Local()
        return _default


def _close_default() -> None:
    # At exit, after the worker threads are joined: free the context so
    # the sandboxes it still holds are destroyed.
    global _default
    with _default_lock:
        if _default is not None:
            _default.close()
            _default = None


atexit.register(_close_default)


def _in_flight(fn: Callable[..., Any]) -> Callable[..., Any]:
    """fn counted as a call in flight on the runner's context, so that
    close() on another thread waits for it instead of freeing the context
    (or a sandbox handle) under it."""
    @functools.wraps(fn)
    def call(self: Local, *args: Any, **kw: Any) -> Any:
        self._enter()
        try:
            return fn(self, *args, **kw)
        finally:
            self._leave()
    return call


# Every method that hands the library the context or a sandbox handle
# (subclasses wrap their overrides with guard_calls too).
IN_FLIGHT = ("_execute", "_info", "_sb_create", "_sb_attach", "_sb_exec", "_sb_upload",
             "_sb_download", "_sb_list_files", "_sb_destroy", "_sb_release", "_list",
             "providers", "templates", "pools", "_compare", "_compare_from", "_evaluate")


def guard_calls(cls: type) -> None:
    """Wrap cls's own definitions of IN_FLIGHT with _in_flight."""
    for name in IN_FLIGHT:
        if name in cls.__dict__ or (cls is Local and hasattr(cls, name)):
            setattr(cls, name, _in_flight(getattr(cls, name)))


guard_calls(Local)
