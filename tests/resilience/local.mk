# tests/resilience/local.mk - retries, circuit breakers, fallback, health
#
# flaky.so and flaky2.so are working providers with faults injected from
# their [settings] (the reference test provider's "flaky" flavour,
# tests/provider/flaky.c); test-resilience drives them
# through the core with a fake clock and sleep, so no assertion is timed.
# abi11/flaky11.so is the same flavour declaring provider ABI 1.11: retry
# hints through host->not_started and host->retry_after, and exec_zygote;
# in a folder of its own, so that only the test that names it (module =)
# sees it.

check_LTLIBRARIES += tests/resilience/flaky.la tests/resilience/flaky2.la \
	tests/resilience/abi11/flaky11.la

tests_resilience_flaky_la_SOURCES = $(TESTPROV_SOURCES) tests/provider/flaky.c
tests_resilience_flaky_la_CFLAGS = $(SBX_MODULE_COPTS) -pthread -DTP_NAME='"flaky"'
tests_resilience_flaky_la_LDFLAGS = $(TESTPROV_LDOPTS)

tests_resilience_flaky2_la_SOURCES = $(TESTPROV_SOURCES) tests/provider/flaky.c
tests_resilience_flaky2_la_CFLAGS = $(SBX_MODULE_COPTS) -pthread -DTP_NAME='"flaky2"'
tests_resilience_flaky2_la_LDFLAGS = $(TESTPROV_LDOPTS)

tests_resilience_abi11_flaky11_la_SOURCES = $(TESTPROV_SOURCES) tests/provider/flaky.c
tests_resilience_abi11_flaky11_la_CFLAGS = $(SBX_MODULE_COPTS) -pthread -DTP_NAME='"flaky11"' \
	-DSBX_PROVIDER_ABI_MINOR=11
tests_resilience_abi11_flaky11_la_LDFLAGS = $(TESTPROV_LDOPTS)

check_PROGRAMS += tests/resilience/test-resilience
tests_resilience_test_resilience_SOURCES = tests/resilience/test-resilience.c \
	tests/unit/tap.h
tests_resilience_test_resilience_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core \
	-I$(top_srcdir)/tests/unit
tests_resilience_test_resilience_CFLAGS = $(AM_CFLAGS) -pthread
tests_resilience_test_resilience_LDADD = core/libpolysandbox-internal.la $(LTDL_LIBS) \
	$(JANSSON_LIBS) $(INIH_LIBS) $(SODIUM_LIBS) -ldl

RESILIENCE_TESTS = tests/resilience/check.sh
TESTS += tests/resilience/test-resilience $(RESILIENCE_TESTS)
dist_check_SCRIPTS += $(RESILIENCE_TESTS)
