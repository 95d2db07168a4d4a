# tests/conformance/local.mk - the conformance kit against every built
# provider and every launch path of the local one, by one rule
#
# KIT_TESTS lists them, one test each: tests/conformance/WORD.kit, WORD a
# provider's name or PROVIDER-VARIANT for another way to run it; a
# one-line file made here, run by the shared LOG_COMPILER
# tests/conformance/kit.sh, which starts what the word needs (a fake, the
# daemon) and runs polysandbox-conformance.  Adding a provider adds its
# test below (and an arm to kit.sh if it needs a fake).  The names are
# written out: automake rewrites a list made with a $(VAR:%=...) pattern
# when it adds TESTS' program suffixes, and loses the pattern.

KIT_TESTS =
if BUILD_PROVIDER_LOCAL
# in-process, and through polysandbox-locald
KIT_TESTS += tests/conformance/local.kit tests/conformance/local-locald.kit
endif
if BUILD_PROVIDER_DOCKER
# on dockerd, and on Podman's service, root and rootless
KIT_TESTS += tests/conformance/docker.kit tests/conformance/docker-podman.kit \
	tests/conformance/docker-podman-rootless.kit
endif
if BUILD_PROVIDER_DAYTONA
KIT_TESTS += tests/conformance/daytona.kit
endif
if BUILD_PROVIDER_CLOUDFLARE
KIT_TESTS += tests/conformance/cloudflare.kit
endif
if BUILD_PROVIDER_VOLCENGINE
KIT_TESTS += tests/conformance/volcengine.kit
endif
if BUILD_PROVIDER_E2B
KIT_TESTS += tests/conformance/e2b.kit
endif
if BUILD_PROVIDER_MODAL
KIT_TESTS += tests/conformance/modal.kit
endif
if BUILD_PROVIDER_MICROVM
# QEMU microvm guests (TCG here), restored from the microvm tests' snapshot
KIT_TESTS += tests/conformance/microvm.kit
endif
if BUILD_PROVIDER_KUBERNETES
# direct pods, and SandboxClaims of the agent-sandbox controller
KIT_TESTS += tests/conformance/kubernetes.kit tests/conformance/kubernetes-agent.kit
endif

KIT_LOG_DRIVER = $(LOG_DRIVER)
KIT_LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/conformance/kit.sh
TESTS += $(KIT_TESTS)
$(KIT_TESTS):
	$(AM_V_GEN)echo '# the conformance kit: tests/conformance/kit.sh $@' > $@
CLEANFILES += $(KIT_TESTS)
dist_check_SCRIPTS += tests/conformance/kit.sh
EXTRA_DIST += tests/docker/lib.sh
