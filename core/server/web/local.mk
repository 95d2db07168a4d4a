# core/server/web/local.mk - the page polysandboxd serves at / (the
# Playground): plain HTML, CSS and JavaScript, compiled into the server by
# embed.sh (web-data.c) so that the server needs no data directory.
# native-web.c serves them under a strict Content-Security-Policy (no
# inline script or style), each with an ETag.
#
# The code editor is CodeMirror 6 from npm, pinned by
# core/server/web/editor/package-lock.json and bundled by esbuild into
# ONE minified core/server/web/editor.js, in the source tree like any
# distributed generated file: a release tarball ships it and builds with
# no node, npm or network.  configure decides (--enable-editor, see
# configure.ac): BUILD_EDITOR makes it here with npm ci (--offline first,
# from npm's cache); EDITOR embeds it; without it editor-none.js is served
# as editor.js and the page keeps a plain textarea.

WEB_ASSETS = \
	core/server/web/index.html \
	core/server/web/app.css \
	core/server/web/app.js \
	core/server/web/report.js \
	core/server/web/icon.svg
EDITOR_INPUTS = \
	core/server/web/editor/package.json \
	core/server/web/editor/package-lock.json \
	core/server/web/editor/editor.mjs
EXTRA_DIST += $(WEB_ASSETS) core/server/web/embed.sh core/server/web/editor-none.js \
	$(EDITOR_INPUTS)

if EDITOR
WEB_EDITOR = $(srcdir)/core/server/web/editor.js
WEB_EDITOR_ARG = $(WEB_EDITOR)
EXTRA_DIST += core/server/web/editor.js
else
WEB_EDITOR = $(srcdir)/core/server/web/editor-none.js
WEB_EDITOR_ARG = editor.js=$(WEB_EDITOR)
endif

nodist_core_server_libsrv_la_SOURCES += core/server/web-data.c
BUILT_SOURCES += core/server/web-data.c
CLEANFILES += core/server/web-data.c
# (Makefile too: configure may have switched the editor on or off)
core/server/web-data.c: $(WEB_ASSETS) $(WEB_EDITOR) core/server/web/embed.sh Makefile
	$(AM_V_GEN)$(SHELL) $(top_srcdir)/core/server/web/embed.sh \
	  $(WEB_ASSETS:%=$(top_srcdir)/%) $(WEB_EDITOR_ARG) >$@-t && mv $@-t $@

if BUILD_EDITOR
# npm installs into the build tree (core/server/web/editor-build/), never
# the source tree, with install scripts off (esbuild's binary comes as an
# optional dependency; its script only checks it).
EDITOR_NPM_FLAGS = --ignore-scripts --no-audit --no-fund --loglevel=error
EDITOR_BANNER = /* core/server/web/editor.js: CodeMirror 6 (MIT, Marijn Haverbeke and others) and Lezer grammars (MIT), bundled by esbuild from core/server/web/editor/package-lock.json: do not edit */
$(srcdir)/core/server/web/editor.js: $(EDITOR_INPUTS:%=$(srcdir)/%)
	$(AM_V_GEN)d=core/server/web/editor-build; rm -rf $$d && $(MKDIR_P) $$d && \
	cp $(EDITOR_INPUTS:%=$(srcdir)/%) $$d/ && \
	{ (cd $$d && $(NPM) ci --offline $(EDITOR_NPM_FLAGS)) >$$d/npm.log 2>&1 || \
	  (cd $$d && $(NPM) ci $(EDITOR_NPM_FLAGS)) >>$$d/npm.log 2>&1 || \
	  { sed 's/^/npm: /' $$d/npm.log >&2; \
	    echo "core/server/web/editor.js: npm ci failed (no network and no cache?); configure --disable-editor keeps the textarea" >&2; \
	    exit 1; }; } && \
	$(NODE) $$d/node_modules/esbuild/bin/esbuild $$d/editor.mjs --bundle --minify \
	  --format=esm --target=es2020 --legal-comments=none --log-level=warning \
	  '--banner:js=$(EDITOR_BANNER)' --outfile=$$d/editor.js && \
	mv $$d/editor.js $@
endif
MAINTAINERCLEANFILES = core/server/web/editor.js

# make distcheck builds the tarball as if node and npm were missing: the
# shipped bundle must be enough.
AM_DISTCHECK_CONFIGURE_FLAGS = NODE=false NPM=false

clean-local: clean-editor-build
clean-editor-build:
	rm -rf core/server/web/editor-build
.PHONY: clean-editor-build
