# tests/daytona/local.mk - the daytona provider against its local fake
# (tests/fakes/daytona.py, Python 3 standard library only)

daytona_tests = tests/daytona/wire.sh tests/daytona/fake.sh tests/daytona/revive.sh
if BUILD_PROVIDER_DAYTONA
TESTS += $(daytona_tests)
check_PROGRAMS += tests/daytona/test-revive
tests_daytona_test_revive_SOURCES = tests/daytona/test-revive.c tests/unit/tap.h
tests_daytona_test_revive_LDADD = core/libpolysandbox.la
endif
dist_check_SCRIPTS += $(daytona_tests)
EXTRA_DIST += tests/daytona/lib.sh tests/daytona/wire.py tests/fakes/daytona.py
