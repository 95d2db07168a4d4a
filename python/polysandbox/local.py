"""polysandbox.local - runs in this process, through libpolysandbox.

Local turns a request body (see request.py) into the library's create
and exec options and calls sbx_run; the result comes back through
sbx_result_to_json, the object the CLI's --json prints.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import ctypes
import json
import threading
from ctypes import c_char_p, c_void_p
from typing import Any, Sequence

from . import _native
from .errors import SandboxError, error_for_code
from .info import Provider, Template
from .result import Result
from .request import Runner

__all__ = ["Local", "default"]

# sbx_limit values (sandbox.h) and how a request's number becomes one.
_LIMIT_IDS = {"wall": 0, "cpu": 1, "memory": 2, "pids": 3, "nofile": 4, "fsize": 5,
              "disk": 6, "stdout": 7, "stderr": 8}
_NS_LIMITS = ("wall", "cpu")
# sbx_provider_state names, as info-json.c gives them.
_STATES = {0: "ready", 1: "unavailable", 2: "disabled"}


def _ns(seconds: float) -> int:
    return max(1, round(seconds * 1_000_000_000))


def _cstrs(items: Sequence[str]) -> ctypes.Array:
    """A NULL-terminated char *[] (the library copies it)."""
    arr = (c_char_p * (len(items) + 1))()
    arr[:len(items)] = [s.encode("utf-8") for s in items]
    arr[len(items)] = None
    return arr


class Local(Runner):
    """A runner over the library in this process: one sbx_ctx, shared by
    every thread (the library allows it).

    config_dir: where polysandbox.ini is read; None means
    $POLYSANDBOX_CONFIG_DIR, else the system directory.  Close it (or use
    it as a context manager) to free the context; no run may be under
    way then.
    """

    def __init__(self, config_dir: str | None = None):
        if config_dir is not None and not isinstance(config_dir, str):
            raise TypeError("polysandbox.Local: argument 'config_dir' must be a str, "
                            f"not {type(config_dir).__name__}")
        self._lib = _native.lib()
        ctx = c_void_p()
        rc = self._lib.sbx_ctx_new(ctypes.byref(ctx),
                                   config_dir.encode("utf-8") if config_dir else None)
        if rc != 0:
            err = self._error(rc, ctx if ctx.value else None)
            self._lib.sbx_ctx_free(ctx)
            raise err
        self._ctx = ctx

    def _error(self, rc: int, ctx: c_void_p | None) -> SandboxError:
        """The exception for rc, with the calling thread's error message."""
        lib = self._lib
        e = lib.sbx_ctx_last_error(ctx)
        msg = lib.sbx_error_message(e) if e else None
        prov = lib.sbx_error_provider(e) if e else None
        text = (msg or lib.sbx_strerror(rc) or b"error").decode("utf-8", "replace")
        return error_for_code(rc, text, prov.decode("utf-8", "replace") if prov else None)

    def _check(self, rc: int) -> None:
        if rc != 0:
            raise self._error(rc, self._ctx)

    def close(self) -> None:
        """Free the context (destroying what it still holds)."""
        ctx, self._ctx = getattr(self, "_ctx", None), None
        if ctx:
            self._lib.sbx_ctx_free(ctx)

    def __enter__(self) -> "Local":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def _create_opts(self, o: c_void_p, body: dict[str, Any]) -> None:
        lib, chk = self._lib, self._check
        if "provider" in body:
            chk(lib.sbx_create_opts_set_provider(o, body["provider"].encode()))
        if "fallback" in body:
            chk(lib.sbx_create_opts_set_fallback(o, _cstrs(body["fallback"])))
        # As polysandboxd: code runs in a sandbox of its language's template.
        tpl = body.get("template", body.get("language"))
        if tpl is not None:
            chk(lib.sbx_create_opts_set_template(o, tpl.encode()))
        if "image" in body:
            chk(lib.sbx_create_opts_set_image(o, body["image"].encode()))
        if "network" in body:
            chk(lib.sbx_create_opts_set_network(o, 1 if body["network"] == "host" else 0))
        for k, v in body.get("limits", {}).items():
            chk(lib.sbx_create_opts_set_limit(o, _LIMIT_IDS[k],
                                              _ns(v) if k in _NS_LIMITS else v))

    def _exec_opts(self, x: c_void_p, body: dict[str, Any]) -> None:
        lib, chk = self._lib, self._check
        if "shell" in body:
            chk(lib.sbx_exec_opts_set_shell(x, body["shell"].encode()))
        elif "argv" in body:
            chk(lib.sbx_exec_opts_set_argv(x, _cstrs(body["argv"])))
        else:
            code = body["code"].encode("utf-8")
            chk(lib.sbx_exec_opts_set_code(x, body["language"].encode(), code, len(code)))
            if "args" in body:
                chk(lib.sbx_exec_opts_set_args(x, _cstrs(body["args"])))
        if "stdin_base64" in body:
            data = base64.b64decode(body["stdin_base64"])
            chk(lib.sbx_exec_opts_set_stdin(x, data, len(data)))
        for path, b64 in body.get("files", {}).items():
            data = base64.b64decode(b64)
            chk(lib.sbx_exec_opts_add_file(x, path.encode(), data, len(data), 0o644))
        for k, v in body.get("env", {}).items():
            chk(lib.sbx_exec_opts_add_env(x, k.encode(), v.encode()))
        if "cwd" in body:
            chk(lib.sbx_exec_opts_set_cwd(x, body["cwd"].encode()))
        if "timeout" in body:
            chk(lib.sbx_exec_opts_set_timeout(x, _ns(body["timeout"])))

    def _text(self, b: bytes | None) -> str | None:
        return b.decode("utf-8", "replace") if b is not None else None

    def providers(self) -> list[Provider]:
        """Every provider found, by priority (enabled ones are loaded to
        tell their state)."""
        lib, out = self._lib, []
        for i in range(lib.sbx_ctx_provider_count(self._ctx)):
            p = lib.sbx_ctx_provider(self._ctx, i)
            caps = lib.sbx_provider_capabilities(p)
            state = lib.sbx_provider_get_state(p)
            out.append(Provider.from_json({
                "name": self._text(lib.sbx_provider_name(p)),
                "state": _STATES.get(state, "unknown"),
                "priority": lib.sbx_provider_priority(p),
                "version": self._text(lib.sbx_provider_version(p)),
                "description": self._text(lib.sbx_provider_description(p)),
                "path": self._text(lib.sbx_provider_path(p)),
                "reason": self._text(lib.sbx_provider_reason(p)),
                "optional": bool(lib.sbx_provider_is_optional(p)),
                "breaker": self._text(lib.sbx_breaker_state_name(lib.sbx_provider_breaker(p))),
                "breaker_failures": lib.sbx_provider_breaker_failures(p),
                "capabilities": [self._text(lib.sbx_capability_name(1 << b)) or f"bit{b}"
                                 for b in range(64) if caps >> b & 1],
            }))
        return out

    def templates(self) -> list[Template]:
        """Every language template, as run_code takes them."""
        lib = self._lib
        return [Template.from_json({
            "name": self._text(lib.sbx_template_name(t)),
            "extensions": (self._text(lib.sbx_template_extensions(t)) or "").split()})
            for t in (lib.sbx_ctx_template(self._ctx, i)
                      for i in range(lib.sbx_ctx_template_count(self._ctx)))]

    async def _aexecute(self, body: dict[str, Any]) -> Result:
        """The run in a worker thread, with a cancellation handle fired
        when the awaiting task is cancelled: the run stops (its sandbox
        destroyed) before the CancelledError goes on."""
        lib = self._lib
        cancel = lib.sbx_cancel_new()
        if not cancel:
            raise self._error(lib.sbx_error_code(lib.sbx_ctx_last_error(None)) or 11, None)
        fut = asyncio.get_running_loop().run_in_executor(None, self._execute, body, cancel)
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            lib.sbx_cancel_fire(cancel)
            await asyncio.wait([fut])
            raise
        finally:
            # Freed only once no thread uses it; else left to the process.
            if fut.done():
                lib.sbx_cancel_free(cancel)

    def _execute(self, body: dict[str, Any], cancel: int | None = None) -> Result:
        lib = self._lib
        if not self._ctx:
            raise SandboxError("polysandbox.Local: the runner is closed")
        co = lib.sbx_create_opts_new()
        xo = lib.sbx_exec_opts_new()
        res = c_void_p()
        try:
            if not co or not xo:
                raise MemoryError("polysandbox: out of memory for the run's options")
            self._create_opts(co, body)
            self._exec_opts(xo, body)
            if cancel:
                self._check(lib.sbx_exec_opts_set_cancel(xo, cancel))
            self._check(lib.sbx_run(self._ctx, co, xo, ctypes.byref(res)))
            text = lib.sbx_result_to_json(res)
            if not text:
                raise MemoryError("polysandbox: out of memory for the result")
            try:
                obj = json.loads(ctypes.string_at(text))
            finally:
                _native.free(text)
            return Result.from_json(obj)
        finally:
            lib.sbx_result_free(res)
            lib.sbx_exec_opts_free(xo)
            lib.sbx_create_opts_free(co)


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
