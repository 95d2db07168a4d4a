# tests/eval/local.mk - tests of the evaluation engine and of
# polysandbox eval and compare
#
# The fake providers (the reference test provider's "evalfake" flavour,
# tests/provider/evalfake.c) are real modules in tests/eval/.libs, found
# through POLYSANDBOX_PROVIDER_PATH set by tests/eval/lib.sh with the
# configuration in tests/eval/config.

check_LTLIBRARIES += tests/eval/evalfail.la tests/eval/evalflaky.la tests/eval/evalnop.la
tests_eval_evalfail_la_SOURCES = $(TESTPROV_SOURCES) tests/provider/evalfake.c
tests_eval_evalfail_la_CFLAGS = $(SBX_MODULE_COPTS) -DTP_EVAL_MODE=1 -DTP_NAME='"evalfail"'
tests_eval_evalfail_la_LDFLAGS = $(TESTPROV_LDOPTS)
tests_eval_evalflaky_la_SOURCES = $(TESTPROV_SOURCES) tests/provider/evalfake.c
tests_eval_evalflaky_la_CFLAGS = $(SBX_MODULE_COPTS) -DTP_EVAL_MODE=2 -DTP_NAME='"evalflaky"'
tests_eval_evalflaky_la_LDFLAGS = $(TESTPROV_LDOPTS)
tests_eval_evalnop_la_SOURCES = $(TESTPROV_SOURCES) tests/provider/evalfake.c
tests_eval_evalnop_la_CFLAGS = $(SBX_MODULE_COPTS) -DTP_EVAL_MODE=3 -DTP_NAME='"evalnop"'
tests_eval_evalnop_la_LDFLAGS = $(TESTPROV_LDOPTS)

check_PROGRAMS += tests/eval/test-eval-stats
tests_eval_test_eval_stats_SOURCES = tests/eval/test-eval-stats.c tests/unit/tap.h
tests_eval_test_eval_stats_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core -I$(top_srcdir)/tests/unit
tests_eval_test_eval_stats_CFLAGS = $(AM_CFLAGS) -pthread
tests_eval_test_eval_stats_LDADD = core/libpolysandbox-internal.la $(LTDL_LIBS) \
	$(JANSSON_LIBS) $(INIH_LIBS) $(SODIUM_LIBS) $(ZLIB_LIBS)

check_PROGRAMS += tests/eval/test-journal-check
tests_eval_test_journal_check_SOURCES = tests/eval/test-journal-check.c tests/unit/tap.h
tests_eval_test_journal_check_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core -I$(top_srcdir)/tests/unit
tests_eval_test_journal_check_LDADD = $(tests_eval_test_eval_stats_LDADD)

# the engine as an application embeds it: the public API only
check_PROGRAMS += tests/eval/test-eval-cancel
tests_eval_test_eval_cancel_SOURCES = tests/eval/test-eval-cancel.c tests/unit/tap.h
tests_eval_test_eval_cancel_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_eval_test_eval_cancel_CFLAGS = $(AM_CFLAGS) -pthread
tests_eval_test_eval_cancel_LDADD = core/libpolysandbox.la

EVAL_TESTS = \
	tests/eval/verdicts.sh \
	tests/eval/passk.sh \
	tests/eval/resume.sh \
	tests/eval/providers.sh \
	tests/eval/errors.sh \
	tests/eval/json.sh \
	tests/eval/compare.sh \
	tests/eval/compare-json.sh \
	tests/eval/progress.sh \
	tests/eval/site.sh \
	tests/eval/input.sh \
	tests/eval/marker.sh \
	tests/eval/keeper.sh \
	tests/eval/judged.sh \
	tests/eval/judged-runner.sh \
	tests/eval/judged-driver.sh \
	tests/eval/judged-later.sh \
	tests/eval/evalplus.sh \
	tests/eval/evalplus-oracles.sh \
	tests/eval/evalplus-time.sh \
	tests/eval/multipl-e.sh \
	tests/eval/multipl-e-langs.sh \
	tests/eval/go-cache.sh \
	tests/eval/report.sh \
	tests/eval/cost.sh \
	tests/eval/fallback.sh
TESTS += tests/eval/test-eval-stats tests/eval/test-journal-check tests/eval/test-eval-cancel \
	$(EVAL_TESTS)
dist_check_SCRIPTS += $(EVAL_TESTS)
EXTRA_DIST += tests/eval/lib.sh tests/eval/config tests/eval/data tests/eval/evalplus-ref.py
