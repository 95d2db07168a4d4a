"""tests/python/remote-eval.py - Client.evaluate/aevaluate through a real
polysandboxd (POST /v1/eval with the files inline), against the local
evaluate on the same files (the report and the results file of out=),
and the cancellation of acompare; TAP.

Run by remote-eval.sh under `make check`.  The dataset is made here: two
sh tasks, five samples (three pass), every verdict known in advance.
"""

import asyncio
import base64
import json
import os
import sys
import threading
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (cancel_later, check, finish, plan, raises, sh_eval_files,  # noqa: E402
                     read_text, start, stop, write_jsonl)
import polysandbox as psb  # noqa: E402

PLAN = 23
plan(PLAN)

tmp, server, client, local = start("ps-python-remote-eval.", 600)


def jsonl(name, rows):
    return write_jsonl(tmp, name, rows)


dataset, samples = sh_eval_files(tmp)
slow = jsonl("slow.jsonl", [{"task_id": t, "completion": f"{t[3:]}() {{ sleep 60; }}\n"}
                            for t in ("sh/add", "sh/greet")])
# Generous: a bound on a hang under load, never reached by these programs.
OPTS = {"k": [1, 2], "providers": ["local"], "timeout": 30}


def workers():
    req = urllib.request.Request(server.url + "/v1/jobs?kind=eval",
                                 headers={"Authorization": "Bearer " + server.token})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)


# What differs between two runs of the same input: times, what the
# programs used (CPU, memory) and the date (and the results file's name).
def timeless(rep):
    o = json.loads(rep.to_json())
    for k in ("wall_ns", "throughput_per_s", "latency_ns", "providers", "usage", "results"):
        o[k] = "(run)"
    o["meta"]["date"] = "(run)"
    return o


# A results file's records by sample, but their times and memory; None when a line
# is not a JSON object or a sample has two.
def records(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                return None
            if not isinstance(r, dict) or r.get("sample") in out:
                return None
            out[r["sample"]] = {k: v for k, v in r.items()
                                if not k.endswith("_ns") and k != "peak_memory_bytes"}
    return out


n_workers = workers()["job_workers"] if server.url else 1

# ---- Client.evaluate against the local evaluate --------------------------------

calls = []
out_r, out_l = os.path.join(tmp, "remote.jsonl"), os.path.join(tmp, "local.jsonl")
rep = client.evaluate(dataset, samples, progress=lambda *a: calls.append(a), out=out_r, **OPTS)
want = local.evaluate(dataset, samples, jobs=n_workers, out=out_l, **OPTS)
got, exp = timeless(rep), timeless(want)
check("Client.evaluate: the local evaluate's to_json() (but times and date): verdicts, "
      "pass@k, meta with the client's paths and digests",
      got == exp and rep.passed == 3 and rep.dataset == dataset
      and rep.meta["samples"]["path"] == samples and rep.results == out_r,
      f"remote {got}\nlocal  {exp}")
rr, rl = records(out_r), records(out_l)
check("Client.evaluate(out=): a record a sample, the local evaluate's records (but times)",
      rr is not None and len(rr) == 5 and rr == rl
      and sum(r["verdict"] == "passed" for r in rr.values()) == 3, f"remote {rr}\nlocal  {rl}")
check("Client.evaluate: progress once per sample, done rising to total, passed ending at 3",
      [c[0] for c in calls] == [1, 2, 3, 4, 5] and {c[1] for c in calls} == {5}
      and calls[-1][2] == 3 and all(a[2] <= b[2] for a, b in zip(calls, calls[1:])),
      f"{calls}")

seen = []
arep = asyncio.run(client.aevaluate(dataset, canonical=True,
                                    progress=lambda *a: seen.append(threading.get_ident()),
                                    **OPTS))
awant = local.evaluate(dataset, canonical=True, jobs=n_workers, **OPTS)
check("Client.aevaluate, canonical samples: the local report, progress in the loop's thread",
      timeless(arep) == timeless(awant) and arep.passed == 2 and arep.results is None
      and seen == [threading.get_ident()] * 2,
      f"remote {timeless(arep)}\nlocal  {timeless(awant)}")
# An empty results file is written, as the local evaluate writes one.
empty_r, empty_l = os.path.join(tmp, "empty-r.jsonl"), os.path.join(tmp, "empty-l.jsonl")
open(empty_r, "w").close()
open(empty_l, "w").close()
arep = asyncio.run(client.aevaluate(dataset, canonical=True, out=empty_r, **OPTS))
local.evaluate(dataset, canonical=True, jobs=n_workers, out=empty_l, **OPTS)
rr, rl = records(empty_r), records(empty_l)
check("Client.aevaluate(out=) an empty file: written, the local evaluate's records",
      arep.results == empty_r and rr is not None and len(rr) == 2 and rr == rl,
      f"remote {rr}\nlocal  {rl}")

# ---- resume=True: the records of a partial run go to the job -------------------------

# The first two records of the whole run, their time_ns marking them (a
# sample run again gets its own), and a torn line, as a killed writer leaves.
part_r = os.path.join(tmp, "part-r.jsonl")
with open(out_r) as f:
    first = [json.loads(line) for line in f][:2]
for r in first:
    r["time_ns"] = 7
head = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in first)
with open(part_r, "w") as f:
    f.write(head + '{"task_id":"sh/add","sam')
resumed = client.evaluate(dataset, samples, out=part_r, resume=True, **OPTS)
got = records(part_r)
check("Client.evaluate(resume=True): the job ran only the 3 samples without a record, "
      "pass@k and verdicts those of the whole run",
      resumed.resumed == 2 and resumed.ran == 3 and resumed.done == 5
      and resumed.pass_at_k == rep.pass_at_k and resumed.counts == rep.counts,
      f"{resumed.resumed} {resumed.ran} {resumed.pass_at_k} {rep.pass_at_k}")
check("... the file: its two records kept as they were (not run again), the torn line cut, "
      "one record a sample, the whole run's verdicts",
      open(part_r).read().startswith(head) and got is not None and len(got) == 5
      and {k: v["verdict"] for k, v in got.items()} == {k: v["verdict"]
                                                      for k, v in records(out_r).items()}
      and sum(json.loads(line)["time_ns"] == 7 for line in open(part_r)) == 2, f"{got}")
with open(part_r, "w") as f:
    f.write(head)
ok, e = raises(psb.InvalidRequestError, client.evaluate, dataset, samples, out=part_r,
               resume=True, **dict(OPTS, timeout=20), match="graded with another timeout")
ok_l, e_l = raises(psb.InvalidRequestError, local.evaluate, dataset, samples, out=part_r,
                   resume=True, **dict(OPTS, timeout=20), match="graded with another timeout")
check("resume=True with another timeout: InvalidRequestError naming it, through the server "
      "and in the process, the file as it was",
      ok and ok_l and "field 'results', line 1" in str(e) and open(part_r).read() == head,
      f"{e} | {e_l}")

# A sandbox error in the file is no verdict: that sample runs again, its
# new record appended after the kept one.
with open(out_r) as f:
    whole = [json.loads(line) for line in f]
err = dict(whole[0], verdict="sandbox_error", status="sandbox_error", passed=False,
           reason="the sandbox failed")
with open(part_r, "w") as f:
    f.write(json.dumps(err) + "\n" + json.dumps(whole[1]) + "\n")
again = client.evaluate(dataset, samples, out=part_r, resume=True, **OPTS)
lines = [json.loads(line) for line in open(part_r)]
check("resume=True with a sandbox error in the file: that sample runs again, the file's "
      "lines kept and the job's new records after them",
      again.resumed == 1 and again.ran == 4 and again.pass_at_k == rep.pass_at_k
      and len(lines) == 6 and lines[0] == err and lines[1] == whole[1]
      and sorted(r["sample"] for r in lines[2:]) == sorted(r["sample"] for r in whole
                                                          if r is not whole[1]),
      f"{again.resumed} {again.ran} {[(r['sample'], r['verdict']) for r in lines]}")

# ---- errors -------------------------------------------------------------------------

bad = os.path.join(tmp, "bad.jsonl")
with open(bad, "w") as f:
    f.write('{"task_id": "sh/add", "completion": "x"}\nnot json\n')
check("a malformed samples file: InvalidRequestError naming the field and its line",
      *raises(psb.InvalidRequestError, client.evaluate, dataset, bad, **OPTS,
              match="field 'samples', line 2"))
part = jsonl("part.jsonl", [{"task_id": "sh/add", "completion": "add() { echo $(($1 + $2)); }\n"}])
ok, e = raises(psb.InvalidRequestError, client.evaluate, dataset, part, **OPTS,
               match='have no sample: "sh/greet"')
prep = client.evaluate(dataset, part, allow_partial=True, **OPTS) if ok else None
check("samples leaving a task out: refused as the local evaluate, scored with allow_partial",
      ok and prep.samples == 1 and prep.passed == 1, f"{e}")
check("a missing file: SandboxNotFoundError naming the argument, nothing sent",
      *raises(psb.SandboxNotFoundError, client.evaluate, os.path.join(tmp, "nosuch.jsonl"),
              samples, **OPTS, match="argument 'dataset'"))
check("jobs, which the server cannot apply, is refused",
      raises(ValueError, client.evaluate, dataset, samples, jobs=3, match="'jobs'")[0])
before = open(out_r, "rb").read()
n_jobs = len(workers()["jobs"]) if server.url else 0
ok, e = raises(FileExistsError, client.evaluate, dataset, samples, out=out_r, **OPTS,
               match="exists")
check("out= a file with records: FileExistsError, the file as it was, no job started",
      ok and open(out_r, "rb").read() == before
      and (not server.url or len(workers()["jobs"]) == n_jobs), f"{e}")
gone = os.path.join(tmp, "never.jsonl")
ok, e = raises(psb.InvalidRequestError, client.evaluate, dataset, bad, out=gone, **OPTS)
check("out= and a refused samples file: no results file left behind",
      ok and not os.path.exists(gone), f"{e}")


def post(body):
    req = urllib.request.Request(server.url + "/v1/eval", data=json.dumps(body).encode(),
                                 headers={"Authorization": "Bearer " + server.token,
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


good = {"name": "t.jsonl", "base64": base64.b64encode(open(dataset, "rb").read()).decode()}
replies = [post({"dataset": {"name": "t.jsonl", "base64": "%%%"}, "canonical": True}),
           post({"dataset": {"name": "", "base64": good["base64"]}, "canonical": True}),
           post({"dataset": dict(good, mode=1), "canonical": True}),
           post({"dataset": good, "canonical": True, "allow_partial": "yes"})]
check("POST /v1/eval: a bad file object is a 400 naming its field",
      [r[0] for r in replies] == [400] * 4
      and all(f in r[1]["error"]["message"] for r, f in
              zip(replies, ("dataset.base64", "dataset.name", "dataset.mode", "allow_partial"))),
      f"{replies}")

# ---- cancellation ---------------------------------------------------------------------


async def running():
    """Until a sandbox of the local provider runs (bounded: a hang)."""
    for _ in range(1200):
        if await asyncio.get_running_loop().run_in_executor(
                None, lambda: local.sandboxes(provider="local")):
            return
        await asyncio.sleep(0.05)


how, _ = asyncio.run(cancel_later(client.aevaluate(dataset, slow, providers=["local"],
                                                   timeout=120, k=[1]), running))
jobs = workers()["jobs"] if server.url else []
check("cancelling a Client.aevaluate: CancelledError, the job cancelled, no sandbox left",
      how == "cancelled" and jobs and jobs[0]["state"] == "cancelled"
      and local.sandboxes(provider="local") == [],
      f"{how} {jobs and jobs[0]['state']}")


async def cancelled_compare():
    t = asyncio.ensure_future(local.acompare(dataset, slow, providers=["local", "local"],
                                             timeout=120, k=[1]))
    await running()
    t.cancel()
    try:
        await t
        return "not cancelled"
    except asyncio.CancelledError:
        return "cancelled"
    except BaseException as e:   # what must not leak
        return f"{type(e).__name__}: {e}"

how = asyncio.run(cancelled_compare())
check("cancelling an acompare mid-run: CancelledError alone, no sandbox left",
      how == "cancelled" and local.sandboxes(provider="local") == [], how)

# ---- Client.compare: an eval job per column, then POST /v1/compare ----
pre = os.path.join(tmp, "rc")
rrep = client.compare(dataset, samples, providers=["local", "local"], k=[1, 2], timeout=30,
                      report=pre)
lrep = local.compare(dataset, samples, providers=["local", "local"], k=[1, 2], timeout=30)


def verdicts(rep):
    return [(c.label, c.summary["counts"], c.summary["pass_at_k"]) for c in rep.columns]


check("Client.compare: the columns, verdict counts and pass@k of the local compare",
      verdicts(rrep) == verdicts(lrep) and rrep.agree == lrep.agree
      and rrep.samples == lrep.samples == 5,
      f"remote {verdicts(rrep)}\nlocal  {verdicts(lrep)}")



recs = [records(f"{pre}.{label}.jsonl") for label in ("local", "local#2")]
check("... with report=PREFIX: each column's records in PREFIX.LABEL.jsonl, the pages in "
      "PREFIX.md and PREFIX.html, named as a local compare names them",
      all(r is not None and len(r) == 5 for r in recs)
      and [c.results for c in rrep.columns] == [f"{pre}.local.jsonl", f"{pre}.local#2.jsonl"]
      and rrep.report == {"markdown": pre + ".md", "html": pre + ".html"}
      and "local#2" in read_text(pre + ".md") and not read_text(pre + ".md").startswith(("<", "{"))
      and read_text(pre + ".html").startswith("<!DOCTYPE html>") and "<svg" in read_text(pre + ".html"),
      f"report {rrep.report} results {[c.results for c in rrep.columns]}")
check("... a column's own settings are refused through the server, naming the argument",
      raises(NotImplementedError, client.compare, dataset, samples,
             providers=["local", "local"], settings={"local#2": ["limits.memory=1G"]},
             match="argument 'settings'")[0])

stop(tmp, server, local)
finish(PLAN)
