# plugins/docker/local.mk - the docker provider (Docker/Podman Engine API)
#
# A loadable module exporting only sandbox_provider_v1, linked with the
# shared HTTP client (plugins/common) and libarchive.  Its folders depend
# one way (README.md, "Layout"): the provider's entry (this folder) on
# exec/ (the two exec modes), exec/ on engine/ (the Engine API client);
# init/ is docker-init, a static helper the module embeds and installs
# into every daemon it drives (see docker-initvol.c), built with the
# plain compiler and no sanitizer flags, since it runs inside containers.

if BUILD_PROVIDER_DOCKER
provider_LTLIBRARIES += plugins/docker/docker.la
plugins_docker_docker_la_SOURCES = \
	plugins/docker/docker-int.h \
	plugins/docker/docker.c \
	plugins/docker/docker-doctor.c \
	plugins/docker/docker-files.c \
	plugins/docker/docker-initvol.c \
	plugins/docker/docker-limits.c \
	plugins/docker/docker-seccomp.c \
	plugins/docker/docker-settings.c \
	plugins/docker/docker-spec.c \
	plugins/docker/exec/exec.h \
	plugins/docker/exec/exec.c \
	plugins/docker/exec/xrun.h \
	plugins/docker/exec/api.c \
	plugins/docker/exec/attach.c \
	plugins/docker/exec/conn.h \
	plugins/docker/exec/conn.c \
	plugins/docker/engine/engine.h \
	plugins/docker/engine/engine.c \
	plugins/docker/engine/pull.c \
	plugins/docker/engine/pullref.c \
	plugins/docker/engine/stream.c \
	plugins/docker/engine/tar.c \
	plugins/docker/init/proto.h \
	plugins/common/tar-mem.c plugins/common/tar-mem.h
nodist_plugins_docker_docker_la_SOURCES = plugins/docker/init/docker-init.h
plugins_docker_docker_la_CPPFLAGS = $(AM_CPPFLAGS) $(SBXHTTP_CPPFLAGS) \
	-I$(top_srcdir)/plugins/docker -I$(top_builddir)/plugins/docker
plugins_docker_docker_la_CFLAGS = $(SBX_MODULE_COPTS) $(SBXHTTP_CFLAGS) $(LIBARCHIVE_CFLAGS) \
	$(SECCOMP_CFLAGS)
plugins_docker_docker_la_LDFLAGS = $(SBX_MODULE_LDOPTS)
plugins_docker_docker_la_LIBADD = $(SBXHTTP_LIBS) $(LIBARCHIVE_LIBS) $(SECCOMP_LIBS)

# The helper's bytes are included by docker-initvol.c (.incbin of the path
# init/docker-init.h names; the header carries the helper's checksum, so the
# dependency tracking rebuilds docker-initvol.c when the helper changes).
DK_INIT_SRCS = $(top_srcdir)/plugins/docker/init/init.c $(top_srcdir)/plugins/docker/init/serve.c \
	$(top_srcdir)/plugins/docker/init/sep.c $(top_srcdir)/plugins/docker/init/tree.c \
	$(top_srcdir)/sdk/inside/proc-each.c
plugins/docker/init/docker-init: $(DK_INIT_SRCS) $(top_srcdir)/plugins/docker/init/helper.h \
	  $(top_srcdir)/sdk/inside/proc-each.h \
	  $(top_srcdir)/plugins/docker/init/proto.h $(top_srcdir)/plugins/common/syscall-lists.h \
	  $(top_srcdir)/plugins/common/syscall-prelude.h $(top_srcdir)/sdk/include/polysandbox/common.h
	@$(MKDIR_P) plugins/docker/init
	$(AM_V_CC)$(CC) -std=gnu11 -O2 -static $(WARN_CFLAGS) \
	  -I$(top_srcdir)/plugins/common -I$(top_srcdir)/sdk/include -I$(top_srcdir)/sdk \
	  -o $@ $(DK_INIT_SRCS)
plugins/docker/init/docker-init.h: plugins/docker/init/docker-init $(SBX_EMBED_HEADER_SH)
	$(AM_V_GEN)$(SHELL) $(SBX_EMBED_HEADER_SH) DK_INIT_BIN plugins/docker/init/docker-init \
	  > $@.tmp && mv $@.tmp $@
BUILT_SOURCES += plugins/docker/init/docker-init.h
CLEANFILES += plugins/docker/init/docker-init plugins/docker/init/docker-init.h

dockerconfdir = $(pkgsysconfdir)/providers.d
dist_dockerconf_DATA = plugins/docker/docker.ini
endif

EXTRA_DIST += plugins/docker/README.md plugins/docker/docker.ini plugins/docker/init/init.c \
	plugins/docker/init/serve.c plugins/docker/init/sep.c plugins/docker/init/tree.c \
	plugins/docker/init/helper.h \
	plugins/docker/init/proto.h plugins/common/syscall-lists.h plugins/common/syscall-prelude.h

# Unit test of the pure parts (no daemon).
if BUILD_PROVIDER_DOCKER
check_PROGRAMS += tests/unit/test-docker
tests_unit_test_docker_SOURCES = tests/unit/test-docker.c tests/unit/tap.h \
	plugins/docker/engine/stream.c plugins/docker/docker-spec.c plugins/docker/engine/tar.c \
	plugins/common/tar-mem.c plugins/docker/docker-seccomp.c
tests_unit_test_docker_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/common \
	-I$(top_srcdir)/plugins/docker
tests_unit_test_docker_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(JANSSON_CFLAGS) $(LIBARCHIVE_CFLAGS) \
	$(SECCOMP_CFLAGS)
tests_unit_test_docker_LDADD = $(JANSSON_LIBS) $(LIBARCHIVE_LIBS) $(SECCOMP_LIBS)
TESTS += tests/unit/test-docker
endif

# On a real dockerd (tests/docker/lib.sh starts one and builds the image).
if BUILD_PROVIDER_DOCKER
TESTS += tests/docker/cli.sh tests/docker/attach.sh tests/docker/reconnect.sh \
	tests/docker/network.sh tests/docker/conformance-api.sh tests/docker/server.sh tests/docker/server-ws-signal.sh
check_PROGRAMS += tests/docker/test-docker-reconnect
tests_docker_test_docker_reconnect_SOURCES = tests/docker/reconnect.c
tests_docker_test_docker_reconnect_LDADD = core/libpolysandbox.la
endif
dist_check_SCRIPTS += tests/docker/cli.sh tests/docker/attach.sh tests/docker/reconnect.sh \
	tests/docker/network.sh tests/docker/conformance-api.sh tests/docker/server.sh tests/docker/server-ws-signal.sh
EXTRA_DIST += tests/docker/server.py
