"""polysandbox.local - runs in this process, through libpolysandbox.

Local turns a request body (see request.py) into the library's create
and exec options and calls sbx_run; the result comes back through
sbx_result_to_json, the object the CLI's --json prints.

Two backends call the library: ctypes (this module, always there) and,
when the package's compiled module _polysandbox_cffi is installed, cffi
in API mode (_cffi.py: runs, sandboxes and their files; the rest goes
through ctypes on the same library).  Local() takes the one that
$POLYSANDBOX_BACKEND names ("cffi" or "ctypes"); unset, cffi when it
loads and $POLYSANDBOX_LIBRARY does not name a library, else ctypes.
Local.backend and polysandbox.backend() tell which is in use.
"""

from __future__ import annotations

import atexit
import base64
import ctypes
import json
import os
import threading
from ctypes import c_bool, c_char_p, c_void_p
from typing import Any, Callable, Sequence

from . import _native
from .errors import SandboxError, error_for_code
from .info import Pool, Provider, Template
from .report import CompareReport, EvalReport
from .result import Result
from .request import OutputSink, Runner
from .sandbox import FileEntry, FileList, SandboxInfo, warn_unlisted

__all__ = ["Local", "default", "backend"]

BACKENDS = ("cffi", "ctypes")

# sbx_limit values (sandbox.h) and how a request's number becomes one.
_LIMIT_IDS = {"wall": 0, "cpu": 1, "memory": 2, "pids": 3, "nofile": 4, "fsize": 5,
              "disk": 6, "stdout": 7, "stderr": 8}
_NS_LIMITS = ("wall", "cpu")
# sbx_network: SBX_NET_NONE, SBX_NET_HOST, SBX_NET_EGRESS
_NETWORKS = {"none": 0, "host": 1, "egress": 2}
# sbx_provider_state names, as info-json.c gives them.
_STATES = {0: "ready", 1: "unavailable", 2: "disabled"}
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


def _ns(seconds: float) -> int:
    return max(1, round(seconds * 1_000_000_000))


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


class Local(Runner):
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
        self._lib = _native.lib()
        # The library the options of a run are set through (_cffi.py's own).
        self._xlib = self._lib
        ctx = c_void_p()
        rc = self._lib.sbx_ctx_new(ctypes.byref(ctx),
                                   config_dir.encode("utf-8") if config_dir else None)
        if rc != 0:
            err = self._error(rc, ctx if ctx.value else None)
            self._lib.sbx_ctx_free(ctx)
            raise err
        self._ctx = ctx
        self._config_dir = config_dir
        # The sandbox handles open on ctx: let go of before it is freed.
        self._boxes: set[int] = set()
        self._boxes_lock = threading.Lock()

    def _error(self, rc: int, ctx: Any) -> SandboxError:
        """The exception for rc, with the calling thread's error message
        (ctx: _lib's or _xlib's, or None)."""
        lib = self._lib
        e = lib.sbx_ctx_last_error(self._addr(ctx))
        msg = lib.sbx_error_message(e) if e else None
        prov = lib.sbx_error_provider(e) if e else None
        text = (msg or lib.sbx_strerror(rc) or b"error").decode("utf-8", "replace")
        return error_for_code(rc, text, prov.decode("utf-8", "replace") if prov else None)

    def _check(self, rc: int) -> None:
        if rc != 0:
            raise self._error(rc, self._ctx)

    def close(self) -> None:
        """Free the context (destroying what it still holds; the sandboxes
        made or attached through it are let go of, see Sandbox.close)."""
        ctx, self._ctx = getattr(self, "_ctx", None), None
        if ctx:
            with self._boxes_lock:
                boxes, self._boxes = self._boxes, set()
            for sb in boxes:
                self._lib.sbx_sandbox_close(sb)
            self._lib.sbx_ctx_free(ctx)

    def __enter__(self) -> "Local":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    # How values cross to and from _xlib, the library the option setters,
    # providers, pools, evaluate and compare call (_cffi.py's differ):
    # string lists, bytes, cancellation tokens, the context, out-parameters
    # of handles, arrays, returned strings, returned char * to free, and
    # evaluate's progress callback.
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

    @staticmethod
    def _addr(ctx: Any) -> Any:
        """A context as _lib (ctypes) takes it, from _xlib's."""
        return ctx

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

    def providers(self) -> list[Provider]:
        """Every provider found, by priority (enabled ones are loaded to
        tell their state)."""
        lib, ctx, out = self._xlib, self._xctx(), []
        for i in range(lib.sbx_ctx_provider_count(ctx)):
            p = lib.sbx_ctx_provider(ctx, i)
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
        lib, ctx = self._xlib, self._xctx()
        return [Template.from_json({
            "name": self._text(lib.sbx_template_name(t)),
            "extensions": (self._text(lib.sbx_template_extensions(t)) or "").split()})
            for t in (lib.sbx_ctx_template(ctx, i)
                      for i in range(lib.sbx_ctx_template_count(ctx)))]

    def pools(self, wait: float | None = None) -> list[Pool]:
        """The warm pools of this runner's context (pools.d/ of its
        configuration), as `polysandbox pools --json` lists them.  wait:
        first wait at most that many seconds for every pool to hold its
        size in ready sandboxes (SandboxTimeoutError, with the pool's last
        error, when one does not)."""
        lib, ctx = self._xlib, self._xctx()
        if wait is not None and lib.sbx_ctx_pool_count(ctx) > 0:
            self._check(lib.sbx_pool_wait(ctx, self._null, _ns(wait)))
        n_stats = 0
        while self._text(lib.sbx_pool_stat_name(n_stats)) is not None:
            n_stats += 1
        out = []
        for i in range(lib.sbx_ctx_pool_count(ctx)):
            name = lib.sbx_ctx_pool_name(ctx, i)
            v = self._array("uint64_t", n_stats)
            err = self._array("char", 1200)
            self._check(lib.sbx_pool_stats(ctx, name, v, n_stats))
            self._check(lib.sbx_pool_last_error(ctx, name, err, len(err)))
            obj: dict[str, Any] = {"name": self._text(name),
                                   "provider": self._text(lib.sbx_pool_provider(ctx, name)),
                                   "template": self._text(lib.sbx_pool_template(ctx, name))}
            for k in range(n_stats):
                key = self._text(lib.sbx_pool_stat_name(k))
                obj[key] = bool(v[k]) if key == "active" else v[k]
            obj["last_error"] = self._text(err) or None
            out.append(Pool.from_json(obj))
        return out

    def _compare(self, body: dict[str, Any], cancel: int | None = None) -> CompareReport:
        """compare (see Runner.compare) on this context: the columns one
        after the other, the report built by the library."""
        lib, ctx, chk = self._xlib, self._xctx(), self._check
        ds, smp = self._out("sbx_eval_dataset"), self._out("sbx_eval_samples")
        rep = self._out("sbx_eval_report")
        sums: list[_Out] = []
        opts = None
        try:
            self._eval_inputs(body, 0, ds, smp)
            for label, prov in body["columns"]:
                opts = self._eval_opts(body, [prov], cancel)
                if body["report"] is not None:
                    chk(lib.sbx_eval_opts_set_journal(
                        opts, f"{body['report']}.{label}.jsonl".encode(), False))
                sums.append(self._out("sbx_eval_summary"))
                cctx = self._column_ctx(body["settings"].get(label))
                try:
                    rc = lib.sbx_eval_run(cctx or ctx, ds.value, smp.value, opts, sums[-1].arg)
                    if rc != 0:
                        raise self._error(rc, cctx or ctx)
                finally:
                    if cctx:
                        lib.sbx_ctx_free(cctx)
                lib.sbx_eval_opts_free(opts)
                opts = None
            chk(lib.sbx_eval_report_new(smp.value, body["dataset"].encode(),
                                        self._opt_str(body["samples"]), rep.arg))
            for (label, prov), sm in zip(body["columns"], sums):
                results = f"{body['report']}.{label}.jsonl" if body["report"] else None
                chk(lib.sbx_eval_report_add(rep.value, label.encode(), prov.encode(),
                                            self._opt_str(results),
                                            self._strv(body["settings"].get(label, [])),
                                            sm.value))
            opts = self._eval_opts(body, None, None)
            chk(lib.sbx_eval_report_set_opts(rep.value, opts))
            return self._report(rep.value, body)
        finally:
            if opts:
                lib.sbx_eval_opts_free(opts)
            self._eval_free(rep, sums, smp, ds)

    def _eval_free(self, rep: "_Out | None", sums: list["_Out"], smp: "_Out",
                   ds: "_Out") -> None:
        """Free what _compare, _compare_from or _evaluate made (NULL ones
        are fine)."""
        lib = self._xlib
        if rep is not None:
            lib.sbx_eval_report_free(rep.value)
        for sm in sums:
            lib.sbx_eval_summary_free(sm.value)
        lib.sbx_eval_samples_free(smp.value)
        lib.sbx_eval_dataset_free(ds.value)

    def _report(self, rep: Any, body: dict[str, Any]) -> CompareReport:
        """The CompareReport of @rep; with body["report"] (a prefix), its
        PREFIX.md and PREFIX.html written first, as `polysandbox compare`
        writes them (the library renders both), and named in its report
        field."""
        lib = self._xlib
        ks = self._array("unsigned int", body["k"])
        prefix = body.get("report")
        if prefix is not None:
            self._check(lib.sbx_eval_report_set_files(rep, prefix.encode()))
            for suffix, render in ((".md", lib.sbx_eval_report_to_markdown),
                                   (".html", lib.sbx_eval_report_to_html)):
                page = self._taken(render(rep, ks, len(body["k"])), "the compare report")
                with open(prefix + suffix, "wb") as f:
                    f.write(page)
        return CompareReport.from_json(json.loads(self._taken(
            lib.sbx_eval_report_to_json(rep, ks, len(body["k"])), "the compare report")))

    def _compare_from(self, body: dict[str, Any]) -> CompareReport:
        """compare_from (see Runner.compare_from): the results files read
        back against the dataset and samples (sbx_eval_summary_load) and
        the library's report of them, as core/cli/cmd-compare.c's
        compare_from builds it."""
        lib, ctx, chk = self._xlib, self._xctx(), self._check
        ds, smp = self._out("sbx_eval_dataset"), self._out("sbx_eval_samples")
        rep = self._out("sbx_eval_report")
        sums: list[_Out] = []
        try:
            self._eval_inputs(body, 0, ds, smp)
            for path in body["results"]:
                sums.append(self._out("sbx_eval_summary"))
                chk(lib.sbx_eval_summary_load(ctx, ds.value, smp.value, path.encode(),
                                              sums[-1].arg))
            chk(lib.sbx_eval_report_new(smp.value, body["dataset"].encode(),
                                        self._opt_str(body["samples"]), rep.arg))
            # no label: the library names each column after its provider
            # (NAME#2 when repeated), else after its file, as --from does
            for path, sm in zip(body["results"], sums):
                chk(lib.sbx_eval_report_add(rep.value, self._null,
                                            self._records_provider(sm.value).encode(),
                                            path.encode(), self._strv([]), sm.value))
            return self._report(rep.value, body)
        finally:
            self._eval_free(rep, sums, smp, ds)

    def _records_provider(self, sm: Any) -> str:
        """The provider the records of sm name (the first that names one),
        or ""."""
        lib = self._xlib
        for i in range(lib.sbx_eval_summary_total(sm)):
            r = lib.sbx_eval_summary_record(sm, i)
            prov = self._text(lib.sbx_eval_record_provider(r)) if r else None
            if prov:
                return prov
        return ""

    def _eval_inputs(self, body: dict[str, Any], fmt: int, ds: "_Out", smp: "_Out") -> None:
        """Load body's dataset (in format fmt) into ds and its samples (the
        canonical ones when body["samples"] is None) into smp; the caller
        frees both, also when this raises."""
        lib, ctx, chk = self._xlib, self._xctx(), self._check
        chk(lib.sbx_eval_dataset_load(ctx, body["dataset"].encode(), fmt, ds.arg))
        if body["samples"] is None:
            chk(lib.sbx_eval_samples_canonical(ctx, ds.value, smp.arg))
        else:
            chk(lib.sbx_eval_samples_load(ctx, ds.value, body["samples"].encode(), smp.arg))

    def _evaluate(self, body: dict[str, Any], cancel: int | None = None) -> EvalReport:
        """evaluate (see Runner.evaluate) on this context: sbx_eval_run,
        then the object of `polysandbox eval --json` from the library's
        summary and metadata (core/cli/cmd-eval.c builds it the same
        way)."""
        lib, ctx = self._xlib, self._xctx()
        out = body["out"]
        if out is not None and not body["resume"] and os.path.isfile(out) \
                and os.path.getsize(out) > 0:
            raise FileExistsError(f"polysandbox.evaluate: the results file {out} exists "
                                  f"({os.path.getsize(out)} bytes): resume=True to continue "
                                  "it, or remove it, or give another out")
        ds, smp = self._out("sbx_eval_dataset"), self._out("sbx_eval_samples")
        sm = self._out("sbx_eval_summary")
        opts = None
        raised: list[BaseException] = []
        try:
            self._eval_inputs(body, body["format"], ds, smp)
            opts = self._eval_opts(body, body["providers"], cancel)
            if out is not None:
                self._check(lib.sbx_eval_opts_set_journal(opts, out.encode(), body["resume"]))
            if body["allow_partial"]:
                self._check(lib.sbx_eval_opts_set_allow_partial(opts, True))
            if body["progress"] is not None:
                # Kept alive by this frame until sbx_eval_run returns.
                cb = self._progress_arg(_progress_cb(body["progress"], raised))
                self._check(lib.sbx_eval_opts_set_callback(opts, *cb))
            rc = lib.sbx_eval_run(ctx, ds.value, smp.value, opts, sm.arg)
            if rc != 0:
                raise self._error(rc, ctx)
            if raised:
                raise raised[0]
            ks = self._array("unsigned int", body["k"])
            obj = json.loads(self._taken(lib.sbx_eval_summary_to_json(sm.value, ks,
                                                                      len(body["k"])),
                                         "the evaluation's summary"))
            # As the command: the providers named, else the default one.
            dflt = self._text(lib.sbx_ctx_default_provider(ctx))
            provs = body["providers"] or ([dflt] if dflt else [])
            obj["results"] = out
            obj["jobs"] = body["jobs"] or os.sysconf("SC_NPROCESSORS_ONLN")
            obj["meta"] = json.loads(self._taken(lib.sbx_eval_meta_to_json(
                body["dataset"].encode(), self._opt_str(body["samples"]), opts,
                self._strv(provs)), "the evaluation's metadata"))
            return EvalReport.from_json(obj)
        finally:
            if opts:
                lib.sbx_eval_opts_free(opts)
            self._eval_free(None, [sm], smp, ds)

    def _column_ctx(self, settings: list[str] | None) -> Any:
        """A context of this runner's configuration with a column's
        SECTION.KEY=VALUE settings on top (the caller frees it), or None
        when it has none (the column runs on the runner's context)."""
        if not settings:
            return None
        lib, cctx = self._xlib, self._out("sbx_ctx")
        rc = lib.sbx_ctx_new_with(cctx.arg, self._opt_str(self._config_dir),
                                  self._strv(settings))
        if rc != 0:
            err = self._error(rc, cctx.value or None)
            if cctx.value:
                lib.sbx_ctx_free(cctx.value)
            raise err
        return cctx.value

    def _eval_opts(self, body: dict[str, Any], providers: list[str] | None,
                   cancel: int | None) -> Any:
        """An sbx_eval_opts of evaluate's or compare's body (the caller
        frees it)."""
        lib = self._xlib
        o = lib.sbx_eval_opts_new()
        if not o:
            raise MemoryError("polysandbox: out of memory for the evaluation's options")
        try:
            chk = self._check
            if providers is not None:
                chk(lib.sbx_eval_opts_set_providers(o, self._strv(providers)))
            chk(lib.sbx_eval_opts_set_jobs(o, body["jobs"]))
            if body["timeout"] is not None:
                chk(lib.sbx_eval_opts_set_timeout(o, _ns(body["timeout"])))
            if body["memory"] is not None:
                chk(lib.sbx_eval_opts_set_limit(o, _LIMIT_IDS["memory"], body["memory"]))
            if body["retries"] is not None:
                chk(lib.sbx_eval_opts_set_retries(o, body["retries"]))
            if cancel is not None:
                chk(lib.sbx_eval_opts_set_cancel(o, self._cancel_ptr(cancel)))
        except BaseException:
            lib.sbx_eval_opts_free(o)
            raise
        return o

    # Cancellation tokens of Runner._acall: the library's handles.
    def _cancel_new(self) -> int:
        lib = self._lib
        cancel = lib.sbx_cancel_new()
        if not cancel:
            raise self._error(lib.sbx_error_code(lib.sbx_ctx_last_error(None)) or 11, None)
        return cancel

    def _cancel_fire(self, token: int) -> None:
        self._lib.sbx_cancel_fire(token)

    def _cancel_free(self, token: int) -> None:
        self._lib.sbx_cancel_free(token)

    def _ctx_open(self) -> c_void_p:
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
        lib = self._lib
        return (lib.sbx_sandbox_id(sb).decode("utf-8", "replace"),
                lib.sbx_sandbox_provider(sb).decode("utf-8", "replace"))

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
        lib = self._lib
        sb = c_void_p()
        self._check(lib.sbx_sandbox_open(self._ctx_open(), provider.encode() if provider
                                         else None, sandbox_id.encode(), ctypes.byref(sb)))
        self._hold(sb.value)
        sid, prov = self._info(sb.value)
        try:
            found = [i for i in self._list(prov, {}) if i.id == sid]
        except SandboxError:
            found = []    # a provider that cannot list: it opened, so it is
        return sb.value, found[0] if found else SandboxInfo(sid, prov)

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
        self._lib.sbx_sandbox_close(sb)

    def _list(self, provider: str, labels: dict[str, str]) -> list[SandboxInfo]:
        out: list[SandboxInfo] = []

        def seen(_ud: Any, sid: bytes, lp: Any, n: int, created_ns: int) -> int:
            kv = (lp[i].decode("utf-8", "replace").partition("=") for i in range(n))
            out.append(SandboxInfo(sid.decode("utf-8", "replace"), provider,
                                   {k: v for k, _, v in kv},
                                   created_ns // 1_000_000_000 if created_ns else None))
            return 0

        filt = [f"{k}={v}" for k, v in labels.items()]
        self._check(self._lib.sbx_list_labeled(self._ctx_open(), provider.encode(),
                                               _cstrs(filt), len(filt),
                                               _native.LIST_CB(seen), None))
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


def _progress_cb(progress: Any, raised: list[BaseException]) -> Any:
    """The sbx_eval_record_cb of evaluate's progress: only the counts
    cross (the record is not read), so the GIL is held just for the
    call.  One that raises stops the evaluation (no new sample starts);
    its exception goes to raised for evaluate to raise."""
    def cb(_ud: Any, _rec: int, done: int, total: int, passed: int) -> int:
        try:
            progress(done, total, passed)
            return 0
        except BaseException as e:   # noqa: B036 - raised by evaluate
            if not raised:
                raised.append(e)
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
