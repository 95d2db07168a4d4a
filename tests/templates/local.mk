# tests/templates/local.mk - the language templates on the local provider
#
# Each template runs a hello world and a compile (or syntax) error where
# its runtime is on the host, else a skip with the reason `polysandbox
# templates` gives; list.sh checks that listing and the --image refusal.

TEMPLATE_TESTS = \
	tests/templates/list.sh \
	tests/templates/network.sh \
	tests/templates/go-deps.sh \
	tests/templates/interpreted.sh \
	tests/templates/compiled.sh \
	tests/templates/python-data.sh tests/templates/go-stale.sh
TESTS += $(TEMPLATE_TESTS)
dist_check_SCRIPTS += $(TEMPLATE_TESTS)
EXTRA_DIST += tests/templates/lib.sh
