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
EXTRA_DIST += tests/image/push.py tests/image/tokend.py tests/image/mksave.py \
	tests/image/lib.sh

# tests/image/run.sh runs the local provider in a pulled image whose only
# program is tests/image/imgcat: linked statically and built without the
# user's CFLAGS (the image has no libc, nor libasan in a sanitizer build).
tests/image/imgcat: tests/image/imgcat.c
	$(AM_V_CC)$(MKDIR_P) tests/image && \
	$(CC) -std=gnu11 -O2 $(WARN_CFLAGS) -static -o $@ $(srcdir)/tests/image/imgcat.c
EXTRA_DIST += tests/image/imgcat.c
CLEANFILES += tests/image/imgcat
if BUILD_PROVIDER_LOCAL
check_SCRIPTS += tests/image/imgcat
TESTS += tests/image/run.sh
endif
dist_check_SCRIPTS += tests/image/run.sh

# tests/image/kit.sh: the conformance kit for the local provider inside a
# pulled Debian image (the docker tests' cached debootstrap root, pushed to
# a registry on loopback by push.py).
if BUILD_PROVIDER_LOCAL
TESTS += tests/image/kit.sh
endif
dist_check_SCRIPTS += tests/image/kit.sh
