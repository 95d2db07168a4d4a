# tests/server/local.mk - tests of polysandboxd
#
# Each test starts a real polysandboxd from the build tree on a free
# loopback port and drives it with curl and python3 (standard library).

SERVER_TESTS = \
	tests/server/run.sh \
	tests/server/openapi.sh \
	tests/server/lifecycle.sh \
	tests/server/auth.sh \
	tests/server/input.sh \
	tests/server/backpressure.sh \
	tests/server/config.sh \
	tests/server/piston.sh \
	tests/server/sandboxfusion.sh \
	tests/server/seed.sh
TESTS += $(SERVER_TESTS)
dist_check_SCRIPTS += $(SERVER_TESTS)
EXTRA_DIST += tests/server/lib.sh tests/server/openapi.py tests/server/openapi_compat.py
EXTRA_DIST += tests/server/npm.sh tests/server/npm/package.json tests/server/npm/package-lock.json \
	tests/server/piston-client.mjs
