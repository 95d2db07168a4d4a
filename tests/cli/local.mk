# tests/cli/local.mk - tests of the polysandbox command
#
# The shell tests run $(top_builddir)/polysandbox with the environment of
# AM_TESTS_ENVIRONMENT (build-tree providers, tests/config).  usage.sh
# needs no provider and man-keys.sh only the sources; the others need the
# local provider.

check_PROGRAMS += tests/cli/units-test
tests_cli_units_test_SOURCES = tests/cli/units-test.c tests/unit/tap.h core/cli/format.c \
	core/cli/cli.h
tests_cli_units_test_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core/cli
tests_cli_units_test_LDADD = core/libpolysandbox.la

# nostream: a provider that takes stdin whole only, and flop: one that
# claims stdin_stream but never creates (exec-stdin-stream.sh); the
# reference test provider's "nostream" flavour, tests/provider/nostream.c
check_LTLIBRARIES += tests/cli/nostream.la tests/cli/flop.la
tests_cli_nostream_la_SOURCES = $(TESTPROV_SOURCES) tests/provider/nostream.c
tests_cli_nostream_la_CFLAGS = $(SBX_MODULE_COPTS) -DTP_NAME='"nostream"'
tests_cli_nostream_la_LDFLAGS = $(TESTPROV_LDOPTS)
tests_cli_flop_la_SOURCES = $(TESTPROV_SOURCES) tests/provider/nostream.c
tests_cli_flop_la_CFLAGS = $(SBX_MODULE_COPTS) -DTP_NAME='"flop"' -DTP_FLOP
tests_cli_flop_la_LDFLAGS = $(TESTPROV_LDOPTS)

CLI_TESTS = \
	tests/cli/usage.sh \
	tests/cli/run.sh \
	tests/cli/json.sh \
	tests/cli/sandbox.sh \
	tests/cli/exit.sh \
	tests/cli/get-or-create.sh \
	tests/cli/habits.sh \
	tests/cli/ro-binds.sh \
	tests/cli/local-settings.sh \
	tests/cli/enable.sh \
	tests/cli/locate.sh \
	tests/cli/files.sh \
	tests/cli/info.sh \
	tests/cli/man.sh \
	tests/cli/man-keys.sh \
	tests/cli/exec-stdin-stream.sh \
	tests/cli/artifacts.sh \
	tests/cli/terminal.sh
TESTS += tests/cli/units-test $(CLI_TESTS)
dist_check_SCRIPTS += $(CLI_TESTS)
EXTRA_DIST += tests/cli/terminal.py
EXTRA_DIST += tests/cli/lib.sh
