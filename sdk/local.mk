# sdk/local.mk - the provider SDK: headers, pkg-config file, example
#
# The SDK has install directories of its own (same places as the rest),
# so `make install-sdkincludeHEADERS install-sdkpkgconfigDATA` installs
# the SDK alone: tests/sdk-example.sh builds the example against that.

sdkincludedir = $(pkgincludedir)
sdkinclude_HEADERS = sdk/include/polysandbox/provider.h \
	sdk/include/polysandbox/common.h
sdkpkgconfigdir = $(pkgconfigdir)
sdkpkgconfig_DATA = sdk/polysandbox-provider.pc
EXTRA_DIST += sdk/polysandbox-provider.pc.in

# The test host for a provider's unit tests lives in libpolysandbox, so it
# installs with the library, not with the SDK alone.
pkginclude_HEADERS += sdk/include/polysandbox/provider-test.h
pkgconfig_DATA += sdk/polysandbox-provider-test.pc
EXTRA_DIST += sdk/polysandbox-provider-test.pc.in

# sdk/inside: in-tree only, never installed (see its README.md).
EXTRA_DIST += sdk/inside/README.md sdk/inside/embed.h sdk/inside/embed-header.sh \
	sdk/inside/proc-each.c sdk/inside/proc-each.h sdk/inside/seal.h
