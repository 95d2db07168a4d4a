"""polysandbox.stream - the output of one exec as it is produced.

Sandbox.stream gives a Stream.  Iterating it (for, or async for) starts
the exec in a thread of its own; the runner hands each chunk of output
to that thread as it comes (in the process: the library's output
callback; through polysandboxd: the exec route's server-sent events),
and the thread queues it for the iterating side.  Leaving the loop early
(break, an exception, a cancelled task) stops the command and waits for
the exec to end, so nothing of it is left running.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Iterator

from .errors import SandboxError
from .result import Chunk, Result

if TYPE_CHECKING:
    from .sandbox import Sandbox

__all__ = ["Stream"]


class _End:
    """The last item of a stream's queue: the exec's result or error."""

    def __init__(self, result: Result | None, error: BaseException | None):
        self.result = result
        self.error = error


class Stream:
    """The output of one exec in a sandbox, chunk by chunk (Chunk: stream
    "stdout" or "stderr", data bytes), in the order the command wrote it
    on each stream.  Iterate it once, with for or async for.  Once the
    loop ends result is the exec's Result (its stdout and stderr hold
    every chunk too, within the output caps); a refused exec raises its
    SandboxError from the loop.  Breaking out of the loop, or cancelling
    the task iterating it, stops the command (result then stays None).
    """

    def __init__(self, sandbox: "Sandbox", body: dict[str, Any]):
        self._sandbox = sandbox
        self._body = body
        self._used = False
        self.result: Result | None = None

    def __repr__(self) -> str:
        return f"Stream({self._sandbox!r}, result={self.result!r})"

    def _start(self, put: Callable[[Any], None]) -> tuple[threading.Thread, Any]:
        """The exec, begun in a thread that puts each Chunk, then an _End,
        with put; (the thread, its cancellation token)."""
        if self._used:
            raise SandboxError("polysandbox.Stream: a stream is iterated once")
        self._used = True
        sb, runner = self._sandbox, self._sandbox.runner
        token = runner._cancel_new()

        def work() -> None:
            try:
                end = _End(sb._exec_body(self._body, cancel=token,
                                         on_output=lambda name, data: put(Chunk(name, data))),
                           None)
            except BaseException as e:   # handed to the iterating side
                end = _End(None, e)
            try:
                put(end)
            except RuntimeError:
                pass   # the event loop is closed: nobody waits for it

        th = threading.Thread(target=work, name="polysandbox-stream", daemon=True)
        th.start()
        return th, token

    def _end(self, item: _End) -> None:
        if item.error is not None:
            raise item.error
        self.result = item.result

    def __iter__(self) -> Iterator[Chunk]:
        q: queue.SimpleQueue = queue.SimpleQueue()
        th, token = self._start(q.put)
        runner = self._sandbox.runner
        try:
            while True:
                item = q.get()
                if isinstance(item, _End):
                    self._end(item)
                    return
                yield item
        finally:
            if th.is_alive():
                runner._cancel_fire(token)   # the loop was left early
            th.join()
            runner._cancel_free(token)

    async def __aiter__(self) -> AsyncIterator[Chunk]:
        loop = asyncio.get_running_loop()
        q: asyncio.Queue = asyncio.Queue()
        th, token = self._start(lambda item: loop.call_soon_threadsafe(q.put_nowait, item))
        runner = self._sandbox.runner
        ended = False
        try:
            while True:
                item = await q.get()
                if isinstance(item, _End):
                    ended = True
                    self._end(item)
                    return
                yield item
        finally:
            if not ended:
                # Left early (break, cancel): stop the command, then wait
                # for the exec's end without holding the loop.
                runner._cancel_fire(token)
                join = loop.run_in_executor(None, th.join)
                try:
                    await asyncio.shield(join)
                except asyncio.CancelledError:
                    await asyncio.wait([join])
                    raise
                finally:
                    # Freed only once no thread uses it; else left to the process.
                    if not th.is_alive():
                        runner._cancel_free(token)
            else:
                runner._cancel_free(token)   # the exec is over: _End came after it
