"""polysandbox.evalargs - the arguments of evaluate and compare, checked
once for every runner.

Each turns its arguments into a plain dict (the runner's body), naming
the argument that is wrong with TypeError or ValueError, as request.py
does for a run; the options both take (k, jobs, timeout, memory,
retries) are checked by the same code.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Mapping, Sequence

from .request import _positive, _text, _texts, _where

__all__ = ["EvalProgress", "FORMATS", "compare_body", "compare_from_body", "evaluate_body",
           "loop_progress"]

# progress(done, total, passed): samples finished (resumed ones included)
# out of total, and how many of them passed; as `polysandbox eval` shows.
EvalProgress = Callable[[int, int, int], None]

# The dataset formats, by the library's names (sbx_eval_format_name),
# in the order of sbx_eval_format.
FORMATS = ("auto", "humaneval", "mbpp", "generic", "judged", "codecontests", "apps",
           "livecodebench", "evalplus", "multipl-e")

# The CLI's limit on -k values (CLI_EVAL_MAX_K) and on one value.
_MAX_KS = 16
_MAX_K = 1_000_000


def _common(call: str, k: Any, jobs: Any, timeout: Any, memory: Any,
            retries: Any) -> dict[str, Any]:
    """The options of evaluate and compare, checked as the CLI checks
    -k, --jobs, --timeout, --memory and --retries."""
    if isinstance(k, (str, bytes)) or not isinstance(k, Sequence) or not k:
        raise TypeError(f"{_where(call, 'k')} must be a non-empty list of int")
    if len(k) > _MAX_KS:
        raise ValueError(f"{_where(call, 'k')} has {len(k)} values (at most {_MAX_KS})")
    for i, v in enumerate(k):
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= _MAX_K:
            raise ValueError(f"{_where(call, f'k[{i}]')} must be an int from 1 to {_MAX_K}")
        if v in k[:i]:
            raise ValueError(f"{_where(call, 'k')}: {v} is repeated")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 0 <= jobs <= 4096:
        raise ValueError(f"{_where(call, 'jobs')} must be an int from 0 to 4096")
    if retries is not None and (isinstance(retries, bool) or not isinstance(retries, int) or
                                retries < 0):
        raise ValueError(f"{_where(call, 'retries')} must be an int of at least 0")
    return {"k": list(k), "jobs": jobs,
            "timeout": None if timeout is None else _positive(call, "timeout", timeout,
                                                                "seconds"),
            "memory": None if memory is None else _positive(call, "memory", memory, "bytes"),
            "retries": retries}


def evaluate_body(call: str, dataset: Any, samples: Any, canonical: Any, k: Any,
                  providers: Any, jobs: Any, timeout: Any, memory: Any, retries: Any,
                  format: Any, out: Any, resume: Any, allow_partial: Any,
                  progress: Any) -> dict[str, Any]:
    """evaluate's arguments, checked (samples xor canonical, as the
    command's --samples and --canonical)."""
    if not isinstance(canonical, bool):
        raise TypeError(f"{_where(call, 'canonical')} must be a bool")
    if (samples is None) == (not canonical):
        raise ValueError(f"polysandbox.{call}: give samples (a samples file) or "
                         "canonical=True (the dataset's own solutions), not "
                         f"{'both' if canonical else 'neither'}")
    provs = None
    if providers is not None:
        provs = _texts(call, "providers", providers, empty_list=False)
        for i, p in enumerate(provs):
            if not p or "," in p:
                raise ValueError(f"{_where(call, f'providers[{i}]')} is not a provider "
                                 f"name: {p!r}")
    if format not in FORMATS:
        raise ValueError(f"{_where(call, 'format')} must be one of {', '.join(FORMATS)}, "
                         f"not {format!r}")
    for name, flag in (("resume", resume), ("allow_partial", allow_partial)):
        if not isinstance(flag, bool):
            raise TypeError(f"{_where(call, name)} must be a bool")
    if resume and out is None:
        raise ValueError(f"polysandbox.{call}: resume=True needs out (the results file "
                         "to continue)")
    if progress is not None and not callable(progress):
        raise TypeError(f"{_where(call, 'progress')} must be callable(done, total, passed)")
    return dict(_common(call, k, jobs, timeout, memory, retries),
                dataset=_text(call, "dataset", dataset),
                samples=None if samples is None else _text(call, "samples", samples),
                providers=provs, format=FORMATS.index(format),
                out=None if out is None else _text(call, "out", out), resume=resume,
                allow_partial=allow_partial, progress=progress)


def loop_progress(progress: EvalProgress) -> tuple[EvalProgress, list[BaseException]]:
    """For an awaited evaluation: a progress for the library's worker
    thread that hands each call on to progress in the running event
    loop's thread, in order, and the list where an exception progress
    raised goes (the next call from the worker then raises it, which
    stops the evaluation: see Local)."""
    loop = asyncio.get_running_loop()
    failed: list[BaseException] = []

    def in_loop(done: int, total: int, passed: int) -> None:
        if failed:
            return
        try:
            progress(done, total, passed)
        except BaseException as e:   # noqa: B036 - handed to the caller
            failed.append(e)

    def hop(done: int, total: int, passed: int) -> None:
        if failed:
            raise failed[0]
        loop.call_soon_threadsafe(in_loop, done, total, passed)

    return hop, failed


def compare_body(call: str, dataset: Any, samples: Any, providers: Any, k: Any, jobs: Any,
                 timeout: Any, memory: Any, retries: Any, report: Any,
                 settings: Any) -> dict[str, Any]:
    """compare's arguments, checked, with its columns labelled as the
    command labels them (NAME, NAME#2, ...)."""
    provs = _texts(call, "providers", providers, empty_list=True)
    if len(provs) < 2:
        raise ValueError(f"{_where(call, 'providers')} must name at least two providers")
    columns: list[tuple[str, str]] = []
    for i, p in enumerate(provs):
        if not p or "," in p or "#" in p:
            raise ValueError(f"{_where(call, f'providers[{i}]')} is not a provider name: {p!r}")
        same = sum(1 for _, q in columns if q == p) + 1
        columns.append((f"{p}#{same}" if same > 1 else p, p))
    common = _common(call, k, jobs, timeout, memory, retries)
    per: dict[str, list[str]] = {}
    if settings is not None:
        if not isinstance(settings, Mapping):
            raise TypeError(f"{_where(call, 'settings')} must be a dict of column label to "
                            f"a list of str, not {type(settings).__name__}")
        labels = [c[0] for c in columns]
        for label, values in settings.items():
            if label not in labels:
                raise ValueError(f"{_where(call, 'settings')}: {label!r} is not one of the "
                                 f"columns {labels} (a repeated provider is NAME#2, ...)")
            per[label] = _texts(call, f"settings[{label!r}]", values, empty_list=True)
            for v in per[label]:
                key = v.split("=", 1)[0]
                if "=" not in v or "." not in key or key.startswith(".") or key.endswith("."):
                    raise ValueError(f"{_where(call, f'settings[{label!r}]')}: {v!r} is not "
                                     "SECTION.KEY=VALUE")
    return dict(common, dataset=_text(call, "dataset", dataset),
                samples=None if samples is None else _text(call, "samples", samples),
                columns=columns,
                report=None if report is None else _text(call, "report", report),
                settings=per)


def compare_from_body(call: str, dataset: Any, samples: Any, results: Any,
                      k: Any, report: Any = None) -> dict[str, Any]:
    """compare_from's arguments, checked as the command checks --from."""
    files = _texts(call, "results", results, empty_list=True)
    if len(files) < 2:
        raise ValueError(f"{_where(call, 'results')} must name at least two results files")
    for i, f in enumerate(files):
        if not f:
            raise ValueError(f"{_where(call, f'results[{i}]')} is empty")
    return dict(_common(call, k, 0, None, None, None), dataset=_text(call, "dataset", dataset),
                samples=None if samples is None else _text(call, "samples", samples),
                results=files, report=None if report is None else _text(call, "report", report))
