"""tests/python/conftest.py - what the Python package's pytest suite
shares: the package from the source tree on the build tree's library, a
scratch state directory, a real polysandboxd on a free loopback port (one
per session), a Client to it, a temporary configuration; and a plugin
that prints TAP for `make check` (see pytest.sh).

Run directly (see HACKING.md): `/usr/bin/python3 -m pytest tests/python`
from the top of a tree configured in place; the environment `make check`
sets (Makefile.am's AM_TESTS_ENVIRONMENT) is filled in when absent.
"""

import os
import shutil
import sys
import tempfile

import pytest

_here = os.path.dirname(os.path.abspath(__file__))
# The environment of `make check`, for a run by hand from a tree
# configured in place; `make check` sets every one of these itself.
_top = os.path.dirname(os.path.dirname(_here))
os.environ.setdefault("top_srcdir", _top)
os.environ.setdefault("top_builddir", _top)
_build = os.environ["top_builddir"]
os.environ.setdefault("POLYSANDBOX_PROVIDER_PATH", ":".join(
    os.path.join(_build, "plugins", p, ".libs") for p in ("local", "docker", "microvm")))
os.environ.setdefault("POLYSANDBOX_CONFIG_DIR",
                      os.path.join(os.environ["top_srcdir"], "tests", "config"))
os.environ.setdefault("POLYSANDBOX_LOCALD",
                      os.path.join(_build, "plugins", "local", "polysandbox-locald"))
os.environ.setdefault("POLYSANDBOX_LIBRARY",
                      os.path.join(_build, "core", ".libs", "libpolysandbox.so"))
# A scratch directory of the session, made its XDG_STATE_HOME and
# POLYSANDBOX_STATE_DIR before the library is loaded (so a
# polysandbox-locald of its own: the shared one of `make check` has
# other tests' daemons and settings come and go).
SCRATCH = tempfile.mkdtemp(prefix="ps-pytest.")
os.environ["XDG_STATE_HOME"] = os.path.join(SCRATCH, "xdg-state")
os.environ["POLYSANDBOX_STATE_DIR"] = os.path.join(SCRATCH, "state")

sys.path.insert(0, _here)
# The cffi backend's module, as make builds it (see python/local.mk).
sys.path.append(os.path.join(_build, "python", ".libs"))
CFFI_BUILT = os.path.exists(os.path.join(_build, "python", ".libs", "_polysandbox_cffi.so"))
from harness import Server  # noqa: E402  (it also puts python/ on sys.path)


def pytest_configure(config):
    """The TAP printer, when pytest.sh asks for it (POLYSANDBOX_TAP_FD);
    the library, which every test needs."""
    fd = os.environ.get("POLYSANDBOX_TAP_FD")
    if fd:
        config.pluginmanager.register(Tap(int(fd)), "polysandbox-tap")


def pytest_unconfigure(config):
    shutil.rmtree(SCRATCH, ignore_errors=True)


class Tap:
    """Prints TAP on a file descriptor of its own (pytest's output goes to
    the log): one line per test, `ok N - nodeid`, `not ok N - nodeid`
    with the failure's short text as `# ` lines, `ok N # SKIP reason`;
    a collection error is a `not ok` of its own; the plan `1..N` last."""

    def __init__(self, fd):
        self.fd = fd
        self.n = 0
        self.reports = {}

    def emit(self, line):
        os.write(self.fd, (line + "\n").encode("utf-8", "replace"))

    def fail(self, nodeid, reports):
        self.n += 1
        self.emit(f"not ok {self.n} - {nodeid}")
        for r in reports:
            crash = getattr(r.longrepr, "reprcrash", None)
            text = crash.message if crash is not None else r.longreprtext
            lines = text.splitlines()
            if r.when != "call":
                lines.insert(0, f"in {r.when}:")
            for line in lines[:20]:
                self.emit(f"# {line}")

    def pytest_collectreport(self, report):
        if report.failed:
            self.fail(report.nodeid or "collection", [report])

    def pytest_runtest_logreport(self, report):
        self.reports.setdefault(report.nodeid, []).append(report)

    def pytest_runtest_logfinish(self, nodeid, location):
        reports = self.reports.pop(nodeid, [])
        failed = [r for r in reports if r.failed]
        skipped = [r for r in reports if r.skipped]
        if failed:
            self.fail(nodeid, failed)
            return
        self.n += 1
        if skipped:
            r = skipped[0]
            if hasattr(r, "wasxfail"):
                self.emit(f"not ok {self.n} - {nodeid} # TODO {r.wasxfail}")
                return
            reason = r.longrepr[2] if isinstance(r.longrepr, tuple) else str(r.longrepr)
            self.emit(f"ok {self.n} # SKIP {nodeid}: {reason.removeprefix('Skipped: ')}")
        else:
            self.emit(f"ok {self.n} - {nodeid}")

    def pytest_sessionfinish(self, session, exitstatus):
        if self.n == 0:
            self.emit("1..0 # SKIP no test was collected")
        else:
            self.emit(f"1..{self.n}")


@pytest.fixture(scope="session")
def psb():
    """The polysandbox package, from the source tree."""
    import polysandbox
    return polysandbox


@pytest.fixture(scope="session")
def scratch():
    """The session's scratch directory (also its state directory's parent)."""
    return SCRATCH


@pytest.fixture(scope="session")
def server():
    """polysandboxd with a bearer token on a free loopback port, for the
    whole session; at its end it must stop cleanly, with no sanitizer
    report and the token never logged (an error of the last test's
    teardown otherwise)."""
    tmp = tempfile.mkdtemp(prefix="server.", dir=SCRATCH)
    srv = Server(tmp)
    if srv.url is None:
        srv.stop()
        pytest.fail("polysandboxd did not start on a free loopback port:\n"
                    + srv.text()[-600:])
    yield srv
    status = srv.stop()
    assert srv.clean(status), \
        f"polysandboxd stopped cleanly, no sanitizer report, the token never logged: " \
        f"exit {status}\n" + srv.text()[-1500:]


@pytest.fixture(scope="session")
def client(psb, server):
    """A Client to the session's polysandboxd (60 s timeout)."""
    return psb.Client(server.url, token=server.token, timeout=60)


@pytest.fixture(scope="module")
def local(psb):
    """An in-process Local of the module, closed at its end."""
    runner = psb.Local()
    yield runner
    runner.close()


@pytest.fixture(scope="module")
def cffi_local(psb):
    """A Local of the module on the cffi backend (skipped when it is not
    built), closed at its end."""
    runner = new_cffi_local(psb)
    yield runner
    runner.close()


def new_cffi_local(psb):
    """A new Local on the cffi backend (the caller closes it); the test
    is skipped when the backend is not built."""
    if not CFFI_BUILT:
        pytest.skip("the cffi backend is not built (configure found no python3-cffi)")
    runner = psb.Local(backend="cffi")
    assert runner.backend == "cffi"
    return runner


@pytest.fixture(scope="module", params=["local", "client"])
def named(request, local, client):
    """(name, runner): the module's Local, then the session's Client (a
    test using it runs once with each)."""
    return request.param, local if request.param == "local" else client


@pytest.fixture(scope="module", params=["local", "cffi", "client"])
def named_backends(request, client):
    """As named, with a Local on the cffi backend between the two (the
    library's run, exec and file calls go through both backends)."""
    if request.param == "client":
        return "client", client
    return request.param, request.getfixturevalue(
        "local" if request.param == "local" else "cffi_local")


@pytest.fixture
def config_dir(tmp_path):
    """A temporary copy of the test configuration (tests/config), for a
    Local or a polysandbox command of the test's own; its path."""
    dst = tmp_path / "config"
    shutil.copytree(os.environ["POLYSANDBOX_CONFIG_DIR"], dst)
    return str(dst)
