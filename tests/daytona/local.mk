# tests/daytona/local.mk - the daytona provider against its local fake
# (tests/fakes/daytona.py, Python 3 standard library only)

daytona_tests = tests/daytona/wire.sh tests/daytona/fake.sh
if BUILD_PROVIDER_DAYTONA
TESTS += $(daytona_tests)
endif
dist_check_SCRIPTS += $(daytona_tests)
EXTRA_DIST += tests/daytona/lib.sh tests/daytona/wire.py tests/fakes/daytona.py
