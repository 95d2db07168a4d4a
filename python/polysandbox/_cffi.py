"""polysandbox._cffi - the cffi backend: runs, sandboxes and their files,
providers, templates, pools, evaluate and compare through
_polysandbox_cffi, a module compiled in cffi's API mode against
<polysandbox/sandbox.h> and <polysandbox/eval.h> by make or by `pip
install` (python/cffi_build.py: its prototypes are checked against the
headers at build time).

CffiLocal is a Local (local.py) whose calls all go through the compiled
module, by Local's hooks (_xlib, _xctx, _out, _array, _text, _box, ...)
or its own methods: it has no ctypes library (_lib).  module() checks
once, through ctypes, that a library ctypes would load is the one the
module linked (libpolysandbox.so.0, by the dynamic loader), so that
both backends in one process share one copy.  Sandbox handles cross as
addresses (ints), as in Local; the context and cancellation tokens are
cdata.  cffi releases the GIL around every call.
"""

from __future__ import annotations

import importlib
import json
from typing import Any, Callable, Sequence

from . import _native
from .local import Local, _STREAMS, _CREATE_KEYS, _ns, guard_calls
from .request import OutputSink
from .result import Result
from .sandbox import FileEntry, FileList, SandboxInfo

__all__ = ["CffiLocal", "module"]

_module: Any = None


def module() -> Any:
    """The compiled module: the package's own (make install puts it
    beside the package), else one on sys.path (a build tree's
    python/.libs); ImportError when there is none, or when its library is
    not the one ctypes would load."""
    global _module
    if _module is None:
        try:
            mod = importlib.import_module("polysandbox._polysandbox_cffi")
        except ImportError:
            mod = importlib.import_module("_polysandbox_cffi")
        # The library the module linked is loaded now: ctypes must find
        # that one, not another copy (handles cross between the two).
        _native.use_loaded()
        _def_externs(mod)
        _module = mod
    return _module


class CffiLocal(Local):
    """A Local on the cffi backend (see the module)."""

    backend = "cffi"

    def _bind(self) -> None:
        mod = module()
        self._ffi, self._xlib, self._null = mod.ffi, mod.lib, mod.ffi.NULL

    # The hooks of Local's calls.
    def _box(self, sb: int) -> Any:
        return self._ffi.cast("sbx_sandbox *", sb)

    def _handle(self, p: Any) -> int:
        return int(self._ffi.cast("uintptr_t", p))

    def _out(self, ctype: str) -> "_CffiOut":
        return _CffiOut(self._ffi, ctype)

    def _array(self, ctype: str, init: int | Sequence[int]) -> Any:
        return self._ffi.new(ctype + "[]", init)

    def _text(self, p: Any) -> str | None:
        ffi = self._ffi
        if p is None or p == ffi.NULL:
            return None
        return ffi.string(p).decode("utf-8", "replace")

    def _taken(self, p: Any, what: str) -> bytes:
        ffi = self._ffi
        if p == ffi.NULL:
            raise MemoryError(f"polysandbox: out of memory for {what}")
        try:
            return ffi.string(p)
        finally:
            self._xlib.free(p)

    def _progress_arg(self, fn: Callable[..., int]) -> tuple[Any, Any]:
        return self._xlib._psb_eval_cb, self._ffi.new_handle(fn)

    def _list_arg(self, fn: Callable[[bytes, list, int], int]) -> tuple[Any, Any]:
        return self._xlib._psb_list_cb, self._ffi.new_handle(fn)

    # The hooks of Local's option setters.
    def _strv(self, items: Sequence[str]) -> Any:
        """A NULL-terminated char *[] that keeps its strings alive."""
        ffi = self._ffi
        keep = [ffi.new("char[]", s.encode("utf-8")) for s in items]
        arr = ffi.new("char *[]", keep + [ffi.NULL])
        return ffi.gc(arr, lambda _a, _k=keep: None)

    def _buf(self, data: bytes) -> Any:
        return self._ffi.from_buffer(data)

    def _sb(self, sb: int, drop: bool = False) -> Any:
        return self._box(self._held(sb, drop))

    def _cresult(self, call: Callable[[Any], int]) -> Result:
        """The Result of call(out), which sets *out to an sbx_result."""
        lib = self._xlib
        out = self._ffi.new("sbx_result **")
        try:
            self._check(call(out))
            return Result.from_json(json.loads(self._taken(lib.sbx_result_to_json(out[0]),
                                                           "the result")))
        finally:
            lib.sbx_result_free(out[0])

    def _execute(self, body: dict[str, Any], cancel: int | None = None) -> Result:
        ffi, lib = self._ffi, self._xlib
        ctx = self._ctx_open()
        co = lib.sbx_create_opts_new() if any(k in body for k in _CREATE_KEYS) else ffi.NULL
        xo = lib.sbx_exec_opts_new()
        try:
            if (co == ffi.NULL and any(k in body for k in _CREATE_KEYS)) or xo == ffi.NULL:
                raise MemoryError("polysandbox: out of memory for the run's options")
            if co != ffi.NULL:
                self._create_opts(co, body)
            self._exec_opts(xo, body, cancel)
            return self._cresult(lambda out: lib.sbx_run(ctx, co, xo, out))
        finally:
            lib.sbx_exec_opts_free(xo)
            if co != ffi.NULL:
                lib.sbx_create_opts_free(co)

    def _sb_create(self, body: dict[str, Any]) -> tuple[int, SandboxInfo, bool]:
        ffi, lib, chk = self._ffi, self._xlib, self._check
        ctx = self._ctx_open()
        co = lib.sbx_create_opts_new()
        if co == ffi.NULL:
            raise MemoryError("polysandbox: out of memory for the sandbox's options")
        sb = ffi.new("sbx_sandbox **")
        created = ffi.new("bool *", True)
        try:
            self._create_opts(co, body)
            chk(lib.sbx_create_opts_set_persistent(co, True))
            for k, v in body.get("labels", {}).items():
                chk(lib.sbx_create_opts_add_label(co, k.encode(), v.encode()))
            for k, v in body.get("env", {}).items():
                chk(lib.sbx_create_opts_add_env(co, k.encode(), v.encode()))
            if "ttl" in body:
                chk(lib.sbx_create_opts_set_ttl(co, _ns(body["ttl"])))
            if body.get("get_or_create"):
                chk(lib.sbx_sandbox_get_or_create(ctx, co, sb, created))
            else:
                chk(lib.sbx_sandbox_create(ctx, co, sb))
        finally:
            lib.sbx_create_opts_free(co)
        handle = self._handle(sb[0])
        self._hold(handle)
        sid, prov = self._info(handle)
        return handle, SandboxInfo(sid, prov, dict(body.get("labels", {}))), bool(created[0])

    def _sb_exec(self, sb: int, body: dict[str, Any], cancel: int | None = None,
                 on_output: OutputSink | None = None) -> Result:
        ffi, lib = self._ffi, self._xlib
        xo = lib.sbx_exec_opts_new()
        if xo == ffi.NULL:
            raise MemoryError("polysandbox: out of memory for the exec's options")
        try:
            self._exec_opts(xo, body, cancel)
            if on_output is not None:
                # Kept alive by this frame until the exec returns.
                ud = ffi.new_handle(on_output)
                self._check(lib.sbx_exec_opts_set_output_cb(xo, lib._psb_output_cb, ud))
            box = self._sb(sb)
            return self._cresult(lambda out: lib.sbx_sandbox_exec(box, xo, out))
        finally:
            lib.sbx_exec_opts_free(xo)

    def _sb_upload(self, sb: int, path: str, data: bytes, mode: int) -> None:
        self._check(self._xlib.sbx_sandbox_upload(self._sb(sb), path.encode(),
                                                  self._ffi.from_buffer(data), len(data), mode))

    def _sb_download(self, sb: int, path: str, max_bytes: int) -> bytes:
        ffi, lib = self._ffi, self._xlib
        data, n = ffi.new("void **"), ffi.new("size_t *")
        self._check(lib.sbx_sandbox_download(self._sb(sb), path.encode(), max_bytes, data, n))
        try:
            return ffi.unpack(ffi.cast("char *", data[0]), n[0]) if n[0] else b""
        finally:
            lib.free(data[0])

    def _sb_list_files(self, sb: int, path: str, limit: int) -> FileList:
        ffi, lib = self._ffi, self._xlib
        out = FileList()
        more = ffi.new("bool *")
        ud = ffi.new_handle((out, lib))
        self._check(lib.sbx_sandbox_list_files(self._sb(sb), path.encode(), limit,
                                               lib._psb_file_cb, ud, more))
        out.truncated = bool(more[0])
        return out

    def _sb_destroy(self, sb: int) -> None:
        self._check(self._xlib.sbx_sandbox_destroy(self._sb(sb, drop=True)))


guard_calls(CffiLocal)


class _CffiOut:
    """Local._out's out-parameter on cffi: a ctype ** (arg); value its
    handle (NULL: a false cdata)."""

    __slots__ = ("arg",)

    def __init__(self, ffi: Any, ctype: str):
        self.arg = ffi.new(ctype + " **")

    @property
    def value(self) -> Any:
        return self.arg[0]


def _def_externs(mod: Any) -> None:
    """The library's callbacks into Python (CALLBACKS of cffi_build.py)."""
    ffi = mod.ffi

    @ffi.def_extern()
    def _psb_output_cb(ud: Any, stream: int, buf: Any, n: int) -> int:
        # The chunk is copied out of the library's buffer (valid only
        # during the call); a sink that raises stops the command.
        try:
            ffi.from_handle(ud)(_STREAMS.get(stream, "stdout"),
                                ffi.unpack(ffi.cast("char *", buf), n) if n else b"")
            return 0
        except BaseException:
            return 1

    @ffi.def_extern()
    def _psb_file_cb(ud: Any, name: Any, n: int, kind: int, size: int, mtime: int) -> int:
        out, lib = ffi.from_handle(ud)
        raw = ffi.unpack(name, n)
        type_name = ffi.string(lib.sbx_file_type_name(kind)).decode()
        out.append(FileEntry(raw.decode("utf-8", "replace"), type_name, size, mtime, raw))
        return 0

    @ffi.def_extern()
    def _psb_list_cb(ud: Any, sid: Any, labels: Any, n: int, created_ns: int) -> int:
        # Local._list's function: the id and labels copied out (valid only
        # during the call).
        return ffi.from_handle(ud)(ffi.string(sid), [ffi.string(labels[i]) for i in range(n)],
                                   created_ns)

    @ffi.def_extern()
    def _psb_eval_cb(ud: Any, rec: Any, done: int, total: int, passed: int) -> int:
        # Local._progress_cb's function: it catches what the progress raises.
        return ffi.from_handle(ud)(ud, rec, done, total, passed)

