# tests/image/local.mk - polysandbox image: pulls from real registries,
# imports of docker save and OCI layout tarballs
#
# tests/image/pull.sh starts Debian's docker-registry on loopback (open
# and token-authenticated, tests/docker/registry.sh) and the token service
# tests/image/tokend.py, and pushes images made by tests/image/push.py.
# tests/image/import.sh imports a `docker save` of a tiny image (when a
# Docker daemon answers) and tarballs made by tests/image/mksave.py.
TESTS += tests/image/pull.sh tests/image/import.sh
dist_check_SCRIPTS += tests/image/pull.sh tests/image/import.sh
EXTRA_DIST += tests/image/push.py tests/image/tokend.py tests/image/mksave.py
