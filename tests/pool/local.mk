# tests/pool/local.mk - warm pools and gc, on the local provider
#
# test-pool drives pools through the public API (libpolysandbox), with a
# state directory of its own per context; gc.sh and pools.sh are the CLI.

check_PROGRAMS += tests/pool/test-pool
tests_pool_test_pool_SOURCES = tests/pool/test-pool.c tests/unit/tap.h
tests_pool_test_pool_CFLAGS = $(AM_CFLAGS) -pthread
tests_pool_test_pool_LDADD = core/libpolysandbox.la

POOL_TESTS = tests/pool/gc.sh tests/pool/gc-orphans.sh tests/pool/pools.sh
TESTS += tests/pool/test-pool $(POOL_TESTS)
dist_check_SCRIPTS += $(POOL_TESTS)
