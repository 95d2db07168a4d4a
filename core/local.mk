# core/local.mk - libpolysandbox

# All of the core is built once as a convenience library, so unit tests
# can link internals that the shared library does not export.
noinst_LTLIBRARIES += core/libpolysandbox-internal.la
lib_LTLIBRARIES += core/libpolysandbox.la
pkginclude_HEADERS += core/include/polysandbox/sandbox.h \
	core/include/polysandbox/eval.h \
	core/include/polysandbox/journal.h \
	core/include/polysandbox/image.h
pkgconfig_DATA += core/polysandbox.pc

core_libpolysandbox_internal_la_SOURCES = \
	core/error.h \
	core/strv.h \
	core/units.h \
	core/owner.h \
	core/labels.h \
	core/platform.h \
	core/conf.h \
	core/context.h \
	core/error.c \
	core/strv.c \
	core/buf.c \
	core/buf.h \
	core/owner.c \
	core/units.c \
	core/limit-names.c \
	core/limit-names.h \
	core/config/config.c \
	core/config/config-int.h \
	core/config/config-load.h \
	core/config/unenforced.h \
	core/config/config-parse.c \
	core/config/config-values.c \
	core/config/config-main.c \
	core/config/config-dropins.c \
	core/config/config-providers.c \
	core/config/config-templates.c \
	core/config/config-pools.c \
	core/platform.c \
	core/loader/loader-int.h \
	core/loader/loader.h \
	core/provider-int.h \
	core/loader/discover.c \
	core/loader/validate.h \
	core/loader/validate.c \
	core/loader/open.c \
	core/loader/host.c \
	core/host-settings.c \
	core/loader/test-host.c \
	core/clock.c \
	core/clock.h \
	core/path-check.c \
	core/path-check.h \
	core/settings-read.h \
	core/secrets/secrets.h \
	core/secrets/secrets.c \
	core/secrets/secret-key.c \
	core/secrets/sealed.c \
	core/run/secret-api.c \
	core/config/settings.c \
	core/run/context.c \
	core/api/ctx.c \
	core/api/run.c \
	core/run/cancel.c \
	core/run/opts-int.h \
	core/run/artifacts.h \
	core/run/cancel-int.h \
	core/run/files.h \
	core/run/id-hint.h \
	core/run/orphans.h \
	core/run/sandbox-int.h \
	core/run/template-int.h \
	core/run/trail.h \
	core/run/options.c \
	core/run/sandbox.c \
	core/run/source-name.c \
	core/config/unenforced.c \
	core/run/sandbox-find.c \
	core/run/id-hint.c \
	core/run/sandbox-files.c \
	core/labels.c \
	core/retry/retry.h \
	core/retry/retry.c \
	core/retry/breaker.c \
	core/run/health.c \
	core/pool/pool-int.h \
	core/pool/pool.h \
	core/pool/pool-config.c \
	core/pool/pool.c \
	core/run/gc.c \
	core/run/orphans.c \
	core/run/result-int.h \
	core/run/result.c \
	core/run/artifacts.c \
	core/run/json.c \
	core/journal.c \
	core/eval/eval-int.h \
	core/eval/eval-jsonl.c \
	core/eval/eval-dataset.c \
	core/eval/eval-judged.c \
	core/eval/eval-evalplus.c \
	core/eval/eval-multipl-e.c \
	core/eval/eval-compare.c \
	core/eval/eval-judge.c \
	core/eval/eval-judge-batch.c \
	core/eval/eval-judge-blob.c \
	core/eval/eval-judge-proto.h \
	core/eval/eval-program.c \
	core/eval/eval-verdict.c \
	core/eval/eval-attempt.c \
	core/eval/eval-record.c \
	core/eval/eval-stats.c \
	core/eval/eval-journal.c \
	core/eval/eval-provenance.c \
	core/eval/eval-opts.c \
	core/eval/eval-summary.c \
	core/eval/eval-usage.c \
	core/eval/eval-report.c \
	core/eval/eval-report-int.h \
	core/eval/eval-report-html.c \
	core/eval/eval-report-md.c \
	core/eval/eval-report-text.c \
	core/eval/eval-run.c \
	core/run/fallback-trail.c \
	core/run/template-cache.c
core_libpolysandbox_internal_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -pthread \
	-DPKGLIBEXECDIR='"$(pkglibexecdir)"' \
	$(JANSSON_CFLAGS) $(INIH_CFLAGS) $(SODIUM_CFLAGS) $(ZLIB_CFLAGS)
core_libpolysandbox_internal_la_LIBADD = $(LTDL_LIBS) $(JANSSON_LIBS) \
	$(INIH_LIBS) $(SODIUM_LIBS) $(ZLIB_LIBS)

# Images (core/image/): pulled with libcurl, unpacked with libarchive;
# without either the calls answer SBX_E_NOTSUP (core/image/image-none.c).
if HAVE_IMAGE
core_libpolysandbox_internal_la_SOURCES += \
	core/image/image-int.h \
	core/image/ref.c \
	core/image/challenge.c \
	core/image/registry.c \
	core/image/store.c \
	core/image/unpack.c \
	core/image/manifest.c \
	core/image/pull.c \
	core/image/import.c \
	core/image/prune.c \
	core/image/image.c
core_libpolysandbox_internal_la_CFLAGS += $(CURL_CFLAGS) $(LIBARCHIVE_CFLAGS)
core_libpolysandbox_internal_la_LIBADD += $(CURL_LIBS) $(LIBARCHIVE_LIBS)
else
core_libpolysandbox_internal_la_SOURCES += core/image/image-none.c
endif
core_libpolysandbox_internal_la_CFLAGS += -I$(top_srcdir)/core -I$(top_builddir)/core
EXTRA_DIST += core/image/image-int.h core/image/ref.c core/image/challenge.c \
	core/image/registry.c core/image/store.c core/image/unpack.c core/image/manifest.c \
	core/image/pull.c core/image/import.c core/image/prune.c core/image/image.c \
	core/image/image-none.c

# The judged tests' runner runs inside sandboxes: a static program built
# with the plain compiler and no user CFLAGS (no sanitizer runtime in
# there), stripped; its bytes are included by core/eval/eval-judge-blob.c
# (sdk/inside/embed.h).  The runner of Python programs,
# core/eval/eval-judge-driver.py, is included the same way, as its source.
nodist_core_libpolysandbox_internal_la_SOURCES = core/eval-judge-runner.h core/eval-judge-driver.h
CORE_JR_SRCS = $(top_srcdir)/core/eval/eval-judge-runner.c $(top_srcdir)/sdk/inside/proc-each.c
core/eval-judge-runner: $(CORE_JR_SRCS) $(top_srcdir)/core/eval/eval-judge-proto.h \
	  $(top_srcdir)/sdk/inside/proc-each.h
	$(AM_V_CC)$(CC) -std=gnu11 -O2 -static -s $(WARN_CFLAGS) -I$(top_srcdir)/core \
	  -I$(top_srcdir)/sdk -o $@ $(CORE_JR_SRCS)
core/eval-judge-runner.h: core/eval-judge-runner $(SBX_EMBED_HEADER_SH)
	$(AM_V_GEN)$(SHELL) $(SBX_EMBED_HEADER_SH) CORE_JR_BIN core/eval-judge-runner > $@.tmp \
	  && mv $@.tmp $@
core/eval-judge-driver.h: $(top_srcdir)/core/eval/eval-judge-driver.py $(SBX_EMBED_HEADER_SH)
	$(AM_V_GEN)$(SHELL) $(SBX_EMBED_HEADER_SH) CORE_JD_PY \
	  $(top_srcdir)/core/eval/eval-judge-driver.py > $@.tmp && mv $@.tmp $@
BUILT_SOURCES += core/eval-judge-runner.h core/eval-judge-driver.h
# BUILT_SOURCES orders all, check and install only: a build of one target
# (make fuzz) needs the header before the object that includes it.
$(core_libpolysandbox_internal_la_OBJECTS): core/eval-judge-runner.h core/eval-judge-driver.h
CLEANFILES += core/eval-judge-runner core/eval-judge-runner.h core/eval-judge-driver.h
EXTRA_DIST += core/eval/eval-judge-runner.c core/eval/eval-judge-driver.py

core_libpolysandbox_la_SOURCES =
core_libpolysandbox_la_LDFLAGS = -version-info $(LIBPOLYSANDBOX_LT_VERSION) \
	-no-undefined -export-symbols-regex '^sbx_' -pthread
core_libpolysandbox_la_LIBADD = core/libpolysandbox-internal.la
EXTRA_DIST += core/polysandbox.pc.in
