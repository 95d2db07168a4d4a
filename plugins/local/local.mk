# plugins/local/local.mk - the local provider (namespaces, cgroups, seccomp)
#
# A loadable module exporting only sandbox_provider_v1; it never links
# libpolysandbox (the core lends everything through the host table).

if BUILD_PROVIDER_LOCAL
provider_LTLIBRARIES += plugins/local/local.la
plugins_local_local_la_SOURCES = \
	plugins/local/local-int.h \
	plugins/local/local.c \
	plugins/local/local-child.c \
	plugins/local/local-cgroup.c \
	plugins/local/local-cgpool.c \
	plugins/local/local-doctor.c \
	plugins/local/local-exec.c \
	plugins/local/local-files.c \
	plugins/local/local-layout.c \
	plugins/local/local-meta.c \
	plugins/local/local-rundir.c \
	plugins/local/local-seccomp.c \
	plugins/local/local-skel.c \
	plugins/local/local-util.c
plugins_local_local_la_CFLAGS = $(SBX_MODULE_COPTS) $(SECCOMP_CFLAGS) $(JANSSON_CFLAGS)
plugins_local_local_la_LDFLAGS = $(SBX_MODULE_LDOPTS)
plugins_local_local_la_LIBADD = $(SECCOMP_LIBS) $(JANSSON_LIBS)

localconfdir = $(pkgsysconfdir)/providers.d
dist_localconf_DATA = plugins/local/local.ini
endif

EXTRA_DIST += plugins/local/README.md plugins/local/local.ini
