"""tests/python/evaluate.py - evaluate/aevaluate on the local provider,
against `polysandbox eval --json` on the same files, printing TAP.

Run by evaluate.sh under `make check`.  The dataset is made here: two sh
tasks, five samples (three pass), so every verdict is known in advance
and none hangs on timing.  No polysandboxd (see remote-eval.py).
"""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (PS, cancel_later, check, finish, plan, raises, scratch,  # noqa: E402
                     sh_eval_files, write_jsonl)
import polysandbox as psb  # noqa: E402

PLAN = 14
plan(PLAN)

tmp = scratch("ps-python-evaluate.")


def jsonl(name, rows):
    return write_jsonl(tmp, name, rows)


dataset, samples = sh_eval_files(tmp)
# Generous: a bound on a hang under load, never reached by these programs.
OPTS = {"k": [1, 2], "providers": ["local"], "jobs": 2, "timeout": 30}
CLI_OPTS = ["-k", "1,2", "-p", "local", "-j", "2", "--timeout", "30s"]


def cli(*args):
    """`polysandbox -q eval ARGS --json`: (exit status, stdout as JSON or
    None, stderr)."""
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


# ---- evaluate against eval --json -------------------------------------------

rc, want, err = cli("--dataset", dataset, "--samples", samples, "--out", "cli.jsonl",
                    *CLI_OPTS)
calls = []
out = os.path.join(tmp, "py.jsonl")
rep = psb.evaluate(dataset, samples, out=out, progress=lambda *a: calls.append(a), **OPTS)
got = json.loads(rep.to_json())
check("evaluate: an EvalReport with eval --json's verdict counts, pass@k and tasks",
      want is not None and rc == 0 and isinstance(rep, psb.EvalReport)
      and scores(got) == scores(want) and rep.passed == 3 and rep.counts["failed"] == 2
      and rep.pass_at(1) == want["pass_at_k"]["1"] and rep.sandbox_errors == [],
      f"exit {rc} {err}\ncli {want and scores(want)}\npy  {scores(got)}")
check("evaluate: the same fields as eval --json, in its order, at every level",
      want is not None and shape(got) == shape(want),
      f"cli {want and shape(want)}\npy  {shape(got)}")
check("evaluate: the same jobs and meta (inputs and their digests, limits, providers)",
      want is not None and got["jobs"] == want["jobs"] == 2
      and all(got["meta"][k] == want["meta"][k]
              for k in ("version", "host", "dataset", "samples", "canonical", "limits",
                        "jobs", "rebuilt", "providers"))
      and got["meta"]["providers"] == ["local"] and got["dataset"] == want["dataset"],
      f"cli {want and want['meta']}\npy  {got['meta']}")
with open(out) as f:
    records = [json.loads(line) for line in f]
check("evaluate(out=): a record per sample in the results file, as eval --out",
      got["results"] == out and len(records) == 5
      and sorted(r["sample"] for r in records) == list(range(5)))
check("EvalReport.from_json(eval --json).to_json() is the CLI's object unchanged",
      want is not None and json.loads(psb.EvalReport.from_json(want).to_json()) == want)
priced = dict(want or {}, usage=dict((want or {}).get("usage") or {},
                                    cost={"total": 1.5, "per_sample": 0.3,
                                          "per_passing_sample": 0.5, "currency": "EUR"}))
check("usage per provider; no cost without a price table; cost() reads a priced one",
      rep.cost() is None and rep.cost("local") is None and rep.cost("nosuch") is None
      and rep.providers["local"]["samples"] == 5 and rep.usage["cpu_ns"]["total"] > 0
      and rep.usage["peak_memory_bytes"] > 0
      and psb.EvalReport.from_json(priced).cost()["currency"] == "EUR",
      f"{rep.usage} {rep.providers}")
check("progress: (done, total, passed) once per sample, done rising to total, "
      "passed ending at the passes",
      [c[0] for c in calls] == [1, 2, 3, 4, 5] and {c[1] for c in calls} == {5}
      and calls[-1][2] == 3 and all(a[2] <= b[2] for a, b in zip(calls, calls[1:])),
      f"{calls}")

again = psb.evaluate(dataset, samples, out=out, resume=True, **OPTS)
check("an existing out is refused (FileExistsError); resume=True runs only what is missing",
      raises(FileExistsError, psb.evaluate, dataset, samples, out=out, **OPTS,
             match="resume=True")[0]
      and again.ran == 0 and again.resumed == 5 and scores(again.to_dict()) == scores(got),
      f"{again.ran} {again.resumed}")

# ---- errors --------------------------------------------------------------------

missing = os.path.join(tmp, "nosuch.jsonl")
rc, _, err = cli("--dataset", missing, "--samples", samples)
ok, e = raises(psb.SandboxError, psb.evaluate, missing, samples, providers=["local"])
check("a missing dataset raises SandboxError with the library's message (the CLI's)",
      ok and rc == 65 and "nosuch.jsonl" in str(e) and str(e) in err,
      f"exit {rc}: {err}\npy: {e}")

part = jsonl("part.jsonl", [{"task_id": "sh/add", "completion": "add() { echo $(($1 + $2)); }\n"}])
ok, e = raises(psb.InvalidRequestError, psb.evaluate, dataset, part, **OPTS,
               match='have no sample: "sh/greet"')
prep = psb.evaluate(dataset, part, allow_partial=True, **OPTS) if ok else None
check("samples leaving a task out: refused, naming it; scored with allow_partial=True",
      ok and prep.samples == 1 and prep.passed == 1 and len(prep.tasks) == 1, f"{e}")


class Stop(Exception):
    pass


def stop(done, total, passed):
    raise Stop(f"stop at {done}")


ok, e = raises(Stop, psb.evaluate, dataset, samples, providers=["local"], jobs=1,
               timeout=30, progress=stop)
check("a progress that raises stops the evaluation, and evaluate raises its exception",
      ok and str(e) == "stop at 1", f"{e}")
check("Client.evaluate, no server listening: ServerError naming the server",
      *raises(psb.ServerError, psb.Client("http://127.0.0.1:9").evaluate, dataset,
              canonical=True, match="127.0.0.1:9"))

# ---- aevaluate -------------------------------------------------------------------

rc, want, err = cli("--dataset", dataset, "--canonical", *CLI_OPTS)
seen = []
arep = asyncio.run(psb.aevaluate(dataset, canonical=True, **OPTS,
                                 progress=lambda *a: seen.append(threading.get_ident())))
check("aevaluate, canonical samples: awaited, the CLI's scores, progress in the loop's "
      "thread",
      want is not None and rc == 0 and scores(arep.to_dict()) == scores(want)
      and arep.passed == 2 and arep.results is None and arep.meta["canonical"]
      and seen == [threading.get_ident()] * 2,
      f"exit {rc} {err}\ncli {want and scores(want)}\npy  {scores(arep.to_dict())}")

slow = jsonl("slow.jsonl", [{"task_id": t, "completion": f"{t[3:]}() {{ sleep 60; }}\n"}
                            for t in ("sh/add", "sh/greet")])
how, _ = asyncio.run(cancel_later(psb.aevaluate(dataset, slow, providers=["local"],
                                                timeout=120, k=[1])))
check("cancelling an aevaluate stops it (its program is killed): CancelledError",
      how == "cancelled", how)

shutil.rmtree(tmp, ignore_errors=True)
finish(PLAN)
