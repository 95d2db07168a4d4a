# tests/bench/local.mk - benchmarks (`make bench` runs tests/bench/run.sh)
#
# bench-runs calls sbx_run() in a loop from N threads through the public
# library, so the CLI's start-up is not what it measures; it also checks
# that many runs leak nothing.  Built with `all` (never installed) so
# `make bench` finds it.

noinst_PROGRAMS += tests/bench/bench-runs
tests_bench_bench_runs_SOURCES = tests/bench/bench-runs.c \
	tests/bench/bench-probe.c tests/bench/bench-probe.h
tests_bench_bench_runs_CFLAGS = $(AM_CFLAGS) -pthread
tests_bench_bench_runs_LDADD = core/libpolysandbox.la


# srv-load: the load client of tests/bench/server.sh (polysandboxd against
# the library and a reference server); no library, only HTTP.
noinst_PROGRAMS += tests/bench/srv-load
tests_bench_srv_load_SOURCES = tests/bench/srv-load.c
tests_bench_srv_load_CFLAGS = $(AM_CFLAGS) -pthread
tests_bench_srv_load_LDFLAGS = -pthread

# bench-pool: sbx_run through a warm pool against none, same process.
noinst_PROGRAMS += tests/bench/bench-pool
tests_bench_bench_pool_SOURCES = tests/bench/bench-pool.c
tests_bench_bench_pool_LDADD = core/libpolysandbox.la
# pooled-run: code through a warm pool to its first output (the microvm
# bench's pooled run; tests/microvm/pool.sh's pool hit and refill).
noinst_PROGRAMS += tests/bench/pooled-run
tests_bench_pooled_run_SOURCES = tests/bench/pooled-run.c
tests_bench_pooled_run_LDADD = core/libpolysandbox.la
# exec-rtt: execs in one running persistent sandbox (the microvm bench's
# exec round trip).
noinst_PROGRAMS += tests/bench/exec-rtt
tests_bench_exec_rtt_SOURCES = tests/bench/exec-rtt.c
tests_bench_exec_rtt_LDADD = core/libpolysandbox.la
# clone-cost: a fork against a CLONE_VM child from a nanny thread, by the
# caller's size (plugins/local/README.md, "Embedding processes").
noinst_PROGRAMS += tests/bench/clone-cost
tests_bench_clone_cost_SOURCES = tests/bench/clone-cost.c
tests_bench_clone_cost_CFLAGS = $(AM_CFLAGS) -pthread
tests_bench_clone_cost_LDFLAGS = -pthread

EXTRA_DIST += tests/bench/rate.py tests/bench/summary.py tests/bench/python.py
# The summary's verdicts, from figures files the test writes.
TESTS += tests/bench/summary-test.sh
dist_check_SCRIPTS += tests/bench/summary-test.sh

# The docker provider against the docker command (tests/bench/docker.sh).
bench-docker: all
	top_builddir=$(abs_top_builddir) top_srcdir=$(abs_top_srcdir) $(SHELL) $(top_srcdir)/tests/bench/docker.sh
bench: bench-docker
.PHONY: bench-docker
EXTRA_DIST += tests/bench/docker.sh
EXTRA_DIST += tests/bench/eval.sh tests/bench/eval-baseline.py tests/bench/eval-gen.py
EXTRA_DIST += tests/bench/eval-zygote.py
EXTRA_DIST += tests/bench/judged.sh tests/bench/judged-gen.py tests/bench/judged-baseline.py

# polysandboxd against sbx_run and a reference server (tests/bench/server.sh).
bench-server: all
	top_builddir=$(abs_top_builddir) top_srcdir=$(abs_top_srcdir) $(SHELL) $(top_srcdir)/tests/bench/server.sh
bench: bench-server
.PHONY: bench-server
EXTRA_DIST += tests/bench/server.sh tests/bench/server-summary.py tests/bench/ref-server.py
# The summary's verdicts on issue 14's targets, from figures files the test writes.
TESTS += tests/bench/server-summary-test.sh
dist_check_SCRIPTS += tests/bench/server-summary-test.sh

# The kubernetes provider at scale through the fake: cold pods against a
# warm pool (tests/bench/kube.sh).
bench-kube: all
	top_builddir=$(abs_top_builddir) top_srcdir=$(abs_top_srcdir) $(SHELL) $(top_srcdir)/tests/bench/kube.sh
bench: bench-kube
.PHONY: bench-kube
EXTRA_DIST += tests/bench/kube.sh

# exec ID without --provider: the recorded hint against listing every
# provider and against --provider given (tests/bench/locate.sh).
bench-locate: all
	top_builddir=$(abs_top_builddir) top_srcdir=$(abs_top_srcdir) $(SHELL) $(top_srcdir)/tests/bench/locate.sh
bench: bench-locate
.PHONY: bench-locate
EXTRA_DIST += tests/bench/locate.sh

# A Go sample with the read-only Go build cache against without it
# (tests/bench/go-cache.sh).
bench-gocache: all
	top_builddir=$(abs_top_builddir) top_srcdir=$(abs_top_srcdir) $(SHELL) $(top_srcdir)/tests/bench/go-cache.sh
bench: bench-gocache
.PHONY: bench-gocache
EXTRA_DIST += tests/bench/go-cache.sh

# The microvm provider: a cold boot against a restore from its snapshot,
# a pooled run, local and docker (tests/bench/microvm.sh).
bench-microvm: all
	top_builddir=$(abs_top_builddir) top_srcdir=$(abs_top_srcdir) $(SHELL) $(top_srcdir)/tests/bench/microvm.sh
bench: bench-microvm
.PHONY: bench-microvm
EXTRA_DIST += tests/bench/microvm.sh

# polysandboxd's page in chromium: load and first run, with the code
# editor and without it (tests/bench/web.sh).
bench-web: all
	top_builddir=$(abs_top_builddir) top_srcdir=$(abs_top_srcdir) $(SHELL) $(top_srcdir)/tests/bench/web.sh
bench: bench-web
.PHONY: bench-web
EXTRA_DIST += tests/bench/web.sh tests/bench/web.mjs

# The local provider in a pulled Debian image: a run against the host's
# root and against docker run, and the pull against docker pull
# (tests/bench/image.sh).
bench-image: all
	top_builddir=$(abs_top_builddir) top_srcdir=$(abs_top_srcdir) $(SHELL) $(top_srcdir)/tests/bench/image.sh
bench: bench-image
.PHONY: bench-image
EXTRA_DIST += tests/bench/image.sh
