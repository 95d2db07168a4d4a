# tests/sdk/local.mk - the fakes of tests/fakes/ driven by the vendors' own
# SDKs from npm (pinned by tests/sdk/package-lock.json; each script
# installs them with npm ci into a cache directory when missing and skips,
# naming the reason, when node, npm or the registry cannot be had)

sdk_tests = tests/sdk/e2b.sh tests/sdk/daytona.sh tests/sdk/volcengine.sh
TESTS += $(sdk_tests)
dist_check_SCRIPTS += $(sdk_tests)
EXTRA_DIST += tests/sdk/lib.sh tests/sdk/tap.mjs tests/sdk/e2b.mjs tests/sdk/daytona.mjs \
	tests/sdk/volcengine.mjs \
	tests/sdk/package.json tests/sdk/package-lock.json
