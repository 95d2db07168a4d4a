"""polysandbox.report - compare's side-by-side report, as data.

The report is built by the library (sbx_eval_report_to_json, the object
`polysandbox compare --json` prints); these dataclasses read it, checked
as hostile input, and give it back unchanged by to_dict / to_json.  An
evaluation summary (CompareColumn.summary) and the run's metadata
(CompareReport.meta) stay the library's objects (dicts): see
polysandbox-eval(1) for their fields.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ._fields import field
from .errors import ServerError

__all__ = ["CompareColumn", "Difference", "CompareReport"]


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
        return json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=False)
