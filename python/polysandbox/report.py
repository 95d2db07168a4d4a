"""polysandbox.report - the reports of evaluate and compare, as data.

The reports are built by the library (sbx_eval_summary_to_json and
sbx_eval_meta_to_json, the object `polysandbox eval --json` prints;
sbx_eval_report_to_json, the one of `polysandbox compare --json`); these
dataclasses read them, checked as hostile input, and give them back
unchanged by to_dict / to_json.  Nested parts (a compare column's
summary, per-task figures, the run's metadata) stay the library's
objects (dicts and lists): see polysandbox-eval(1) for their fields.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ._fields import field
from .errors import ServerError

__all__ = ["CompareColumn", "Difference", "CompareReport", "EvalReport"]


def _to_json(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _str_map(obj: Any, what: str, name: str) -> dict[str, str | None]:
    m = field(obj, what, name, dict)
    if not all(isinstance(v, str) or v is None for v in m.values()):
        raise ServerError(f"{what}: field '{name}' must map columns to str or null")
    return dict(m)


@dataclass(frozen=True)
class CompareColumn:
    """One provider's run: label ("local", "local#2" for a repeated
    provider), the provider, its results file (None when not kept), the
    SECTION.KEY=VALUE settings of its context, its pass rate (passed out
    of the graded samples; None when none was graded) and its summary (the
    object of `polysandbox eval --json`: counts, pass_at_k, latency...)."""

    label: str
    provider: str
    results: str | None
    settings: tuple[str, ...]
    pass_rate: float | None
    summary: dict[str, Any]

    @classmethod
    def from_json(cls, obj: Any) -> "CompareColumn":
        w = "compare column"
        settings = field(obj, w, "settings", list)
        if not all(isinstance(s, str) for s in settings):
            raise ServerError(f"{w}: field 'settings' must be a list of str")
        rate = field(obj, w, "pass_rate", object, True)
        if rate is not None and (isinstance(rate, bool) or not isinstance(rate, (int, float))):
            raise ServerError(f"{w}: field 'pass_rate' must be a number or null")
        return cls(label=field(obj, w, "label", str), provider=field(obj, w, "provider", str),
                   results=field(obj, w, "results", str, True), settings=tuple(settings),
                   pass_rate=float(rate) if rate is not None else None,
                   summary=field(obj, w, "summary", dict))

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "provider": self.provider, "results": self.results,
                "settings": list(self.settings), "pass_rate": self.pass_rate,
                "summary": self.summary}


@dataclass(frozen=True)
class Difference:
    """A sample whose verdicts differ between columns: by column label,
    its verdict ("passed", "failed", "timeout", "sandbox_error"...; None
    where it has no record), the reason and the program's output."""

    sample: int
    task_id: str | None
    verdicts: dict[str, str | None]
    reasons: dict[str, str | None]
    outputs: dict[str, str | None]

    @classmethod
    def from_json(cls, obj: Any) -> "Difference":
        w = "compare difference"
        return cls(sample=field(obj, w, "sample", int),
                   task_id=field(obj, w, "task_id", str, True),
                   verdicts=_str_map(obj, w, "verdicts"), reasons=_str_map(obj, w, "reasons"),
                   outputs=_str_map(obj, w, "outputs"))

    def to_dict(self) -> dict[str, Any]:
        return {"sample": self.sample, "task_id": self.task_id, "verdicts": self.verdicts,
                "reasons": self.reasons, "outputs": self.outputs}


@dataclass(frozen=True)
class CompareReport:
    """The same samples graded on several providers, side by side: the
    fields of `polysandbox compare --json`.  agree is True when every
    sample got the same verdict everywhere (the command's exit status 0);
    differences lists the others.  report names the Markdown and HTML
    files (the command writes them; compare() in Python writes none, and
    it is None)."""

    dataset: str | None
    samples_file: str | None
    canonical: bool
    samples: int
    columns: tuple[CompareColumn, ...]
    agree: bool
    differences: tuple[Difference, ...]
    report: dict[str, str] | None
    meta: dict[str, Any] | None

    @classmethod
    def from_json(cls, obj: Any) -> "CompareReport":
        w = "compare report"
        return cls(dataset=field(obj, w, "dataset", str, True),
                   samples_file=field(obj, w, "samples_file", str, True),
                   canonical=field(obj, w, "canonical", bool),
                   samples=field(obj, w, "samples", int),
                   columns=tuple(CompareColumn.from_json(c)
                                 for c in field(obj, w, "columns", list)),
                   agree=field(obj, w, "agree", bool),
                   differences=tuple(Difference.from_json(d)
                                     for d in field(obj, w, "differences", list)),
                   report=field(obj, w, "report", dict, True),
                   meta=field(obj, w, "meta", dict, True))

    def column(self, label: str) -> CompareColumn:
        """The column named label; KeyError when there is none."""
        for c in self.columns:
            if c.label == label:
                return c
        raise KeyError(label)

    def to_dict(self) -> dict[str, Any]:
        """The object `polysandbox compare --json` prints, keys in its order."""
        return {"dataset": self.dataset, "samples_file": self.samples_file,
                "canonical": self.canonical, "samples": self.samples,
                "columns": [c.to_dict() for c in self.columns], "agree": self.agree,
                "differences": [d.to_dict() for d in self.differences],
                "report": self.report, "meta": self.meta}

    def to_json(self) -> str:
        """to_dict as compact JSON, as the command prints it."""
        return _to_json(self.to_dict())


# The fields of `polysandbox eval --json`, in its order: (name, type,
# may be null).  pass_at_k_base is there for EvalPlus datasets only.
_EVAL_FIELDS: tuple[tuple[str, type, bool], ...] = (
    ("dataset", str, False), ("format", str, False), ("samples", int, False),
    ("done", int, False), ("resumed", int, False), ("ran", int, False),
    ("counts", dict, False), ("graded", int, False), ("pass_at_k", dict, False),
    ("pass_at_k_tasks", dict, True), ("pass_at_k_ci", dict, False),
    ("pass_at_k_base", dict, True), ("tasks", list, False), ("latency_ns", dict, False),
    ("providers", dict, True), ("usage", dict, True),
    ("unenforced_limits", list, False), ("wall_ns", int, False),
    ("throughput_per_s", float, False), ("sandbox_errors", list, False),
    ("no_template", list, False), ("results", str, True), ("jobs", int, False), ("meta", dict, False),
)


@dataclass(frozen=True)
class EvalReport:
    """One evaluation: the fields of `polysandbox eval --json`.

    dataset (its path), format (the one read), samples (how many), done
    (with a record, resumed ones included), resumed, ran (this run),
    counts (by verdict: passed, failed, timeout, ..., sandbox_error,
    no_template), graded (done but sandbox errors and no_template),
    pass_at_k ("K": the mean over the tasks with at least K graded
    samples, None when none has), pass_at_k_tasks (how many tasks each
    was averaged over),
    pass_at_k_ci ("K": [low, high], the 95% bootstrap interval),
    pass_at_k_base (EvalPlus: pass@k on the base inputs; else None),
    tasks (per task: task_id, n, c, pass_at_k), latency_ns (p50, p90,
    p95, p99, max), providers (name: its usage) and usage (of every
    sample): samples, passed, sandboxes, sandbox_errors (of those
    attempts, the ones whose sandbox failed; each attempt counts on the
    provider that ran it), sandbox_seconds, latency_ns (p50, p90,
    max), cpu_ns (total, mean, samples), peak_memory_bytes
    and, for a provider with a price table, cost (total, per_sample,
    per_passing_sample, currency; see cost()); both None from a
    polysandbox before 0.3, unenforced_limits (limits some sandbox ran without), wall_ns,
    throughput_per_s, sandbox_errors (sample, task_id, provider, error),
    no_template (the same of the samples no template ran; [] from a
    polysandbox before 0.3), results (the results file, or None), jobs
    (workers) and meta (the run: version, date, host, inputs with their
    SHA-256, limits, providers)."""

    dataset: str
    format: str
    samples: int
    done: int
    resumed: int
    ran: int
    counts: dict[str, int]
    graded: int
    pass_at_k: dict[str, float | None]
    pass_at_k_tasks: dict[str, Any] | None
    pass_at_k_ci: dict[str, Any]
    pass_at_k_base: dict[str, Any] | None
    tasks: list[dict[str, Any]]
    latency_ns: dict[str, int]
    providers: dict[str, Any] | None
    usage: dict[str, Any] | None
    unenforced_limits: list[str]
    wall_ns: int
    throughput_per_s: float
    sandbox_errors: list[dict[str, Any]]
    no_template: list[dict[str, Any]]
    results: str | None
    jobs: int
    meta: dict[str, Any]

    @classmethod
    def from_json(cls, obj: Any) -> "EvalReport":
        """Read the object of `polysandbox eval --json` (ServerError
        naming the field when it is not one)."""
        w = "evaluation report"
        if isinstance(obj, dict) and isinstance(obj.get("throughput_per_s"), int) \
                and not isinstance(obj["throughput_per_s"], bool):
            obj = dict(obj, throughput_per_s=float(obj["throughput_per_s"]))
        if isinstance(obj, dict) and "pass_at_k_base" not in obj:
            obj = dict(obj, pass_at_k_base=None)
        for k in ("providers", "usage"):
            if isinstance(obj, dict) and k not in obj:
                obj = dict(obj, **{k: None})
        if isinstance(obj, dict) and "no_template" not in obj:
            obj = dict(obj, no_template=[])
        vals = {n: field(obj, w, n, t, null) for n, t, null in _EVAL_FIELDS}
        counts = vals["counts"]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in counts.values()):
            raise ServerError(f"{w}: field 'counts' must map verdicts to int")
        pk = vals["pass_at_k"]
        if not all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
                   for v in pk.values()):
            raise ServerError(f"{w}: field 'pass_at_k' must map k to a number or null")
        return cls(**vals)

    @property
    def passed(self) -> int:
        """Samples that passed (counts["passed"])."""
        return self.counts.get("passed", 0)

    def pass_at(self, k: int) -> float | None:
        """pass@k, when k was one of evaluate's k and some task had k
        graded samples; else None."""
        v = self.pass_at_k.get(str(k))
        return float(v) if v is not None else None

    def cost(self, provider: str | None = None) -> dict[str, Any] | None:
        """The cost object of provider's samples (None: of them all):
        total, per_sample, per_passing_sample and currency; None when no
        price table applies (never a made-up zero)."""
        use = self.usage if provider is None else (self.providers or {}).get(provider)
        return use.get("cost") if use else None

    def to_dict(self) -> dict[str, Any]:
        """The object `polysandbox eval --json` prints, keys in its order."""
        out = {n: getattr(self, n) for n, _, _ in _EVAL_FIELDS}
        for k in ("pass_at_k_base", "providers", "usage"):
            if out[k] is None:
                del out[k]
        return out

    def to_json(self) -> str:
        """to_dict as compact JSON, as the command prints it."""
        return _to_json(self.to_dict())
