# tests/cloudflare/local.mk - the cloudflare provider against the fake of
# the bridge Worker (tests/fakes/cloudflare.py, Python 3 standard library
# only; each script starts its own on a free port of 127.0.0.1)

CF_TESTS = tests/cloudflare/faults.sh tests/cloudflare/network.sh tests/secrets/cloudflare.sh
if BUILD_PROVIDER_CLOUDFLARE
TESTS += $(CF_TESTS)
endif
dist_check_SCRIPTS += $(CF_TESTS)
EXTRA_DIST += tests/cloudflare/lib.sh tests/fakes/cloudflare.py tests/fakes/cloudflare-openapi.json
