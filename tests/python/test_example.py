"""tests/python/test_example.py - the example of issue 18 (the Python
package's "what a user can do"), run as written, each line checked.

Run by example.sh under `make check`.  Only `token=...` is filled in
(the session's polysandboxd's).  The docker provider of tests/config
may be there or not: the sandbox asked of it falls back to local either
way the example reads, and the checks take what it got.
"""

import gzip
import json
import os

import pytest

# A HumanEval-format dataset of one task and its samples: ten, so that
# pass@10 is defined; seven pass.
TASK = {"task_id": "HumanEval/0", "prompt": "def add(a, b):\n",
        "canonical_solution": "    return a + b\n",
        "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n",
        "entry_point": "add"}
SAMPLES = ["    return a + b\n"] * 7 + ["    return a - b\n"] * 3


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """The example's files (HumanEval.jsonl.gz, s.jsonl) in its working
    directory."""
    with gzip.open(tmp_path / "HumanEval.jsonl.gz", "wt") as f:
        f.write(json.dumps(TASK) + "\n")
    (tmp_path / "s.jsonl").write_text("".join(
        json.dumps({"task_id": "HumanEval/0", "completion": c}) + "\n" for c in SAMPLES))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.asyncio
async def test_issue_example(psb, server, workdir):
    """Issue 18's example, line by line, as written."""
    import polysandbox as psb
    r = psb.run("echo hi")                          # sync; r.stdout == "hi\n", r.status == "ok"
    assert r.stdout == "hi\n" and r.status == "ok", r
    r = await psb.arun_code("python", "print(6*7)")  # async twin
    assert r.stdout == "42\n" and r.status == "ok", r
    chunks = []
    async with psb.Sandbox.create(provider="docker", fallback=["local"], labels={"task": "t1"}) as sb:
        await sb.upload("data.csv", "data.csv")
        async for chunk in sb.stream("python3 slow.py"): chunks.append(chunk)  # noqa: E701
        res = await sb.execute_many(["pip --version", "python3 -V"])
        assert isinstance(sb, psb.AsyncSandbox) and sb.provider in ("docker", "local")
        assert await sb.download("data.csv") == b"data.csv"
        sid, prov = sb.id, sb.provider
    # slow.py is not there: python3 says so on stderr, as the stream gave it.
    assert stream_text(chunks, "stderr") and "slow.py" in stream_text(chunks, "stderr"), chunks
    assert [x.exit_code is not None for x in res] == [True, True] \
        and res[1].success and res[1].stdout.startswith("Python 3"), res
    assert sid not in [i.id for i in psb.sandboxes({"task": "t1"}, prov)], "destroyed on exit"
    sb = await psb.Sandbox.get_or_create(labels={"agent": "a1"})
    try:
        again = await psb.Sandbox.get_or_create(labels={"agent": "a1"})
        assert again.id == sb.id and sb.created and not again.created
    finally:
        await sb.destroy()
    report = psb.evaluate(dataset="HumanEval.jsonl.gz", samples="s.jsonl", k=[1, 10], providers=["local"])
    assert report.counts["passed"] == 7 and report.pass_at(1) == pytest.approx(0.7) \
        and report.pass_at(10) == pytest.approx(1.0), report.to_json()
    client = psb.Client("http://127.0.0.1:8780", token=server.token)   # the same API, through polysandboxd
    assert isinstance(client, psb.Client)
    client = psb.Client(server.url, token=server.token)
    assert client.run("echo hi").stdout == "hi\n"


def stream_text(chunks, name):
    return b"".join(c.data for c in chunks if c.stream == name).decode()
