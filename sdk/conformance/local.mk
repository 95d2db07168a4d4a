# sdk/conformance/local.mk - polysandbox-conformance, the conformance kit
#
# Built on the public embedding API only (<polysandbox/sandbox.h>), so it
# exercises a provider exactly as an embedder would.

bin_PROGRAMS += polysandbox-conformance
polysandbox_conformance_SOURCES = \
	sdk/conformance/main.c \
	sdk/conformance/kit.h \
	sdk/conformance/kit.c \
	sdk/conformance/tap.h \
	sdk/conformance/tap.c \
	sdk/conformance/exec-tests.c \
	sdk/conformance/output-tests.c \
	sdk/conformance/lifecycle-tests.c \
	sdk/conformance/find-tests.c \
	sdk/conformance/files-tests.c \
	sdk/conformance/policy-tests.c \
	sdk/conformance/zygote-tests.c
polysandbox_conformance_CFLAGS = $(AM_CFLAGS) -pthread
polysandbox_conformance_LDADD = core/libpolysandbox.la -lpthread

dist_man_MANS += doc/polysandbox-conformance.1
