# tests/conformance/local.mk - the conformance kit against each in-tree
# provider; each script passes the kit's TAP straight to the TAP driver.

conformance_tests = tests/conformance/local.t tests/conformance/daytona.t
if BUILD_PROVIDER_LOCAL
TESTS += tests/conformance/local.t
endif
if BUILD_PROVIDER_DAYTONA
TESTS += tests/conformance/daytona.t
endif
dist_check_SCRIPTS += $(conformance_tests)
