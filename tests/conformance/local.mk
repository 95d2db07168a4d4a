# tests/conformance/local.mk - the conformance kit against every built
# provider and every launch path of the local one, by one rule
#
# KIT_TARGETS lists them, one word each: a provider's name, or
# PROVIDER-VARIANT for another way to run it.  Each becomes the test
# tests/conformance/WORD.kit, a one-line file made here, run by the shared
# LOG_COMPILER tests/conformance/kit.sh, which starts what the word needs
# (a fake, the daemon) and runs polysandbox-conformance.  Adding a provider
# adds its word below (and an arm to kit.sh if it needs a fake).

KIT_TARGETS =
if BUILD_PROVIDER_LOCAL
# in-process, and through polysandbox-locald
KIT_TARGETS += local local-locald
endif
if BUILD_PROVIDER_DOCKER
# on dockerd, and on Podman's service, root and rootless
KIT_TARGETS += docker docker-podman docker-podman-rootless
endif
if BUILD_PROVIDER_DAYTONA
KIT_TARGETS += daytona
endif
if BUILD_PROVIDER_CLOUDFLARE
KIT_TARGETS += cloudflare
endif
if BUILD_PROVIDER_VOLCENGINE
KIT_TARGETS += volcengine
endif
if BUILD_PROVIDER_E2B
KIT_TARGETS += e2b
endif
if BUILD_PROVIDER_MODAL
KIT_TARGETS += modal
endif
if BUILD_PROVIDER_KUBERNETES
# direct pods, and SandboxClaims of the agent-sandbox controller
KIT_TARGETS += kubernetes kubernetes-agent
endif

KIT_TESTS = $(KIT_TARGETS:%=tests/conformance/%.kit)
KIT_LOG_DRIVER = $(LOG_DRIVER)
KIT_LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/conformance/kit.sh
TESTS += $(KIT_TESTS)
$(KIT_TESTS):
	$(AM_V_GEN)echo '# the conformance kit: tests/conformance/kit.sh $@' > $@
CLEANFILES += $(KIT_TESTS)
dist_check_SCRIPTS += tests/conformance/kit.sh
EXTRA_DIST += tests/docker/lib.sh
