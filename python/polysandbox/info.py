"""polysandbox.info - providers and templates, as `polysandbox providers
--json` / `templates --json` and polysandboxd's GET /v1/providers and
/v1/templates give them (core/cli/info-json.c): one shape everywhere,
built from that object on both runners.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._fields import field
from .errors import ServerError

__all__ = ["Provider", "Template", "Pool"]


def _strs(obj: Any, what: str, name: str) -> tuple[str, ...]:
    v = field(obj, what, name, list)
    if not all(isinstance(s, str) for s in v):
        raise ServerError(f"{what}: field '{name}' must be a list of str")
    return tuple(v)


@dataclass(frozen=True)
class Provider:
    """A provider found by the configuration: state is "ready",
    "unavailable" (reason says why) or "disabled"; breaker is its circuit
    breaker's state in the runner that answered ("closed", "open",
    "half-open")."""

    name: str
    state: str
    priority: int
    version: str | None
    description: str | None
    path: str | None
    reason: str | None
    optional: bool
    breaker: str
    breaker_failures: int
    capabilities: tuple[str, ...]

    @classmethod
    def from_json(cls, obj: Any) -> "Provider":
        w = "provider"
        return cls(name=field(obj, w, "name", str), state=field(obj, w, "state", str),
                   priority=field(obj, w, "priority", int),
                   version=field(obj, w, "version", str, True),
                   description=field(obj, w, "description", str, True),
                   path=field(obj, w, "path", str, True),
                   reason=field(obj, w, "reason", str, True),
                   optional=field(obj, w, "optional", bool),
                   breaker=field(obj, w, "breaker", str),
                   breaker_failures=field(obj, w, "breaker_failures", int),
                   capabilities=_strs(obj, w, "capabilities"))


@dataclass(frozen=True)
class Template:
    """A language template: run_code's language, and the file extensions
    it is chosen by."""

    name: str
    extensions: tuple[str, ...]

    @classmethod
    def from_json(cls, obj: Any) -> "Template":
        return cls(name=field(obj, "template", "name", str),
                   extensions=_strs(obj, "template", "extensions"))


def listing(reply: Any, key: str, cls: type) -> list:
    """The items of a {key: [...], "default": ...} reply."""
    items = field(reply, "reply", key, list)
    return [cls.from_json(o) for o in items]


@dataclass(frozen=True)
class Pool:
    """A warm pool as `polysandbox pools --json` and polysandboxd's GET
    /v1/pools give it (core/cli/info-json.c): its key (provider,
    template), whether it runs (active), its statistics (size, ready,
    hits, misses, created, failures, create_mean_ns, ...: every counter
    the library has, in stats, by the library's names) and its last
    failure."""

    name: str
    provider: str | None
    template: str | None
    active: bool
    size: int
    ready: int
    last_error: str | None
    stats: dict[str, int]

    @classmethod
    def from_json(cls, obj: Any) -> "Pool":
        w = "pool"
        stats = {k: v for k, v in obj.items()
                 if isinstance(v, int) and not isinstance(v, bool)} \
            if isinstance(obj, dict) else {}
        return cls(name=field(obj, w, "name", str),
                   provider=field(obj, w, "provider", str, True),
                   template=field(obj, w, "template", str, True),
                   active=field(obj, w, "active", bool),
                   size=field(obj, w, "size", int), ready=field(obj, w, "ready", int),
                   last_error=field(obj, w, "last_error", str, True), stats=stats)

    def to_dict(self) -> dict[str, Any]:
        """The object this came from (the CLI's and the server's shape)."""
        d: dict[str, Any] = {"name": self.name, "provider": self.provider,
                             "template": self.template}
        d.update(self.stats)
        d["active"] = self.active
        d["last_error"] = self.last_error
        return d
