"""polysandbox.localeval - Local's calls of providers, templates, pools,
evaluate and compare (local.py): one body for both backends, through
Local's hooks (_xlib, _xctx, _out, _array, _text, _taken, _strv,
_progress_arg, ...; _cffi.py's on the compiled module).
"""

from __future__ import annotations

import json
import os
from typing import Any

from .info import Pool, Provider, Template
from .report import CompareReport, EvalReport

# sbx_limit values (sandbox.h).
_LIMIT_IDS = {"wall": 0, "cpu": 1, "memory": 2, "pids": 3, "nofile": 4, "fsize": 5,
              "disk": 6, "stdout": 7, "stderr": 8}
# sbx_provider_state names, as info-json.c gives them.
_STATES = {0: "ready", 1: "unavailable", 2: "disabled"}


def _ns(seconds: float) -> int:
    return max(1, round(seconds * 1_000_000_000))


class EvalCalls:
    """The calls of Local (a mixin: Local gives the hooks and _check,
    _error, _ctx_open and _config_dir)."""

    # Local's (declared for the reader and type checkers).
    _xlib: Any
    _config_dir: str | None

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
        sums: list[Any] = []
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

    def _eval_free(self, rep: Any, sums: list[Any], smp: Any, ds: Any) -> None:
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
        sums: list[Any] = []
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

    def _eval_inputs(self, body: dict[str, Any], fmt: int, ds: Any, smp: Any) -> None:
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
