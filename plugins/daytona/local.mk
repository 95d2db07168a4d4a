# plugins/daytona/local.mk - the Daytona provider (REST API and toolbox)
#
# A loadable module exporting only sandbox_provider_v1.  It links the
# shared HTTP client (plugins/common) and never libpolysandbox.

if BUILD_PROVIDER_DAYTONA
provider_LTLIBRARIES += plugins/daytona/daytona.la
plugins_daytona_daytona_la_SOURCES = \
	plugins/daytona/daytona-int.h \
	plugins/daytona/daytona.c \
	plugins/daytona/daytona-api.c \
	plugins/daytona/daytona-exec.c \
	plugins/daytona/daytona-files.c \
	plugins/daytona/daytona-util.c
plugins_daytona_daytona_la_CPPFLAGS = $(AM_CPPFLAGS) $(SBXHTTP_CPPFLAGS)
plugins_daytona_daytona_la_CFLAGS = $(SBX_MODULE_COPTS) $(SBXHTTP_CFLAGS) $(SODIUM_CFLAGS)
plugins_daytona_daytona_la_LDFLAGS = $(SBX_MODULE_LDOPTS)
plugins_daytona_daytona_la_LIBADD = $(SBXHTTP_LIBS) $(SODIUM_LIBS)

daytonaconfdir = $(pkgsysconfdir)/providers.d
dist_daytonaconf_DATA = plugins/daytona/daytona.ini
endif

EXTRA_DIST += plugins/daytona/README.md plugins/daytona/daytona.ini
