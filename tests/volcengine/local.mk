# tests/volcengine/local.mk - the volcengine provider against the fake of
# veFaaS and the AIO sandbox (tests/fakes/volcengine.py, Python 3 standard
# library only; each script starts its own on a free port of 127.0.0.1)

VC_TESTS = tests/volcengine/faults.sh tests/secrets/volcengine.sh
if BUILD_PROVIDER_VOLCENGINE
TESTS += $(VC_TESTS)
endif
dist_check_SCRIPTS += $(VC_TESTS)
EXTRA_DIST += tests/volcengine/lib.sh tests/fakes/volcengine.py
