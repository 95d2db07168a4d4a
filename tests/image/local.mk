# tests/image/local.mk - polysandbox image: pulls from real registries
#
# tests/image/pull.sh starts Debian's docker-registry on loopback (open
# and token-authenticated, tests/docker/registry.sh) and the token service
# tests/image/tokend.py, and pushes images made by tests/image/push.py.
TESTS += tests/image/pull.sh
dist_check_SCRIPTS += tests/image/pull.sh
EXTRA_DIST += tests/image/push.py tests/image/tokend.py
