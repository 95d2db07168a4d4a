# core/server/web/local.mk - the page polysandboxd serves at / (the
# Playground): plain HTML, CSS and JavaScript with no build step and no
# third-party code, compiled into the server by embed.sh (web-data.c) so
# that a release tarball builds without the network and the server needs
# no data directory.  native-web.c serves them under a strict
# Content-Security-Policy (no inline script or style).

WEB_ASSETS = \
	core/server/web/index.html \
	core/server/web/app.css \
	core/server/web/app.js \
	core/server/web/report.js \
	core/server/web/icon.svg
EXTRA_DIST += $(WEB_ASSETS) core/server/web/embed.sh

nodist_core_server_libsrv_la_SOURCES += core/server/web-data.c
BUILT_SOURCES += core/server/web-data.c
CLEANFILES += core/server/web-data.c
core/server/web-data.c: $(WEB_ASSETS) core/server/web/embed.sh
	$(AM_V_GEN)$(SHELL) $(top_srcdir)/core/server/web/embed.sh \
	  $(WEB_ASSETS:%=$(top_srcdir)/%) >$@-t && mv $@-t $@
