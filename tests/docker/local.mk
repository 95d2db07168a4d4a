# tests/docker/local.mk - the docker provider's image pulls
#
# tests/unit/test-docker-pull: image references, the progress stream, the
# errors and X-Registry-Auth (no daemon).  tests/docker/pull.sh: pulls
# from a real registry (Debian's docker-registry) it starts on loopback,
# on the test dockerd (tests/docker/lib.sh); tests/podman/pull.sh the same
# through Podman's compatible service.
if BUILD_PROVIDER_DOCKER
check_PROGRAMS += tests/unit/test-docker-pull
tests_unit_test_docker_pull_SOURCES = tests/unit/test-docker-pull.c tests/unit/tap.h \
	plugins/docker/engine/pullref.c
tests_unit_test_docker_pull_CPPFLAGS = $(AM_CPPFLAGS) $(SBXHTTP_CPPFLAGS) \
	-I$(top_srcdir)/plugins/docker
tests_unit_test_docker_pull_CFLAGS = $(AM_CFLAGS) $(SBXHTTP_CFLAGS)
tests_unit_test_docker_pull_LDADD = $(SBXHTTP_LIBS)
TESTS += tests/unit/test-docker-pull tests/docker/pull.sh tests/podman/pull.sh
endif
dist_check_SCRIPTS += tests/docker/pull.sh tests/podman/pull.sh
EXTRA_DIST += tests/docker/registry.sh tests/docker/stall.py
if BUILD_PROVIDER_DOCKER
check_PROGRAMS += tests/docker/test-docker-pullcreate
tests_docker_test_docker_pullcreate_SOURCES = tests/docker/pullcreate.c
tests_docker_test_docker_pullcreate_CFLAGS = $(AM_CFLAGS) -pthread
tests_docker_test_docker_pullcreate_LDADD = core/libpolysandbox.la
endif
