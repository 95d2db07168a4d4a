# tests/sanitize/local.mk - the suite's own sanitizer settings: a leak
# check at exit survives a dlopen'ed module's TLS block where GCC 12's
# libasan misreads it (see dtls-exit.c and AM_TESTS_ENVIRONMENT).

check_LTLIBRARIES += tests/sanitize/dtls-mod.la
tests_sanitize_dtls_mod_la_SOURCES = tests/sanitize/dtls-mod.c
tests_sanitize_dtls_mod_la_LDFLAGS = -module -avoid-version -shared -no-undefined \
	-rpath /nowhere

check_PROGRAMS += tests/sanitize/dtls-exit
tests_sanitize_dtls_exit_SOURCES = tests/sanitize/dtls-exit.c

TESTS += tests/sanitize/dtls.sh
dist_check_SCRIPTS += tests/sanitize/dtls.sh
