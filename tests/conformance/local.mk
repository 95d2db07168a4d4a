# tests/conformance/local.mk - the conformance kit against each in-tree
# provider; each script passes the kit's TAP straight to the TAP driver.

conformance_tests = tests/conformance/local.t tests/conformance/daytona.t
if BUILD_PROVIDER_LOCAL
TESTS += tests/conformance/local.t
endif
# The same kit with execs in sandboxes polysandbox-locald prepared.
if BUILD_PROVIDER_LOCAL
TESTS += tests/conformance/local-locald.t
endif
dist_check_SCRIPTS += tests/conformance/local-locald.t
if BUILD_PROVIDER_DAYTONA
TESTS += tests/conformance/daytona.t
endif
dist_check_SCRIPTS += $(conformance_tests)

if BUILD_PROVIDER_CLOUDFLARE
TESTS += tests/conformance/cloudflare.t
endif
dist_check_SCRIPTS += tests/conformance/cloudflare.t

if BUILD_PROVIDER_VOLCENGINE
TESTS += tests/conformance/volcengine.t
endif
dist_check_SCRIPTS += tests/conformance/volcengine.t

if BUILD_PROVIDER_DOCKER
TESTS += tests/conformance/docker.t
endif
dist_check_SCRIPTS += tests/conformance/docker.t
EXTRA_DIST += tests/docker/lib.sh
