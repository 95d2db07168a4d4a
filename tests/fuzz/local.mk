# tests/fuzz/local.mk - fuzz targets of the parsers of hostile bytes
#
# Each target is one file, tests/fuzz/fuzz-NAME.c (see fuzz.h), listed in
# FUZZ_SOURCES, with seeds in tests/fuzz/corpus/NAME/.  Adding one:
#
#     FUZZ_SOURCES += tests/fuzz/fuzz-NAME.c
#
# (and, if its code is in a library the targets do not link yet,
# FUZZ_LIBS += that library).  The targets are linked twice: into
# tests/fuzz/replay, which `make check` runs over every corpus file, and,
# in a build configured with --enable-fuzzing, into the libFuzzer program
# tests/fuzz/polysandbox-fuzz (`make fuzz`, `make fuzz-run`).  README.

FUZZ_SOURCES += \
	tests/fuzz/fuzz-ini.c \
	tests/fuzz/fuzz-units.c \
	tests/fuzz/fuzz-settings.c \
	tests/fuzz/fuzz-sealed.c \
	tests/fuzz/fuzz-dataset.c \
	tests/fuzz/fuzz-samples.c \
	tests/fuzz/fuzz-judge.c \
	tests/fuzz/fuzz-jreport.c \
	tests/fuzz/fuzz-files.c \
	tests/fuzz/fuzz-etag.c \
	tests/fuzz/fuzz-server.c \
	tests/fuzz/fuzz-ws.c tests/server/ws-frame-check.c tests/server/ws-frame-check.h
FUZZ_LIBS += core/server/libsrv.la
if HAVE_IMAGE
FUZZ_SOURCES += tests/fuzz/fuzz-image.c tests/fuzz/fuzz-layer.c tests/fuzz/fuzz-import.c
endif

# Which targets are built, for tests/fuzz/found.c.
FZ_FOUND_CPPFLAGS =
if HAVE_IMAGE
FZ_FOUND_CPPFLAGS += -DHAVE_FZ_IMAGE=1
endif

# The helpers, and what the targets reach into.
FZ_COMMON = tests/fuzz/fuzz.h tests/fuzz/fuzz-util.c core/cli/cli.h
FZ_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/fuzz -I$(top_srcdir)/core \
	-I$(top_srcdir)/core/cli -I$(top_srcdir)/core/server -I$(top_srcdir)/plugins/common -I$(top_srcdir)/plugins/docker \
	-I$(top_srcdir)/plugins/microvm -I$(top_srcdir)/plugins/local/wire
FZ_CFLAGS = $(AM_CFLAGS) -pthread $(JANSSON_CFLAGS) $(SODIUM_CFLAGS) $(CURL_CFLAGS) \
	$(LIBARCHIVE_CFLAGS) $(MHD_CFLAGS)
FZ_LDADD = $(FUZZ_LIBS) $(FZ_HTTP_LIBS) core/libpolysandbox-internal.la $(LTDL_LIBS) $(JANSSON_LIBS) \
	$(INIH_LIBS) $(SODIUM_LIBS) $(ZLIB_LIBS) $(CURL_LIBS) $(LIBARCHIVE_LIBS) $(SRV_LIBS)

# The network providers' answers, served by an HTTP server of the harness
# on 127.0.0.1, and their code compiled once more for the harness (the
# same files; the descriptor renamed, so that both fit in one program).
if HAVE_CURL
FZ_HTTP_SOURCES = tests/fuzz/canned.c tests/fuzz/canned.h tests/fuzz/host.c tests/fuzz/host.h
FUZZ_SOURCES += $(FZ_HTTP_SOURCES) tests/fuzz/fuzz-http.c
FZ_HTTP_LIBS = $(SBXHTTP_LIBS)
FZ_FOUND_CPPFLAGS += -DHAVE_FZ_HTTP=1
else
FZ_HTTP_SOURCES =
FZ_HTTP_LIBS =
endif
if BUILD_PROVIDER_E2B
check_LTLIBRARIES += tests/fuzz/libfz-e2b.la
tests_fuzz_libfz_e2b_la_SOURCES = $(plugins_e2b_e2b_la_SOURCES)
tests_fuzz_libfz_e2b_la_CPPFLAGS = $(plugins_e2b_e2b_la_CPPFLAGS) \
	-Dsandbox_provider_v1=fz_e2b_provider_v1
tests_fuzz_libfz_e2b_la_CFLAGS = $(plugins_e2b_e2b_la_CFLAGS)
FUZZ_SOURCES += tests/fuzz/fuzz-e2b.c
FUZZ_LIBS += tests/fuzz/libfz-e2b.la
FZ_FOUND_CPPFLAGS += -DHAVE_FZ_E2B=1
endif
if BUILD_PROVIDER_DAYTONA
check_LTLIBRARIES += tests/fuzz/libfz-daytona.la
tests_fuzz_libfz_daytona_la_SOURCES = $(plugins_daytona_daytona_la_SOURCES)
tests_fuzz_libfz_daytona_la_CPPFLAGS = $(plugins_daytona_daytona_la_CPPFLAGS) \
	-Dsandbox_provider_v1=fz_daytona_provider_v1
tests_fuzz_libfz_daytona_la_CFLAGS = $(plugins_daytona_daytona_la_CFLAGS)
FUZZ_SOURCES += tests/fuzz/fuzz-daytona.c
FUZZ_LIBS += tests/fuzz/libfz-daytona.la
FZ_FOUND_CPPFLAGS += -DHAVE_FZ_DAYTONA=1
endif
if BUILD_PROVIDER_VOLCENGINE
check_LTLIBRARIES += tests/fuzz/libfz-volcengine.la
tests_fuzz_libfz_volcengine_la_SOURCES = $(plugins_volcengine_volcengine_la_SOURCES)
tests_fuzz_libfz_volcengine_la_CPPFLAGS = $(plugins_volcengine_volcengine_la_CPPFLAGS) \
	-Dsandbox_provider_v1=fz_volcengine_provider_v1
tests_fuzz_libfz_volcengine_la_CFLAGS = $(plugins_volcengine_volcengine_la_CFLAGS)
FUZZ_SOURCES += tests/fuzz/fuzz-volcengine.c
FUZZ_LIBS += tests/fuzz/libfz-volcengine.la
endif
if BUILD_PROVIDER_CLOUDFLARE
check_LTLIBRARIES += tests/fuzz/libfz-cloudflare.la
tests_fuzz_libfz_cloudflare_la_SOURCES = $(plugins_cloudflare_cloudflare_la_SOURCES)
tests_fuzz_libfz_cloudflare_la_CPPFLAGS = $(plugins_cloudflare_cloudflare_la_CPPFLAGS) \
	-Dsandbox_provider_v1=fz_cloudflare_provider_v1 -DCF_DELETE_TRIES=1
tests_fuzz_libfz_cloudflare_la_CFLAGS = $(plugins_cloudflare_cloudflare_la_CFLAGS)
FUZZ_SOURCES += tests/fuzz/fuzz-cloudflare.c
FUZZ_LIBS += tests/fuzz/libfz-cloudflare.la
endif
# Modal's gRPC rides HTTP/2, which the canned server does not speak: the
# provider's one call of ph_do goes to modal-wire.c instead, and its
# pauses between tries are dropped (MODAL_PAUSES).
if BUILD_PROVIDER_MODAL
check_LTLIBRARIES += tests/fuzz/libfz-modal.la
tests_fuzz_libfz_modal_la_SOURCES = $(plugins_modal_modal_la_SOURCES) tests/fuzz/modal-wire.c
nodist_tests_fuzz_libfz_modal_la_SOURCES = $(MODAL_PB_C)
tests_fuzz_libfz_modal_la_CPPFLAGS = $(plugins_modal_modal_la_CPPFLAGS) -I$(top_srcdir)/tests/fuzz \
	-Dsandbox_provider_v1=fz_modal_provider_v1 -Dph_do=fz_modal_ph_do -DMODAL_PAUSES=0
tests_fuzz_libfz_modal_la_CFLAGS = $(plugins_modal_modal_la_CFLAGS)
tests_fuzz_libfz_modal_la_LIBADD = $(PROTOBUF_C_LIBS)
# make fuzz builds no BUILT_SOURCES: the generated headers first.
$(tests_fuzz_libfz_modal_la_OBJECTS): $(MODAL_PB_C)
FUZZ_SOURCES += tests/fuzz/fuzz-modal.c
FUZZ_LIBS += tests/fuzz/libfz-modal.la
FZ_FOUND_CPPFLAGS += -DHAVE_FZ_MODAL=1
endif
if BUILD_PROVIDER_DOCKER
check_LTLIBRARIES += tests/fuzz/libfz-docker.la
tests_fuzz_libfz_docker_la_SOURCES = plugins/docker/engine/tar.c plugins/docker/engine/stream.c \
	plugins/common/tar-mem.c
tests_fuzz_libfz_docker_la_CPPFLAGS = $(AM_CPPFLAGS) $(SBXHTTP_CPPFLAGS) \
	-I$(top_srcdir)/plugins/docker
tests_fuzz_libfz_docker_la_CFLAGS = $(SBX_MODULE_COPTS) $(SBXHTTP_CFLAGS) $(LIBARCHIVE_CFLAGS)
FUZZ_SOURCES += tests/fuzz/fuzz-docker.c
FUZZ_LIBS += tests/fuzz/libfz-docker.la
FZ_FOUND_CPPFLAGS += -DHAVE_FZ_DOCKER=1
endif

if BUILD_PROVIDER_MICROVM
FUZZ_SOURCES += tests/fuzz/fuzz-microvm.c plugins/microvm/mv-proto.c plugins/microvm/mv-proto.h
endif

# The local provider's exec request, as its daemon, spares and zygotes read it.
if BUILD_PROVIDER_LOCAL
FUZZ_SOURCES += tests/fuzz/fuzz-execreq.c plugins/local/wire/exec-req.c \
	plugins/local/wire/exec-req.h plugins/local/wire/fdpass.c plugins/local/wire/fdpass.h
endif

# What the fuzzers found, one unit test each (the inputs stay in the corpus).
check_PROGRAMS += tests/fuzz/found
tests_fuzz_found_SOURCES = tests/fuzz/found.c tests/unit/tap.h $(FZ_COMMON) $(FZ_HTTP_SOURCES)
tests_fuzz_found_CPPFLAGS = $(FZ_CPPFLAGS) $(FZ_FOUND_CPPFLAGS)
tests_fuzz_found_CFLAGS = $(FZ_CFLAGS)
tests_fuzz_found_LDADD = $(FZ_LDADD)
TESTS += tests/fuzz/found

# Every corpus input through its target, in every build (make check).
check_PROGRAMS += tests/fuzz/replay
tests_fuzz_replay_SOURCES = tests/fuzz/replay.c tests/unit/tap.h $(FZ_COMMON) $(FUZZ_SOURCES)
tests_fuzz_replay_CPPFLAGS = $(FZ_CPPFLAGS)
tests_fuzz_replay_CFLAGS = $(FZ_CFLAGS)
tests_fuzz_replay_LDADD = $(FZ_LDADD)
TESTS += tests/fuzz/replay

# libFuzzer: make fuzz builds it, make fuzz-run runs every target for
# FUZZ_SECONDS (default 60) each, FUZZ_JOBS at a time (default 1), or
# only the FUZZ_TARGETS named.
EXTRA_PROGRAMS = tests/fuzz/polysandbox-fuzz
tests_fuzz_polysandbox_fuzz_SOURCES = tests/fuzz/fuzz-main.c $(FZ_COMMON) $(FUZZ_SOURCES)
tests_fuzz_polysandbox_fuzz_CPPFLAGS = $(FZ_CPPFLAGS)
tests_fuzz_polysandbox_fuzz_CFLAGS = $(FZ_CFLAGS)
tests_fuzz_polysandbox_fuzz_LDFLAGS = $(FUZZ_LDFLAGS)
tests_fuzz_polysandbox_fuzz_LDADD = $(FZ_LDADD)
FUZZ_SECONDS = 60
FUZZ_JOBS = 1
FUZZ_TARGETS =
if ENABLE_FUZZING
fuzz: tests/fuzz/polysandbox-fuzz
fuzz-run: fuzz
	top_srcdir=$(abs_top_srcdir) top_builddir=$(abs_top_builddir) \
	  $(SHELL) $(top_srcdir)/tests/fuzz/run.sh -t $(FUZZ_SECONDS) -j $(FUZZ_JOBS) $(FUZZ_TARGETS)
else
fuzz fuzz-run:
	@echo "make $@: this build has no libFuzzer; configure with --enable-fuzzing CC=clang-14" \
	  "(tests/fuzz/README)" >&2; exit 1
endif
.PHONY: fuzz fuzz-run
CLEANFILES += tests/fuzz/polysandbox-fuzz
clean-local: clean-fuzz
clean-fuzz:
	-rm -rf tests/fuzz/run
.PHONY: clean-fuzz

EXTRA_DIST += tests/fuzz/README tests/fuzz/run.sh tests/fuzz/corpus tests/fuzz/dict
