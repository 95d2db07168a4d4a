# sdk/local.mk - the provider SDK: header, pkg-config file, example

pkginclude_HEADERS += sdk/include/polysandbox/provider.h
pkgconfig_DATA += sdk/polysandbox-provider.pc
EXTRA_DIST += sdk/polysandbox-provider.pc.in
