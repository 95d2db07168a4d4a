# tests/web/local.mk - polysandboxd's page in a real browser: Debian's
# chromium driven by puppeteer-core from npm (pinned by
# tests/web/package-lock.json, installed by tests/sdk/lib.sh's sdk_install
# into a cache directory); each test skips, naming why, without chromium,
# node or the registry.  Screenshots land in tests/web/screenshots/.

WEB_TESTS = tests/web/playground.sh
TESTS += $(WEB_TESTS)
dist_check_SCRIPTS += $(WEB_TESTS)
EXTRA_DIST += tests/web/playground.mjs tests/web/package.json tests/web/package-lock.json

clean-local: clean-web-screenshots
clean-web-screenshots:
	rm -rf tests/web/screenshots
.PHONY: clean-web-screenshots
