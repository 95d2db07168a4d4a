"""polysandbox.request - one run request, checked once for every runner.

run() and run_code() turn their arguments into the body of polysandboxd's
POST /v1/run (core/server/opts.c), after checking each argument and
naming the one that is wrong; the local runner turns that same body into
the library's options, the client sends it.  Runner gives both the same
calls, sync and async.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import functools
import math
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping, Sequence, TypeVar

from .result import Result

if TYPE_CHECKING:
    from .info import Pool
    from .evalargs import EvalProgress
    from .report import CompareReport, EvalReport
    from .sandbox import FileList, Sandbox, SandboxInfo

T = TypeVar("T")
# progress(done, total, result or exception)
Progress = Callable[[int, int, Any], None]
# on_output(stream, data): "stdout" or "stderr", a chunk as produced
OutputSink = Callable[[str, bytes], None]

__all__ = ["Runner", "LIMITS", "Progress"]

# Limits a request may set: (unit, what a value is).  Durations are
# seconds, sizes bytes, counts plain integers: the same numbers the
# server's "limits" accepts.
LIMITS = {
    "wall": "seconds", "cpu": "seconds", "memory": "bytes", "pids": "count",
    "nofile": "count", "fsize": "bytes", "disk": "bytes", "stdout": "bytes",
    "stderr": "bytes",
}


def _where(call: str, name: str) -> str:
    return f"polysandbox.{call}: argument '{name}'"


def _text(call: str, name: str, v: Any, *, empty: bool = False) -> str:
    if not isinstance(v, str):
        raise TypeError(f"{_where(call, name)} must be a str, not {type(v).__name__}")
    if "\0" in v:
        raise ValueError(f"{_where(call, name)} holds a NUL character")
    if not empty and not v:
        raise ValueError(f"{_where(call, name)} is empty")
    return v


def _texts(call: str, name: str, v: Any, *, empty_list: bool) -> list[str]:
    # A list or tuple first: Sequence's isinstance costs microseconds.
    if type(v) not in (list, tuple) and (isinstance(v, (str, bytes)) or
                                         not isinstance(v, Sequence)):
        raise TypeError(f"{_where(call, name)} must be a list of str, not {type(v).__name__}")
    out = [_text(call, f"{name}[{i}]", s, empty=True) for i, s in enumerate(v)]
    if not out and not empty_list:
        raise ValueError(f"{_where(call, name)} is empty")
    return out


def _pairs(call: str, name: str, v: Any) -> dict[str, str]:
    if not isinstance(v, Mapping):
        raise TypeError(f"{_where(call, name)} must be a dict of str, not {type(v).__name__}")
    out = {}
    for k, val in v.items():
        _text(call, f"{name} key", k)
        if "=" in k:
            raise ValueError(f"{_where(call, name)}: key {k!r} holds '='")
        out[k] = _text(call, f"{name}[{k!r}]", val, empty=True)
    return out


def _bytes(call: str, name: str, v: Any) -> bytes:
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    raise TypeError(f"{_where(call, name)} must be str or bytes, not {type(v).__name__}")


def _positive(call: str, name: str, v: Any, unit: str) -> int | float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{_where(call, name)} must be a number of {unit}, "
                        f"not {type(v).__name__}")
    if unit != "seconds" and not isinstance(v, int):
        raise TypeError(f"{_where(call, name)} must be a whole number of {unit}")
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{_where(call, name)} must be above 0 {unit} (0 is never "
                         f"unlimited), not {v}")
    return v


# The options of a run, of creating a sandbox, of an exec in one.
CREATE_OPTIONS = ("provider", "fallback", "template", "image", "network", "limits")
EXEC_OPTIONS = ("env", "cwd", "timeout", "stdin", "files")
OPTIONS = CREATE_OPTIONS + EXEC_OPTIONS
SANDBOX_OPTIONS = CREATE_OPTIONS + ("labels", "ttl", "env")


def build(call: str, what: dict[str, Any], options: Mapping[str, Any],
          allowed: Sequence[str] = OPTIONS) -> dict[str, Any]:
    """The /v1/run body of a request (or of /v1/sandboxes and its exec,
    with their allowed options); TypeError/ValueError naming the argument
    when one is wrong."""
    for k in options:
        if k not in allowed:
            raise TypeError(f"polysandbox.{call}: unknown option {k!r} "
                            f"(options: {', '.join(allowed)})")
    return _build(call, dict(what), **options)


def _build(call: str, body: dict[str, Any], *, provider=None, fallback=None, template=None,
           image=None, network=None, limits=None, env=None, cwd=None, timeout=None,
           stdin=None, files=None, labels=None, ttl=None) -> dict[str, Any]:
    if provider is not None:
        body["provider"] = _text(call, "provider", provider)
    if fallback is not None:
        body["fallback"] = _texts(call, "fallback", fallback, empty_list=True)
        for i, n in enumerate(body["fallback"]):
            if not n:
                raise ValueError(f"{_where(call, f'fallback[{i}]')} is empty")
    if template is not None:
        body["template"] = _text(call, "template", template)
    if image is not None:
        body["image"] = _text(call, "image", image)
    if network is not None:
        if network not in ("none", "egress", "host"):
            raise ValueError(f"{_where(call, 'network')} must be \"none\", \"egress\" or "
                             f"\"host\", not {network!r}")
        body["network"] = network
    if limits is not None:
        if not isinstance(limits, Mapping):
            raise TypeError(f"{_where(call, 'limits')} must be a dict, "
                            f"not {type(limits).__name__}")
        body["limits"] = {}
        for k, v in limits.items():
            if k not in LIMITS:
                raise ValueError(f"{_where(call, 'limits')}: unknown limit {k!r} "
                                 f"(limits: {', '.join(LIMITS)})")
            body["limits"][k] = _positive(call, f"limits[{k!r}]", v, LIMITS[k])
    if env is not None:
        body["env"] = _pairs(call, "env", env)
    if labels is not None:
        body["labels"] = _pairs(call, "labels", labels)
    if ttl is not None:
        body["ttl"] = _positive(call, "ttl", ttl, "seconds")
    if cwd is not None:
        body["cwd"] = _text(call, "cwd", cwd)
    if timeout is not None:
        body["timeout"] = _positive(call, "timeout", timeout, "seconds")
    if stdin is not None:
        body["stdin_base64"] = base64.b64encode(_bytes(call, "stdin", stdin)).decode("ascii")
    if files is not None:
        if not isinstance(files, Mapping):
            raise TypeError(f"{_where(call, 'files')} must be a dict of path to "
                            f"str or bytes, not {type(files).__name__}")
        body["files"] = {
            _text(call, "files key", p): base64.b64encode(
                _bytes(call, f"files[{p!r}]", d)).decode("ascii")
            for p, d in files.items()
        }
    return body


class Runner:
    """The calls every runner has (in the process, or through polysandboxd).

    Options of run and run_code: provider, fallback (list of providers),
    template, image, network ("none", "egress" where the template allows
    it, or "host"), limits (dict: wall, cpu
    in seconds; memory, fsize, disk, stdout, stderr in bytes; pids,
    nofile), env (dict), cwd, timeout (seconds), stdin (str or bytes),
    files (dict of relative path to str or bytes).  A sandbox failure is a
    Result with status "sandbox_error"; a refused request raises a
    SandboxError.  The a- twins run the same call in a worker thread; one
    cancelled while it awaits stops its run (in the process: the library's
    cancellation handle; through polysandboxd: the connection is closed,
    which the server takes as a cancel) before CancelledError goes on.
    """

    # ---- what each runner provides ----------------------------------------

    def _execute(self, body: dict[str, Any], cancel: Any = None) -> Result:
        raise NotImplementedError

    def _cancel_new(self) -> Any:
        """A cancellation token for one call (_cancel_fire stops it)."""
        raise NotImplementedError

    def _cancel_fire(self, token: Any) -> None:
        raise NotImplementedError

    def _cancel_free(self, token: Any) -> None:
        """Called once no thread uses the token any more."""

    # Whether Sandbox.destroy must stop an exec under way itself (through
    # polysandboxd the server does, and the exec gets its result).
    _interrupts_locally = True

    # Sandboxes: a handle is what the runner needs to reach one (see
    # sandbox.py, the only caller); bodies are request.build's.
    def _sb_create(self, body: dict[str, Any]) -> tuple[Any, "SandboxInfo", bool]:
        raise NotImplementedError

    def _sb_attach(self, sandbox_id: str, provider: str | None) -> tuple[Any, "SandboxInfo"]:
        raise NotImplementedError

    def _sb_exec(self, handle: Any, body: dict[str, Any], cancel: Any = None,
                 on_output: OutputSink | None = None) -> Result:
        """The exec's result; on_output, when given, gets each chunk of
        output as it is produced, from the calling thread."""
        raise NotImplementedError

    def _sb_upload(self, handle: Any, path: str, data: bytes, mode: int) -> None:
        raise NotImplementedError

    def _sb_download(self, handle: Any, path: str, max_bytes: int) -> bytes:
        raise NotImplementedError

    def _sb_list_files(self, handle: Any, path: str, limit: int) -> "FileList":
        raise NotImplementedError

    def _sb_destroy(self, handle: Any) -> None:
        raise NotImplementedError

    def _sb_release(self, handle: Any) -> None:
        raise NotImplementedError

    def _sb_list(self, labels: dict[str, str], provider: str | None) -> list["SandboxInfo"]:
        raise NotImplementedError

    def providers(self) -> list:
        """The providers, as `polysandbox providers --json` (Provider)."""
        raise NotImplementedError

    def templates(self) -> list:
        """The language templates, as `polysandbox templates --json` (Template)."""
        raise NotImplementedError

    def pools(self, wait: float | None = None) -> list["Pool"]:
        """The warm pools and their state, as `polysandbox pools --json`
        (Pool)."""
        raise NotImplementedError

    async def apools(self, wait: float | None = None) -> list["Pool"]:
        """pools, as a coroutine to await (in a worker thread)."""
        return await asyncio.get_running_loop().run_in_executor(
            None, functools.partial(self.pools, wait))

    def _compare(self, body: dict[str, Any], cancel: Any = None) -> "CompareReport":
        raise NotImplementedError

    # ---- compare ---------------------------------------------------------------

    def compare(self, dataset: str, samples: str | None = None, *,
                providers: Sequence[str], k: Sequence[int] = (1, 10, 100), jobs: int = 0,
                timeout: float | None = None, memory: int | None = None,
                retries: int | None = None, report: str | None = None,
                settings: Mapping[str, Sequence[str]] | None = None) -> "CompareReport":
        """Grade the same samples on each provider in turn and report them
        side by side: `polysandbox compare --json`'s report, as a
        CompareReport (built by the library, sbx_eval_report).

        dataset and samples are file paths (JSONL, or gzip of it); samples
        None grades the dataset's canonical solutions (--canonical).
        providers: at least two names; a repeated one makes columns NAME,
        NAME#2, ...  k: the pass@k values reported (the command's default); jobs: workers per
        provider (0: the cores); timeout (seconds), memory (bytes) and
        retries per program as eval's --timeout, --memory, --retries.
        report: a file name prefix; each column's records then go to
        PREFIX.LABEL.jsonl, and the report to PREFIX.md and PREFIX.html
        as the command writes them (the self-contained page with its
        charts and per-task tables; CompareReport.report names them).
        settings: by column label, the
        SECTION.KEY=VALUE configuration values of that column only (the
        command's --set-for, e.g. {"local#2": ["limits.memory=1G"]}): such
        a column runs on a context of its own, the others on this
        runner's.  A bad dataset or samples file raises InvalidRequestError
        naming the file and line; differing verdicts are no error (see
        CompareReport.agree)."""
        from .evalargs import compare_body
        return self._compare(compare_body("compare", dataset, samples, providers, k, jobs,
                                          timeout, memory, retries, report, settings))

    def acompare(self, dataset: str, samples: str | None = None, *,
                 providers: Sequence[str], k: Sequence[int] = (1, 10, 100), jobs: int = 0,
                 timeout: float | None = None, memory: int | None = None,
                 retries: int | None = None, report: str | None = None,
                 settings: Mapping[str, Sequence[str]] | None = None
                 ) -> Awaitable["CompareReport"]:
        """compare, as a coroutine to await; cancelling the awaiting task
        stops the evaluation under way (its programs are killed) before
        CancelledError goes on."""
        from .evalargs import compare_body
        return self._acall(self._compare,
                           compare_body("acompare", dataset, samples, providers, k, jobs,
                                        timeout, memory, retries, report, settings))

    def _compare_from(self, body: dict[str, Any]) -> "CompareReport":
        raise NotImplementedError

    def compare_from(self, dataset: str, samples: str | None = None, *,
                     results: Sequence[str], k: Sequence[int] = (1, 10, 100),
                     report: str | None = None) -> "CompareReport":
        """The report of compare built from results files already written
        (evaluate's out, eval --out, or an earlier compare's report
        files), nothing run: `polysandbox compare --from RESULTS,...
        --json`.  report: a file name prefix: PREFIX.md and PREFIX.html
        are written as by compare (None: no page is written).  results: at
        least two files; a column is named after the provider its records
        name (NAME#2 when repeated), else after its file.  dataset and
        samples (None: canonical) are the files the results were graded
        on; meta.rebuilt is True and meta.limits null."""
        from .evalargs import compare_from_body
        return self._compare_from(compare_from_body("compare_from", dataset, samples, results,
                                                    k, report))

    # ---- evaluate ----------------------------------------------------------------

    def _evaluate(self, body: dict[str, Any], cancel: Any = None) -> "EvalReport":
        raise NotImplementedError

    def evaluate(self, dataset: str, samples: str | None = None, *, canonical: bool = False,
                 k: Sequence[int] = (1, 10, 100), providers: Sequence[str] | None = None,
                 jobs: int = 0, timeout: float | None = None, memory: int | None = None,
                 retries: int | None = None, format: str = "auto", out: str | None = None,
                 resume: bool = False, allow_partial: bool = False,
                 progress: "EvalProgress | None" = None) -> "EvalReport":
        """Run every sample's program in a sandbox and grade it, as
        `polysandbox eval` does: an EvalReport whose to_json() is the
        object `polysandbox eval --json` prints for the same files and
        options (the library builds both: sbx_eval_summary_to_json and
        sbx_eval_meta_to_json).

        dataset and samples are file paths (JSONL, or gzip of it); give
        samples or canonical=True (grade the dataset's canonical
        solutions), not both.  format: the dataset's format (one of
        evalargs.FORMATS; "auto" guesses it from the first record).  k:
        the pass@k values reported; providers: the providers to use in
        order (a sample whose sandbox keeps failing on one is retried on
        the next; None: the default one and the [core] fallback chain);
        jobs: workers (0: the cores); timeout (seconds), memory (bytes)
        and retries per program as eval's --timeout, --memory, --retries.
        out: the results JSONL, a record appended per sample as it
        finishes (None: none is written); an existing non-empty one is
        refused (FileExistsError) unless resume=True, which keeps its
        records and runs only the samples without one (through
        polysandboxd, Client, the records come from the server's job as
        they are kept, and with resume=True the file's records go with
        the request: the job keeps them and runs the rest).  Records of
        another dataset, other samples or options that change verdicts
        (timeout, memory, format) are refused with InvalidRequestError
        naming the line and what differs.  A samples file
        that leaves tasks of the dataset without a sample is refused (the
        library's message names them and the command's --allow-partial)
        unless allow_partial=True, which scores the tasks it has.
        progress(done, total, passed) is called once per finished sample,
        one call at a time, from a worker thread of the library; if it
        raises, no new sample is started and evaluate raises that
        exception once the running ones finish.  A bad dataset or samples
        file raises InvalidRequestError naming the file and line, one that
        cannot be read SandboxError with the library's message; a sandbox
        failure is no exception (see EvalReport.sandbox_errors)."""
        from .evalargs import evaluate_body
        return self._evaluate(evaluate_body("evaluate", dataset, samples, canonical, k,
                                            providers, jobs, timeout, memory, retries,
                                            format, out, resume, allow_partial,
                                            progress))

    def aevaluate(self, dataset: str, samples: str | None = None, *, canonical: bool = False,
                  k: Sequence[int] = (1, 10, 100), providers: Sequence[str] | None = None,
                  jobs: int = 0, timeout: float | None = None, memory: int | None = None,
                  retries: int | None = None, format: str = "auto", out: str | None = None,
                  resume: bool = False, allow_partial: bool = False,
                  progress: "EvalProgress | None" = None) -> Awaitable["EvalReport"]:
        """evaluate, as a coroutine to await.  Bad arguments raise at the
        call.  progress is called in the event loop's thread, in order,
        before the report is returned.  Cancelling the awaiting task
        stops the evaluation under way (its programs are killed; with out,
        resume=True later runs what had no record) before CancelledError
        goes on."""
        from .evalargs import evaluate_body
        return self._aevaluate(evaluate_body("aevaluate", dataset, samples, canonical, k,
                                             providers, jobs, timeout, memory, retries,
                                             format, out, resume, allow_partial,
                                             progress))

    async def _aevaluate(self, body: dict[str, Any]) -> "EvalReport":
        from .evalargs import loop_progress
        failed: list[BaseException] = []
        if body["progress"] is not None:
            hop, failed = loop_progress(body["progress"])
            body = dict(body, progress=hop)
        rep = await self._acall(self._evaluate, body)
        if failed:
            raise failed[0]
        return rep

    # ---- async, with cancellation ------------------------------------------

    async def _acall(self, fn: Callable[..., T], *args: Any,
                     executor: concurrent.futures.Executor | None = None,
                     abandon: Callable[[T], Any] | None = None) -> T:
        """fn(*args, cancel=token) in a worker thread (the blocking call
        releases the GIL); when the awaiting task is cancelled the token is
        fired and the call waited for, so that nothing of it is left
        running when CancelledError goes on (what it made nonetheless goes
        to abandon)."""
        token = self._cancel_new()
        fut = asyncio.get_running_loop().run_in_executor(
            executor, functools.partial(fn, *args, cancel=token))
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            self._cancel_fire(token)
            await asyncio.wait([fut])
            if not fut.cancelled() and fut.exception() is None and abandon is not None:
                try:
                    abandon(fut.result())
                except Exception:
                    pass   # the cancel goes on; the thing is left to its ttl
            raise
        finally:
            # Freed only once no thread uses it; else left to the process.
            if fut.done():
                self._cancel_free(token)

    def _aexecute(self, body: dict[str, Any],
                  executor: concurrent.futures.Executor | None = None) -> Awaitable[Result]:
        return self._acall(self._execute, body, executor=executor)

    # ---- one-shot runs -------------------------------------------------------

    def run(self, command: str | Sequence[str], **options: Any) -> Result:
        """Run command (a str: a /bin/sh -c line; a list: an argv) in a
        new sandbox, then destroy the sandbox."""
        return self._execute(_command_body(command, options))

    def run_code(self, language: str, code: str, args: Sequence[str] | None = None,
                 **options: Any) -> Result:
        """Run code with the language template language (compiled first
        when the template says so); args go to the program."""
        return self._execute(_code_body(language, code, args, options))

    def arun(self, command: str | Sequence[str], **options: Any) -> Awaitable[Result]:
        """run, as a coroutine to await.  Bad arguments raise at the call,
        before anything is awaited."""
        return self._aexecute(_command_body(command, options, "arun"))

    def arun_code(self, language: str, code: str, args: Sequence[str] | None = None,
                  **options: Any) -> Awaitable[Result]:
        """run_code, as a coroutine to await (see arun)."""
        return self._aexecute(_code_body(language, code, args, options, "arun_code"))

    def run_many(self, requests: Sequence[Any], *, concurrency: int = 8,
                 progress: Progress | None = None, return_exceptions: bool = False,
                 **options: Any) -> list[Any]:
        """Run every request, at most concurrency at a time; the results
        in the order of requests.

        A request is a command (a str or an argv list, as run takes) or a
        dict: {"command": ...} or {"language": ..., "code": ..., "args":
        [...]}, with any option of run; options given here apply to every
        request (a request's own win).  Every request is checked before
        any runs (errors name requests[i]).  progress(done, total, result)
        is called in this thread as each one ends.  A refused request
        raises its SandboxError once the runs under way end (the others
        are not started), unless return_exceptions puts the exception in
        its place.
        """
        from .many import run_many
        return run_many(self, requests, concurrency, progress, return_exceptions, options)

    def arun_many(self, requests: Sequence[Any], *, concurrency: int = 8,
                  progress: Progress | None = None, return_exceptions: bool = False,
                  **options: Any) -> Awaitable[list[Any]]:
        """run_many, as a coroutine to await: cancelling it cancels every
        run under way (see the class).  progress is called in the event
        loop's thread."""
        from .many import arun_many
        return arun_many(self, requests, concurrency, progress, return_exceptions, options)

    # ---- sandboxes ---------------------------------------------------------------

    def create_sandbox(self, **options: Any) -> "Sandbox":
        """A new sandbox (see Sandbox.create for the options)."""
        from .sandbox import Sandbox
        return Sandbox._create(self, options, "create_sandbox")

    def get_or_create_sandbox(self, **options: Any) -> "Sandbox":
        """Our sandbox carrying every one of labels (needed), else a new
        one (see Sandbox.get_or_create)."""
        from .sandbox import Sandbox
        return Sandbox._create(self, options, "get_or_create_sandbox", True)

    def attach(self, sandbox_id: str, provider: str | None = None) -> "Sandbox":
        """The existing sandbox sandbox_id of provider (None: the default
        one, or through polysandboxd one it made); SandboxNotFoundError
        when there is none."""
        from .sandbox import Sandbox
        return Sandbox._attach(self, sandbox_id, provider, "attach")

    def sandboxes(self, labels: Mapping[str, str] | None = None,
                  provider: str | None = None) -> list["SandboxInfo"]:
        """The sandboxes of provider (None: every ready provider that can
        list) carrying every one of labels.  Over every provider, one
        whose listing fails is named in a RuntimeWarning and the others'
        sandboxes are returned; a provider named fails as an exception."""
        from .sandbox import list_sandboxes
        return list_sandboxes(self, labels, provider)


def _command_body(command: Any, options: Mapping[str, Any], call: str = "run") -> dict:
    if isinstance(command, str):
        what = {"shell": _text(call, "command", command)}
    elif type(command) in (list, tuple) or (isinstance(command, Sequence) and
                                            not isinstance(command, (bytes, bytearray))):
        what = {"argv": _texts(call, "command", command, empty_list=False)}
        if not what["argv"][0]:
            raise ValueError(f"{_where(call, 'command[0]')} is empty")
    else:
        raise TypeError(f"{_where(call, 'command')} must be a str (a shell line) or a "
                        f"list of str (an argv), not {type(command).__name__}")
    return build(call, what, options)


def _code_body(language: Any, code: Any, args: Any, options: Mapping[str, Any],
               call: str = "run_code") -> dict:
    what = {"language": _text(call, "language", language),
            "code": _text(call, "code", code, empty=True)}
    if args is not None:
        what["args"] = _texts(call, "args", args, empty_list=True)
    return build(call, what, options)
