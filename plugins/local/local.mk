# plugins/local/local.mk - the local provider (namespaces, cgroups, seccomp)
#
# A loadable module exporting only sandbox_provider_v1; it never links
# libpolysandbox (the core lends everything through the host table).

if BUILD_PROVIDER_LOCAL
provider_LTLIBRARIES += plugins/local/local.la
plugins_local_local_la_SOURCES = \
	plugins/local/local-int.h \
	plugins/local/local.c \
	plugins/local/local-doctor.c \
	plugins/local/local-egress.c \
	plugins/local/local-files.c \
	plugins/local/local-ids.c \
	plugins/local/local-meta.c \
	plugins/local/local-orphans.c \
	plugins/local/local-owner.c \
	plugins/local/local-rundir.c \
	plugins/local/local-util.c \
	plugins/local/jail/jail.h \
	plugins/local/jail/jail-int.h \
	plugins/local/jail/child.c \
	plugins/local/jail/payload.c \
	plugins/local/jail/root.c \
	plugins/local/jail/root-image.c \
	plugins/local/jail/root-skel.c \
	plugins/local/jail/etcscan.c \
	plugins/local/jail/layout.c \
	plugins/local/jail/limits.c \
	plugins/local/jail/seccomp.c \
	plugins/local/jail/skel.c \
	plugins/local/jail/view.c \
	plugins/local/cgroup/cgroup.c \
	plugins/local/cgroup/slots.c \
	plugins/local/launch/launch.h \
	plugins/local/launch/launchers.c \
	plugins/local/launch/exec.c \
	plugins/local/launch/clone.c \
	plugins/local/launch/vfork.c \
	plugins/local/launch/daemon.c \
	plugins/local/launch/request.c \
	plugins/local/wire/exec-req.h \
	plugins/local/wire/exec-req.c \
	plugins/local/wire/fdpass.h \
	plugins/local/wire/fdpass.c \
	plugins/local/wire/locald-proto.h \
	plugins/common/unenforced.c \
	plugins/common/unenforced.h \
	plugins/common/syscall-lists.h \
	plugins/common/syscall-prelude.h
plugins_local_local_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/common
plugins_local_local_la_CFLAGS = $(SBX_MODULE_COPTS) $(SECCOMP_CFLAGS) $(JANSSON_CFLAGS) \
	-DLCL_LOCALD_PATH='"$(pkglibexecdir)/polysandbox-locald"'
plugins_local_local_la_LDFLAGS = $(SBX_MODULE_LDOPTS)
plugins_local_local_la_LIBADD = $(SECCOMP_LIBS) $(JANSSON_LIBS)

# polysandbox-locald: prepared sandboxes per user (daemon = auto), the
# provider's own sources with the SDK's test host for a host table (no
# core: the few core files that host needs are compiled in).
pkglibexec_PROGRAMS = plugins/local/polysandbox-locald
dist_man_MANS += doc/polysandbox-locald.8
plugins_local_polysandbox_locald_SOURCES = $(plugins_local_local_la_SOURCES) \
	plugins/local/daemon/locald.h \
	plugins/local/daemon/locald.c \
	plugins/local/daemon/host.c \
	plugins/local/daemon/serve.c \
	plugins/local/daemon/spare.c \
	plugins/local/daemon/stock.c \
	core/loader/test-host.c sdk/include/polysandbox/provider-test.h \
	core/path-check.c core/path-check.h core/clock.c core/clock.h \
	core/host-settings.c core/settings-read.h core/units.c core/error.c
plugins_local_polysandbox_locald_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/common \
	-I$(top_srcdir)/core
plugins_local_polysandbox_locald_CFLAGS = $(AM_CFLAGS) $(SECCOMP_CFLAGS) $(JANSSON_CFLAGS) \
	-DLCL_LOCALD_PATH='"$(pkglibexecdir)/polysandbox-locald"'
plugins_local_polysandbox_locald_LDADD = $(SECCOMP_LIBS) $(JANSSON_LIBS)

localconfdir = $(pkgsysconfdir)/providers.d
dist_localconf_DATA = plugins/local/local.ini
endif

EXTRA_DIST += plugins/local/README.md plugins/local/local.ini

if BUILD_PROVIDER_LOCAL
# The zygote (launch/zygote.c): its Python program, compiled in as a
# string, and the helper library it loads with ctypes, installed beside
# local.so.  The helper runs inside the interpreter's process, so it is
# built without the configured CFLAGS (a sanitizer runtime cannot be
# loaded into python3) and exports only lcl_zc_*.
plugins_local_local_la_SOURCES += plugins/local/wire/zygote-proto.h plugins/local/launch/zygote.c
nodist_plugins_local_local_la_SOURCES = plugins/local/local-zygote-py.h
BUILT_SOURCES += plugins/local/local-zygote-py.h
CLEANFILES += plugins/local/local-zygote-py.h plugins/local/local-zygote.so
plugins/local/local-zygote-py.h: $(srcdir)/plugins/local/zygote/zygote.py
	$(AM_V_GEN)$(MKDIR_P) plugins/local && \
	{ echo '/* generated from zygote/zygote.py: do not edit */'; \
	  echo '#define LCL_ZYGOTE_PY \'; \
	  sed -e '/^ *#/d' -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n" \\/' \
	    $(srcdir)/plugins/local/zygote/zygote.py; \
	  echo '""'; } > $@-t && mv $@-t $@
zygotedir = $(providerdir)
zygote_DATA = plugins/local/local-zygote.so
ZYGOTE_HELPER_SRC = $(srcdir)/plugins/local/zygote/helper.c $(srcdir)/plugins/local/jail/child.c \
	$(srcdir)/plugins/local/jail/payload.c $(srcdir)/plugins/local/jail/root.c \
	$(srcdir)/plugins/local/jail/root-image.c $(srcdir)/plugins/local/jail/root-skel.c \
	$(srcdir)/plugins/local/local-util.c $(srcdir)/plugins/local/wire/fdpass.c \
	$(srcdir)/plugins/local/wire/exec-req.c
plugins/local/local-zygote.so: $(ZYGOTE_HELPER_SRC) $(srcdir)/plugins/local/local-int.h \
		$(srcdir)/plugins/local/jail/jail.h $(srcdir)/plugins/local/jail/jail-int.h \
		$(srcdir)/plugins/local/wire/fdpass.h $(srcdir)/plugins/local/wire/exec-req.h \
		$(srcdir)/plugins/local/wire/zygote-proto.h $(top_srcdir)/sdk/inside/seal.h config.h
	$(AM_V_CCLD)$(MKDIR_P) plugins/local && \
	$(CC) -std=gnu11 $(WARN_CFLAGS) -O2 -fPIC -shared -fvisibility=hidden $(DEFS) \
	  -I$(top_builddir) -I$(top_srcdir)/sdk/include -I$(top_srcdir)/sdk \
	  -Wl,-z,defs -o $@ $(ZYGOTE_HELPER_SRC)
endif
EXTRA_DIST += plugins/local/zygote/zygote.py plugins/local/zygote/helper.c
