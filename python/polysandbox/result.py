"""polysandbox.result - the result of one run, as `polysandbox run --json`.

A Result holds exactly the fields of the JSON object the library's
sbx_result_to_json gives (the CLI's --json, polysandboxd's /v1/run), so
a local run and a remote one are built the same way, from that object,
and Result.to_json() gives it back.  cased/sandboxes' ExecutionResult
names (success, timed_out, truncated, duration_ms) are derived.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any

from ._fields import field as json_field
from .errors import ServerError

__all__ = ["Result", "Compile", "Chunk", "Artifact", "LeftOut", "STATUSES"]

# sbx_run_status names, in the order of the enum (common.h).
STATUSES = (
    "ok", "nonzero_exit", "signal", "timeout", "cpu_limit", "memory_limit",
    "output_limit", "compile_error", "sandbox_error", "not_found",
    "not_executable", "seccomp", "pids_limit",
)


def _field(obj: dict, name: str, kind: type, null: bool = False) -> Any:
    return json_field(obj, "result", name, kind, null)


def decode_output(text: str, enc: Any, what: str, name: str) -> bytes:
    """The bytes of output text sent in encoding enc ("utf-8" or
    "base64"); ServerError naming what and field name otherwise."""
    if enc == "utf-8":
        return text.encode("utf-8", "surrogatepass")
    if enc == "base64":
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as e:
            raise ServerError(f"{what}: field '{name}' is not valid base64: {e}") from None
    raise ServerError(f"{what}: field '{name}' has encoding {enc!r}, not utf-8 or base64")


def _output(obj: dict, name: str, what: str = "result") -> bytes:
    return decode_output(json_field(obj, what, name, str),
                         obj.get(name + "_encoding", "utf-8"), what, name)


def _status(obj: dict, what: str) -> str:
    status = json_field(obj, what, "status", str)
    if status not in STATUSES:
        raise ServerError(f"{what}: unknown status {status!r}")
    return status


class _Text:
    """stdout and stderr of stdout_bytes and stderr_bytes, decoded as
    UTF-8 with replacement characters."""

    stdout_bytes: bytes
    stderr_bytes: bytes

    @property
    def stdout(self) -> str:
        return self.stdout_bytes.decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        return self.stderr_bytes.decode("utf-8", "replace")


def _names(obj: dict, name: str) -> tuple[str, ...]:
    """A list of strings, () when absent (a server before 0.2)."""
    if name not in obj:
        return ()
    v = _field(obj, name, list)
    if not all(isinstance(x, str) for x in v):
        raise ServerError(f"result: field '{name}' must be a list of strings")
    return tuple(v)


@dataclass(frozen=True)
class Compile(_Text):
    """The compile step of a run of code with a compiled template (c,
    cpp, go, rust, java, typescript): Result.compile.

    status is the step's own status: "ok" when it succeeded; when it
    failed (the run's status is then "compile_error") how: "nonzero_exit",
    "timeout", ...  time_ns is how long it ran (timings_ns["compile"]),
    start included.  stdout_bytes/stderr_bytes are what the compiler
    wrote, kept whether it succeeded or not.  Since 0.2.
    """

    status: str
    time_ns: int
    stdout_bytes: bytes
    stderr_bytes: bytes

    @classmethod
    def from_json(cls, obj: Any) -> "Compile":
        """From the result's "compile" object; ServerError naming the
        field when it is not one."""
        what = "result: compile"
        return cls(status=_status(obj, what),
                   time_ns=json_field(obj, what, "time_ns", int),
                   stdout_bytes=_output(obj, "stdout", what),
                   stderr_bytes=_output(obj, "stderr", what))

    @property
    def success(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class Artifact:
    """A file the run left in its template's artifacts directory
    (Result.artifacts): path relative to that directory (its names joined
    with "/" when it is in a subdirectory: "plots/a.png"), size in bytes,
    mime guessed from its first bytes, data its bytes.  Since 0.3."""

    path: str
    size: int
    mime: str
    data: bytes

    def save(self, directory: str) -> str:
        """Write data to directory/path, making path's subdirectories
        ("plots/a.png"); refuses a path that is not relative plain names
        (no empty, "." or ".." part, no control character), never
        follows a link (nothing is written outside directory) and never
        overwrites a file.  Returns the path written."""
        import os
        parts = self.path.split("/")
        if (not self.path or any(p in ("", ".", "..") for p in parts)
                or any(ord(c) < 0x20 or ord(c) == 0x7f for c in self.path)):
            raise ValueError(f"artifact {self.path!r} is not a relative path of plain names")
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for part in parts[:-1]:
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
                sub = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = sub
            out = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                          0o644, dir_fd=fd)
        finally:
            os.close(fd)
        with os.fdopen(out, "wb") as f:
            f.write(self.data)
        return os.path.join(directory, *parts)


@dataclass(frozen=True)
class LeftOut:
    """An entry of the artifacts directory that was not brought back
    (Result.artifacts_left_out), and why: a cap it is over (naming the
    setting), a symbolic link (never followed), a directory more than 8
    levels deep, a name that is not UTF-8 or holds a control character.
    Since 0.3."""

    path: str
    size: int
    reason: str


def _artifacts(obj: dict) -> tuple[tuple[Artifact, ...], tuple[LeftOut, ...]]:
    """"artifacts" and "artifacts_left_out", () when absent (a server
    before 0.3)."""
    kept, out = [], []
    for i, a in enumerate(_field(obj, "artifacts", list) if "artifacts" in obj else ()):
        what = f"result: artifacts[{i}]"
        b64 = json_field(a, what, "base64", str)
        try:
            data = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError) as e:
            raise ServerError(f"{what}: field 'base64' is not valid base64: {e}") from None
        kept.append(Artifact(path=json_field(a, what, "path", str),
                             size=json_field(a, what, "size", int),
                             mime=json_field(a, what, "mime", str), data=data))
    for i, a in enumerate(_field(obj, "artifacts_left_out", list)
                          if "artifacts_left_out" in obj else ()):
        what = f"result: artifacts_left_out[{i}]"
        out.append(LeftOut(path=json_field(a, what, "path", str),
                           size=json_field(a, what, "size", int),
                           reason=json_field(a, what, "reason", str)))
    return tuple(kept), tuple(out)


@dataclass(frozen=True)
class Chunk:
    """One piece of output as the command produced it (Sandbox.stream):
    stream is "stdout" or "stderr", data its bytes (a chunk's end may cut
    a UTF-8 sequence: join a stream's chunks before decoding them)."""

    stream: str
    data: bytes

    @property
    def text(self) -> str:
        """data decoded as UTF-8, with replacement characters."""
        return self.data.decode("utf-8", "replace")


@dataclass(frozen=True)
class Result(_Text):
    """What became of one run.

    status is one of STATUSES ("sandbox_error" is never a verdict on the
    code: the sandbox failed, error says why).  exit_code and signal are
    None when they do not apply; cpu_ns and peak_memory_bytes are None
    when the provider does not report them.  stdout_bytes/stderr_bytes
    are the output as produced; stdout/stderr decode it as UTF-8 with
    replacement characters.  compile is the compile step of code run with
    a compiled template (see Compile; its time is also
    timings_ns["compile"]), None when no compile step ran.
    unenforced_limits names the limits the sandbox ran without
    ("memory", ..., "network" for network = none a provider cannot
    enforce), allowed by unenforced_limits in polysandbox.ini(5), and
    unenforced_reason says why; () and None when every limit was
    enforced.  artifacts are the files the run left in its template's
    artifacts directory (see Artifact) and artifacts_left_out those that
    did not come back, with why (see LeftOut); () when none (since 0.3).
    pool names the warm pool whose ready sandbox ran it, None when it was
    made for the run (since 0.3).
    """

    status: str
    exit_code: int | None
    signal: int | None
    stdout_bytes: bytes
    stdout_truncated: bool
    stderr_bytes: bytes
    stderr_truncated: bool
    timings_ns: dict[str, int]
    cpu_ns: int | None
    peak_memory_bytes: int | None
    provider: str | None
    sandbox_id: str | None
    error: str | None
    error_code: int
    compile: Compile | None
    unenforced_limits: tuple[str, ...]
    unenforced_reason: str | None
    artifacts: tuple[Artifact, ...]
    artifacts_left_out: tuple[LeftOut, ...]
    pool: str | None
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Any) -> "Result":
        """Build a Result from the object sbx_result_to_json gives;
        ServerError naming the field when it is not one (a server's reply
        is checked as hostile input)."""
        plain = _plain(cls, obj)
        if plain is not None:
            return plain
        if not isinstance(obj, dict):
            raise ServerError(f"result: expected a JSON object, not {type(obj).__name__}")
        status = _status(obj, "result")
        comp = obj.get("compile")   # absent from a server before 0.2
        timings = _field(obj, "timings_ns", dict)
        for k in ("create", "start", "exec", "total"):
            json_field(timings, "result: timings_ns", k, int)
        kept, left_out = _artifacts(obj)
        return cls(
            status=status,
            exit_code=_field(obj, "exit_code", int, null=True),
            signal=_field(obj, "signal", int, null=True),
            stdout_bytes=_output(obj, "stdout"),
            stdout_truncated=_field(obj, "stdout_truncated", bool),
            stderr_bytes=_output(obj, "stderr"),
            stderr_truncated=_field(obj, "stderr_truncated", bool),
            timings_ns=dict(timings),
            cpu_ns=_field(obj, "cpu_ns", int, null=True),
            peak_memory_bytes=_field(obj, "peak_memory_bytes", int, null=True),
            provider=_field(obj, "provider", str, null=True),
            sandbox_id=_field(obj, "sandbox_id", str, null=True),
            error=_field(obj, "error", str, null=True),
            error_code=_field(obj, "error_code", int),
            compile=Compile.from_json(comp) if comp is not None else None,
            unenforced_limits=_names(obj, "unenforced_limits"),
            unenforced_reason=(_field(obj, "unenforced_reason", str, null=True)
                               if "unenforced_reason" in obj else None),
            artifacts=kept,
            artifacts_left_out=left_out,
            pool=(_field(obj, "pool", str, null=True) if "pool" in obj else None),
            raw=obj,
        )

    @property
    def success(self) -> bool:
        return self.status == "ok"

    @property
    def timed_out(self) -> bool:
        return self.status == "timeout"

    @property
    def truncated(self) -> bool:
        return self.stdout_truncated or self.stderr_truncated

    @property
    def duration_ms(self) -> float:
        """The command's run time (the exec timing), milliseconds."""
        return self.timings_ns.get("exec", 0) / 1e6

    def to_dict(self) -> dict[str, Any]:
        """The object `polysandbox run --json` prints for this run."""
        return dict(self.raw)

    def to_json(self) -> str:
        return json.dumps(self.raw, separators=(",", ":"))


# The fields of a plain result, (name, type, may be null), as from_json
# checks them; and its timings.
_PLAIN = (("exit_code", int, True), ("signal", int, True), ("stdout", str, False),
          ("stdout_truncated", bool, False), ("stderr", str, False),
          ("stderr_truncated", bool, False), ("cpu_ns", int, True),
          ("peak_memory_bytes", int, True), ("provider", str, True),
          ("sandbox_id", str, True), ("error", str, True), ("error_code", int, False))
_TIMINGS = ("create", "start", "exec", "total")
_NOTHING: list = []


def _plain(cls: type, obj: Any) -> Result | None:
    """The Result of obj when it is a plain one (UTF-8 output, no compile
    step, no artifacts: almost every run), checked as from_json checks
    it; None for any other, which from_json's full path then reads (and
    names what is wrong).  One function and few objects: a run's result
    is built right after the library's clone of this process, when every
    page written costs a fault (plugins/local/README.md)."""
    if type(obj) is not dict or obj.get("status") not in STATUSES:
        return None
    for name, kind, null in _PLAIN:
        v = obj.get(name)
        if type(v) is not kind and not (null and v is None and name in obj):
            return None
    timings = obj.get("timings_ns")
    if type(timings) is not dict:
        return None
    for name in _TIMINGS:
        if type(timings.get(name)) is not int:
            return None
    limits = obj.get("unenforced_limits", _NOTHING)
    if type(limits) is not list:
        return None
    for name in limits:
        if type(name) is not str:
            return None
    reason = obj.get("unenforced_reason")
    pool = obj.get("pool")
    if (obj.get("stdout_encoding", "utf-8") != "utf-8"
            or obj.get("stderr_encoding", "utf-8") != "utf-8" or obj.get("compile") is not None
            or obj.get("artifacts", _NOTHING) != _NOTHING
            or obj.get("artifacts_left_out", _NOTHING) != _NOTHING
            or (reason is not None and type(reason) is not str)
            or (pool is not None and type(pool) is not str)):
        return None
    return cls(status=obj["status"], exit_code=obj["exit_code"], signal=obj["signal"],
               stdout_bytes=obj["stdout"].encode("utf-8", "surrogatepass"),
               stdout_truncated=obj["stdout_truncated"],
               stderr_bytes=obj["stderr"].encode("utf-8", "surrogatepass"),
               stderr_truncated=obj["stderr_truncated"], timings_ns=dict(timings),
               cpu_ns=obj["cpu_ns"], peak_memory_bytes=obj["peak_memory_bytes"],
               provider=obj["provider"], sandbox_id=obj["sandbox_id"], error=obj["error"],
               error_code=obj["error_code"], compile=None, unenforced_limits=tuple(limits),
               unenforced_reason=reason, artifacts=(), artifacts_left_out=(), pool=pool, raw=obj)
