"""tests/python/test_remote_eval.py - Client.evaluate/aevaluate through a
real polysandboxd (POST /v1/eval with the files inline), against the
local evaluate on the same files (the report and the results file of
out=), and the cancellation of acompare; with pytest.

Run by remote-eval.sh under `make check`.  The dataset is made here: two
sh tasks, five samples (three pass), every verdict known in advance.
The tests of a section build on the files its first ones write: run
them as a module.
"""

import asyncio
import base64
import json
import os
import threading
import urllib.error
import urllib.request

import pytest

from harness import cancel_later, read_text, sh_eval_files, write_jsonl

# Generous: a bound on a hang under load, never reached by these programs.
OPTS = {"k": [1, 2], "providers": ["local"], "timeout": 30}


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return str(tmp_path_factory.mktemp("remote-eval"))


@pytest.fixture(scope="module")
def files(tmp):
    """(dataset, samples, slow): see harness.sh_eval_files; slow's
    programs sleep a minute."""
    dataset, samples = sh_eval_files(tmp)
    slow = write_jsonl(tmp, "slow.jsonl",
                       [{"task_id": t, "completion": f"{t[3:]}() {{ sleep 60; }}\n"}
                        for t in ("sh/add", "sh/greet")])
    return dataset, samples, slow


@pytest.fixture(scope="module")
def rclient(psb, server):
    """A Client to the session's polysandboxd with a long timeout."""
    return psb.Client(server.url, token=server.token, timeout=600)


def workers(server):
    req = urllib.request.Request(server.url + "/v1/jobs?kind=eval",
                                 headers={"Authorization": "Bearer " + server.token})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)


@pytest.fixture(scope="module")
def n_workers(server):
    return workers(server)["job_workers"]


def timeless(rep):
    """What differs between two runs of the same input taken out: times,
    what the programs used (CPU, memory) and the date (and the results
    file's name)."""
    o = json.loads(rep.to_json())
    for k in ("wall_ns", "throughput_per_s", "latency_ns", "providers", "usage", "results"):
        o[k] = "(run)"
    o["meta"]["date"] = "(run)"
    return o


def records(path):
    """A results file's records by sample, but their times and memory
    (see untimed); None when a line is not a JSON object or a sample has two."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                return None
            if not isinstance(r, dict) or r.get("sample") in out:
                return None
            out[r["sample"]] = untimed(r)
    return out


def untimed(v):
    """v without its times and memory, at every level (attempt_log's
    entries have their own time_ns)."""
    if isinstance(v, dict):
        return {k: untimed(x) for k, x in v.items()
                if not k.endswith("_ns") and k != "peak_memory_bytes"}
    if isinstance(v, list):
        return [untimed(x) for x in v]
    return v


# ---- Client.evaluate against the local evaluate --------------------------------
@pytest.fixture(scope="module")
def first(rclient, local, tmp, files, n_workers):
    """Client.evaluate and the local evaluate of the files with out=:
    (remote report, local report, progress calls, out_r, out_l)."""
    dataset, samples, _ = files
    calls = []
    out_r, out_l = os.path.join(tmp, "remote.jsonl"), os.path.join(tmp, "local.jsonl")
    rep = rclient.evaluate(dataset, samples, progress=lambda *a: calls.append(a), out=out_r,
                           **OPTS)
    want = local.evaluate(dataset, samples, jobs=n_workers, out=out_l, **OPTS)
    return rep, want, calls, out_r, out_l


def test_client_evaluate_report(files, first):
    """Client.evaluate: the local evaluate's to_json() (but times and
    date): verdicts, pass@k, meta with the client's paths and digests."""
    rep, want, _, out_r, _ = first
    assert timeless(rep) == timeless(want)
    assert rep.passed == 3 and rep.dataset == files[0]
    assert rep.meta["samples"]["path"] == files[1] and rep.results == out_r


def test_client_evaluate_out(first):
    """Client.evaluate(out=): a record a sample, the local evaluate's records (but times)."""
    rr, rl = records(first[3]), records(first[4])
    assert rr is not None and len(rr) == 5 and rr == rl, f"remote {rr}\nlocal  {rl}"
    assert sum(r["verdict"] == "passed" for r in rr.values()) == 3


def test_client_evaluate_progress(first):
    """Client.evaluate: progress once per sample, done rising to total, passed ending at 3."""
    calls = first[2]
    assert [c[0] for c in calls] == [1, 2, 3, 4, 5] and {c[1] for c in calls} == {5}, calls
    assert calls[-1][2] == 3 and all(a[2] <= b[2] for a, b in zip(calls, calls[1:])), calls


@pytest.mark.asyncio
async def test_client_aevaluate_canonical(rclient, local, files, n_workers):
    """Client.aevaluate, canonical samples: the local report, progress in the loop's thread."""
    seen = []
    arep = await rclient.aevaluate(files[0], canonical=True,
                                   progress=lambda *a: seen.append(threading.get_ident()),
                                   **OPTS)
    awant = local.evaluate(files[0], canonical=True, jobs=n_workers, **OPTS)
    assert timeless(arep) == timeless(awant)
    assert arep.passed == 2 and arep.results is None
    assert seen == [threading.get_ident()] * 2, seen


@pytest.mark.asyncio
async def test_client_aevaluate_empty_out(rclient, local, tmp, files, n_workers):
    """Client.aevaluate(out=) an empty file: written, the local evaluate's
    records (as the local evaluate writes one)."""
    empty_r, empty_l = os.path.join(tmp, "empty-r.jsonl"), os.path.join(tmp, "empty-l.jsonl")
    open(empty_r, "w").close()
    open(empty_l, "w").close()
    arep = await rclient.aevaluate(files[0], canonical=True, out=empty_r, **OPTS)
    local.evaluate(files[0], canonical=True, jobs=n_workers, out=empty_l, **OPTS)
    rr, rl = records(empty_r), records(empty_l)
    assert arep.results == empty_r and rr is not None and len(rr) == 2 and rr == rl, \
        f"remote {rr}\nlocal  {rl}"


# ---- resume=True: the records of a partial run go to the job -------------------------
@pytest.fixture(scope="module")
def partial(rclient, tmp, files, first):
    """The first two records of the whole run, their time_ns marking them
    (a sample run again gets its own), and a torn line, as a killed
    writer leaves, resumed by Client.evaluate: (the report, the file's
    path, its kept head)."""
    part_r = os.path.join(tmp, "part-r.jsonl")
    with open(first[3]) as f:
        kept = [json.loads(line) for line in f][:2]
    for r in kept:
        r["time_ns"] = 7
    head = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in kept)
    with open(part_r, "w") as f:
        f.write(head + '{"task_id":"sh/add","sam')
    resumed = rclient.evaluate(*files[:2], out=part_r, resume=True, **OPTS)
    return resumed, part_r, head


def test_resume_runs_the_rest(first, partial):
    """Client.evaluate(resume=True): the job ran only the 3 samples without
    a record, pass@k and verdicts those of the whole run."""
    rep, resumed = first[0], partial[0]
    assert resumed.resumed == 2 and resumed.ran == 3 and resumed.done == 5, \
        f"{resumed.resumed} {resumed.ran}"
    assert resumed.pass_at_k == rep.pass_at_k and resumed.counts == rep.counts


def test_resume_file(first, partial):
    """... the file: its two records kept as they were (not run again),
    the torn line cut, one record a sample, the whole run's verdicts."""
    _, part_r, head = partial
    got = records(part_r)
    with open(part_r) as f:
        text = f.read()
    assert text.startswith(head)
    assert got is not None and len(got) == 5, got
    assert {k: v["verdict"] for k, v in got.items()} == \
        {k: v["verdict"] for k, v in records(first[3]).items()}
    assert sum(json.loads(line)["time_ns"] == 7 for line in text.splitlines()) == 2


def test_resume_other_timeout(psb, rclient, local, files, partial):
    """resume=True with another timeout: InvalidRequestError naming it,
    through the server and in the process, the file as it was."""
    _, part_r, head = partial
    with open(part_r, "w") as f:
        f.write(head)
    with pytest.raises(psb.InvalidRequestError, match="graded with another timeout") as e:
        rclient.evaluate(*files[:2], out=part_r, resume=True, **dict(OPTS, timeout=20))
    with pytest.raises(psb.InvalidRequestError, match="graded with another timeout"):
        local.evaluate(*files[:2], out=part_r, resume=True, **dict(OPTS, timeout=20))
    assert "field 'results', line 1" in str(e.value), e.value
    assert read_text(part_r) == head


def test_resume_sandbox_error(rclient, tmp, files, first):
    """resume=True with a sandbox error in the file (no verdict): that
    sample runs again, the file's lines kept and the job's new records
    after them."""
    part_r = os.path.join(tmp, "part-err.jsonl")
    with open(first[3]) as f:
        whole = [json.loads(line) for line in f]
    err = dict(whole[0], verdict="sandbox_error", status="sandbox_error", passed=False,
               reason="the sandbox failed")
    with open(part_r, "w") as f:
        f.write(json.dumps(err) + "\n" + json.dumps(whole[1]) + "\n")
    again = rclient.evaluate(*files[:2], out=part_r, resume=True, **OPTS)
    with open(part_r) as f:
        lines = [json.loads(line) for line in f]
    assert again.resumed == 1 and again.ran == 4 and again.pass_at_k == first[0].pass_at_k, \
        f"{again.resumed} {again.ran}"
    assert len(lines) == 6 and lines[0] == err and lines[1] == whole[1], \
        [(r["sample"], r["verdict"]) for r in lines]
    assert sorted(r["sample"] for r in lines[2:]) == \
        sorted(r["sample"] for r in whole if r is not whole[1])


# ---- errors -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bad(tmp):
    bad = os.path.join(tmp, "bad.jsonl")
    with open(bad, "w") as f:
        f.write('{"task_id": "sh/add", "completion": "x"}\nnot json\n')
    return bad


def test_malformed_samples(psb, rclient, files, bad):
    """A malformed samples file: InvalidRequestError naming the field and its line."""
    with pytest.raises(psb.InvalidRequestError, match="field 'samples', line 2"):
        rclient.evaluate(files[0], bad, **OPTS)


def test_partial_samples(psb, rclient, tmp, files):
    """Samples leaving a task out: refused as the local evaluate, scored with allow_partial."""
    part = write_jsonl(tmp, "part.jsonl",
                       [{"task_id": "sh/add", "completion": "add() { echo $(($1 + $2)); }\n"}])
    with pytest.raises(psb.InvalidRequestError, match='have no sample: "sh/greet"'):
        rclient.evaluate(files[0], part, **OPTS)
    prep = rclient.evaluate(files[0], part, allow_partial=True, **OPTS)
    assert prep.samples == 1 and prep.passed == 1


def test_missing_file(psb, rclient, tmp, files):
    """A missing file: SandboxNotFoundError naming the argument, nothing sent."""
    with pytest.raises(psb.SandboxNotFoundError, match="argument 'dataset'"):
        rclient.evaluate(os.path.join(tmp, "nosuch.jsonl"), files[1], **OPTS)


def test_jobs_refused(rclient, files):
    """jobs, which the server cannot apply, is refused."""
    with pytest.raises(ValueError, match="'jobs'"):
        rclient.evaluate(*files[:2], jobs=3)


def test_out_exists(rclient, server, files, first):
    """out= a file with records: FileExistsError, the file as it was, no job started."""
    out_r = first[3]
    with open(out_r, "rb") as f:
        before = f.read()
    n_jobs = len(workers(server)["jobs"])
    with pytest.raises(FileExistsError, match="exists"):
        rclient.evaluate(*files[:2], out=out_r, **OPTS)
    with open(out_r, "rb") as f:
        assert f.read() == before
    assert len(workers(server)["jobs"]) == n_jobs


def test_refused_leaves_no_out(psb, rclient, tmp, files, bad):
    """out= and a refused samples file: no results file left behind."""
    gone = os.path.join(tmp, "never.jsonl")
    with pytest.raises(psb.InvalidRequestError):
        rclient.evaluate(files[0], bad, out=gone, **OPTS)
    assert not os.path.exists(gone)


def post(server, body):
    req = urllib.request.Request(server.url + "/v1/eval", data=json.dumps(body).encode(),
                                 headers={"Authorization": "Bearer " + server.token,
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def test_post_eval_bad_file_object(server, files):
    """POST /v1/eval: a bad file object is a 400 naming its field."""
    with open(files[0], "rb") as f:
        good = {"name": "t.jsonl", "base64": base64.b64encode(f.read()).decode()}
    replies = [post(server, {"dataset": {"name": "t.jsonl", "base64": "%%%"}, "canonical": True}),
               post(server, {"dataset": {"name": "", "base64": good["base64"]},
                             "canonical": True}),
               post(server, {"dataset": dict(good, mode=1), "canonical": True}),
               post(server, {"dataset": good, "canonical": True, "allow_partial": "yes"})]
    assert [r[0] for r in replies] == [400] * 4, replies
    assert all(f in r[1]["error"]["message"] for r, f in
               zip(replies, ("dataset.base64", "dataset.name", "dataset.mode",
                             "allow_partial"))), replies


# ---- cancellation ---------------------------------------------------------------------
async def running(local):
    """Until a sandbox of the local provider runs (bounded: a hang)."""
    for _ in range(1200):
        if await asyncio.get_running_loop().run_in_executor(
                None, lambda: local.sandboxes(provider="local")):
            return
        await asyncio.sleep(0.05)


@pytest.mark.asyncio
async def test_cancel_client_aevaluate(rclient, local, server, files):
    """Cancelling a Client.aevaluate: CancelledError, the job cancelled, no sandbox left."""
    how, _ = await cancel_later(rclient.aevaluate(files[0], files[2], providers=["local"],
                                                  timeout=120, k=[1]),
                                lambda: running(local))
    jobs = workers(server)["jobs"]
    assert how == "cancelled" and jobs and jobs[0]["state"] == "cancelled", \
        f"{how} {jobs and jobs[0]['state']}"
    assert local.sandboxes(provider="local") == []


@pytest.mark.asyncio
async def test_cancel_acompare(local, files):
    """Cancelling an acompare mid-run: CancelledError alone (any other
    exception fails the test), no sandbox left."""
    how, _ = await cancel_later(local.acompare(files[0], files[2], providers=["local", "local"],
                                               timeout=120, k=[1]),
                                lambda: running(local))
    assert how == "cancelled" and local.sandboxes(provider="local") == [], how


# ---- Client.compare: an eval job per column, then POST /v1/compare ----
def verdicts(rep):
    return [(c.label, c.summary["counts"], c.summary["pass_at_k"]) for c in rep.columns]


@pytest.fixture(scope="module")
def compared(rclient, local, tmp, files):
    pre = os.path.join(tmp, "rc")
    rrep = rclient.compare(*files[:2], providers=["local", "local"], k=[1, 2], timeout=30,
                           report=pre)
    lrep = local.compare(*files[:2], providers=["local", "local"], k=[1, 2], timeout=30)
    return pre, rrep, lrep


def test_client_compare(compared):
    """Client.compare: the columns, verdict counts and pass@k of the local compare."""
    _, rrep, lrep = compared
    assert verdicts(rrep) == verdicts(lrep), f"remote {verdicts(rrep)}\nlocal  {verdicts(lrep)}"
    assert rrep.agree == lrep.agree and rrep.samples == lrep.samples == 5


def test_client_compare_report(compared):
    """... with report=PREFIX: each column's records in PREFIX.LABEL.jsonl,
    the pages in PREFIX.md and PREFIX.html, named as a local compare names them."""
    pre, rrep, _ = compared
    recs = [records(f"{pre}.{label}.jsonl") for label in ("local", "local#2")]
    assert all(r is not None and len(r) == 5 for r in recs)
    assert [c.results for c in rrep.columns] == [f"{pre}.local.jsonl", f"{pre}.local#2.jsonl"]
    assert rrep.report == {"markdown": pre + ".md", "html": pre + ".html"}
    md, html = read_text(pre + ".md"), read_text(pre + ".html")
    assert "local#2" in md and not md.startswith(("<", "{")), md[:300]
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html


def test_client_compare_settings_refused(rclient, files):
    """... a column's own settings are refused through the server, naming the argument."""
    with pytest.raises(NotImplementedError, match="argument 'settings'"):
        rclient.compare(*files[:2], providers=["local", "local"],
                        settings={"local#2": ["limits.memory=1G"]})
