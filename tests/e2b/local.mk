# tests/e2b/local.mk - the e2b provider against the E2B fake
#
# tests/fakes/e2b.py is a local fake of E2B's control plane and envd
# (Python 3 standard library only); each script starts its own on a free
# port of 127.0.0.1, writes a private configuration pointing at it, and
# kills it on exit.

E2B_TESTS = \
	tests/e2b/fake.sh \
	tests/e2b/direct.sh \
	tests/e2b/cli.sh \
	tests/e2b/labels.sh \
	tests/e2b/faults.sh \
	tests/e2b/eval-faults.sh
if BUILD_PROVIDER_E2B
check_PROGRAMS += tests/e2b/test-e2b-direct
tests_e2b_test_e2b_direct_SOURCES = tests/e2b/test-e2b-direct.c tests/unit/tap.h
# On the SDK's test host (in the library the unit tests link).
tests_e2b_test_e2b_direct_CPPFLAGS = $(UNIT_TEST_CPPFLAGS)
tests_e2b_test_e2b_direct_LDADD = $(UNIT_TEST_LDADD) -ldl
TESTS += $(E2B_TESTS)
endif
dist_check_SCRIPTS += $(E2B_TESTS)
EXTRA_DIST += tests/e2b/lib.sh tests/e2b/fake-protocol.py tests/fakes/e2b.py
