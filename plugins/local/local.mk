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
	plugins/local/local-util.c \
	plugins/local/locald-client.c \
	plugins/local/locald-proto.c \
	plugins/local/locald-proto.h
plugins_local_local_la_CFLAGS = $(SBX_MODULE_COPTS) $(SECCOMP_CFLAGS) $(JANSSON_CFLAGS) \
	-DLCL_LOCALD_PATH='"$(pkglibexecdir)/polysandbox-locald"'
plugins_local_local_la_LDFLAGS = $(SBX_MODULE_LDOPTS)
plugins_local_local_la_LIBADD = $(SECCOMP_LIBS) $(JANSSON_LIBS)

# polysandbox-locald: prepared sandboxes per user (daemon = auto), the
# provider's own sources with a host table of its own (no core).
pkglibexec_PROGRAMS = plugins/local/polysandbox-locald
plugins_local_polysandbox_locald_SOURCES = $(plugins_local_local_la_SOURCES) \
	plugins/local/locald.h \
	plugins/local/locald.c \
	plugins/local/locald-zygote.c
plugins_local_polysandbox_locald_CFLAGS = $(AM_CFLAGS) $(SECCOMP_CFLAGS) $(JANSSON_CFLAGS) \
	-DLCL_LOCALD_PATH='"$(pkglibexecdir)/polysandbox-locald"'
plugins_local_polysandbox_locald_LDADD = $(SECCOMP_LIBS) $(JANSSON_LIBS)

localconfdir = $(pkgsysconfdir)/providers.d
dist_localconf_DATA = plugins/local/local.ini
endif

EXTRA_DIST += plugins/local/README.md plugins/local/local.ini
