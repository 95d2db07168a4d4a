"""polysandbox.many - many runs at once, with a bound, results in order.

Runner.run_many and arun_many: every request is checked first (a bad
one is named by its index before anything runs), then at most
`concurrency` run at a time, in threads of their own pool (the event
loop's default pool would bound them at a handful).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from .request import Progress, _code_body, _command_body

if TYPE_CHECKING:
    from .request import Runner

__all__ = ["bodies", "CODE_KEYS"]

CODE_KEYS = ("language", "code", "args")


def _body(i: int, req: Any, options: Mapping[str, Any], call: str,
          name: str = "requests") -> dict[str, Any]:
    """The body of request i: a command, or a dict with "command" or
    "language" and "code" and options of its own over options."""
    where = f"{call} {name}[{i}]"
    if isinstance(req, Mapping):
        opts = dict(options)
        opts.update((k, v) for k, v in req.items() if k != "command" and k not in CODE_KEYS)
        if "command" in req:
            if any(k in req for k in CODE_KEYS):
                raise ValueError(f"polysandbox.{where}: give 'command' or 'language' and "
                                 f"'code', not both")
            return _command_body(req["command"], opts, where)
        if "language" not in req or "code" not in req:
            raise ValueError(f"polysandbox.{where}: a dict needs 'command', or 'language' "
                             f"and 'code'")
        return _code_body(req["language"], req["code"], req.get("args"), opts, where)
    return _command_body(req, options, where)


def bodies(requests: Any, concurrency: Any, options: Mapping[str, Any],
           call: str) -> list[dict[str, Any]]:
    """The run bodies of requests, every one checked; TypeError or
    ValueError naming the request or argument that is wrong."""
    if isinstance(requests, (str, bytes, Mapping)) or not isinstance(requests, Sequence):
        raise TypeError(f"polysandbox.{call}: argument 'requests' must be a list of "
                        f"commands or dicts, not {type(requests).__name__}")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"polysandbox.{call}: argument 'concurrency' must be a whole "
                         f"number above 0, not {concurrency!r}")
    return [_body(i, r, options, call) for i, r in enumerate(requests)]


def run_many(runner: "Runner", requests: Sequence[Any], concurrency: int,
             progress: Progress | None, return_exceptions: bool,
             options: Mapping[str, Any]) -> list[Any]:
    todo = bodies(requests, concurrency, options, "run_many")
    out: list[Any] = [None] * len(todo)
    if not todo:
        return out
    with concurrent.futures.ThreadPoolExecutor(min(concurrency, len(todo)),
                                               thread_name_prefix="polysandbox") as pool:
        futs = {pool.submit(runner._execute, b): i for i, b in enumerate(todo)}
        done = 0
        try:
            for f in concurrent.futures.as_completed(futs):
                i = futs[f]
                e = f.exception()
                if e is not None and not return_exceptions:
                    raise e
                out[i] = e if e is not None else f.result()
                done += 1
                if progress is not None:
                    progress(done, len(todo), out[i])
        except BaseException:
            for f in futs:
                f.cancel()
            raise
    return out


async def arun_many(runner: "Runner", requests: Sequence[Any], concurrency: int,
                    progress: Progress | None, return_exceptions: bool,
                    options: Mapping[str, Any]) -> list[Any]:
    todo = bodies(requests, concurrency, options, "arun_many")
    out: list[Any] = [None] * len(todo)
    if not todo:
        return out
    done = 0

    async def one(i: int, body: dict[str, Any]) -> None:
        nonlocal done
        async with gate:
            try:
                out[i] = await runner._aexecute(body, executor=pool)
            except Exception as e:   # CancelledError is not one: it goes on
                if not return_exceptions:
                    raise
                out[i] = e
        done += 1
        if progress is not None:
            progress(done, len(todo), out[i])

    gate = asyncio.Semaphore(concurrency)
    with concurrent.futures.ThreadPoolExecutor(min(concurrency, len(todo)),
                                               thread_name_prefix="polysandbox") as pool:
        tasks = [asyncio.ensure_future(one(i, b)) for i, b in enumerate(todo)]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            # A refusal or a cancel: the others stop (each waits for its
            # run to end) before this goes on.
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
    return out
