"""tests/python/test_evaluate.py - evaluate/aevaluate on the local
provider, against `polysandbox eval --json` on the same files, with
pytest.

Run by evaluate.sh under `make check`.  The dataset is made here: two sh
tasks, five samples (three pass), so every verdict is known in advance
and none hangs on timing.  No polysandboxd (see remote-eval.py).
"""

import json
import os
import subprocess
import threading

import pytest

from harness import PS, cancel_later, sh_eval_files, write_jsonl

# Generous: a bound on a hang under load, never reached by these programs.
OPTS = {"k": [1, 2], "providers": ["local"], "jobs": 2, "timeout": 30}
CLI_OPTS = ["-k", "1,2", "-p", "local", "-j", "2", "--timeout", "30s"]


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return str(tmp_path_factory.mktemp("evaluate"))


@pytest.fixture(scope="module")
def files(tmp):
    """(dataset, samples): see harness.sh_eval_files."""
    return sh_eval_files(tmp)


def cli(tmp, *args):
    """`polysandbox -q eval ARGS --json` in tmp: (exit status, stdout as
    JSON or None, stderr)."""
    p = subprocess.run([PS, "-q", "eval", *args, "--json"], cwd=tmp, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    err = p.stderr.decode(errors="replace")
    try:
        return p.returncode, json.loads(p.stdout), err
    except ValueError:
        return p.returncode, None, err


def shape(v):
    """v's keys (in order) and types, recursively."""
    if isinstance(v, dict):
        return [(k, shape(x)) for k, x in v.items()]
    if isinstance(v, list):
        return [shape(x) for x in v[:1]]
    return type(v).__name__ if v is not None else None


def scores(o):
    return (o["samples"], o["done"], o["counts"], o["graded"], o["pass_at_k"],
            o["pass_at_k_tasks"], [(t["task_id"], t["n"], t["c"], t["pass_at_k"])
                                   for t in o["tasks"]])


@pytest.fixture(scope="module")
def want(tmp, files):
    """eval --json's report on the files (its exit status checked)."""
    rc, want, err = cli(tmp, "--dataset", files[0], "--samples", files[1],
                        "--out", "cli.jsonl", *CLI_OPTS)
    assert want is not None and rc == 0, f"exit {rc} {err}"
    return want


@pytest.fixture(scope="module")
def evaluated(psb, tmp, files):
    """evaluate on the files with out= and a progress: (the report, its
    JSON as an object, the progress calls, the out path)."""
    calls = []
    out = os.path.join(tmp, "py.jsonl")
    rep = psb.evaluate(*files, out=out, progress=lambda *a: calls.append(a), **OPTS)
    return rep, json.loads(rep.to_json()), calls, out


# ---- evaluate against eval --json -------------------------------------------
def test_evaluate_scores(psb, want, evaluated):
    """evaluate: an EvalReport with eval --json's verdict counts, pass@k and tasks."""
    rep, got, _, _ = evaluated
    assert isinstance(rep, psb.EvalReport)
    assert scores(got) == scores(want), f"cli {scores(want)}\npy  {scores(got)}"
    assert rep.passed == 3 and rep.counts["failed"] == 2
    assert rep.pass_at(1) == want["pass_at_k"]["1"] and rep.sandbox_errors == []


def test_evaluate_fields(want, evaluated):
    """evaluate: the same fields as eval --json, in its order, at every level."""
    assert shape(evaluated[1]) == shape(want)


def test_evaluate_jobs_meta(want, evaluated):
    """evaluate: the same jobs and meta (inputs and their digests, limits, providers)."""
    got = evaluated[1]
    assert got["jobs"] == want["jobs"] == 2
    for k in ("version", "host", "dataset", "samples", "canonical", "limits", "jobs",
              "rebuilt", "providers"):
        assert got["meta"][k] == want["meta"][k], k
    assert got["meta"]["providers"] == ["local"] and got["dataset"] == want["dataset"]


def test_evaluate_out(evaluated):
    """evaluate(out=): a record per sample in the results file, as eval --out."""
    _, got, _, out = evaluated
    with open(out) as f:
        records = [json.loads(line) for line in f]
    assert got["results"] == out and len(records) == 5
    assert sorted(r["sample"] for r in records) == list(range(5))


def test_from_json_round_trip(psb, want):
    """EvalReport.from_json(eval --json).to_json() is the CLI's object unchanged."""
    assert json.loads(psb.EvalReport.from_json(want).to_json()) == want


def test_usage_and_cost(psb, want, evaluated):
    """usage per provider; no cost without a price table; cost() reads a priced one."""
    rep = evaluated[0]
    priced = dict(want, usage=dict(want.get("usage") or {},
                                   cost={"total": 1.5, "per_sample": 0.3,
                                         "per_passing_sample": 0.5, "currency": "EUR"}))
    assert rep.cost() is None and rep.cost("local") is None and rep.cost("nosuch") is None
    assert rep.providers["local"]["samples"] == 5, rep.providers
    assert rep.usage["cpu_ns"]["total"] > 0 and rep.usage["peak_memory_bytes"] > 0, rep.usage
    assert psb.EvalReport.from_json(priced).cost()["currency"] == "EUR"


def test_progress(evaluated):
    """progress: (done, total, passed) once per sample, done rising to
    total, passed ending at the passes."""
    calls = evaluated[2]
    assert [c[0] for c in calls] == [1, 2, 3, 4, 5] and {c[1] for c in calls} == {5}, calls
    assert calls[-1][2] == 3 and all(a[2] <= b[2] for a, b in zip(calls, calls[1:])), calls


def test_out_exists_and_resume(psb, files, evaluated):
    """An existing out is refused (FileExistsError); resume=True runs only
    what is missing."""
    _, got, _, out = evaluated
    with pytest.raises(FileExistsError, match="resume=True"):
        psb.evaluate(*files, out=out, **OPTS)
    again = psb.evaluate(*files, out=out, resume=True, **OPTS)
    assert again.ran == 0 and again.resumed == 5, f"{again.ran} {again.resumed}"
    assert scores(again.to_dict()) == scores(got)


# ---- errors --------------------------------------------------------------------
def test_missing_dataset(psb, tmp, files):
    """A missing dataset raises SandboxError with the library's message (the CLI's)."""
    missing = os.path.join(tmp, "nosuch.jsonl")
    rc, _, err = cli(tmp, "--dataset", missing, "--samples", files[1])
    with pytest.raises(psb.SandboxError) as e:
        psb.evaluate(missing, files[1], providers=["local"])
    assert rc == 65 and "nosuch.jsonl" in str(e.value) and str(e.value) in err, \
        f"exit {rc}: {err}\npy: {e.value}"


def test_partial_samples(psb, tmp, files):
    """Samples leaving a task out: refused, naming it; scored with allow_partial=True."""
    part = write_jsonl(tmp, "part.jsonl",
                       [{"task_id": "sh/add", "completion": "add() { echo $(($1 + $2)); }\n"}])
    with pytest.raises(psb.InvalidRequestError, match='have no sample: "sh/greet"'):
        psb.evaluate(files[0], part, **OPTS)
    prep = psb.evaluate(files[0], part, allow_partial=True, **OPTS)
    assert prep.samples == 1 and prep.passed == 1 and len(prep.tasks) == 1


class Stop(Exception):
    pass


@pytest.mark.parametrize("backend", ["default", "cffi"])
def test_progress_raises(psb, files, backend, request):
    """A progress that raises stops the evaluation, and evaluate raises its
    exception (the module's runner, then one on cffi)."""
    def stop(done, total, passed):
        raise Stop(f"stop at {done}")
    runner = psb if backend == "default" else request.getfixturevalue("cffi_local")
    with pytest.raises(Stop) as e:
        runner.evaluate(*files, providers=["local"], jobs=1, timeout=30, progress=stop)
    assert str(e.value) == "stop at 1"


def test_client_evaluate_no_server(psb, files):
    """Client.evaluate, no server listening: ServerError naming the server."""
    with pytest.raises(psb.ServerError, match="127.0.0.1:9"):
        psb.Client("http://127.0.0.1:9").evaluate(files[0], canonical=True)


# ---- aevaluate -------------------------------------------------------------------
@pytest.mark.asyncio
async def test_aevaluate_canonical(psb, tmp, files):
    """aevaluate, canonical samples: awaited, the CLI's scores, progress in
    the loop's thread."""
    rc, want, err = cli(tmp, "--dataset", files[0], "--canonical", *CLI_OPTS)
    seen = []
    arep = await psb.aevaluate(files[0], canonical=True, **OPTS,
                               progress=lambda *a: seen.append(threading.get_ident()))
    assert want is not None and rc == 0, f"exit {rc} {err}"
    assert scores(arep.to_dict()) == scores(want), \
        f"cli {scores(want)}\npy  {scores(arep.to_dict())}"
    assert arep.passed == 2 and arep.results is None and arep.meta["canonical"]
    assert seen == [threading.get_ident()] * 2, seen


@pytest.mark.asyncio
async def test_cancel_aevaluate(psb, tmp, files):
    """Cancelling an aevaluate stops it (its program is killed): CancelledError."""
    slow = write_jsonl(tmp, "slow.jsonl",
                       [{"task_id": t, "completion": f"{t[3:]}() {{ sleep 60; }}\n"}
                        for t in ("sh/add", "sh/greet")])
    how, _ = await cancel_later(psb.aevaluate(files[0], slow, providers=["local"],
                                              timeout=120, k=[1]))
    assert how == "cancelled"


# ---- the same calls on the cffi backend --------------------------------------
def test_cffi_evaluate(cffi_local, want, tmp, files):
    """evaluate on cffi: eval --json's scores, the progress once per
    sample, the results file written."""
    calls = []
    out = os.path.join(tmp, "cffi.jsonl")
    rep = cffi_local.evaluate(*files, out=out, progress=lambda *a: calls.append(a), **OPTS)
    got = json.loads(rep.to_json())
    assert scores(got) == scores(want) and shape(got) == shape(want)
    assert got["meta"]["providers"] == ["local"] and got["results"] == out
    assert [c[0] for c in calls] == [1, 2, 3, 4, 5] and calls[-1][2] == 3, calls


def test_cffi_missing_dataset(psb, cffi_local, tmp):
    """On cffi, a missing dataset raises the library's error naming the file."""
    with pytest.raises(psb.SandboxError, match="nosuch.jsonl"):
        cffi_local.evaluate(os.path.join(tmp, "nosuch.jsonl"), canonical=True)


@pytest.mark.asyncio
async def test_cffi_cancel_aevaluate(cffi_local, tmp, files):
    """On cffi, cancelling an aevaluate stops it (its token reaches the library)."""
    slow = write_jsonl(tmp, "cffi-slow.jsonl",
                       [{"task_id": "sh/add", "completion": "add() { sleep 60; }\n"}])
    how, _ = await cancel_later(cffi_local.aevaluate(files[0], slow, providers=["local"],
                                                     timeout=120, k=[1],
                                                     allow_partial=True))
    assert how == "cancelled"
