# tests/clouds/local.mk - the cloud providers together, each against its
# fake (tests/clouds/lib.sh starts any of them on free ports of 127.0.0.1):
# evaluations under injected faults, failover between clouds, compare
# across them, and what `polysandbox providers` says of every provider.
# A script skips, naming it, when a provider it needs is not built.

CLOUDS_TESTS = \
	tests/clouds/eval-faults.sh \
	tests/clouds/failover.sh \
	tests/clouds/failover-volcengine.sh \
	tests/clouds/failover-modal.sh \
	tests/clouds/compare.sh \
	tests/clouds/providers.sh
if HAVE_CURL
TESTS += $(CLOUDS_TESTS)
endif
dist_check_SCRIPTS += $(CLOUDS_TESTS)
EXTRA_DIST += tests/clouds/lib.sh
