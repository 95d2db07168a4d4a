# core/server/local.mk - polysandboxd, the HTTP server
#
# Links the public API of libpolysandbox only (never core/core-int.h);
# shares the command line's duration and size grammar (core/cli/units.c).

sbin_PROGRAMS += polysandboxd
polysandboxd_SOURCES = \
	core/server/server.h \
	core/server/server-int.h \
	core/server/main.c \
	core/server/conf.c \
	core/server/log.c \
	core/server/http.c \
	core/server/router.c \
	core/server/reply.c \
	core/server/opts.c \
	core/server/sse.c \
	core/server/workers.c \
	core/server/monitor.c \
	core/server/auth.c \
	core/server/metrics.c \
	core/server/registry.c \
	core/server/native-run.c \
	core/server/native-sandboxes.c \
	core/server/native-info.c \
	core/server/native-ops.c \
	core/cli/units.c \
	core/cli/info-json.c \
	core/cli/cli.h
polysandboxd_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core/cli
polysandboxd_CFLAGS = $(AM_CFLAGS) -pthread $(MHD_CFLAGS) $(JANSSON_CFLAGS) $(SODIUM_CFLAGS)
polysandboxd_LDADD = core/libpolysandbox.la $(MHD_LIBS) $(JANSSON_LIBS) $(SODIUM_LIBS) -lm
