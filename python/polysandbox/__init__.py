"""polysandbox - run untrusted code in sandboxes, from Python.

    import polysandbox as psb
    r = psb.run("echo hi")                     # r.stdout == "hi\\n", r.status == "ok"
    r = await psb.arun_code("python", "print(6*7)")
    client = psb.Client("http://127.0.0.1:8780", token=...)   # through polysandboxd
    rep = psb.evaluate("HumanEval.jsonl", "s.jsonl", k=[1, 10], providers=["local"],
                       progress=lambda done, total, passed: print(done, total, passed))
    rep.counts["passed"], rep.pass_at(1), rep.to_json()            # eval --json
    rep = psb.compare("HumanEval.jsonl", "s.jsonl", providers=["local", "docker"])
    rep.agree, [c.pass_rate for c in rep.columns], rep.to_json()  # compare --json
    rep = psb.compare_from("HumanEval.jsonl", "s.jsonl", results=["a.jsonl", "b.jsonl"])
    [(p.name, p.ready, p.size) for p in psb.pools()]              # pools --json
    r = client.run("echo hi")
    rs = psb.run_many(["echo 1", ["echo", "2"]], concurrency=4)   # results in order
    async with psb.Sandbox.create(labels={"task": "t1"}) as sb:    # or runner=client
        await sb.upload("in.txt", b"data")                         # an AsyncSandbox
        r = await sb.execute("cat in.txt")
        async for chunk in sb.stream("./slow.sh"):                 # output as produced
            print(chunk.stream, chunk.text)
        rs = await sb.execute_many(["make", "make test"], stop_on_error=True)
    with client.create_sandbox(template="python") as sb:           # sync
        r = sb.exec_code("python", "print(1)")

The module-level calls use libpolysandbox in this process (one context,
made on first use: see Local); a Client makes the same calls through
polysandboxd.  Results are Result objects with the fields of
`polysandbox run --json`; code run with a compiled template also has
Result.compile, the compile step's status, time and output.
"""

from __future__ import annotations

from typing import Any, Awaitable, Mapping, Sequence

from .client import Client
from .errors import (AuthError, CancelledRunError, ConfigError, InvalidRequestError,
                     ProviderError, SandboxError, SandboxNotFoundError, SandboxTimeoutError,
                     ServerError)
from .info import Pool, Provider, Template
from .local import Local, backend, default
from .request import LIMITS, Progress, Runner
from .evalargs import FORMATS, EvalProgress
from .report import CompareColumn, CompareReport, Difference, EvalReport
from .result import STATUSES, Artifact, Chunk, Compile, LeftOut, Result
from .sandbox import AsyncSandbox, FileEntry, FileList, Sandbox, SandboxInfo
from .stream import Stream

__version__ = "0.1.0"

__all__ = [
    "backend", "run", "run_code", "arun", "arun_code", "run_many", "arun_many", "providers",
    "templates", "pools", "apools", "evaluate", "aevaluate", "compare", "acompare",
    "compare_from",
    "create_sandbox", "get_or_create_sandbox", "attach", "sandboxes",
    "Sandbox", "AsyncSandbox", "SandboxInfo", "FileEntry", "FileList", "Progress",
    "Provider", "Template", "Pool", "EvalReport", "EvalProgress", "FORMATS", "CompareReport",
    "CompareColumn", "Difference", "Local", "Client", "Runner", "Result", "Compile", "Chunk",
    "Artifact", "LeftOut", "Stream",
    "STATUSES", "LIMITS", "SandboxError", "InvalidRequestError", "ConfigError",
    "SandboxNotFoundError", "ProviderError", "AuthError", "SandboxTimeoutError",
    "CancelledRunError", "ServerError", "ExecutionResult",
]

# cased/sandboxes' name for a result.
ExecutionResult = Result


def run(command: str | Sequence[str], **options: Any) -> Result:
    """Runner.run on the in-process runner."""
    return default().run(command, **options)


def run_code(language: str, code: str, args: Sequence[str] | None = None,
             **options: Any) -> Result:
    """Runner.run_code on the in-process runner."""
    return default().run_code(language, code, args, **options)


def providers() -> list[Provider]:
    """Local.providers on the in-process runner."""
    return default().providers()


def templates() -> list[Template]:
    """Local.templates on the in-process runner."""
    return default().templates()


def pools(wait: float | None = None) -> list[Pool]:
    """Runner.pools on the in-process runner."""
    return default().pools(wait)


def apools(wait: float | None = None) -> Awaitable[list[Pool]]:
    """Runner.apools on the in-process runner."""
    return default().apools(wait)


def evaluate(dataset: str, samples: str | None = None, **options: Any) -> EvalReport:
    """Runner.evaluate on the in-process runner."""
    return default().evaluate(dataset, samples, **options)


def aevaluate(dataset: str, samples: str | None = None,
              **options: Any) -> Awaitable[EvalReport]:
    """Runner.aevaluate on the in-process runner."""
    return default().aevaluate(dataset, samples, **options)


def compare(dataset: str, samples: str | None = None, **options: Any) -> CompareReport:
    """Runner.compare on the in-process runner."""
    return default().compare(dataset, samples, **options)


def compare_from(dataset: str, samples: str | None = None, **options: Any) -> CompareReport:
    """Runner.compare_from on the in-process runner."""
    return default().compare_from(dataset, samples, **options)


def acompare(dataset: str, samples: str | None = None,
             **options: Any) -> Awaitable[CompareReport]:
    """Runner.acompare on the in-process runner."""
    return default().acompare(dataset, samples, **options)


def arun(command: str | Sequence[str], **options: Any) -> Awaitable[Result]:
    """Runner.arun on the in-process runner."""
    return default().arun(command, **options)


def arun_code(language: str, code: str, args: Sequence[str] | None = None,
              **options: Any) -> Awaitable[Result]:
    """Runner.arun_code on the in-process runner."""
    return default().arun_code(language, code, args, **options)


def run_many(requests: Sequence[Any], **options: Any) -> list[Any]:
    """Runner.run_many on the in-process runner."""
    return default().run_many(requests, **options)


def arun_many(requests: Sequence[Any], **options: Any) -> Awaitable[list[Any]]:
    """Runner.arun_many on the in-process runner."""
    return default().arun_many(requests, **options)


def create_sandbox(**options: Any) -> Sandbox:
    """Runner.create_sandbox on the in-process runner."""
    return default().create_sandbox(**options)


def get_or_create_sandbox(**options: Any) -> Sandbox:
    """Runner.get_or_create_sandbox on the in-process runner."""
    return default().get_or_create_sandbox(**options)


def attach(sandbox_id: str, provider: str | None = None) -> Sandbox:
    """Runner.attach on the in-process runner."""
    return default().attach(sandbox_id, provider)


def sandboxes(labels: Mapping[str, str] | None = None,
              provider: str | None = None) -> list[SandboxInfo]:
    """Runner.sandboxes on the in-process runner."""
    return default().sandboxes(labels, provider)
