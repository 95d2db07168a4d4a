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
import math
from typing import Any, Awaitable, Mapping, Sequence

from .result import Result

__all__ = ["Runner", "LIMITS"]

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
    if isinstance(v, (str, bytes)) or not isinstance(v, Sequence):
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


OPTIONS = ("provider", "fallback", "template", "image", "network", "limits", "env", "cwd",
           "timeout", "stdin", "files")


def build(call: str, what: dict[str, Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """The /v1/run body of a request; TypeError/ValueError naming the
    argument when one is wrong."""
    for k in options:
        if k not in OPTIONS:
            raise TypeError(f"polysandbox.{call}: unknown option {k!r} "
                            f"(options: {', '.join(OPTIONS)})")
    return _build(call, dict(what), **options)


def _build(call: str, body: dict[str, Any], *, provider=None, fallback=None, template=None,
           image=None, network=None, limits=None, env=None, cwd=None, timeout=None,
           stdin=None, files=None) -> dict[str, Any]:
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
        if network not in ("none", "host"):
            raise ValueError(f"{_where(call, 'network')} must be \"none\" or \"host\", "
                             f"not {network!r}")
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
    template, image, network ("none" or "host"), limits (dict: wall, cpu
    in seconds; memory, fsize, disk, stdout, stderr in bytes; pids,
    nofile), env (dict), cwd, timeout (seconds), stdin (str or bytes),
    files (dict of relative path to str or bytes).  A sandbox failure is a
    Result with status "sandbox_error"; a refused request raises a
    SandboxError.  The a- twins run the same call in a worker thread; a
    local one cancelled while it awaits stops its run.
    """

    def _execute(self, body: dict[str, Any]) -> Result:
        raise NotImplementedError

    def providers(self) -> list:
        """The providers, as `polysandbox providers --json` (Provider)."""
        raise NotImplementedError

    def templates(self) -> list:
        """The language templates, as `polysandbox templates --json` (Template)."""
        raise NotImplementedError

    def _aexecute(self, body: dict[str, Any]) -> Awaitable[Result]:
        """The run, awaited: in a worker thread by default (the blocking
        call releases the GIL)."""
        return asyncio.to_thread(self._execute, body)

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


def _command_body(command: Any, options: Mapping[str, Any], call: str = "run") -> dict:
    if isinstance(command, str):
        what = {"shell": _text(call, "command", command)}
    elif isinstance(command, Sequence) and not isinstance(command, (bytes, bytearray)):
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
