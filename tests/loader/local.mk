# tests/loader/local.mk - the loader's tests: deliberately broken provider
# modules, the loader test, the export check and the out-of-tree SDK build.

# Each module is a real .so in tests/loader/.libs/ (-rpath makes libtool
# build a shared module rather than a convenience archive).  Unlike real
# providers they are not limited to one export by the linker, so the
# loader, not the build, is what rejects them.
LOADER_TEST_MODULE_LDOPTS = -module -avoid-version -shared -no-undefined \
	-rpath /nowhere

check_LTLIBRARIES += \
	tests/loader/good.la \
	tests/loader/global_syms.la \
	tests/loader/no_symbol.la \
	tests/loader/bad_magic.la \
	tests/loader/abi_major.la \
	tests/loader/abi_minor.la \
	tests/loader/short_size.la \
	tests/loader/short_ops.la \
	tests/loader/empty_name.la \
	tests/loader/no_license.la \
	tests/loader/bad_name.la \
	tests/loader/name_mismatch.la \
	tests/loader/missing_op.la \
	tests/loader/null_ops.la \
	tests/loader/cap_no_op.la \
	tests/loader/cancel_old_abi.la \
	tests/loader/stdin_old_abi.la \
	tests/loader/signal_old_abi.la \
	tests/loader/egress_old_abi.la \
	tests/loader/zygote_old_abi.la \
	tests/loader/typed_settings.la \
	tests/loader/settings_old_abi.la \
	tests/loader/op_no_cap.la \
	tests/loader/reserved.la \
	tests/loader/init_silent.la \
	tests/loader/init_error.la \
	tests/loader/unresolved.la

# the reference test provider's "good" flavour (tests/provider/good.c)
tests_loader_good_la_SOURCES = $(TESTPROV_SOURCES) tests/provider/good.c
tests_loader_good_la_CFLAGS = $(SBX_MODULE_COPTS) -DTP_NAME='"good"'
tests_loader_good_la_LDFLAGS = $(TESTPROV_LDOPTS)

tests_loader_global_syms_la_SOURCES = tests/loader/global_syms.c tests/loader/fake.h
tests_loader_global_syms_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_global_syms_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_no_symbol_la_SOURCES = tests/loader/no_symbol.c tests/loader/fake.h
tests_loader_no_symbol_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_no_symbol_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_bad_magic_la_SOURCES = tests/loader/bad_magic.c tests/loader/fake.h
tests_loader_bad_magic_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_bad_magic_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_abi_major_la_SOURCES = tests/loader/abi_major.c tests/loader/fake.h
tests_loader_abi_major_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_abi_major_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_abi_minor_la_SOURCES = tests/loader/abi_minor.c tests/loader/fake.h
tests_loader_abi_minor_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_abi_minor_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_short_size_la_SOURCES = tests/loader/short_size.c tests/loader/fake.h
tests_loader_short_size_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_short_size_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_short_ops_la_SOURCES = tests/loader/short_ops.c tests/loader/fake.h
tests_loader_short_ops_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_short_ops_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_empty_name_la_SOURCES = tests/loader/empty_name.c tests/loader/fake.h
tests_loader_empty_name_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_empty_name_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_no_license_la_SOURCES = tests/loader/no_license.c tests/loader/fake.h
tests_loader_no_license_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_no_license_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_bad_name_la_SOURCES = tests/loader/bad_name.c tests/loader/fake.h
tests_loader_bad_name_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_bad_name_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_name_mismatch_la_SOURCES = tests/loader/name_mismatch.c tests/loader/fake.h
tests_loader_name_mismatch_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_name_mismatch_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_missing_op_la_SOURCES = tests/loader/missing_op.c tests/loader/fake.h
tests_loader_missing_op_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_missing_op_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_null_ops_la_SOURCES = tests/loader/null_ops.c tests/loader/fake.h
tests_loader_null_ops_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_null_ops_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_cap_no_op_la_SOURCES = tests/loader/cap_no_op.c tests/loader/fake.h
tests_loader_cap_no_op_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_cap_no_op_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)
tests_loader_cancel_old_abi_la_SOURCES = tests/loader/cancel_old_abi.c tests/loader/fake.h
tests_loader_cancel_old_abi_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_cancel_old_abi_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)
tests_loader_stdin_old_abi_la_SOURCES = tests/loader/stdin_old_abi.c tests/loader/fake.h
tests_loader_stdin_old_abi_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_stdin_old_abi_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)
tests_loader_signal_old_abi_la_SOURCES = tests/loader/signal_old_abi.c tests/loader/fake.h
tests_loader_signal_old_abi_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_signal_old_abi_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)
tests_loader_egress_old_abi_la_SOURCES = tests/loader/egress_old_abi.c tests/loader/fake.h
tests_loader_egress_old_abi_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_egress_old_abi_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)
tests_loader_zygote_old_abi_la_SOURCES = tests/loader/zygote_old_abi.c tests/loader/fake.h
tests_loader_zygote_old_abi_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_zygote_old_abi_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)
tests_loader_typed_settings_la_SOURCES = tests/loader/typed_settings.c tests/loader/fake.h
tests_loader_typed_settings_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_typed_settings_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)
tests_loader_settings_old_abi_la_SOURCES = tests/loader/settings_old_abi.c tests/loader/fake.h
tests_loader_settings_old_abi_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_settings_old_abi_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_op_no_cap_la_SOURCES = tests/loader/op_no_cap.c tests/loader/fake.h
tests_loader_op_no_cap_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_op_no_cap_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_reserved_la_SOURCES = tests/loader/reserved.c tests/loader/fake.h
tests_loader_reserved_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_reserved_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_init_silent_la_SOURCES = tests/loader/init_silent.c tests/loader/fake.h
tests_loader_init_silent_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_init_silent_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_init_error_la_SOURCES = tests/loader/init_error.c tests/loader/fake.h
tests_loader_init_error_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_init_error_la_LDFLAGS = $(LOADER_TEST_MODULE_LDOPTS)

tests_loader_unresolved_la_SOURCES = tests/loader/unresolved.c tests/loader/fake.h
tests_loader_unresolved_la_CFLAGS = $(SBX_MODULE_COPTS)
tests_loader_unresolved_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere

check_PROGRAMS += tests/loader/test-loader
tests_loader_test_loader_SOURCES = tests/loader/test-loader.c tests/unit/confdir.h
tests_loader_test_loader_CFLAGS = $(AM_CFLAGS) -pthread
tests_loader_test_loader_LDADD = core/libpolysandbox.la

TESTS += tests/loader/test-loader tests/loader/exports.sh tests/sdk-example.sh
dist_check_SCRIPTS += tests/loader/exports.sh tests/sdk-example.sh
EXTRA_DIST += sdk/example/example.c sdk/example/example-test.c sdk/example/Makefile \
	sdk/example/README.md
