"""tests/python/compare.py - compare/acompare, compare_from and pools/apools, in the
process and through a real polysandboxd, printing TAP.

Run by compare.sh under `make check`.  compare must give the report
`polysandbox compare --json` prints for the same input (the library
builds both: sbx_eval_report); pools must list what `polysandbox pools
--json` and polysandboxd's GET /v1/pools list for the same configuration.
"""

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import PS, check, finish, plan, raises, read_text, start, stop  # noqa: E402
import polysandbox as psb  # noqa: E402

PLAN = 22
plan(PLAN)

SRC = os.environ["top_srcdir"]
DATA = os.path.join(SRC, "tests", "eval", "data")
# A configuration with two warm pools (one keyed by a template), for
# every runner of this test: the CLI, polysandboxd and the Local.
conf = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"ps-python-compare-conf.{os.getpid()}")
shutil.rmtree(conf, ignore_errors=True)
os.makedirs(os.path.join(conf, "pools.d"))
shutil.copy(os.path.join(SRC, "tests", "config", "polysandbox.ini"), conf)
shutil.copytree(os.path.join(SRC, "tests", "config", "providers.d"),
                os.path.join(conf, "providers.d"))
shutil.copytree(os.path.join(SRC, "tests", "config", "templates.d"),
                os.path.join(conf, "templates.d"))
# evalnop (tests/eval/fake-provider.c) says every program exited 0 without
# its pass marker: beside local, the samples that pass there differ
shutil.copy(os.path.join(SRC, "tests", "eval", "config", "providers.d", "evalnop.ini"),
            os.path.join(conf, "providers.d"))
os.environ["POLYSANDBOX_PROVIDER_PATH"] += ":" + os.path.join(os.environ["top_builddir"],
                                                              "tests", "eval", ".libs")
with open(os.path.join(conf, "pools.d", "warm.ini"), "w") as f:
    f.write("[pool]\nsize = 1\n")
with open(os.path.join(conf, "pools.d", "py.ini"), "w") as f:
    f.write("[pool]\nsize = 1\ntemplate = python\n")
os.environ["POLYSANDBOX_CONFIG_DIR"] = conf

tmp, server, client, local = start("ps-python-compare.", 120)


def cli_json(*args):
    """`polysandbox ARGS` in tmp: (exit status, its stdout as JSON or None)."""
    p = subprocess.run([PS, *args], cwd=tmp, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    try:
        return p.returncode, json.loads(p.stdout)
    except ValueError:
        sys.stderr.write(p.stderr.decode(errors="replace"))
        return p.returncode, None


def shape(v):
    """v's keys and types, recursively (what must agree field by field)."""
    if isinstance(v, dict):
        return {k: shape(x) for k, x in v.items()}
    if isinstance(v, list):
        return [shape(x) for x in v[:1]]
    return type(v).__name__ if v is not None else None


def statuses(rep):
    """Per column: label, provider, verdict counts, pass rate, pass@k."""
    return [(c["label"], c["provider"], c["summary"]["counts"], c["pass_rate"],
             c["summary"]["pass_at_k"]) for c in rep["columns"]]


# ---- compare: the CLI's report and the library's through Python ---------

# samples whose verdicts do not hang on timing: passed or failed
dataset = os.path.join(DATA, "mbpp.jsonl")
samples = os.path.join(DATA, "mbpp-samples.jsonl")
rc, cli = cli_json("compare", "--dataset", dataset, "--samples", samples,
                   "--providers", "local,local", "-k", "1,2", "--json", "--report", "cli")
rep = local.compare(dataset, samples, providers=["local", "local"], k=[1, 2],
                    report=os.path.join(tmp, "py"))
got = json.loads(rep.to_json())
check("compare: a CompareReport with the CLI's statuses (counts, pass rate, pass@k "
      "per column) and agreement",
      cli is not None and isinstance(rep, psb.CompareReport)
      and statuses(got) == statuses(cli) and rep.agree == cli["agree"]
      and (rc == 0) == rep.agree and rep.samples == cli["samples"] == 6
      and rep.columns[0].summary["counts"]["failed"] == 3
      and [c.label for c in rep.columns] == ["local", "local#2"],
      f"exit {rc}\ncli {cli and statuses(cli)}\npy  {statuses(got)}")
check("compare: the same fields as compare --json, at every level (summary, meta, "
      "differences)",
      cli is not None and shape(dict(got, report=None)) == shape(dict(cli, report=None))
      and [d["sample"] for d in got["differences"]] ==
      [d["sample"] for d in cli["differences"]],
      f"cli {cli and shape(cli)}\npy  {shape(got)}")
check("compare: the same inputs, digests and limits in meta",
      cli is not None and all(got["meta"][k] == cli["meta"][k]
                              for k in ("dataset", "samples", "canonical", "limits", "jobs",
                                        "providers", "version", "rebuilt"))
      and got["dataset"] == cli["dataset"] and got["samples_file"] == cli["samples_file"],
      f"cli {cli and cli['meta']}\npy  {got['meta']}")



py_md, py_html = read_text(os.path.join(tmp, "py.md")), read_text(os.path.join(tmp, "py.html"))
check("compare(report=PREFIX) writes PREFIX.md and PREFIX.html, named in report as the "
      "CLI names its own",
      rep.report == {"markdown": os.path.join(tmp, "py.md"),
                     "html": os.path.join(tmp, "py.html")}
      and cli is not None and set(cli["report"]) == set(rep.report)
      and "| local#2 |" in py_md.replace("|local#2|", "| local#2 |")
      and "<svg" in py_html and "local#2" in py_html and "<script" not in py_html,
      f"report {rep.report}\ncli {cli and cli['report']}\nmd {py_md[:300]}")
check("compare: each column's records went to PREFIX.LABEL.jsonl",
      [c.results for c in rep.columns] ==
      [os.path.join(tmp, "py.local.jsonl"), os.path.join(tmp, "py.local#2.jsonl")]
      and all(os.path.getsize(c.results) > 0 for c in rep.columns if c.results))
check("CompareReport.from_json(compare --json).to_json() is the CLI's object unchanged",
      cli is not None and json.loads(psb.CompareReport.from_json(cli).to_json()) == cli)

# compare_from: the report of those records, nothing run, as --from
kept = [c.results for c in rep.columns]
rc, cli = cli_json("compare", "--dataset", dataset, "--samples", samples, "--from",
                   ",".join(kept), "-k", "1,2", "--json", "--report", "cli5")
frep = psb.compare_from(dataset, samples, results=kept, k=[1, 2],
                        report=os.path.join(tmp, "py5"))


def undated(o):
    return dict(o, report=None, meta=dict(o["meta"], date="(now)"))


check("compare_from: compare --from's report (but the page files and the date), "
      "rebuilt, the columns named after their records' provider",
      cli is not None and undated(json.loads(frep.to_json())) == undated(cli)
      and frep.meta["rebuilt"] and [c.label for c in frep.columns] == ["local", "local#2"]
      and statuses(frep.to_dict()) == statuses(got),
      f"exit {rc}\ncli {cli}\npy  {frep.to_json()}")


def same_page(a, b):
    """The two pages alike but for their date and their prefix."""
    def norm(text, prefix):
        text = re.sub(r"\d{4}-\d\d-\d\d[T ][0-9:.]+Z?", "(date)", text)
        return text.replace(prefix, "(prefix)")
    return norm(read_text(os.path.join(tmp, a)), os.path.join(tmp, a.rsplit(".", 1)[0])) == \
        norm(read_text(os.path.join(tmp, b)), b.rsplit(".", 1)[0]) != ""


check("compare_from(report=PREFIX): the same Markdown and HTML pages as compare --from "
      "--report writes of the same records (but the date)",
      same_page("py5.md", "cli5.md") and same_page("py5.html", "cli5.html"),
      f"{read_text(os.path.join(tmp, 'py5.md'))[:400]}\n---\n{read_text(os.path.join(tmp, 'cli5.md'))[:400]}")
check("compare_from: one results file is refused, a bad one raises naming it",
      raises(ValueError, psb.compare_from, dataset, samples, results=kept[:1],
             match="at least two")[0]
      and raises(psb.SandboxError, psb.compare_from, dataset, samples,
                 results=[kept[0], os.path.join(tmp, "nosuch.jsonl")],
                 match="nosuch.jsonl")[0])

mbpp = dataset
rc, cli = cli_json("compare", "--dataset", mbpp, "--canonical", "--providers", "local,local",
                   "--json", "--report", "cli2")
arep = asyncio.run(psb.acompare(mbpp, providers=["local", "local"]))
check("acompare, canonical samples: the CLI's statuses, agree, no differences",
      cli is not None and rc == 0 and arep.agree and arep.differences == ()
      and arep.canonical and arep.samples_file is None
      and statuses(arep.to_dict()) == statuses(cli),
      f"exit {rc} {arep}")

rc, cli = cli_json("compare", "--dataset", dataset, "--samples", samples,
                   "--providers", "evalnop,local", "--json", "--report", "cli3")
drep = local.compare(dataset, samples, providers=["evalnop", "local"])
check("compare, evalnop beside local: the CLI's differences, with each column's verdict "
      "and reason",
      cli is not None and rc == 1 and not drep.agree and len(drep.differences) == 3
      and [(d.sample, d.task_id, d.verdicts, d.reasons) for d in drep.differences] ==
      [(d["sample"], d["task_id"], d["verdicts"], d["reasons"]) for d in cli["differences"]]
      and all(d.verdicts == {"evalnop": "failed", "local": "passed"}
              for d in drep.differences),
      f"exit {rc}\ncli {cli and cli['differences']}\npy  {drep.differences}")
check("compare: a Difference's fields are the CLI's",
      cli is not None and [d.to_dict() for d in drep.differences] == cli["differences"])

# a column's own settings (--set-for): the generic dataset is graded by
# exit status alone, so evalnop#2, told to exit 1, fails every sample
gen = [os.path.join(DATA, "generic.jsonl"), os.path.join(DATA, "generic-samples.jsonl")]
rc, cli = cli_json("compare", "--dataset", gen[0], "--samples", gen[1], "--providers",
                   "evalnop,evalnop", "--set-for", "evalnop#2:provider.evalnop.exit_code=1",
                   "--json", "--report", "cli4")
srep = local.compare(*gen, providers=["evalnop", "evalnop"],
                     settings={"evalnop#2": ["provider.evalnop.exit_code=1"]})
check("compare(settings=): a column's own configuration, as --set-for",
      cli is not None and rc == 1 and statuses(srep.to_dict()) == statuses(cli)
      and [c.settings for c in srep.columns] == [(), ("provider.evalnop.exit_code=1",)]
      and [c.summary["counts"]["passed"] for c in srep.columns] == [9, 0]
      and len(srep.differences) == 9,
      f"exit {rc}\ncli {cli and statuses(cli)}\npy  {statuses(srep.to_dict())}")
check("compare(settings=) for a column that is not there: ValueError naming it",
      *raises(ValueError, local.compare, *gen, providers=["evalnop", "local"],
              settings={"evalnop#2": ["limits.memory=1G"]}, match="'evalnop#2'"))

check("compare: a missing dataset raises, naming the file",
      *raises(psb.SandboxError, local.compare, os.path.join(tmp, "nosuch.jsonl"),
             providers=["local", "local"], match="nosuch.jsonl"))
check("compare: one provider is refused before anything runs",
      *raises(ValueError, local.compare, mbpp, providers=["local"], match="at least two"))
check("Client.compare_from: NotImplementedError naming the call (the results files are "
      "this machine's)",
      *raises(NotImplementedError, client.compare_from, mbpp, results=["a", "b"],
              match="Client.compare_from"))

# ---- pools ------------------------------------------------------------------

rc, cli = cli_json("pools", "--wait=60s", "--json")
pools = local.pools(wait=60)
keys = [(p.name, p.provider, p.template, p.size) for p in pools]
check("pools(wait=): the CLI's pools, keys and sizes, every one running and filled",
      cli is not None and rc == 0
      and keys == [(p["name"], p["provider"], p.get("template"), p["size"]) for p in cli]
      and sorted(k[0] for k in keys) == ["py", "warm"]
      and all(isinstance(p, psb.Pool) and p.active and p.ready == p.size == 1
              and p.last_error is None for p in pools),
      f"cli {cli}\npy  {pools}")
check("Pool.to_dict has the fields of pools --json, in order",
      cli is not None and [list(p.to_dict()) for p in pools] == [list(p) for p in cli])
apl = asyncio.run(local.apools())
spl = client.pools()
check("apools, and Client.pools (GET /v1/pools): the same pools",
      [p.name for p in apl] == [p.name for p in spl] == [k[0] for k in keys]
      and [(p.provider, p.template, p.size) for p in spl] == [k[1:] for k in keys],
      f"{apl}\n{spl}")

stop(tmp, server, local)
shutil.rmtree(conf, ignore_errors=True)
finish(PLAN)
