"""polysandbox.sandbox - a sandbox that stays between calls.

    async with psb.Sandbox.create(provider="local", labels={"task": "t1"}) as sb:
        await sb.upload("data.csv", b"a,b\\n")          # an AsyncSandbox: awaited
        r = await sb.execute("wc -l data.csv")
    with client.create_sandbox(template="python") as sb:      # sync
        r = sb.exec(["python3", "-V"])

A Sandbox is made by a runner (Local in the process, Client through
polysandboxd) and calls it for every operation, so the two paths give the
same Result objects and exceptions.  The awaitable constructors
(Sandbox.create, get_or_create, attach) give an AsyncSandbox, whose calls
of cased/sandboxes' names are awaited as in that library.  Sandboxes are created persistent (as
polysandboxd and `polysandbox create` make them), so that another process
can attach to one by its id; destroy them (a `with` block does) or give a
ttl.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import threading
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Generator, Mapping, Sequence

from ._fields import field as json_field
from .errors import SandboxError, ServerError
from .request import SANDBOX_OPTIONS, _code_body, _command_body, _pairs, _text, build
from .result import Result

if TYPE_CHECKING:
    from .request import OutputSink, Runner
    from .stream import Stream

__all__ = ["Sandbox", "AsyncSandbox", "SandboxInfo", "FileEntry", "FileList", "MAX_DOWNLOAD", "LIST_FILES"]

# What download reads at most unless told (polysandboxd's default
# [server] max_download).
MAX_DOWNLOAD = 64 << 20
# How many entries list_files gives unless told (polysandboxd's default
# limit; it takes at most 10000, the library 100000).
LIST_FILES = 1000
FILE_TYPES = ("file", "directory", "symlink", "other")


@dataclass(frozen=True)
class SandboxInfo:
    """One sandbox as listed: id, provider, labels, created_at (Unix
    seconds, None when the provider does not say)."""

    id: str
    provider: str
    labels: dict[str, str] = field(default_factory=dict)
    created_at: int | None = None

    @classmethod
    def from_json(cls, obj: Any) -> "SandboxInfo":
        """From polysandboxd's sandbox object; ServerError naming the field
        when it is not one."""
        labels = json_field(obj, "sandbox", "labels", dict)
        for k, v in labels.items():
            if not isinstance(v, str):
                json_field(labels, "sandbox: labels", k, str)
        created = obj.get("created_at") if isinstance(obj, dict) else None
        return cls(id=json_field(obj, "sandbox", "id", str),
                   provider=json_field(obj, "sandbox", "provider", str),
                   labels=dict(labels),
                   created_at=json_field(obj, "sandbox", "created_at", int, null=True)
                   if created is not None else None)


@dataclass(frozen=True)
class FileEntry:
    """One entry of a sandbox's directory: name (str; bytes that are not
    UTF-8 shown as U+FFFD), type ("file", "directory", "symlink" (not
    followed) or "other"), size in bytes, mtime (Unix seconds) and raw
    (the name's bytes, exactly as the sandbox has them)."""

    name: str
    type: str
    size: int
    mtime: int
    raw: bytes

    @classmethod
    def from_json(cls, obj: Any) -> "FileEntry":
        """From polysandboxd's entry object; ServerError naming the field
        when it is not one."""
        what = "file entry"
        name = json_field(obj, what, "name", str)
        kind = json_field(obj, what, "type", str)
        if kind not in FILE_TYPES:
            raise ServerError(f"{what}: field 'type' is not one of {', '.join(FILE_TYPES)}: "
                              f"{kind!r}")
        raw = name.encode("utf-8")
        if "name_base64" in obj:
            try:
                raw = base64.b64decode(json_field(obj, what, "name_base64", str),
                                       validate=True)
            except ValueError:
                raise ServerError(f"{what}: field 'name_base64' is not base64") from None
        size = json_field(obj, what, "size", int)
        if size < 0:
            raise ServerError(f"{what}: field 'size' is negative")
        return cls(name=name, type=kind, size=size, mtime=json_field(obj, what, "mtime", int),
                   raw=raw)


class FileList(list):
    """The entries of a directory (FileEntry, in the sandbox shell's glob
    order: names, then hidden names), a list;
    truncated: True when the directory holds more than the limit."""

    truncated: bool = False

    @classmethod
    def from_json(cls, obj: Any) -> "FileList":
        """From polysandboxd's listing object ({"entries": [...],
        "truncated": bool, ...})."""
        out = cls(FileEntry.from_json(e) for e in json_field(obj, "listing", "entries", list))
        out.truncated = json_field(obj, "listing", "truncated", bool)
        return out


def _runner(runner: "Runner | None", call: str) -> "Runner":
    from .local import default
    from .request import Runner
    if runner is None:
        return default()
    if not isinstance(runner, Runner):
        raise TypeError(f"polysandbox.{call}: argument 'runner' must be a Local or a Client, "
                        f"not {type(runner).__name__}")
    return runner


def check_dir(call: str, path: Any) -> str:
    """A directory in the sandbox: "." (or "") is its work directory, else
    as check_path."""
    _text(call, "path", path, empty=True)
    return "." if path in ("", ".") else check_path(call, path)


def check_path(call: str, path: Any) -> str:
    """A file path in the sandbox as polysandboxd takes it: relative to its
    work directory, no '..', '.' or empty part."""
    _text(call, "path", path)
    if path.startswith("/") or any(p in ("", ".", "..") for p in path.split("/")):
        raise ValueError(f"polysandbox.{call}: argument 'path' must be relative to the "
                         f"sandbox's work directory without '..', '.' or empty parts, "
                         f"not {path!r}")
    return path


class _Pending:
    """What Sandbox.create, get_or_create and attach give: await it for
    the Sandbox, or use it as an async context manager that destroys the
    sandbox on exit."""

    def __init__(self, make: Awaitable["AsyncSandbox"]):
        self._make = make
        self._sb: AsyncSandbox | None = None

    def __await__(self) -> Generator[Any, None, "AsyncSandbox"]:
        return self._make.__await__()

    async def __aenter__(self) -> "AsyncSandbox":
        self._sb = await self._make
        return self._sb

    async def __aexit__(self, *exc: Any) -> None:
        if self._sb is not None:
            await self._sb.adestroy()


class Sandbox:
    """A sandbox made by a runner; every call goes through that runner.

    id, provider, labels: what the sandbox is; created: False when
    get_or_create found it, or it was attached.  Calls on one Sandbox are
    serialised (one at a time, from any thread).  After destroy() or
    close() every call raises SandboxError.  `with` and `async with`
    destroy it on exit.
    """

    def __init__(self, runner: "Runner", handle: Any, info: SandboxInfo, created: bool):
        # Made by the runner: see create, get_or_create and attach.
        self.runner = runner
        self._handle = handle
        self.id = info.id
        self.provider = info.provider
        self.labels = dict(info.labels)
        self.created = created
        self._lock = threading.Lock()
        # The cancellation tokens of the execs under way (see destroy).
        self._running: set[Any] = set()
        self._running_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Sandbox({self.id!r}, provider={self.provider!r})"

    # ---- making one --------------------------------------------------------------

    @classmethod
    def _create(cls, runner: "Runner", options: Mapping[str, Any], call: str,
                get_or_create: bool = False) -> "Sandbox":
        body = build(call, {}, options, SANDBOX_OPTIONS)
        if get_or_create:
            if not body.get("labels"):
                raise ValueError(f"polysandbox.{call}: argument 'labels' is needed to find "
                                 "the sandbox by")
            body["get_or_create"] = True
        handle, info, created = runner._sb_create(body)
        return cls(runner, handle, info, created)

    @classmethod
    def _attach(cls, runner: "Runner", sandbox_id: Any, provider: Any, call: str) -> "Sandbox":
        _text(call, "sandbox_id", sandbox_id)
        if provider is not None:
            _text(call, "provider", provider)
        handle, info = runner._sb_attach(sandbox_id, provider)
        return cls(runner, handle, info, False)

    @staticmethod
    def _pending(runner: "Runner", fn: Any, *args: Any) -> _Pending:
        async def make() -> "AsyncSandbox":
            return await runner._acall(lambda *a, cancel: fn(*a), *args,
                                       abandon=Sandbox.destroy)
        return _Pending(make())

    @classmethod
    def create(cls, runner: "Runner | None" = None, **options: Any) -> _Pending:
        """A new sandbox, awaited (or `async with`: destroyed on exit).

        runner: a Local or a Client (None: the in-process default).
        options: provider, fallback, template, image, network, limits (as
        run), labels (dict of str), ttl (seconds: it is destroyed after
        that even if nobody does), env (dict: every exec's environment).
        Bad options raise here, before anything is awaited.  The sync
        twin is runner.create_sandbox(**options).
        """
        r = _runner(runner, "Sandbox.create")
        build("Sandbox.create", {}, options, SANDBOX_OPTIONS)   # raise now, not at await
        return cls._pending(r, AsyncSandbox._create, r, options, "Sandbox.create")

    @classmethod
    def get_or_create(cls, runner: "Runner | None" = None, **options: Any) -> _Pending:
        """Our persistent sandbox carrying every one of labels (needed),
        else a new one made with options (see create).  Sync twin:
        runner.get_or_create_sandbox."""
        r = _runner(runner, "Sandbox.get_or_create")
        if not options.get("labels"):
            raise ValueError("polysandbox.Sandbox.get_or_create: argument 'labels' is needed "
                             "to find the sandbox by")
        build("Sandbox.get_or_create", {}, options, SANDBOX_OPTIONS)
        return cls._pending(r, AsyncSandbox._create, r, options, "Sandbox.get_or_create",
                            True)

    @classmethod
    def attach(cls, sandbox_id: str, provider: str | None = None,
               runner: "Runner | None" = None) -> _Pending:
        """The existing sandbox sandbox_id, awaited.  Sync twin:
        runner.attach(sandbox_id, provider)."""
        r = _runner(runner, "Sandbox.attach")
        _text("Sandbox.attach", "sandbox_id", sandbox_id)
        return cls._pending(r, AsyncSandbox._attach, r, sandbox_id, provider,
                            "Sandbox.attach")

    @classmethod
    async def find(cls, labels: Mapping[str, str] | None = None, provider: str | None = None,
                   runner: "Runner | None" = None) -> list[SandboxInfo]:
        """runner.sandboxes(labels, provider), awaited."""
        r = _runner(runner, "Sandbox.find")
        return await asyncio.to_thread(r.sandboxes, labels, provider)

    # ---- using one -----------------------------------------------------------------

    def _use(self, call: str) -> Any:
        if self._handle is None:
            raise SandboxError(f"polysandbox.Sandbox.{call}: sandbox {self.id} was destroyed "
                               "or closed")
        return self._handle

    def _exec_body(self, body: dict[str, Any], cancel: Any = None,
                   on_output: "OutputSink | None" = None) -> Result:
        own = None
        if cancel is None:     # destroy may still have to stop it
            cancel = own = self.runner._cancel_new()
        with self._running_lock:
            self._running.add(cancel)
        try:
            with self._lock:
                return self.runner._sb_exec(self._use("exec"), body, cancel=cancel,
                                            on_output=on_output)
        finally:
            with self._running_lock:
                self._running.discard(cancel)
            if own is not None:
                self.runner._cancel_free(own)

    def exec(self, command: str | Sequence[str], **options: Any) -> Result:
        """Run command (a str: a /bin/sh -c line; a list: an argv) in this
        sandbox.  options: env, cwd, timeout (seconds), stdin (str or
        bytes), files (dict of relative path to str or bytes)."""
        return self._exec_body(_exec_command(command, options, "Sandbox.exec"))

    execute = exec   # cased/sandboxes' name

    def exec_code(self, language: str, code: str, args: Sequence[str] | None = None,
                  **options: Any) -> Result:
        """Run code with the language template language in this sandbox
        (options as exec)."""
        return self._exec_body(_exec_code(language, code, args, options, "Sandbox.exec_code"))

    def aexec(self, command: str | Sequence[str], **options: Any) -> Awaitable[Result]:
        """exec, awaited; cancelling the awaiting task stops the command
        (the sandbox stays)."""
        body = _exec_command(command, options, "Sandbox.aexec")
        return self.runner._acall(self._exec_body, body)

    aexecute = aexec

    def aexec_code(self, language: str, code: str, args: Sequence[str] | None = None,
                   **options: Any) -> Awaitable[Result]:
        """exec_code, awaited (see aexec)."""
        body = _exec_code(language, code, args, options, "Sandbox.aexec_code")
        return self.runner._acall(self._exec_body, body)

    def stream(self, command: str | Sequence[str], **options: Any) -> "Stream":
        """Run command (options as exec) and give its output as it is
        produced: a Stream to iterate with for or async for, yielding
        Chunk objects (stream "stdout" or "stderr", data bytes); its
        result is the Result once the loop ends.  Breaking out of the
        loop or cancelling the iterating task stops the command.  Through
        polysandboxd this is the exec route's server-sent events.  Bad
        options raise here, before anything runs."""
        from .stream import Stream
        return Stream(self, _exec_command(command, options, "Sandbox.stream"))

    def astream(self, command: str | Sequence[str], **options: Any) -> "Stream":
        """stream, for `async for` (the same Stream: either loop works)."""
        from .stream import Stream
        return Stream(self, _exec_command(command, options, "Sandbox.astream"))

    def execute_many(self, commands: Sequence[Any], *, stop_on_error: bool = False,
                     **options: Any) -> list[Result]:
        """Run each of commands in this sandbox, one after the other; their
        Results in order.  A command is what exec takes (a str or an argv
        list) or a dict: {"command": ...} or {"language": ..., "code":
        ..., "args": [...]}, with exec options of its own; options given
        here apply to every command (a command's own win).  Every command
        is checked before any runs (errors name commands[i]).
        stop_on_error: stop after the first Result that is not a success
        (the list then ends with it)."""
        bodies = _exec_many("Sandbox.execute_many", commands, stop_on_error, options)
        out = []
        for body in bodies:
            out.append(self._exec_body(body))
            if stop_on_error and not out[-1].success:
                break
        return out

    async def aexecute_many(self, commands: Sequence[Any], *, stop_on_error: bool = False,
                            **options: Any) -> list[Result]:
        """execute_many, awaited; cancelling the awaiting task stops the
        command under way and runs no more (see aexec)."""
        bodies = _exec_many("Sandbox.aexecute_many", commands, stop_on_error, options)
        out = []
        for body in bodies:
            out.append(await self.runner._acall(self._exec_body, body))
            if stop_on_error and not out[-1].success:
                break
        return out

    def upload(self, path: str, data: str | bytes, mode: int = 0o644) -> None:
        """Write data (str: as UTF-8) to path, relative to the sandbox's
        work directory, with permission bits mode."""
        check_path("Sandbox.upload", path)
        if isinstance(data, str):
            data = data.encode("utf-8")
        elif isinstance(data, (bytearray, memoryview)):
            data = bytes(data)
        elif not isinstance(data, bytes):
            raise TypeError("polysandbox.Sandbox.upload: argument 'data' must be str or bytes, "
                            f"not {type(data).__name__}")
        if isinstance(mode, bool) or not isinstance(mode, int) or not 0 <= mode <= 0o7777:
            raise ValueError("polysandbox.Sandbox.upload: argument 'mode' must be permission "
                             f"bits (0 to 0o7777), not {mode!r}")
        with self._lock:
            self.runner._sb_upload(self._use("upload"), path, data, mode)

    def download(self, path: str, max_bytes: int = MAX_DOWNLOAD) -> bytes:
        """The bytes of path in the sandbox (at most max_bytes: a larger
        file is an error, never cut short).  Through polysandboxd the
        server's [server] max_download bounds it too."""
        check_path("Sandbox.download", path)
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise ValueError("polysandbox.Sandbox.download: argument 'max_bytes' must be a "
                             f"whole number above 0, not {max_bytes!r}")
        with self._lock:
            return self.runner._sb_download(self._use("download"), path, max_bytes)

    def list_files(self, path: str = ".", limit: int = LIST_FILES) -> FileList:
        """The entries of the directory path (relative to the work
        directory; "." is that) as a FileList of FileEntry (names, then
        hidden names, as the sandbox's shell globs them),
        at most limit of them (its truncated says whether there were
        more).  The listing runs as a command in the sandbox (/bin/sh and
        stat from its image).  SandboxNotFoundError when path is not a
        directory there; ValueError for a path that leaves the work
        directory (checked here: no request is made)."""
        check_dir("Sandbox.list_files", path)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100000:
            raise ValueError("polysandbox.Sandbox.list_files: argument 'limit' must be a whole "
                             f"number from 1 to 100000, not {limit!r}")
        with self._lock:
            return self.runner._sb_list_files(self._use("list_files"), path, limit)

    async def alist_files(self, path: str = ".", limit: int = LIST_FILES) -> FileList:
        """list_files, awaited."""
        return await asyncio.to_thread(self.list_files, path, limit)

    async def aupload(self, path: str, data: str | bytes, mode: int = 0o644) -> None:
        """upload, awaited."""
        await asyncio.to_thread(Sandbox.upload, self, path, data, mode)

    async def adownload(self, path: str, max_bytes: int = MAX_DOWNLOAD) -> bytes:
        """download, awaited."""
        return await asyncio.to_thread(Sandbox.download, self, path, max_bytes)

    def destroy(self) -> None:
        """Destroy the sandbox (once: again does nothing).  An exec running
        in it stops now rather than hold the destroy (its result: status
        "sandbox_error", error code cancelled), as polysandboxd does.  An
        error says the backend may still hold it."""
        lock: Any = self._lock
        if self.runner._interrupts_locally:
            with self._running_lock:
                for token in self._running:
                    self.runner._cancel_fire(token)
        else:
            lock = contextlib.nullcontext()   # the server stops the exec, not us
        with lock:
            handle, self._handle = self._handle, None
            if handle is not None:
                self.runner._sb_destroy(handle)

    async def adestroy(self) -> None:
        """destroy, awaited."""
        await asyncio.to_thread(Sandbox.destroy, self)

    def close(self) -> None:
        """Let go of the sandbox, leaving it running (attach finds it
        again by id; its ttl, if any, still applies)."""
        with self._lock:
            handle, self._handle = self._handle, None
            if handle is not None:
                self.runner._sb_release(handle)

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        Sandbox.destroy(self)

    async def __aenter__(self) -> "Sandbox":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.adestroy()

    def __del__(self) -> None:
        # Never destroyed here: a sandbox someone forgot is left to its
        # ttl and `polysandbox gc`, its handle freed.
        if getattr(self, "_handle", None) is not None:
            try:
                self.close()
            except Exception:
                pass


class AsyncSandbox(Sandbox):
    """A Sandbox as the awaitable constructors give it (Sandbox.create,
    get_or_create, attach): as in cased/sandboxes, execute, execute_many,
    upload, download and destroy are awaited (they are aexec,
    aexecute_many, aupload, adownload and adestroy, which it also has);
    stream works with async for (and for); exec, exec_code, list_files
    and close stay sync, as on Sandbox.  Since 0.3."""

    def execute(self, command: str | Sequence[str],  # type: ignore[override]
                **options: Any) -> Awaitable[Result]:
        """aexec."""
        return self.aexec(command, **options)

    def execute_many(self, commands: Sequence[Any], *,  # type: ignore[override]
                     stop_on_error: bool = False, **options: Any) -> Awaitable[list[Result]]:
        """aexecute_many."""
        return self.aexecute_many(commands, stop_on_error=stop_on_error, **options)

    def upload(self, path: str, data: str | bytes,  # type: ignore[override]
               mode: int = 0o644) -> Awaitable[None]:
        """aupload."""
        return self.aupload(path, data, mode)

    def download(self, path: str,  # type: ignore[override]
                 max_bytes: int = MAX_DOWNLOAD) -> Awaitable[bytes]:
        """adownload."""
        return self.adownload(path, max_bytes)

    def destroy(self) -> Awaitable[None]:  # type: ignore[override]
        """adestroy."""
        return self.adestroy()


def _exec_command(command: Any, options: Mapping[str, Any], call: str) -> dict[str, Any]:
    _only_exec(options, call)
    return _command_body(command, options, call)


def _exec_code(language: Any, code: Any, args: Any, options: Mapping[str, Any],
               call: str) -> dict[str, Any]:
    _only_exec(options, call)
    return _code_body(language, code, args, options, call)


def _exec_many(call: str, commands: Any, stop_on_error: Any,
               options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The exec bodies of execute_many's commands, every one checked."""
    from .many import CODE_KEYS, _body
    if isinstance(commands, (str, bytes, Mapping)) or not isinstance(commands, Sequence):
        raise TypeError(f"polysandbox.{call}: argument 'commands' must be a list of "
                        f"commands or dicts, not {type(commands).__name__}")
    if not isinstance(stop_on_error, bool):
        raise TypeError(f"polysandbox.{call}: argument 'stop_on_error' must be a bool, "
                        f"not {type(stop_on_error).__name__}")
    _only_exec(options, call)
    for i, c in enumerate(commands):
        if isinstance(c, Mapping):
            _only_exec({k: v for k, v in c.items() if k != "command" and k not in CODE_KEYS},
                       f"{call} commands[{i}]")
    return [_body(i, c, options, call, "commands") for i, c in enumerate(commands)]


def _only_exec(options: Mapping[str, Any], call: str) -> None:
    from .request import EXEC_OPTIONS
    for k in options:
        if k not in EXEC_OPTIONS:
            raise TypeError(f"polysandbox.{call}: unknown option {k!r} "
                            f"(options: {', '.join(EXEC_OPTIONS)})")


def warn_unlisted(provider: str, error: str) -> None:
    """sandboxes() over every provider: one whose listing failed (a
    stopped dockerd, a cloud out of reach) is named in a RuntimeWarning
    and the others' sandboxes are returned, as polysandboxd does."""
    warnings.warn(f"polysandbox.sandboxes: the sandboxes of provider {provider!r} are not "
                  f"listed: {error}", RuntimeWarning, stacklevel=4)


def list_sandboxes(runner: "Runner", labels: Any, provider: Any) -> list[SandboxInfo]:
    call = "sandboxes"
    want = _pairs(call, "labels", labels) if labels is not None else {}
    if provider is not None:
        _text(call, "provider", provider)
    return runner._sb_list(want, provider)
