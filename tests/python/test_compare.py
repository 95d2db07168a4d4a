"""tests/python/test_compare.py - compare/acompare, compare_from and
pools/apools, in the process and through a real polysandboxd, with pytest.

Run by compare.sh under `make check`.  compare must give the report
`polysandbox compare --json` prints for the same input (the library
builds both: sbx_eval_report); pools must list what `polysandbox pools
--json` and polysandboxd's GET /v1/pools list for the same configuration.
This module runs its own polysandboxd and Local on a configuration of its
own (two warm pools, the evalnop provider), set only while it runs.
"""

import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import new_cffi_local
from harness import PS, Server, read_text

SRC = os.environ["top_srcdir"]
DATA = os.path.join(SRC, "tests", "eval", "data")
# samples whose verdicts do not hang on timing: passed or failed
DATASET = os.path.join(DATA, "mbpp.jsonl")
SAMPLES = os.path.join(DATA, "mbpp-samples.jsonl")
GEN = [os.path.join(DATA, "generic.jsonl"), os.path.join(DATA, "generic-samples.jsonl")]


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return str(tmp_path_factory.mktemp("compare"))


@pytest.fixture(scope="module")
def conf(tmp):
    """A configuration with two warm pools (one keyed by a template) and
    the evalnop provider (tests/provider/evalfake.c: it says every
    program exited 0 without its pass marker, so beside local the
    samples that pass differ), the environment's for the module; its path."""
    conf = os.path.join(tmp, "conf")
    os.makedirs(os.path.join(conf, "pools.d"))
    shutil.copy(os.path.join(SRC, "tests", "config", "polysandbox.ini"), conf)
    for d in ("providers.d", "templates.d"):
        shutil.copytree(os.path.join(SRC, "tests", "config", d), os.path.join(conf, d))
    shutil.copy(os.path.join(SRC, "tests", "eval", "config", "providers.d", "evalnop.ini"),
                os.path.join(conf, "providers.d"))
    with open(os.path.join(conf, "pools.d", "warm.ini"), "w") as f:
        f.write("[pool]\nsize = 1\n")
    with open(os.path.join(conf, "pools.d", "py.ini"), "w") as f:
        f.write("[pool]\nsize = 1\ntemplate = python\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("POLYSANDBOX_PROVIDER_PATH", os.environ["POLYSANDBOX_PROVIDER_PATH"] + ":"
                  + os.path.join(os.environ["top_builddir"], "tests", "eval", ".libs"))
        mp.setenv("POLYSANDBOX_CONFIG_DIR", conf)
        yield conf


@pytest.fixture(scope="module")
def clocal(psb, conf):
    """A Local on the module's configuration."""
    runner = psb.Local()
    yield runner
    runner.close()


@pytest.fixture(scope="module")
def cclient(psb, conf, tmp):
    """A Client to a polysandboxd of the module's configuration, which
    must stop cleanly, with no sanitizer report and the token never logged."""
    srv = Server(tmp)
    assert srv.url is not None, "polysandboxd starts on a free loopback port\n" \
        + srv.text()[-600:]
    yield psb.Client(srv.url, token=srv.token, timeout=120)
    status = srv.stop()
    assert srv.clean(status), f"exit {status}\n" + srv.text()[-1500:]


def cli_json(tmp, *args):
    """`polysandbox ARGS` in tmp: (exit status, its stdout as JSON or None)."""
    p = subprocess.run([PS, *args], cwd=tmp, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    try:
        return p.returncode, json.loads(p.stdout)
    except ValueError:
        print(p.stderr.decode(errors="replace"))
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
@pytest.fixture(scope="module")
def both(clocal, tmp):
    """compare --json on local,local and Local.compare of the same:
    (exit status, the CLI's object, the report, its object)."""
    rc, cli = cli_json(tmp, "compare", "--dataset", DATASET, "--samples", SAMPLES,
                       "--providers", "local,local", "-k", "1,2", "--json", "--report", "cli")
    rep = clocal.compare(DATASET, SAMPLES, providers=["local", "local"], k=[1, 2],
                         report=os.path.join(tmp, "py"))
    assert cli is not None, f"compare --json exit {rc}"
    return rc, cli, rep, json.loads(rep.to_json())


def test_compare_statuses(psb, both):
    """compare: a CompareReport with the CLI's statuses (counts, pass rate,
    pass@k per column) and agreement."""
    rc, cli, rep, got = both
    assert isinstance(rep, psb.CompareReport)
    assert statuses(got) == statuses(cli), f"cli {statuses(cli)}\npy  {statuses(got)}"
    assert rep.agree == cli["agree"] and (rc == 0) == rep.agree, f"exit {rc}"
    assert rep.samples == cli["samples"] == 6
    assert rep.columns[0].summary["counts"]["failed"] == 3
    assert [c.label for c in rep.columns] == ["local", "local#2"]


def test_compare_fields(both):
    """compare: the same fields as compare --json, at every level
    (summary, meta, differences)."""
    _, cli, _, got = both
    assert shape(dict(got, report=None)) == shape(dict(cli, report=None))
    assert [d["sample"] for d in got["differences"]] == [d["sample"] for d in cli["differences"]]


def test_compare_meta(both):
    """compare: the same inputs, digests and limits in meta."""
    _, cli, _, got = both
    for k in ("dataset", "samples", "canonical", "limits", "jobs", "providers", "version",
              "rebuilt"):
        assert got["meta"][k] == cli["meta"][k], k
    assert got["dataset"] == cli["dataset"] and got["samples_file"] == cli["samples_file"]


def test_compare_report_pages(tmp, both):
    """compare(report=PREFIX) writes PREFIX.md and PREFIX.html, named in
    report as the CLI names its own."""
    _, cli, rep, _ = both
    py_md, py_html = read_text(os.path.join(tmp, "py.md")), read_text(os.path.join(tmp, "py.html"))
    assert rep.report == {"markdown": os.path.join(tmp, "py.md"),
                          "html": os.path.join(tmp, "py.html")}
    assert set(cli["report"]) == set(rep.report)
    assert "| local#2 |" in py_md.replace("|local#2|", "| local#2 |"), py_md[:300]
    assert "<svg" in py_html and "local#2" in py_html and "<script" not in py_html


def test_compare_column_records(tmp, both):
    """compare: each column's records went to PREFIX.LABEL.jsonl."""
    rep = both[2]
    assert [c.results for c in rep.columns] == \
        [os.path.join(tmp, "py.local.jsonl"), os.path.join(tmp, "py.local#2.jsonl")]
    assert all(os.path.getsize(c.results) > 0 for c in rep.columns if c.results)


def test_compare_from_json_round_trip(psb, both):
    """CompareReport.from_json(compare --json).to_json() is the CLI's object unchanged."""
    cli = both[1]
    assert json.loads(psb.CompareReport.from_json(cli).to_json()) == cli


# compare_from: the report of those records, nothing run, as --from
@pytest.fixture(scope="module")
def from_both(psb, tmp, both):
    kept = [c.results for c in both[2].columns]
    rc, cli = cli_json(tmp, "compare", "--dataset", DATASET, "--samples", SAMPLES, "--from",
                       ",".join(kept), "-k", "1,2", "--json", "--report", "cli5")
    frep = psb.compare_from(DATASET, SAMPLES, results=kept, k=[1, 2],
                            report=os.path.join(tmp, "py5"))
    assert cli is not None, f"compare --from exit {rc}"
    return kept, cli, frep


def undated(o):
    return dict(o, report=None, meta=dict(o["meta"], date="(now)"))


def test_compare_from(both, from_both):
    """compare_from: compare --from's report (but the page files and the
    date), rebuilt, the columns named after their records' provider."""
    _, cli, frep = from_both
    assert undated(json.loads(frep.to_json())) == undated(cli)
    assert frep.meta["rebuilt"] and [c.label for c in frep.columns] == ["local", "local#2"]
    assert statuses(frep.to_dict()) == statuses(both[3])


def same_page(tmp, a, b):
    """The two pages alike but for their date and their prefix."""
    def norm(text, prefix):
        text = re.sub(r"\d{4}-\d\d-\d\d[T ][0-9:.]+Z?", "(date)", text)
        return text.replace(prefix, "(prefix)")
    return norm(read_text(os.path.join(tmp, a)), os.path.join(tmp, a.rsplit(".", 1)[0])) == \
        norm(read_text(os.path.join(tmp, b)), b.rsplit(".", 1)[0]) != ""


def test_compare_from_pages(tmp, from_both):
    """compare_from(report=PREFIX): the same Markdown and HTML pages as
    compare --from --report writes of the same records (but the date)."""
    assert same_page(tmp, "py5.md", "cli5.md"), \
        f"{read_text(os.path.join(tmp, 'py5.md'))[:400]}\n---\n" \
        f"{read_text(os.path.join(tmp, 'cli5.md'))[:400]}"
    assert same_page(tmp, "py5.html", "cli5.html")


def test_compare_from_refusals(psb, tmp, from_both):
    """compare_from: one results file is refused, a bad one raises naming it."""
    kept = from_both[0]
    with pytest.raises(ValueError, match="at least two"):
        psb.compare_from(DATASET, SAMPLES, results=kept[:1])
    with pytest.raises(psb.SandboxError, match="nosuch.jsonl"):
        psb.compare_from(DATASET, SAMPLES, results=[kept[0], os.path.join(tmp, "nosuch.jsonl")])


@pytest.mark.asyncio
async def test_acompare_canonical(psb, conf, tmp):
    """acompare, canonical samples: the CLI's statuses, agree, no differences."""
    rc, cli = cli_json(tmp, "compare", "--dataset", DATASET, "--canonical",
                       "--providers", "local,local", "--json", "--report", "cli2")
    arep = await psb.acompare(DATASET, providers=["local", "local"])
    assert cli is not None and rc == 0, f"exit {rc}"
    assert arep.agree and arep.differences == () and arep.canonical \
        and arep.samples_file is None, arep
    assert statuses(arep.to_dict()) == statuses(cli)


@pytest.fixture(scope="module")
def differing(clocal, tmp):
    rc, cli = cli_json(tmp, "compare", "--dataset", DATASET, "--samples", SAMPLES,
                       "--providers", "evalnop,local", "--json", "--report", "cli3")
    drep = clocal.compare(DATASET, SAMPLES, providers=["evalnop", "local"])
    assert cli is not None, f"compare evalnop,local exit {rc}"
    return rc, cli, drep


def test_compare_differences(differing):
    """compare, evalnop beside local: the CLI's differences, with each
    column's verdict and reason."""
    rc, cli, drep = differing
    assert rc == 1 and not drep.agree and len(drep.differences) == 3, f"exit {rc} {drep}"
    assert [(d.sample, d.task_id, d.verdicts, d.reasons) for d in drep.differences] == \
        [(d["sample"], d["task_id"], d["verdicts"], d["reasons"]) for d in cli["differences"]]
    assert all(d.verdicts == {"evalnop": "failed", "local": "passed"}
               for d in drep.differences)


def test_difference_fields(differing):
    """compare: a Difference's fields are the CLI's."""
    _, cli, drep = differing
    assert [d.to_dict() for d in drep.differences] == cli["differences"]


def test_compare_settings(clocal, tmp):
    """compare(settings=): a column's own configuration, as --set-for: the
    generic dataset is graded by exit status alone, so evalnop#2, told to
    exit 1, fails every sample."""
    rc, cli = cli_json(tmp, "compare", "--dataset", GEN[0], "--samples", GEN[1], "--providers",
                       "evalnop,evalnop", "--set-for", "evalnop#2:provider.evalnop.exit_code=1",
                       "--json", "--report", "cli4")
    srep = clocal.compare(*GEN, providers=["evalnop", "evalnop"],
                          settings={"evalnop#2": ["provider.evalnop.exit_code=1"]})
    assert cli is not None and rc == 1, f"exit {rc}"
    assert statuses(srep.to_dict()) == statuses(cli)
    assert [c.settings for c in srep.columns] == [(), ("provider.evalnop.exit_code=1",)]
    assert [c.summary["counts"]["passed"] for c in srep.columns] == [9, 0]
    assert len(srep.differences) == 9


def test_compare_settings_unknown_column(clocal):
    """compare(settings=) for a column that is not there: ValueError naming it."""
    with pytest.raises(ValueError, match="'evalnop#2'"):
        clocal.compare(*GEN, providers=["evalnop", "local"],
                       settings={"evalnop#2": ["limits.memory=1G"]})


def test_compare_missing_dataset(psb, clocal, tmp):
    """compare: a missing dataset raises, naming the file."""
    with pytest.raises(psb.SandboxError, match="nosuch.jsonl"):
        clocal.compare(os.path.join(tmp, "nosuch.jsonl"), providers=["local", "local"])


def test_compare_one_provider(clocal):
    """compare: one provider is refused before anything runs."""
    with pytest.raises(ValueError, match="at least two"):
        clocal.compare(DATASET, providers=["local"])


def test_client_compare_from(cclient):
    """Client.compare_from: NotImplementedError naming the call (the
    results files are this machine's)."""
    with pytest.raises(NotImplementedError, match="Client.compare_from"):
        cclient.compare_from(DATASET, results=["a", "b"])


# ---- pools ------------------------------------------------------------------
@pytest.fixture(scope="module")
def pools(clocal, tmp):
    rc, cli = cli_json(tmp, "pools", "--wait=60s", "--json")
    pools = clocal.pools(wait=60)
    assert cli is not None and rc == 0, f"pools --json exit {rc}"
    return cli, pools, [(p.name, p.provider, p.template, p.size) for p in pools]


def test_pools_wait(psb, pools):
    """pools(wait=): the CLI's pools, keys and sizes, every one running and filled."""
    cli, got, keys = pools
    assert keys == [(p["name"], p["provider"], p.get("template"), p["size"]) for p in cli], \
        f"cli {cli}\npy  {got}"
    assert sorted(k[0] for k in keys) == ["py", "warm"]
    assert all(isinstance(p, psb.Pool) and p.active and p.ready == p.size == 1
               and p.last_error is None for p in got), got


def test_pool_to_dict(pools):
    """Pool.to_dict has the fields of pools --json, in order."""
    cli, got, _ = pools
    assert [list(p.to_dict()) for p in got] == [list(p) for p in cli]


@pytest.mark.asyncio
async def test_apools_and_client_pools(clocal, cclient, pools):
    """apools, and Client.pools (GET /v1/pools): the same pools."""
    keys = pools[2]
    apl = await clocal.apools()
    spl = cclient.pools()
    assert [p.name for p in apl] == [p.name for p in spl] == [k[0] for k in keys], \
        f"{apl}\n{spl}"
    assert [(p.provider, p.template, p.size) for p in spl] == [k[1:] for k in keys]


def test_pool_hit_named(clocal, cclient, pools):
    """A run with the python template is served by the py pool, and its
    result says so (Result.pool), in the process and through the server;
    a shell run, which no pool's template serves, says None."""
    r = clocal.run_code("python", "print(6*7)")
    s = cclient.run_code("python", "print(6*7)")
    assert r.stdout == s.stdout == "42\n", f"{r}\n{s}"
    assert r.pool == "py" and s.pool == "py", f"{r.pool!r} {s.pool!r}"
    assert clocal.run(["true"], provider="evalnop").pool is None


# ---- the same calls on the cffi backend --------------------------------------
@pytest.fixture(scope="module")
def cffi_clocal(psb, conf):
    """A Local on the module's configuration on the cffi backend (the
    other runners here are on ctypes: compare.sh names a library);
    skipped when the backend is not built."""
    runner = new_cffi_local(psb)
    yield runner
    runner.close()


def test_cffi_compare(cffi_clocal, tmp, both):
    """compare on cffi: the ctypes runner's statuses and fields, its pages written."""
    rep = cffi_clocal.compare(DATASET, SAMPLES, providers=["local", "local"], k=[1, 2],
                              report=os.path.join(tmp, "cf"))
    got = json.loads(rep.to_json())
    assert statuses(got) == statuses(both[3]) and shape(got) == shape(both[3])
    # (the pages show times, which differ from run to run)
    assert "cf.local.jsonl" in read_text(os.path.join(tmp, "cf.md"))
    assert "</html>" in read_text(os.path.join(tmp, "cf.html"))


def test_cffi_compare_from(cffi_clocal, from_both):
    """compare_from on cffi: the ctypes runner's report (but the page files and the date)."""
    kept, _, frep = from_both
    got = cffi_clocal.compare_from(DATASET, SAMPLES, results=kept, k=[1, 2])
    assert undated(json.loads(got.to_json())) == undated(json.loads(frep.to_json()))


def test_cffi_compare_settings(psb, cffi_clocal):
    """compare(settings=) on cffi: a column's own context, as on ctypes;
    one that does not load raises naming the setting."""
    srep = cffi_clocal.compare(*GEN, providers=["evalnop", "evalnop"],
                               settings={"evalnop#2": ["provider.evalnop.exit_code=1"]})
    assert [c.summary["counts"]["passed"] for c in srep.columns] == [9, 0]
    with pytest.raises(psb.ConfigError, match="nosuch"):
        cffi_clocal.compare(*GEN, providers=["evalnop", "evalnop"],
                            settings={"evalnop#2": ["nosuch.key=1"]})


def test_cffi_pools(cffi_clocal, pools):
    """pools(wait=) on cffi: the same pools, filled."""
    got = cffi_clocal.pools(wait=60)
    assert [(p.name, p.provider, p.template, p.size) for p in got] == pools[2]
    assert all(p.active and p.ready == 1 and p.last_error is None for p in got), got
