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


# bench-pool: sbx_run through a warm pool against none, same process.
noinst_PROGRAMS += tests/bench/bench-pool
tests_bench_bench_pool_SOURCES = tests/bench/bench-pool.c
tests_bench_bench_pool_LDADD = core/libpolysandbox.la

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
