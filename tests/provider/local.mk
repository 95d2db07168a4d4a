# tests/provider/local.mk - the reference test provider: one skeleton
# (testprov.c) and one file per flavour (good.c, marker.c, probe.c,
# flaky.c, unenf.c, flood.c, nostream.c, evalfake.c).
#
# Each module is built by the folder whose tests load it, so that it lands
# in that folder's .libs (the provider path those tests set): its sources
# are $(TESTPROV_SOURCES) and its flavour's file, its CFLAGS name it with
# -DTP_NAME='"name"' (the module's base name), its LDFLAGS are
# $(TESTPROV_LDOPTS) (-rpath: a real shared module, not a convenience
# archive).  Only the descriptor is exported: -fvisibility=hidden in
# $(SBX_MODULE_COPTS) hides the skeleton's tp_* functions.
TESTPROV_SOURCES = tests/provider/testprov.c tests/provider/testprov.h
TESTPROV_LDOPTS = -module -avoid-version -shared -no-undefined -rpath /nowhere
