# core/server/local.mk - polysandboxd, the HTTP server
#
# Links the public API of libpolysandbox only (never a core/ internal header);
# reads durations and sizes with the library's sbx_parse_* (core/units.c).

# Everything but main() is a convenience library, which the fuzz target
# of the request decoding (tests/fuzz/fuzz-server.c) links too.
sbin_PROGRAMS += polysandboxd
polysandboxd_SOURCES = core/server/main.c core/server/server.h core/server/server-int.h
polysandboxd_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core/cli -I$(top_srcdir)/core/server
polysandboxd_CFLAGS = $(AM_CFLAGS) -pthread $(JANSSON_CFLAGS)
polysandboxd_LDADD = core/server/libsrv.la core/libpolysandbox.la $(SRV_LIBS)

noinst_LTLIBRARIES += core/server/libsrv.la
core_server_libsrv_la_SOURCES = \
	core/server/server.h \
	core/server/server-int.h \
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
	core/server/idem.c \
	core/server/native-run.c \
	core/server/native-sandboxes.c \
	core/server/native-info.c \
	core/server/native-ops.c \
	core/server/native-web.c \
	core/server/etag.c \
	core/server/native-jobs.c \
	core/server/jobs.h \
	core/server/jobs.c \
	core/server/jobs-gate.c \
	core/server/jobs-life.c \
	core/server/jobs-store.c \
	core/server/jobs-view.c \
	core/server/jobs-batch.c \
	core/server/jobs-eval.c \
	core/server/jobs-compare.c \
	core/server/native-ws.c \
	core/server/compat.h \
	core/server/compat-run.c \
	core/server/compat-piston.h \
	core/server/compat-piston.c \
	core/server/compat-fusion.h \
	core/server/compat-fusion.c \
	core/server/compat-fusion-data.c \
	core/server/compat-seed.c \
	core/server/compat-piston-ws.c \
	core/server/compat-judge0.h \
	core/server/compat-judge0.c \
	core/server/compat-judge0-store.c \
	core/server/compat-judge0-queue.c \
	core/server/compat-judge0-callback.c \
	core/server/compat-judge0-cbfile.c \
	core/server/ws.h \
	core/server/ws.c \
	core/server/ws-signal.c \
	core/server/ws-frame.h \
	core/server/ws-frame.c \
	core/server/utf8.h \
	core/server/utf8.c \
	core/server/json-text.h \
	core/server/json-text.c \
	core/server/b64.h \
	core/server/b64.c \
	core/server/file-json.h \
	core/server/file-json.c \
	core/cli/info-json.c \
	core/cli/cli.h
core_server_libsrv_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core/cli -I$(top_srcdir)/core/server
core_server_libsrv_la_CFLAGS = $(AM_CFLAGS) -pthread $(MHD_CFLAGS) $(JANSSON_CFLAGS) \
	$(SODIUM_CFLAGS) $(NETTLE_CFLAGS)
# What a program linking libsrv.la needs besides libpolysandbox.
SRV_LIBS = $(MHD_LIBS) $(JANSSON_LIBS) $(SODIUM_LIBS) $(NETTLE_LIBS) -lm
# Judge0's callback_url is sent with libcurl (refused without it).
if HAVE_CURL
core_server_libsrv_la_CFLAGS += $(CURL_CFLAGS) -DSRV_HAVE_CURL
SRV_LIBS += $(CURL_LIBS)
endif

dist_man_MANS += doc/polysandboxd.8
EXTRA_DIST += contrib/systemd/polysandboxd.service

# The OpenAPI document (core/server/openapi.json, kept in the tree and
# checked against the server by tests/server/openapi.sh) is compiled in
# and served at /openapi.json.
nodist_core_server_libsrv_la_SOURCES = core/server/openapi-data.c
BUILT_SOURCES += core/server/openapi-data.c
CLEANFILES += core/server/openapi-data.c
EXTRA_DIST += core/server/openapi.json
core/server/openapi-data.c: core/server/openapi.json
	$(AM_V_GEN){ \
	  echo '/* generated from core/server/openapi.json: do not edit */'; \
	  echo '#include <stddef.h>'; \
	  echo 'extern const char srv_openapi_json[];'; \
	  echo 'extern const size_t srv_openapi_json_len;'; \
	  echo 'const char srv_openapi_json[] = {'; \
	  od -An -v -tx1 $(top_srcdir)/core/server/openapi.json | \
	    sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0x00 };'; \
	  echo 'const size_t srv_openapi_json_len = sizeof srv_openapi_json - 1;'; \
	} >$@-t && mv $@-t $@
