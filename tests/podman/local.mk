# tests/podman/local.mk - the docker provider on Podman's Docker-compatible
# service (tests/podman/lib.sh starts one of its own and imports the image).
# Its conformance kit runs are tests/conformance/docker-podman*.kit.
podman_tests = tests/podman/cli.sh tests/podman/attach.sh
# Rootless Podman: a service of an unprivileged test user (tests/podman/lib.sh).
podman_tests += tests/podman/rootless.sh
if BUILD_PROVIDER_DOCKER
TESTS += $(podman_tests)
endif
dist_check_SCRIPTS += $(podman_tests)
EXTRA_DIST += tests/podman/lib.sh

# The docker provider against the docker command, both on Podman.
bench-podman: all
	top_builddir=$(abs_top_builddir) top_srcdir=$(abs_top_srcdir) $(SHELL) $(top_srcdir)/tests/podman/bench.sh
.PHONY: bench-podman
EXTRA_DIST += tests/podman/bench.sh
# The same on rootless Podman (the test user's service).
bench-podman-rootless: all
	top_builddir=$(abs_top_builddir) top_srcdir=$(abs_top_srcdir) $(SHELL) $(top_srcdir)/tests/podman/bench-rootless.sh
.PHONY: bench-podman-rootless
EXTRA_DIST += tests/podman/bench-rootless.sh
CLEANFILES += tests/podman.log tests/podman-rootless.log
